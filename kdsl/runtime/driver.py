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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdsl.errors import BackendUnavailableError


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
        bytes per work-group; ``max_num_regs``: 32-bit register slots per compute unit
        (vector registers x lanes, an estimate); ``warpSize``: sub-group size (1 without
        sub-groups); ``max_threads_per_sm``: work-items per work-group; ``sm_clock_rate``: kHz;
        ``arch``: the device name."""
        if device not in (None, 0):
            raise ValueError(f"kdsl backends have one device (index 0), got {device!r}")
        t = _target()
        return {
            "multiprocessor_count": t.compute_units,
            "max_shared_mem": t.local_memory_bytes,
            "max_num_regs": t.registers * max(1, t.simd_bytes // 4),
            "warpSize": max(1, t.subgroup_size),
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

    def set_current_device(self, device: int) -> None:
        if device != 0:
            raise ValueError(f"kdsl backends have one device (index 0), got {device!r}")


active = ActiveDriver()

__all__ = ["ActiveDriver", "DriverUtils", "GPUTarget", "active"]
