"""C-style integer arithmetic on numpy arrays.

numpy arrays already wrap on add/sub/mul/neg; what needs care is what numpy
does differently from C: ``//`` and ``%`` floor instead of truncating,
division by zero (here: 0, so masked-off lanes never trap), ``INT_MIN / -1``
(wraps to ``INT_MIN``, remainder 0) and shift amounts outside
``[0, bitwidth)``: defined here as 0 for ``shl`` and logical ``shr``, and a
fill with the sign bit for arithmetic ``shr`` (amounts are read as unsigned,
so a negative amount counts as a huge one).

``i1`` values (numpy ``bool``) are computed as ``u8`` and reduced modulo 2.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kdsl.interpreter.values import Array
from kdsl.ir.types import ScalarType

Binary = Callable[[Array, Array], Array]


def sdiv(a: Array, b: Array) -> Array:
    zero = b == 0
    minus1 = b == -1
    special = zero | minus1
    bs = np.where(special, b.dtype.type(1), b)
    r = np.fmod(a, bs)
    q = (a - r) // bs
    if minus1.any():
        q = np.where(minus1, -a, q)
    return np.where(zero, b.dtype.type(0), q)


def srem(a: Array, b: Array) -> Array:
    special = (b == 0) | (b == -1)
    bs = np.where(special, b.dtype.type(1), b)
    r = np.fmod(a, bs)
    return np.where(special, b.dtype.type(0), r)


def udiv(a: Array, b: Array) -> Array:
    zero = b == 0
    bs = np.where(zero, b.dtype.type(1), b)
    return np.where(zero, b.dtype.type(0), a // bs)


def urem(a: Array, b: Array) -> Array:
    zero = b == 0
    bs = np.where(zero, b.dtype.type(1), b)
    return np.where(zero, b.dtype.type(0), a % bs)


def _unsigned(dtype: np.dtype[np.generic]) -> np.dtype[np.generic]:
    return np.dtype(f"u{dtype.itemsize}")


def make_shl(bits: int) -> Binary:
    def shl(a: Array, b: Array) -> Array:
        amt = b.view(_unsigned(b.dtype))
        big = amt >= bits
        s = np.where(big, 0, amt).astype(a.dtype)
        out: Array = np.where(big, a.dtype.type(0), np.left_shift(a, s))
        return out

    return shl


def make_shr(bits: int, signed: bool) -> Binary:
    def shr(a: Array, b: Array) -> Array:
        amt = b.view(_unsigned(b.dtype))
        big = amt >= bits
        s = np.where(big, bits - 1 if signed else 0, amt).astype(a.dtype)
        r: Array = np.right_shift(a, s)
        if signed:
            return r  # amount clamped to bits-1: sign fill
        out: Array = np.where(big, a.dtype.type(0), r)
        return out

    return shr


def int_binary(name: str, e: ScalarType) -> Binary:
    """The function for integer ``arith.<name>`` on element type ``e``."""
    if e.name == "i1":
        inner = int_binary(name, ScalarType("u8")) if name not in ("shl", "shr") else _shift_i1(name)
        return lambda a, b: (inner(a.view(np.uint8), b.view(np.uint8)) & np.uint8(1)).astype(bool)
    signed = e.is_signed
    table: dict[str, Binary] = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "div": sdiv if signed else udiv,
        "rem": srem if signed else urem,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
        "max": np.maximum,
        "min": np.minimum,
        "shl": make_shl(e.bitwidth),
        "shr": make_shr(e.bitwidth, signed),
    }
    return table[name]


def _shift_i1(name: str) -> Binary:
    # a 1-bit value shifted by >= 1 is 0 (both directions; i1 is unsigned)
    return lambda a, b: np.where(b != 0, np.uint8(0), a)


def umulhi(e: ScalarType) -> Binary:
    """High half of the double-width product, by the type's signedness."""
    if e.bitwidth == 32:
        wide = np.int64 if e.is_signed else np.uint64
        out = e.np_dtype

        def mulhi32(a: Array, b: Array) -> Array:
            p = a.astype(wide) * b.astype(wide)
            return (p >> wide(32)).astype(out)

        return mulhi32

    def mulhi64(a: Array, b: Array) -> Array:
        ua, ub = a.view(np.uint64), b.view(np.uint64)
        hi = _umulhi64(ua, ub)
        if e.is_signed:
            hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
            return hi.view(np.int64)
        return hi

    return mulhi64


def _umulhi64(a: Array, b: Array) -> Array:
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = a & m32, a >> s32
    b_lo, b_hi = b & m32, b >> s32
    ll = a_lo * b_lo
    lh = a_lo * b_hi
    hl = a_hi * b_lo
    hh = a_hi * b_hi
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi: Array = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    return hi
