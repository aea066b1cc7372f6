"""``kdsl.reinterpret(array, dtype)``: pass an array's memory as elements of another type.

Triton's ``triton.reinterpret`` is how a kernel receives element types the host library cannot
hold -- ``triton.reinterpret(x_uint8, tl.float8e5)`` -- and kdsl keeps that spelling: numpy
has neither fp8 nor bfloat16, so a ``uint8`` (``uint16``) array viewed this way is how such data
reaches a kernel. torch tensors of ``float8_*``/``bfloat16`` dtype and ml_dtypes arrays are
recognised directly (:func:`host_array`), without a wrapper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kdsl.ir.types import HOST_DTYPE_NAMES, PointerType, ScalarType, scalar_from_numpy
from kdsl.runtime.addresses import HOST_ADDRESSES
from kdsl.runtime.device_array import DeviceArray

_STORAGE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Reinterpreted:
    """An array (numpy, or a kdsl device array) whose elements a kernel reads as ``dtype``."""

    __slots__ = ("base", "dtype")

    def __init__(self, base: np.ndarray[Any, Any] | DeviceArray, dtype: ScalarType) -> None:
        self.base = base
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.base.shape)

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte strides, as numpy's (so ``TensorDescriptor.from_tensor`` takes a reinterpreted array)."""
        return tuple(self.base.strides)

    def data_ptr(self) -> int:
        """The address of element 0 (recorded for the interpreter: :mod:`kdsl.runtime.addresses`)."""
        if isinstance(self.base, DeviceArray):
            return self.base.data_ptr()
        return HOST_ADDRESSES.record(self.base)

    def __repr__(self) -> str:
        return f"kdsl.reinterpret(shape={self.shape}, dtype={self.dtype})"


def reinterpret(array: Any, dtype: Any) -> Reinterpreted:
    """View ``array`` (numpy, torch CPU tensor, or another ``reinterpret``) as elements of ``dtype``
    (``kl.float8e5``, ``kl.bfloat16``, ...) when passed to a kernel; sizes must match."""
    from kdsl.language.core import constexpr

    dt = dtype.value if isinstance(dtype, constexpr) else dtype
    if isinstance(dt, PointerType) or not isinstance(dt, ScalarType):
        raise TypeError(f"kdsl.reinterpret: dtype must be a kl scalar type, got {dt!r}")
    if isinstance(array, Reinterpreted):
        array = array.base
    if isinstance(array, DeviceArray):  # stays on the device; the launch passes its buffer
        base: np.ndarray[Any, Any] | DeviceArray = array
    else:
        found = host_array(array)
        if found is None:
            raise TypeError(f"kdsl.reinterpret: cannot view {type(array).__name__} as an array")
        base = found[0]
    if base.dtype.itemsize != dt.itemsize:
        raise TypeError(f"kdsl.reinterpret: {base.dtype} elements are {base.dtype.itemsize} bytes, "
                        f"{dt} elements {dt.itemsize}")  # fmt: skip
    return Reinterpreted(base if isinstance(base, DeviceArray) else base.view(_STORAGE[dt.itemsize]), dt)


def device_base(value: Any) -> DeviceArray | None:
    """The kdsl device array a :class:`Reinterpreted` wraps (None for anything else)."""
    if isinstance(value, Reinterpreted) and isinstance(value.base, DeviceArray):
        return value.base
    return None


def host_array(value: Any) -> tuple[np.ndarray[Any, Any], ScalarType] | None:
    """A numpy view (no copy) of an array-like argument and the element type a kernel sees,
    or None if ``value`` is not array-like. Types numpy lacks are viewed as unsigned integers of
    their size (the kernel reads the bits as the element type). Raises ``TypeError`` for a dtype
    kdsl has no type for."""
    if isinstance(value, Reinterpreted):
        return None if isinstance(value.base, DeviceArray) else (value.base, value.dtype)
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "__array_interface__"):
        arr = np.asarray(value)
    elif hasattr(value, "__dlpack__") and not isinstance(value, (int, float, bool, np.generic)):
        if getattr(value, "requires_grad", False):  # torch refuses to export those; Triton takes their data_ptr
            value = value.detach()  # same storage: the kernel reads and writes the tensor itself
        name = str(getattr(value, "dtype", "")).rpartition(".")[2]
        if name in HOST_DTYPE_NAMES:  # torch float8_* / bfloat16: numpy cannot import these
            import torch

            elem = ScalarType(HOST_DTYPE_NAMES[name])
            return np.from_dlpack(value.view(getattr(torch, f"uint{8 * elem.itemsize}"))), elem
        arr = np.from_dlpack(value)
    else:
        return None
    elem = scalar_from_numpy(arr.dtype)
    if arr.dtype.name in HOST_DTYPE_NAMES:
        arr = arr.view(_STORAGE[elem.itemsize])
    return arr, elem


def unwrap(value: Any) -> Any:
    """What the backend receives for ``value``: the array inside a :class:`Reinterpreted`."""
    return value.base if isinstance(value, Reinterpreted) else value


def storage_view(value: Any) -> np.ndarray[Any, Any] | None:
    """What a backend receives for an array-like argument: its bytes as a plain numpy array."""
    found = host_array(value)
    return None if found is None else found[0]


__all__ = ["Reinterpreted", "device_base", "host_array", "reinterpret", "storage_view", "unwrap"]
