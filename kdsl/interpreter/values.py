"""How IR values are represented as numpy arrays, and type conversions.

Every runtime value is an ``ndarray`` whose leading axis is the batch of
program instances: length P (one entry per program) or 1 (the same value for
every program -- constants, ``arange``, uniform loads; numpy broadcasting
makes the two interchangeable). A scalar is ``(L,)``, a tile ``(L, *shape)``.

Element representation per IR type (``value_dtype``):

* integers and floats: the matching numpy dtype (``i1`` is ``bool``);
* ``bf16``: ``float32`` arrays holding bf16-representable values (every bf16
  result is rounded with :func:`round_to_bf16`), 2 bytes in memory;
* pointers: ``int64`` byte addresses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kdsl.ir.types import PointerType, ScalarType, Type

Array = np.ndarray[Any, Any]

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def value_dtype(t: Type) -> np.dtype[Any]:
    """numpy dtype of the arrays holding values of IR type ``t``."""
    e = t.scalar
    if isinstance(e, PointerType):
        return _I64
    if e.name == "bf16":
        return _F32
    return e.np_dtype


def storage_dtype(e: ScalarType | PointerType) -> np.dtype[Any]:
    """numpy dtype of one element of ``e`` in memory (i1: a byte, bf16: u16, a pointer: its
    64-bit address, as the value representation holds it)."""
    if isinstance(e, PointerType):
        return _I64
    if e.name == "i1":
        return np.dtype(np.uint8)
    if e.name == "bf16":
        return np.dtype(np.uint16)
    return e.np_dtype


def from_storage(raw: Array, e: ScalarType | PointerType) -> Array:
    """Values read from memory (``storage_dtype``) -> value representation."""
    if isinstance(e, PointerType):
        return raw
    if e.name == "i1":
        flags: Array = raw != 0
        return flags
    if e.name == "bf16":
        return bf16_from_bits(raw)
    return raw


def to_storage(v: Array, e: ScalarType | PointerType) -> Array:
    """Value representation -> what is written to memory."""
    if isinstance(e, PointerType):
        return v
    if e.name == "i1":
        return v.astype(np.uint8)
    if e.name == "bf16":
        return bf16_to_bits(v)
    return v


# --- bf16 -----------------------------------------------------------------------


def bf16_from_bits(bits: Array) -> Array:
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_to_bits(v: Array) -> Array:
    """bits of float32 values that are already bf16-representable."""
    return (np.ascontiguousarray(v, dtype=np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def round_to_bf16(v: Array) -> Array:
    """Round float32/float64 values to the nearest bf16 (ties to even), as float32.

    float64 input is first narrowed with round-to-odd so that the two
    roundings equal one direct rounding.
    """
    if v.dtype == np.float64:
        v = _f64_to_f32_round_to_odd(v)
    elif v.dtype != np.float32:
        v = v.astype(np.float32)
    bits = np.ascontiguousarray(v).view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    nan = np.isnan(v)
    if nan.any():
        rounded = np.where(nan, (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), rounded)
    return rounded.view(np.float32)


def _f64_to_f32_round_to_odd(x: Array) -> Array:
    y = x.astype(np.float32)
    back = y.astype(np.float64)
    inexact = np.isfinite(x) & (back != x)
    if not inexact.any():
        return y
    # truncate toward zero, then force the last bit to 1 when inexact
    too_far = inexact & (np.abs(back) > np.abs(x))
    y = np.where(too_far, np.nextafter(y, np.float32(0)), y)
    bits = y.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    return bits.view(np.float32)


# --- constants and arguments -----------------------------------------------------


def wrap_int(value: int, e: ScalarType) -> int:
    """Python int -> the value of the same bits in ``e`` (two's complement wrap)."""
    bits = e.bitwidth
    value &= (1 << bits) - 1
    if e.is_signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def scalar_array(value: Any, t: Type) -> Array:
    """A uniform (leading axis 1) array holding the scalar ``value`` of type ``t``."""
    e = t.scalar
    if isinstance(e, PointerType):
        return np.array([int(value)], dtype=np.int64)
    if e.name == "i1":
        return np.array([bool(value)])
    if e.is_integer:
        if isinstance(value, (float, np.floating)):
            raise TypeError(f"float {value!r} given for integer type {e}")
        return np.array([wrap_int(int(value), e)], dtype=e.np_dtype)
    if e.name == "bf16":
        return round_to_bf16(np.array([float(value)], dtype=np.float64))
    return np.array([value], dtype=np.float64).astype(e.np_dtype)


def constant_array(value: Any, t: Type) -> Array:
    """The value of ``arith.constant {value} : t`` (leading axis 1)."""
    base = scalar_array(value, t)
    if not t.shape:
        return base
    return np.broadcast_to(base.reshape((1,) * (len(t.shape) + 1)), (1, *t.shape))


def broadcast_lead(x: Array, n: int) -> Array:
    """``x`` with its leading (batch) axis broadcast to ``n`` (a view if it was 1)."""
    if x.shape[0] == n:
        return x
    return np.broadcast_to(x, (n, *x.shape[1:]))
