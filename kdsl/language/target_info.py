"""``kl.target_info``: compile-time questions about the device a kernel is compiled for
(Triton's ``triton.language.target_info``).

Kernels branch on these to pick an implementation (``if kl.target_info.is_cuda(): ...``); each is
a constexpr function, so only the branch taken is compiled. No kdsl backend is CUDA or HIP, so
the vendor questions answer False and the other branch is the one that runs; ``current_target()``
describes the kdsl backend being compiled for (``backend`` is ``"cpu"``, ``"opencl"``,
``"vulkan"`` or ``"interpreter"``).
"""

from __future__ import annotations

from typing import Any

from kdsl.language.constexpr_function import constexpr_function


def current_target() -> Any:
    """The ``GPUTarget(backend, arch, warp_size)`` of the current backend (None if none works)."""
    from kdsl.runtime.driver import active

    try:
        return active.get_current_target()
    except RuntimeError:
        return None


@constexpr_function
def is_cuda() -> bool:
    target = current_target()
    return target is not None and target.backend == "cuda"


@constexpr_function
def cuda_capability_geq(major: int, minor: int = 0) -> bool:
    """Whether the target is CUDA with compute capability >= (major, minor) (guards inline PTX)."""
    target = current_target()
    if target is None or target.backend != "cuda" or not isinstance(target.arch, int):
        return False
    return bool(target.arch >= major * 10 + minor)


@constexpr_function
def is_hip() -> bool:
    target = current_target()
    return target is not None and target.backend == "hip"


@constexpr_function
def is_hip_cdna3() -> bool:
    target = current_target()
    return target is not None and target.arch == "gfx942"


@constexpr_function
def is_hip_cdna4() -> bool:
    target = current_target()
    return target is not None and target.arch == "gfx950"


__all__ = ["cuda_capability_geq", "current_target", "is_cuda", "is_hip", "is_hip_cdna3", "is_hip_cdna4"]
