"""OpenCL C renderer for the work-item IR (see :mod:`kdsl.codegen.opencl.render`)."""

from kdsl.codegen.opencl.render import DeviceCaps, Rendered, render_opencl

__all__ = ["DeviceCaps", "Rendered", "render_opencl"]
