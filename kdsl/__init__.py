"""kdsl: a Triton-style tile kernel DSL with OpenCL, Vulkan and CPU backends.

Write kernels with ``@kdsl.kernel`` and ``import kdsl.language as kl``; launch
them as ``kernel[grid](*args, **meta)`` with numpy arrays (synchronous) or
device arrays from ``kdsl.tensor``/``empty``/``zeros`` (asynchronous on
device backends; ``kdsl.synchronize()`` or ``.numpy()`` waits). ``compile_to_ir`` shows the tile IR
a launch would compile; ``kdsl.backend(...)`` / ``set_backend`` choose where
kernels run (``available_backends()`` lists what works on this machine).
"""

from __future__ import annotations

from typing import Any

from kdsl import language
from kdsl.autotune import Config, autotune
from kdsl.autotune.heuristics import heuristics
from kdsl.errors import (
    BackendUnavailableError,
    CompilationError,
    DeviceAssertionError,
    KdslError,
    KernelRuntimeError,
    LaunchError,
    OutOfBoundsError,
    OutOfResources,
)
from kdsl.ir.core import ModuleOp
from kdsl.language.constexpr_function import constexpr_function, must_use_result
from kdsl.runtime.allocation import get_allocator, set_allocator
from kdsl.runtime.backends import available_backends, backend, current_backend_name, set_backend
from kdsl.runtime.device_array import (
    DeviceArray,
    empty,
    empty_cache,
    empty_like,
    synchronize,
    tensor,
    zeros,
    zeros_like,
)
from kdsl.runtime.jit import KernelFunction, jit, kernel
from kdsl.runtime.preload import start as _start_preload
from kdsl.runtime.reinterpret import reinterpret
from kdsl.runtime.sanitize import sanitize_enabled, set_sanitize

_start_preload()  # the OpenCL driver loads on another core while the program starts (runtime/preload.py)


def cdiv(x: int, y: int) -> int:
    """Ceiling division of integers (``triton.cdiv``)."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n, as ``triton.next_power_of_2``: 1 for 1, and 0 for n <= 0
    (Triton's bit trick fills the bits of n - 1 = -1 and adds one)."""
    n = int(n)
    if n <= 0:
        return 0
    return 1 << (n - 1).bit_length()


JITFunction = KernelFunction  # Triton's name for the class of @jit functions (isinstance checks)


def compile_to_ir(kernel: KernelFunction, *args: Any, optimize: bool = False, **meta: Any) -> ModuleOp:
    """The tile IR module ``kernel[grid](*args, **meta)`` would compile.

    Arguments may be real launch values (arrays, scalars) or Triton-style type
    strings (``"*f32"``, ``"i32"``) for runtime parameters. ``optimize=True``
    runs the default pass pipeline as a launch does.
    """
    if not isinstance(kernel, KernelFunction):
        raise TypeError(f"compile_to_ir needs a @kdsl.kernel function, got {type(kernel).__name__}")
    specs = kernel.specialization(args, meta)
    module, _ = kernel.compile_module(specs, optimize=optimize)
    return module


def __getattr__(name: str) -> Any:
    """``kdsl.testing`` without an explicit import, as ``triton.testing`` after ``import triton``
    (imported on first use: it is not needed to run kernels)."""
    if name == "testing":
        import importlib

        return importlib.import_module("kdsl.testing")
    raise AttributeError(f"module 'kdsl' has no attribute {name!r}")


__all__ = [
    "BackendUnavailableError",
    "CompilationError",
    "Config",
    "DeviceArray",
    "DeviceAssertionError",
    "JITFunction",
    "KdslError",
    "KernelFunction",
    "KernelRuntimeError",
    "LaunchError",
    "OutOfBoundsError",
    "OutOfResources",
    "autotune",
    "available_backends",
    "backend",
    "cdiv",
    "compile_to_ir",
    "constexpr_function",
    "current_backend_name",
    "empty",
    "empty_cache",
    "empty_like",
    "get_allocator",
    "heuristics",
    "jit",
    "kernel",
    "language",
    "must_use_result",
    "next_power_of_2",
    "reinterpret",
    "sanitize_enabled",
    "set_allocator",
    "set_backend",
    "set_sanitize",
    "synchronize",
    "tensor",
    "zeros",
    "zeros_like",
]
