"""Plumbing shared by the op wrappers: arrays of either kind, launches, profiling.

Every wrapper in :mod:`kdsl.ops` accepts numpy arrays *or* kdsl device arrays
(:class:`kdsl.DeviceArray`) and returns outputs of the same kind, allocated on
the same backend: numpy in, numpy out (each launch copies in and out on device
backends); device arrays in, device arrays out (no host copies, launches may
be asynchronous). Models keep their weights as device arrays for that reason.

All launches go through :func:`launch`, so that a :class:`Profiler` installed
with :func:`profile` sees every kernel by name: the demo's per-kernel table
and its progress line are built on that hook.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import kdsl
from kdsl.runtime.backends import current_backend_name
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.hostpool import HOST_POOL
from kdsl.runtime.jit import KernelFunction

Array = Any  # np.ndarray | kdsl.DeviceArray (kept loose: both quack alike for the wrappers)


def is_device(a: Array) -> bool:
    return isinstance(a, DeviceArray)


def backend_of(like: Array) -> str:
    """The backend an op on ``like`` runs on: a device array's own, else the current one."""
    return like.backend if isinstance(like, DeviceArray) else current_backend_name()


def row_programs(like: Array, n_rows: int, max_programs: int | None) -> int:
    """Programs of a row kernel over ``n_rows`` rows of ``like``: ``max_programs`` when given
    (capped at ``n_rows``). By default persistent programs, at most 256, on the cpu and OpenCL
    backends, where a program per row only adds scheduling; one program per row on vulkan, whose
    one-invocation mapping counts a program's row loop against lavapipe's loop cap and the
    shader's pass budget (docs/VULKAN.md): 4096 x 4096 softmax ran 1420 ms with 256 programs
    there, 116 ms with one per row."""
    if max_programs is None:
        max_programs = n_rows if backend_of(like) == "vulkan" else 256
    return max(1, min(n_rows, max_programs))


# numpy outputs from this size on come from the host caching allocator (kdsl/runtime/hostpool.py)
POOLED_OUTPUT_BYTES = 1 << 20


def empty(shape: tuple[int, ...], dtype: Any, like: Array) -> Array:
    """An uninitialised output of the same kind (and backend) as ``like``.

    A large numpy output is a view of a block of the host caching allocator, returned to it when
    the caller drops the array: a fresh 64 MiB ``np.empty`` is a page fault (and the kernel
    zeroing the page) per 4 KiB at first touch, which cost a 4096x4096 softmax on numpy
    arguments as much as the kernel itself (0.6x the copy bandwidth; 1.0x with ``out=``).
    """
    if isinstance(like, DeviceArray):
        return kdsl.empty(shape, dtype, backend=like.backend)
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if nbytes < POOLED_OUTPUT_BYTES or HOST_POOL.limit == 0:
        return np.empty(shape, dt)
    return HOST_POOL.allocate(nbytes).view(dt).reshape(shape)


def zeros(shape: tuple[int, ...], dtype: Any, like: Array) -> Array:
    if isinstance(like, DeviceArray):
        return kdsl.zeros(shape, dtype, backend=like.backend)
    return np.zeros(shape, dtype)


def reshape(a: Array, shape: tuple[int, ...]) -> Array:
    """A reshaped view of a C-contiguous array (device arrays share the buffer)."""
    if not isinstance(a, DeviceArray):
        return a.reshape(shape)
    if int(np.prod(shape, dtype=np.int64)) != a.size:
        raise ValueError(f"cannot reshape an array of size {a.size} into {shape}")
    return DeviceArray(a.buffer, tuple(shape), a.dtype, a.backend, a.device, a.offset)


def strides(a: Array) -> tuple[int, ...]:
    """Strides in elements (what kernels add to pointers), not bytes."""
    return tuple(int(s) // a.itemsize for s in a.strides)


def to_numpy(a: Array) -> np.ndarray[Any, Any]:
    """A host copy of a device array (waits for it), or the numpy array itself."""
    return a.numpy() if isinstance(a, DeviceArray) else np.asarray(a)


def pow2(n: int, lo: int = 1, hi: int | None = None) -> int:
    """``next_power_of_2(n)`` clamped to ``[lo, hi]``: a tile extent covering ``n``."""
    p = max(kdsl.next_power_of_2(n), lo)
    return min(p, hi) if hi is not None else p


# --- profiling ----------------------------------------------------------------


@dataclass
class KernelStat:
    calls: int = 0
    seconds: float = 0.0


@dataclass
class Profiler:
    """Per-kernel launch counts and wall time (each launch synchronised when ``sync``).

    ``on_launch(name)`` is called before each launch (the demo's progress line).
    Timing synchronises the device after each launch, so the table shows where
    the time goes even on asynchronous backends, at the price of the overlap.
    """

    sync: bool = True
    on_launch: Callable[[str], None] | None = None
    stats: dict[str, KernelStat] = field(default_factory=dict)

    def record(self, name: str, seconds: float) -> None:
        st = self.stats.setdefault(name, KernelStat())
        st.calls += 1
        st.seconds += seconds

    def total(self) -> float:
        return sum(s.seconds for s in self.stats.values())

    def reset(self) -> None:
        self.stats.clear()


_PROFILER: contextvars.ContextVar[Profiler | None] = contextvars.ContextVar("kdsl_ops_profiler", default=None)


@contextlib.contextmanager
def profile(profiler: Profiler | None = None) -> Iterator[Profiler]:
    """Record every :func:`launch` inside the block into ``profiler`` (a new one by default)."""
    prof = profiler if profiler is not None else Profiler()
    token = _PROFILER.set(prof)
    try:
        yield prof
    finally:
        _PROFILER.reset(token)


def launch(kernel: KernelFunction, grid: Any, *args: Any, **meta: Any) -> None:
    """``kernel[grid](*args, **meta)`` on the backend of its device arrays, timed by the active
    profiler if there is one.

    An op runs where its inputs live (:func:`backend_of`), whatever backend is current: a
    kernel launch itself runs on the current backend and refuses arrays of another one.
    """
    home = next((a.backend for a in args if isinstance(a, DeviceArray)), None)
    if home is not None and home != current_backend_name():
        with kdsl.backend(home):
            _launch(kernel, grid, args, meta)
        return
    _launch(kernel, grid, args, meta)


def _launch(kernel: KernelFunction, grid: Any, args: tuple[Any, ...], meta: dict[str, Any]) -> None:
    prof = _PROFILER.get()
    if prof is None:
        kernel[grid](*args, **meta)
        return
    name = kernel.__name__
    if prof.on_launch is not None:
        prof.on_launch(name)
    t0 = time.perf_counter()
    kernel[grid](*args, **meta)
    if prof.sync:
        kdsl.synchronize()
    prof.record(name, time.perf_counter() - t0)
