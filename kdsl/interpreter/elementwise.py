"""Elementwise ``arith`` and ``math`` ops as numpy functions, chosen per type.

Floats: f32/f64 compute natively (numpy's +-*/ and sqrt are correctly
rounded); f16 and bf16 compute in f32 and round back once per op, so each op
is correctly rounded for the narrow type where the docstring demands it.
Transcendentals on f32 are evaluated in f64 and rounded (more accurate than
the "few ulp" contract). ``fma`` is exact: f16 in f64 (exact), f32 in f64 then
rounded, f64 with exact rational arithmetic per element (slow but correct).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from kdsl.interpreter.intops import int_binary, umulhi
from kdsl.interpreter.values import Array, round_to_bf16
from kdsl.ir.types import ScalarType

Unary = Callable[[Array], Array]
Binary = Callable[[Array, Array], Array]
Ternary = Callable[[Array, Array, Array], Array]

_FLOAT_BINARY: dict[str, Binary] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "rem": np.fmod,
    "div_rn": np.divide,
}


def _narrow(e: ScalarType) -> Callable[[Array], Array]:
    """Rounds a wider result back to ``e``'s value representation."""
    if e.name == "bf16":
        return round_to_bf16
    dt = e.np_dtype
    return lambda x: x.astype(dt)


def _wide(e: ScalarType, precise: bool) -> np.dtype[Any]:
    """The dtype a float op on ``e`` is computed in."""
    if e.name == "f64" or (precise and e.name == "f32"):
        return np.dtype(np.float64)
    if e.name == "f32":
        return np.dtype(np.float32)
    return np.dtype(np.float32) if not precise else np.dtype(np.float64)


def float_binary(name: str, e: ScalarType, propagate_nan: bool = False) -> Binary:
    if name in ("max", "min"):
        if propagate_nan:
            return np.maximum if name == "max" else np.minimum
        return np.fmax if name == "max" else np.fmin  # exact in any float type
    if name == "pow":
        return _lift2(np.power, e, precise=True)
    base = _FLOAT_BINARY[name]
    if e.name in ("f32", "f64", "f16"):
        return base  # correctly rounded natively (f16: numpy rounds once from f32; fmod is exact)
    return _lift2(base, e, precise=False)


def _lift2(fn: Binary, e: ScalarType, precise: bool) -> Binary:
    wide = _wide(e, precise)
    narrow = _narrow(e)
    if e.name == "f64":
        return fn
    return lambda a, b: narrow(fn(a.astype(wide), b.astype(wide)))


def binary(name: str, e: ScalarType, attrs: dict[str, Any]) -> Binary:
    """Function for ``arith.<name>`` / ``math.<name>`` with two operands of type ``e``."""
    if name == "umulhi":
        return umulhi(e)
    if e.is_float:
        return float_binary(name, e, bool(attrs.get("propagate_nan", False)))
    return int_binary(name, e)


def neg(e: ScalarType) -> Unary:
    if e.name == "i1":
        return lambda x: x
    return np.negative


# --- math unary -------------------------------------------------------------------


def _rsqrt(x: Array) -> Array:
    return np.divide(1.0, np.sqrt(x))


def _erf_f64(x: Array) -> Array:
    out = np.frompyfunc(math.erf, 1, 1)(x)
    return np.asarray(out, dtype=np.float64).reshape(x.shape)


_ERF_TAYLOR_TERMS = 60


def erf_series(x: Array) -> Array:
    """erf in float64 to ~1e-13 relative: Taylor series for |x| <= 3, a
    continued fraction for erfc beyond, exactly +-1 from 6 on. Accurate
    enough to round correctly to f32/f16 in practice, and fully vectorised."""
    ax = np.abs(x)
    small = ax <= 3.0
    xs = np.where(small, x, 0.0)
    x2 = xs * xs
    term = xs.copy()
    total = xs.copy()
    for n in range(1, _ERF_TAYLOR_TERMS):
        term = term * (-x2) / n
        total = total + term / (2 * n + 1)
    res_small = total * (2.0 / math.sqrt(math.pi))
    xl = np.clip(np.where(small, 6.0, ax), 3.0, 6.0)
    f = xl.copy()
    for k in range(60, 0, -1):
        f = xl + (k / 2.0) / f
    erfc = np.exp(-xl * xl) / (math.sqrt(math.pi) * f)
    res_large = np.where(ax >= 6.0, 1.0, 1.0 - erfc) * np.sign(x)
    res = np.where(small, res_small, res_large)
    return np.where(np.isnan(x) | (x == 0), x, res)  # erf(+-0) = +-0 (the series' products lose -0)


_UNARY: dict[str, Unary] = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "sqrt": np.sqrt,
    "sqrt_rn": np.sqrt,
    "rsqrt": _rsqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "abs": np.abs,
}

_EXACT_NATIVE = ("sqrt", "sqrt_rn", "floor", "ceil", "abs")


def unary(name: str, e: ScalarType) -> Unary:
    """Function for one-operand ``math.<name>`` on element type ``e``."""
    if name == "abs" and e.is_integer:
        return np.abs if e.is_signed else (lambda x: x)  # np.abs wraps INT_MIN
    if name == "erf":
        if e.name == "f64":
            return _erf_f64
        narrow = _narrow(e)
        return lambda x: narrow(erf_series(x.astype(np.float64)))
    fn = _UNARY[name]
    if e.name == "f64" or (name in _EXACT_NATIVE and e.name != "bf16"):
        return fn
    narrow = _narrow(e)
    return lambda x: narrow(fn(x.astype(np.float64)))


# --- fma --------------------------------------------------------------------------


def fma(e: ScalarType) -> Ternary:
    if e.name == "f64":
        return _fma_f64
    narrow = _narrow(e)

    def fma_narrow(a: Array, b: Array, c: Array) -> Array:
        w = np.float64
        p = a.astype(w) * b.astype(w)  # exact: 2 x 24 bits fit in 53
        return narrow(_add_round_to_odd(p, c.astype(w)))

    return fma_narrow


def _add_round_to_odd(p: Array, c: Array) -> Array:
    """``p + c`` in f64 rounded to odd, so one more rounding to a type of at
    most 51 bits equals a single correct rounding of the exact sum."""
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)  # TwoSum: s + err == p + c exactly
    inexact = np.isfinite(s) & (err != 0)
    if not inexact.any():
        return s
    away = inexact & ((err < 0) != (s < 0))
    t = np.where(away, np.nextafter(s, 0.0), s)
    bits = t.view(np.uint64) | np.where(inexact, np.uint64(1), np.uint64(0))
    return bits.view(np.float64)


def _fma_scalar(a: float, b: float, c: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c
    if not math.isfinite(c):
        return c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c if (a * b == 0) else 0.0
    try:
        return float(exact)
    except OverflowError:  # rounds beyond the largest double (copysign would convert ``exact`` again)
        return math.inf if exact > 0 else -math.inf


def _fma_f64(a: Array, b: Array, c: Array) -> Array:
    a, b, c = np.broadcast_arrays(a, b, c)
    out = np.frompyfunc(_fma_scalar, 3, 1)(a, b, c)
    return np.asarray(out, dtype=np.float64).reshape(a.shape)
