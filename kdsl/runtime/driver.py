"""``kdsl.runtime.driver.active``: Triton's ``triton.runtime.driver.active`` for the questions
tutorials ask about the device.

Triton's tutorials size persistent grids and pick variants from
``driver.active.get_current_target()`` (``.backend``, ``.arch``, ``.warp_size``) and
``driver.active.utils.get_device_properties(index)`` (``"multiprocessor_count"``,
``"max_shared_mem"``, ``"max_num_regs"``, ``"warpSize"``, ...). Here the active driver is the
current kdsl backend (``kdsl.backend(...)`` / ``set_backend``) and the answers come from its
device description (:func:`kdsl.target.target_for`), so they describe the device kernels run on.
Register counts and clock rates there are estimates (they rank configurations, as in Triton's
occupancy arithmetic); they never affect results.

The figures are chosen so that Triton's host-side arithmetic, copied unchanged, gives a usable
answer. Tutorial 02 sizes its persistent grid as ``NUM_SM * min(NUM_REGS // (n_regs *
WARP_SIZE * num_warps), SIZE_SMEM // size_smem)``; with a literal CPU register file (512
32-bit slots per core) the first term is 0 for ``num_warps=8``, the grid is empty and the
kernel silently computes nothing. A CPU core (and lavapipe's) has no resident-warp limit: it
runs one work-item at a time and queues the rest. So ``max_num_regs`` is the register file of a
compute unit that holds :data:`WARPS_PER_UNIT` warps, as an NVIDIA SM does (65536 = 32 registers
x 32 lanes x 64 warps), and ``max_shared_mem`` on a device whose ``__local`` memory is not
on-chip memory of its own (every CPU device: PoCL, lavapipe) is the larger of that limit and the
cache, where a program's working set lives (``metadata.shared`` of a warmed kernel counts that
working set, private tile arrays included, see :mod:`kdsl.runtime.warmup`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdsl.errors import BackendUnavailableError

# Warps a compute unit is counted as holding in ``max_num_regs`` (see the module doc).
WARPS_PER_UNIT = 64


@dataclass(frozen=True)
class GPUTarget:
    """Triton's ``GPUTarget``: ``backend`` (a kdsl backend name here), ``arch`` (the device's
    name) and ``warp_size`` (the sub-group size, 1 where the device has none)."""

    backend: str
    arch: int | str
    warp_size: int


def _target(backend: str | None = None) -> Any:
    from kdsl.target import target_for

    try:
        return target_for(backend)
    except BackendUnavailableError as exc:
        raise RuntimeError(f"no active kdsl backend: {exc}") from exc


class DriverUtils:
    """``driver.active.utils``."""

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        """The properties Triton's CUDA/HIP drivers report, for device ``device`` (kdsl
        backends have one device: ``None`` or ``0``).

        ``multiprocessor_count``: compute units; ``max_shared_mem``: local (shared) memory
        bytes per work-group, or the cache where that memory is not on-chip (see the module doc);
        ``max_num_regs``: ``n_regs x warpSize x WARPS_PER_UNIT`` (see the module doc);
        ``warpSize``: sub-group size (1 without sub-groups); ``max_threads_per_sm``:
        work-items per work-group; ``sm_clock_rate``: kHz; ``arch``: the device name."""
        if device not in (None, 0):
            raise ValueError(f"kdsl backends have one device (index 0), got {device!r}")
        t = _target()
        warp = max(1, t.subgroup_size)
        return {
            "multiprocessor_count": t.compute_units,
            "max_shared_mem": t.local_memory_bytes if t.local_memory_real else max(t.local_memory_bytes, t.cache_bytes),
            "max_num_regs": t.registers * warp * WARPS_PER_UNIT,
            "warpSize": warp,
            "max_threads_per_sm": t.max_work_group_size,
            "sm_clock_rate": int(t.clock_ghz * 1e6),
            "arch": t.name,
        }


class ActiveDriver:
    """``driver.active``: the current kdsl backend seen through Triton's driver interface."""

    utils = DriverUtils()

    def get_current_target(self) -> GPUTarget:
        """The target kernels compile for now (raises RuntimeError if no backend works)."""
        from kdsl.runtime.backends import current_backend_name

        try:
            name = current_backend_name()
        except BackendUnavailableError as exc:
            raise RuntimeError(f"no active kdsl backend: {exc}") from exc
        t = _target(name)
        return GPUTarget(name, t.name, max(1, t.subgroup_size))

    def get_current_device(self) -> int:
        return 0

    def get_active_torch_device(self) -> Any:
        """The torch device whose tensors kernels take: kdsl's devices share the host's memory,
        so Triton's ``DEVICE = driver.active.get_active_torch_device()`` is the CPU and the
        tutorials' ``torch.randn(..., device=DEVICE)`` arguments work unchanged."""
        try:
            import torch
        except ImportError as exc:
            raise RuntimeError("get_active_torch_device() needs torch, which is not installed") from exc
        return torch.device("cpu")

    def set_current_device(self, device: int) -> None:
        if device != 0:
            raise ValueError(f"kdsl backends have one device (index 0), got {device!r}")


active = ActiveDriver()

__all__ = ["WARPS_PER_UNIT", "ActiveDriver", "DriverUtils", "GPUTarget", "active"]
