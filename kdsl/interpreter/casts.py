"""``arith.cast`` and ``arith.bitcast`` on value arrays.

Out-of-range float -> int conversions (undefined in the IR) saturate to the
target's range and NaN becomes 0 -- what GPU ``cvt.rzi`` does -- so the
interpreter is deterministic and never emits numpy warnings.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kdsl.interpreter.values import Array, round_to_bf16, value_dtype
from kdsl.ir.types import PointerType, ScalarType, Type

Fn = Callable[[Array], Array]


def make_cast(src_t: Type, dst_t: Type) -> Fn:
    """A function converting arrays of ``src_t`` values to ``dst_t`` values."""
    src, dst = src_t.scalar, dst_t.scalar
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return _pointer_cast(src, dst)
    if src == dst:
        return lambda x: x
    if dst.name == "i1":
        return lambda x: x != 0
    if dst.is_float:
        return _to_float(src, dst)
    if src.is_float:
        return lambda x: float_to_int(x, dst)
    np_dst = dst.np_dtype
    return lambda x: x.astype(np_dst)


def _pointer_cast(src: ScalarType | PointerType, dst: ScalarType | PointerType) -> Fn:
    if isinstance(dst, ScalarType) and dst.name == "u64":
        return lambda x: x.astype(np.uint64)
    return lambda x: x.astype(np.int64)


def _to_float(src: ScalarType, dst: ScalarType) -> Fn:
    if dst.name == "bf16":
        if src.is_float and src.name != "f64":
            return lambda x: round_to_bf16(x.astype(np.float32))
        return lambda x: round_to_bf16(x.astype(np.float64))
    np_dst = dst.np_dtype
    return lambda x: x.astype(np_dst)


def float_to_int(x: Array, dst: ScalarType) -> Array:
    """Truncate toward zero; saturate out-of-range values, NaN -> 0."""
    bits = dst.bitwidth
    lo = -(2.0 ** (bits - 1)) if dst.is_signed else 0.0
    hi = 2.0 ** (bits - 1) if dst.is_signed else 2.0**bits  # exclusive
    t = np.trunc(x.astype(np.float64))
    too_low = t < lo
    too_high = t >= hi
    nan = np.isnan(t)
    bad = too_low | too_high | nan
    np_dst = dst.np_dtype
    if not bad.any():
        return t.astype(np_dst)
    lo_int = -(1 << (bits - 1)) if dst.is_signed else 0
    hi_int = (1 << (bits - 1)) - 1 if dst.is_signed else (1 << bits) - 1
    out: Array = np.where(bad, 0.0, t).astype(np_dst)
    out = np.where(too_low, np_dst.type(lo_int), out)
    out = np.where(too_high, np_dst.type(hi_int), out)
    return out


def make_bitcast(src_t: Type, dst_t: Type) -> Fn:
    """Reinterpret bits; bf16 goes through its 16-bit pattern."""
    src, dst = src_t.scalar, dst_t.scalar
    if isinstance(src, PointerType) or src == dst:
        return lambda x: x
    assert isinstance(dst, ScalarType)
    if dst.name == "i1":
        return lambda x: x
    out_dtype = value_dtype(dst_t)
    if src.name == "bf16":
        return lambda x: (np.ascontiguousarray(x).view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(out_dtype)
    if dst.name == "bf16":
        return lambda x: (np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    return lambda x: np.ascontiguousarray(x).view(out_dtype)
