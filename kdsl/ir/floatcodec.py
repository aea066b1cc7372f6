"""Exact conversions between Python floats and the codes of a :class:`FloatFormat`.

This is the reference the generated fp8 code is tested against and what the frontend uses to
encode fp8 constants. Rounding is to nearest, ties to even (``rtz=True``: toward zero). Values
beyond the largest finite one become infinity in ``ieee`` formats (RTNE) and saturate to the
largest finite value in formats without infinities (as NVIDIA's ``cvt.rn.satfinite`` does, which
is what Triton emits for e4m3); under RTZ a finite value never becomes infinite.
"""

from __future__ import annotations

import math
from fractions import Fraction

from kdsl.ir.types import FloatFormat


def encode(value: float, fmt: FloatFormat, rtz: bool = False) -> int:
    """The code (``fmt.width`` bits, sign in the top bit) of ``value`` rounded to ``fmt``."""
    sign_bit = 1 << (fmt.width - 1)
    negative = math.copysign(1.0, value) < 0
    if math.isnan(value):
        return nan_code(fmt, negative)
    mag = _magnitude(abs(value), fmt, rtz)
    if fmt.special == "fnuz" and mag == 0:
        return 0
    return (sign_bit if negative else 0) | mag


def nan_code(fmt: FloatFormat, negative: bool = False) -> int:
    """The NaN ``encode`` gives (quiet; formats without NaN give their largest value)."""
    sign_bit = (1 << (fmt.width - 1)) if negative else 0
    if fmt.special == "ieee":
        return sign_bit | ((1 << fmt.ebits) - 1) << fmt.mbits | (1 << (fmt.mbits - 1))
    if fmt.special == "fn":
        return sign_bit | ((1 << (fmt.ebits + fmt.mbits)) - 1)
    if fmt.special == "fnuz":
        return 1 << (fmt.width - 1)
    return sign_bit | fmt.max_code


def _magnitude(a: float, fmt: FloatFormat, rtz: bool) -> int:
    if math.isinf(a):
        return fmt.inf_code if fmt.inf_code is not None else fmt.max_code
    if a == 0.0:
        return 0
    emin = 1 - fmt.bias
    e = max(math.frexp(a)[1] - 1, emin)  # exponent of the binade (subnormals: emin)
    n = Fraction(a) / Fraction(2) ** (e - fmt.mbits)  # in units of that binade's ulp
    q = math.floor(n) if rtz else _round_half_even(n)
    mag = q if e == emin and q < (1 << fmt.mbits) else ((e + fmt.bias) << fmt.mbits) + q - (1 << fmt.mbits)
    if mag > fmt.max_code:
        return fmt.inf_code if (fmt.inf_code is not None and not rtz) else fmt.max_code
    return mag


def _round_half_even(x: Fraction) -> int:
    lo = math.floor(x)
    rest = x - lo
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and lo % 2):
        return lo + 1
    return lo


def decode(code: int, fmt: FloatFormat) -> float:
    """The value of ``code`` (NaN codes give ``nan``)."""
    sign = -1.0 if code >> (fmt.width - 1) & 1 else 1.0
    exp = code >> fmt.mbits & ((1 << fmt.ebits) - 1)
    man = code & ((1 << fmt.mbits) - 1)
    top = (1 << fmt.ebits) - 1
    if fmt.special == "ieee" and exp == top:
        return sign * math.inf if man == 0 else math.nan
    if fmt.special == "fn" and exp == top and man == (1 << fmt.mbits) - 1:
        return math.nan
    if fmt.special == "fnuz" and code == 1 << (fmt.width - 1):
        return math.nan
    if exp == 0:
        return sign * math.ldexp(man, 1 - fmt.bias - fmt.mbits)
    return sign * math.ldexp((1 << fmt.mbits) + man, exp - fmt.bias - fmt.mbits)


__all__ = ["decode", "encode", "nan_code"]
