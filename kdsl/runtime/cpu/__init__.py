"""The ``cpu`` backend: kdsl kernels compiled by LLVM (llvmlite) for the host.

``CPUBackend`` implements :class:`kdsl.runtime.backend.Backend` under the name
``"cpu"``; it needs nothing but llvmlite (no OpenCL or Vulkan driver). See
``docs/BACKENDS.md`` for the design and measurements.
"""

from kdsl.runtime.cpu.backend import CompiledStages, CPUBackend, CPUKernel, compile_stages

__all__ = ["CPUBackend", "CPUKernel", "CompiledStages", "compile_stages"]
