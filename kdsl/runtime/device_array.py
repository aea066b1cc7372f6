"""Device arrays: ``kdsl.tensor``, ``kdsl.empty``, ``kdsl.zeros`` and friends.

A :class:`DeviceArray` is memory on one backend's :class:`~kdsl.runtime.backend.Device`
plus a numpy-like description (shape, dtype, byte strides). Kernels launched
with device arrays do no host copies and, on device backends, return before
the kernel ran (``kdsl.synchronize()`` or ``.numpy()`` waits). Kernels launched
with numpy arrays copy in and write back around a synchronous launch.

No implicit synchronisation surprises: the only operations that wait for the
device are ``.numpy()``, ``np.asarray(device_array)`` (``__array__`` calls
``.numpy()``: a blocking copy, never a view) and ``kdsl.synchronize()``.
Device arrays deliberately do not expose ``__array_interface__``/``__dlpack__``,
so nothing treats them as host memory by accident.

Backends without a ``device()`` method (interpreter, cpu) share the
:data:`HOST_DEVICE`, whose buffers are 64-byte aligned numpy byte arrays from
the caching :data:`~kdsl.runtime.hostpool.HOST_POOL` (memory of dead arrays is
reused, not page-faulted in again; :func:`empty_cache` releases it).
"""

from __future__ import annotations

import functools
import math
import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from kdsl.errors import BackendUnavailableError, LaunchError
from kdsl.ir.types import scalar_from_numpy
from kdsl.runtime.addresses import HOST_ADDRESSES
from kdsl.runtime.backend import Backend, Device
from kdsl.runtime.backends import get_backend, resolve_backend
from kdsl.runtime.hostpool import ALIGN as ALIGN
from kdsl.runtime.hostpool import HOST_POOL, HostPool
from kdsl.runtime.streaming import is_large


class HostDevice:
    """Host memory as a device: buffers are pooled numpy ``uint8`` arrays, copies are memcpy."""

    name = "host"
    host_memory = True

    def __init__(self, pool: HostPool = HOST_POOL) -> None:
        self.key = f"host:{platform.machine()}"
        self.pool = pool

    def allocate(self, nbytes: int) -> np.ndarray[Any, Any]:
        """``max(nbytes, 1)`` bytes, 64-byte aligned, from the pool (reused memory: uninitialised)."""
        return self.pool.allocate(nbytes)

    def fill_zero(self, buffer: Any, offset: int, nbytes: int) -> None:
        """Zero ``nbytes`` at ``offset`` in place (no temporary array of zeros)."""
        buffer[offset : offset + nbytes] = 0

    def write(self, buffer: Any, src: np.ndarray[Any, Any], offset: int = 0) -> None:
        buffer[offset : offset + src.nbytes] = np.ascontiguousarray(src).reshape(-1).view(np.uint8)

    def read(self, buffer: Any, dst: np.ndarray[Any, Any], offset: int = 0) -> None:
        dst.reshape(-1).view(np.uint8)[:] = buffer[offset : offset + dst.nbytes]

    def synchronize(self) -> None:
        return None


HOST_DEVICE = HostDevice()


def device_of(backend: Backend) -> Device:
    """The backend's device (its ``device()``), or the host device."""
    get = getattr(backend, "device", None)
    if get is None:
        return HOST_DEVICE
    dev: Device = get()
    return dev


class DeviceArray:
    """An n-d array in one backend's device memory (C-contiguous as created here).

    ``buffer`` is the device's opaque buffer, ``offset`` the byte offset of
    element 0 inside it; ``strides`` are in bytes like numpy's. ``_host`` is
    the numpy view for host-memory devices (None elsewhere): what kernels on
    such backends receive. ``_key`` is the launch fast path's specialisation
    fact (backend, dtype, 16-byte alignment), computed once.
    """

    __slots__ = ("__weakref__", "_host", "_key", "backend", "buffer", "device", "dtype", "offset", "shape", "strides")

    def __init__(
        self,
        buffer: Any,
        shape: tuple[int, ...],
        dtype: np.dtype[Any],
        backend: str,
        device: Device,
        offset: int = 0,
        strides: tuple[int, ...] | None = None,
    ) -> None:
        self.buffer = buffer
        self.shape = shape
        self.dtype = dtype
        self.backend = backend
        self.device = device
        self.offset = offset
        self.strides = strides if strides is not None else _c_strides(shape, dtype.itemsize)
        self._host: np.ndarray[Any, Any] | None = None
        if device.host_memory:
            self._host = np.ndarray(shape, dtype, buffer=buffer, offset=offset, strides=self.strides)
        # str: hash cached; "L": large (kdsl.runtime.streaming), a fact of the specialisation
        self._key = f"D:{backend}:{dtype.str}:{'a16' if offset % 16 == 0 else 'u'}{':L' if self.large else ''}"

    # --- numpy-like description ------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def large(self) -> bool:
        """At least :data:`kdsl.runtime.streaming.LARGE_BYTES`: kernels may stream their stores to it."""
        return is_large(self.nbytes)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, backend={self.backend!r})"

    def data_ptr(self) -> int:
        """The address of element 0 as kernels on this array's backend see it (torch's ``data_ptr``).

        What Triton's grouped GEMM stores in an address array and the kernel casts back with
        ``.to(kl.pointer_type(...))``. Host memory (cpu, interpreter): the host address, recorded
        so the interpreter can check accesses through it (:mod:`kdsl.runtime.addresses`).
        Devices with an address space of their own (vulkan): the buffer's device address. The
        address stays valid while this array lives; passing it to a kernel on another backend
        is undefined. OpenCL 1.2 buffers have no address, so opencl raises ``TypeError``.
        """
        if self._host is not None:
            return HOST_ADDRESSES.record(self._host)
        address = getattr(self.device, "address", None)
        if address is None:
            raise TypeError(
                f"data_ptr() of a device array on backend '{self.backend}': its buffers have no address "
                "a kernel can use (OpenCL 1.2); pass the arrays as kernel arguments instead"
            )
        return int(address(self.buffer, self.offset))

    # --- data movement ---------------------------------------------------------------
    def numpy(self) -> np.ndarray[Any, Any]:
        """A new host array with the contents (waits for queued launches)."""
        out = np.empty(self.shape, self.dtype)
        if out.nbytes:
            self.device.read(self.buffer, out, self.offset)
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def copy_from(self, src: Any) -> DeviceArray:
        """Overwrite the contents with ``src`` (same shape; cast to this dtype)."""
        arr = np.ascontiguousarray(np.asarray(src), dtype=self.dtype)
        if arr.shape != self.shape:
            raise ValueError(f"copy_from: shape {arr.shape} does not match {self.shape}")
        if arr.nbytes:
            self.device.write(self.buffer, arr, self.offset)
        return self


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out: list[int] = []
    step = itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = tuple(int(d) for d in dims)
    if any(d < 0 for d in out):
        raise ValueError(f"negative dimension in shape {out}")
    return out


def _dtype(dtype: Any) -> np.dtype[Any]:
    """``dtype`` as a numpy dtype a device array can hold; cached per spelling (validating it was
    40 % of ``kdsl.empty``, which every op calls for its output)."""
    try:
        hash(dtype)
    except TypeError:  # an unhashable spelling (a dtype-like object): checked every time
        return _dtype_checked(dtype)
    return _dtype_cached(dtype)


@functools.lru_cache(maxsize=256)
def _dtype_cached(dtype: Any) -> np.dtype[Any]:
    return _dtype_checked(dtype)


def _dtype_checked(dtype: Any) -> np.dtype[Any]:
    from kdsl.ir.types import ScalarType

    dt = dtype.np_dtype if isinstance(dtype, ScalarType) else np.dtype(dtype)
    try:
        scalar_from_numpy(dt)
    except TypeError as exc:
        raise TypeError(f"kdsl device arrays cannot hold dtype {dt}") from exc
    return np.dtype(dt)


def _backend(name: str | None) -> Backend:
    return resolve_backend(name) if name is not None else resolve_backend()


def empty(shape: int | Sequence[int], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """An uninitialised device array on ``backend`` (default: the current backend)."""
    be = _backend(backend)
    dev = device_of(be)
    shp, dt = _shape(shape), _dtype(dtype)
    nbytes = math.prod(shp) * dt.itemsize
    return DeviceArray(dev.allocate(nbytes), shp, dt, be.name, dev)


def zeros(shape: int | Sequence[int], dtype: Any = np.float32, backend: str | None = None) -> DeviceArray:
    """A zero-filled device array (host memory: zeroed in place; else one copy of zeros)."""
    return _zero(empty(shape, dtype, backend))


def _zero(out: DeviceArray) -> DeviceArray:
    """Fill ``out`` with zeros: pooled host buffers hold old data, so always explicitly."""
    if out.nbytes:
        if isinstance(out.device, HostDevice):
            out.device.fill_zero(out.buffer, out.offset, out.nbytes)
        else:
            out.device.write(out.buffer, np.zeros(out.shape, out.dtype), out.offset)
    return out


def tensor(data: Any, backend: str | None = None, dtype: Any = None) -> DeviceArray:
    """Copy ``data`` (numpy array, array-like, DeviceArray) to ``backend``'s device."""
    if isinstance(data, DeviceArray):
        data = data.numpy()
    arr = np.asarray(data) if dtype is None else np.asarray(data, dtype=_dtype(dtype))
    out = empty(arr.shape, arr.dtype, backend)
    if out.nbytes:
        out.device.write(out.buffer, np.ascontiguousarray(arr), 0)
    return out


def empty_like(a: Any, dtype: Any = None, backend: str | None = None) -> DeviceArray:
    """Like ``empty`` with ``a``'s shape/dtype (and backend, if ``a`` is a DeviceArray)."""
    if backend is None and isinstance(a, DeviceArray):
        backend = a.backend
    a_dtype = a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
    return empty(tuple(a.shape) if hasattr(a, "shape") else np.shape(a), dtype or a_dtype, backend)


def zeros_like(a: Any, dtype: Any = None, backend: str | None = None) -> DeviceArray:
    return _zero(empty_like(a, dtype, backend))


def empty_cache() -> int:
    """Release the host pool's cached memory (cpu/interpreter device arrays); returns bytes freed.

    Memory of live arrays (and of views of them) is never touched."""
    return HOST_POOL.empty_cache()


def synchronize(backend: str | None = None) -> None:
    """Wait for every queued launch/copy on ``backend`` (default: every backend in use)."""
    from kdsl.runtime.backends import instantiated_backends

    if backend is not None:
        device_of(get_backend(backend)).synchronize()
        return
    for name in instantiated_backends():
        try:
            device = device_of(get_backend(name))
        except BackendUnavailableError:
            continue  # instantiated but without a driver: nothing can be queued on it
        device.synchronize()


def check_backend(arr: DeviceArray, backend: str, param: str, kernel: str) -> None:
    if arr.backend != backend:
        raise LaunchError(
            f"device array lives on backend '{arr.backend}' but the launch runs on '{backend}' "
            f"(copy it with kdsl.tensor(a.numpy(), backend='{backend}'))",
            param,
            kernel,
        )
