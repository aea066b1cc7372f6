"""Host-memory spans of array arguments, shared by the device runtimes.

Every runtime that copies or wraps numpy arguments, or checks device arrays for
overlap, needs the same three facts: the contiguous memory a (possibly strided)
view covers, a byte view over live memory, and the byte range strides reach.
One module keeps the OpenCL, Vulkan and cpu runtimes agreeing on them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from kdsl.errors import LaunchError


def byte_span(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> tuple[int, int]:
    """Bytes ``[lo, hi)`` an array reaches relative to its first element (``(0, 0)`` when empty).

    Negative strides reach below the first element; a strided view reaches
    further than its ``nbytes``.
    """
    if any(int(n) == 0 for n in shape):
        return 0, 0
    lo = sum((int(n) - 1) * int(s) for n, s in zip(shape, strides) if s < 0)
    hi = sum((int(n) - 1) * int(s) for n, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def host_view(obj: Any, name: str, backend: str) -> np.ndarray:
    """A contiguous 1-D view of the memory ``obj`` spans, starting at its first element."""
    arr: np.ndarray = obj if isinstance(obj, np.ndarray) else np.asarray(obj)
    if arr.flags.c_contiguous or arr.size == 0:
        flat: np.ndarray = arr.reshape(-1)
        return flat
    if any(s < 0 for s in arr.strides) or any(s % arr.itemsize for s in arr.strides):
        raise LaunchError(f"arrays with negative or unaligned strides are not supported by the {backend} backend", name)
    extent = byte_span(arr.shape, arr.strides, arr.itemsize)[1] // arr.itemsize
    view: np.ndarray = np.lib.stride_tricks.as_strided(arr, shape=(extent,), strides=(arr.itemsize,))
    return view


def raw_view(addr: int, nbytes: int) -> np.ndarray:
    """A writable byte array over live memory owned by the launch's arguments."""
    raw: Any = (ctypes.c_uint8 * nbytes).from_address(addr)
    out: np.ndarray = np.frombuffer(raw, np.uint8)
    return out


def device_extent(a: Any) -> tuple[int, int]:
    """Byte range ``[lo, hi)`` a device array touches inside its buffer."""
    lo, hi = byte_span(a.shape, a.strides, a.dtype.itemsize)
    off = int(a.offset)
    return off + lo, off + hi


def device_aliased(pointers: list[tuple[Any, bool]]) -> bool:
    """Whether a written device array overlaps another pointer argument in the same buffer."""
    for i, (a, written) in enumerate(pointers):
        if not written:
            continue
        alo, ahi = device_extent(a)
        for j, (b, _) in enumerate(pointers):
            if j != i and b.buffer is a.buffer:
                blo, bhi = device_extent(b)
                if alo < bhi and blo < ahi:
                    return True
    return False
