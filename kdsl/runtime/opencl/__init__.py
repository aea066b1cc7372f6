"""The OpenCL runtime (pyopencl): device selection, program build, launch.

``OpenCLBackend`` implements :class:`kdsl.runtime.backend.Backend` under the
name ``"opencl"``; ``get_device()`` gives the per-process :class:`Device`.
"""

from kdsl.runtime.opencl.backend import CompiledStages, OpenCLBackend, OpenCLKernel, compile_stages
from kdsl.runtime.opencl.device import Device, get_device

__all__ = ["CompiledStages", "Device", "OpenCLBackend", "OpenCLKernel", "compile_stages", "get_device"]
