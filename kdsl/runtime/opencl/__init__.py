"""The OpenCL runtime (clapi/ctypes on the warm path, pyopencl for device arrays): device selection, program build, launch, disk-cache artefacts.

``OpenCLBackend`` implements :class:`kdsl.runtime.backend.Backend` under the
name ``"opencl"`` (with ``device()``, ``load()`` and kernels' ``artifacts()``);
``get_device()`` gives the per-process :class:`Device`.
"""

from kdsl.runtime.opencl.backend import CompiledStages, OpenCLBackend, compile_stages, render_stages
from kdsl.runtime.opencl.device import Device, get_device
from kdsl.runtime.opencl.kernel import KernelInfo, OpenCLKernel

__all__ = [
    "CompiledStages",
    "Device",
    "KernelInfo",
    "OpenCLBackend",
    "OpenCLKernel",
    "compile_stages",
    "get_device",
    "render_stages",
]
