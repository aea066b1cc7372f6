"""Constant folding tables: the exact compile-time semantics of arith/math ops.

Folding must give bit-for-bit what a backend computes at run time, otherwise
``-O`` changes results. The rules follow the op docstrings in
``kdsl.ir.dialects.arith``/``math``:

* integers: exact Python integer arithmetic, then wrapped to the type's bit
  width and signedness; ``div`` truncates toward zero and ``rem`` takes the
  dividend's sign (C), ``shr`` is arithmetic for signed types;
* floats: computed in the type (numpy ``float16``/``float32``/``float64``,
  whose ``+ - * /`` and ``sqrt`` are correctly rounded), or exactly with
  :class:`fractions.Fraction` and rounded once (``fma``, int->float casts);
* comparisons on floats are ordered (false with a NaN) except ``ne``.

Anything undefined or not representable is *not folded* and left for run
time: integer division/remainder by zero and ``INT_MIN / -1``, shifts outside
``[0, bitwidth)``, out-of-range or NaN float->int casts, ``bf16`` arithmetic
(numpy has no such type; float->bf16 casts round with :mod:`kdsl.ir.floatcodec`), bitcasts producing NaN payloads, ``max``/``min`` of ``+0``
and ``-0``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kdsl.ir.core import Operation
from kdsl.ir.dialects.arith import int_range
from kdsl.ir.floatcodec import decode, encode
from kdsl.ir.types import FLOAT_FORMATS, ScalarType, Type

Const = bool | int | float
FoldFn = Callable[[Operation, Sequence[Const]], "Const | None"]

_FLOAT_DTYPES: dict[str, Any] = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


# --------------------------------------------------------------------------- value helpers
def elem_of(t: Type) -> ScalarType | None:
    """The scalar element type of ``t`` (None for pointers)."""
    e = t.scalar
    return e if isinstance(e, ScalarType) else None


def wrap_int(v: int, e: ScalarType) -> Const:
    """``v`` reduced to ``e``'s bit width and signedness (``i1`` gives a bool)."""
    bits = e.bitwidth
    v &= (1 << bits) - 1
    if e.is_boolean:
        return bool(v)
    if e.is_signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def round_exact(x: Fraction | float, e: ScalarType) -> float:
    """Round the exact value ``x`` to the nearest ``e`` (ties to even), as a Python float.

    Going through ``float`` (f64) first would round twice; instead we round
    to f64 and pick the nearest of that neighbourhood's ``e`` values exactly.
    """
    if isinstance(x, float) and not math.isfinite(x):
        return x
    try:
        r = float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
    if e.name == "f64" or not math.isfinite(r):
        return r
    dt = _FLOAT_DTYPES[e.name]
    with np.errstate(all="ignore"):
        c = dt(r)
        if not np.isfinite(c):
            return float(c)
        cands = [c, np.nextafter(c, dt(np.inf)), np.nextafter(c, dt(-np.inf))]
    fx = Fraction(x)
    best: Any = None
    best_key: tuple[Fraction, int] | None = None
    for cand in cands:
        if not np.isfinite(cand):
            continue
        bits = int(np.array(cand).view(np.uint16 if dt is np.float16 else np.uint32))
        key = (abs(Fraction(float(cand)) - fx), bits & 1)
        if best_key is None or key < best_key:
            best, best_key = cand, key
    return float(best)


def as_float(v: Const, e: ScalarType) -> Any:
    """The numpy scalar of float type ``e`` holding the constant ``v`` (rounded to ``e``)."""
    dt = _FLOAT_DTYPES[e.name]
    if isinstance(v, float):
        return dt(round_exact(v, e)) if math.isfinite(v) else dt(v)
    return dt(round_exact(Fraction(int(v)), e))


def _py_float(x: Any) -> float:
    return float(x)


def _foldable_float(e: ScalarType) -> bool:
    return e.name in _FLOAT_DTYPES


# --------------------------------------------------------------------------- integer ops
def _int_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_rem(a: int, b: int) -> int:
    return a - b * _int_div(a, b)


def _int_binary(name: str, a: int, b: int, e: ScalarType) -> int | None:
    lo, _ = int_range(e)
    if name in ("div", "rem"):
        if b == 0 or (e.is_signed and a == lo and b == -1):
            return None
        return _int_div(a, b) if name == "div" else _int_rem(a, b)
    if name in ("shl", "shr"):
        if not 0 <= b < e.bitwidth:
            return None
        return a << b if name == "shl" else a >> b
    table: dict[str, Callable[[int, int], int]] = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "and": lambda x, y: x & y,
        "or": lambda x, y: x | y,
        "xor": lambda x, y: x ^ y,
        "max": max,
        "min": min,
    }
    fn = table.get(name)
    return fn(a, b) if fn is not None else None


# --------------------------------------------------------------------------- float ops
def _float_binary(name: str, op: Operation, a: Any, b: Any) -> Any:
    if name in ("div", "rem") and b == 0:
        return None
    if name in ("max", "min"):
        return _float_minmax(name, op, a, b)
    with np.errstate(all="ignore"):
        if name == "add":
            return a + b
        if name == "sub":
            return a - b
        if name == "mul":
            return a * b
        if name == "div":
            return a / b
        if name == "rem":
            return np.fmod(a, b)
    return None


def _float_minmax(name: str, op: Operation, a: Any, b: Any) -> Any:
    if a == 0 and b == 0 and np.signbit(a) != np.signbit(b):
        return None  # fmax(+0, -0) may return either zero
    a_nan, b_nan = bool(np.isnan(a)), bool(np.isnan(b))
    if a_nan or b_nan:
        if op.attributes.get("propagate_nan", False) or (a_nan and b_nan):
            return type(a)(np.nan)
        return b if a_nan else a
    return max(a, b) if name == "max" else min(a, b)


def _fold_binary(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None:
        return None
    name = op.NAME.split(".", 1)[1]
    if e.is_integer:
        r = _int_binary(name, int(vals[0]), int(vals[1]), e)
        return None if r is None else wrap_int(r, e)
    if not _foldable_float(e):
        return None
    res = _float_binary(name, op, as_float(vals[0], e), as_float(vals[1], e))
    return None if res is None else _py_float(res)


def _fold_neg(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None:
        return None
    if e.is_integer:
        return wrap_int(-int(vals[0]), e)
    return _py_float(-as_float(vals[0], e)) if _foldable_float(e) else None


def _fold_cmp(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.lhs.type)
    pred = op.attributes["predicate"]
    if e is None:
        return None
    if e.is_integer:
        a: Any = int(vals[0])
        b: Any = int(vals[1])
    elif _foldable_float(e):
        a, b = as_float(vals[0], e), as_float(vals[1], e)
        if np.isnan(a) or np.isnan(b):
            return bool(pred == "ne")
    else:
        return None
    table: dict[str, Callable[[Any, Any], bool]] = {
        "eq": lambda x, y: bool(x == y),
        "ne": lambda x, y: bool(x != y),
        "lt": lambda x, y: bool(x < y),
        "le": lambda x, y: bool(x <= y),
        "gt": lambda x, y: bool(x > y),
        "ge": lambda x, y: bool(x >= y),
    }
    return table[pred](a, b)


def _fold_select(op: Operation, vals: Sequence[Const]) -> Const | None:
    return vals[1] if vals[0] else vals[2]


def _fold_cast(op: Operation, vals: Sequence[Const]) -> Const | None:
    src, dst = elem_of(op.operand.type), elem_of(op.result.type)
    if src is None or dst is None:
        return None
    v = vals[0]
    if src.is_float and not _foldable_float(src):
        return None
    if src.is_float:
        x = as_float(v, src)
        if dst.is_boolean:
            return bool(x != 0)
        if dst.is_float:
            return _float_to_float(float(x), dst)
        return _float_to_int(float(x), dst)
    iv = int(v)
    if dst.is_boolean:
        return iv != 0
    if dst.is_integer:
        return wrap_int(iv, dst)
    return round_exact(Fraction(iv), dst) if _foldable_float(dst) else None


def _float_to_float(x: float, dst: ScalarType) -> float | None:
    if dst.name == "bf16":  # numpy has no bf16: round the (exact) f64 value once with the codec
        fmt = FLOAT_FORMATS["bf16"]
        return x if not math.isfinite(x) else decode(encode(x, fmt), fmt)
    if not _foldable_float(dst):
        return None
    return x if not math.isfinite(x) else round_exact(x, dst)


def _float_to_int(x: float, dst: ScalarType) -> int | None:
    if not math.isfinite(x):
        return None
    t = math.trunc(x)
    lo, hi = int_range(dst)
    return t if lo <= t <= hi else None


def _fold_bitcast(op: Operation, vals: Sequence[Const]) -> Const | None:
    src, dst = elem_of(op.operand.type), elem_of(op.result.type)
    if src is None or dst is None or src.is_boolean or dst.is_boolean or "bf16" in (src.name, dst.name):
        return None
    if src.is_float:
        x = as_float(vals[0], src)
        if np.isnan(x):
            return None  # the payload of a NaN constant is not recorded
        arr = np.array(x)
    else:
        arr = np.array(int(vals[0]), dtype=src.np_dtype)
    out = arr.view(dst.np_dtype)[()]
    if dst.is_float:
        return None if np.isnan(out) else float(out)
    return int(out)


# --------------------------------------------------------------------------- math ops
def _math_unary_fn(name: str) -> Callable[[float], float] | None:
    fns: dict[str, Callable[[float], float]] = {
        "exp": lambda x: float(np.exp(x)),
        "exp2": lambda x: float(np.exp2(x)),
        "log": lambda x: float(np.log(x)),
        "log2": lambda x: float(np.log2(x)),
        "sqrt": lambda x: float(np.sqrt(x)),
        "sqrt_rn": lambda x: float(np.sqrt(x)),
        "rsqrt": lambda x: float(1.0 / np.sqrt(x)),
        "sin": lambda x: float(np.sin(x)),
        "cos": lambda x: float(np.cos(x)),
        "tanh": lambda x: float(np.tanh(x)),
        "erf": math.erf,
        "floor": lambda x: float(np.floor(x)),
        "ceil": lambda x: float(np.ceil(x)),
    }
    return fns.get(name)


def _fold_math_unary(op: Operation, vals: Sequence[Const]) -> Const | None:
    """Transcendentals: computed in f64 and rounded once to the type (a result
    within the ops' few-ulp contract; exact ops are exact as sqrt/floor/ceil of
    an f32/f16 value are exactly representable or correctly rounded in f64)."""
    e = elem_of(op.result.type)
    fn = _math_unary_fn(op.NAME.split(".", 1)[1])
    if e is None or fn is None or not _foldable_float(e):
        return None
    x = np.float64(as_float(vals[0], e))
    if e.name == "f64" and op.NAME in ("math.sqrt", "math.sqrt_rn"):
        return float(np.sqrt(x))
    with np.errstate(all="ignore"):
        r = fn(float(x))
    return round_exact(r, e) if math.isfinite(r) else r


def _fold_abs(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None:
        return None
    if e.is_integer:
        return wrap_int(abs(int(vals[0])), e)
    return _py_float(abs(as_float(vals[0], e))) if _foldable_float(e) else None


def _fold_pow(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None or not _foldable_float(e):
        return None
    a, b = np.float64(as_float(vals[0], e)), np.float64(as_float(vals[1], e))
    with np.errstate(all="ignore"):
        r = float(np.power(a, b))
    return round_exact(r, e) if math.isfinite(r) else r


def _fold_div_rn(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None or not _foldable_float(e):
        return None
    res = _float_binary("div", op, as_float(vals[0], e), as_float(vals[1], e))
    return None if res is None else _py_float(res)


def _fold_fma(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None or not _foldable_float(e):
        return None
    a, b, c = (float(as_float(v, e)) for v in vals)
    if not all(math.isfinite(x) for x in (a, b, c)):
        with np.errstate(all="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return None  # the sign of an exact zero result depends on operand signs; leave it
    return round_exact(exact, e)


def _fold_umulhi(op: Operation, vals: Sequence[Const]) -> Const | None:
    e = elem_of(op.result.type)
    if e is None or not e.is_integer:
        return None
    return wrap_int((int(vals[0]) * int(vals[1])) >> e.bitwidth, e)


# --------------------------------------------------------------------------- tile ops
def _same_value(op: Operation, vals: Sequence[Const]) -> Const | None:
    """Shape-only ops of a constant keep its (splatted) value."""
    return vals[0]


def _fold_join(op: Operation, vals: Sequence[Const]) -> Const | None:
    return vals[0] if _same_const(vals[0], vals[1]) else None


def _same_const(a: Const, b: Const) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        return (math.isnan(fa) and math.isnan(fb)) or (fa == fb and math.copysign(1, fa) == math.copysign(1, fb))
    return int(a) == int(b)


_BINARY = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "max", "min")

FOLDERS: dict[str, FoldFn] = {
    **{f"arith.{n}": _fold_binary for n in _BINARY},
    "arith.neg": _fold_neg,
    "arith.cmp": _fold_cmp,
    "arith.select": _fold_select,
    "arith.cast": _fold_cast,
    "arith.bitcast": _fold_bitcast,
    **{
        f"math.{n}": _fold_math_unary
        for n in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil")
    },
    "math.abs": _fold_abs,
    "math.pow": _fold_pow,
    "math.div_rn": _fold_div_rn,
    "math.fma": _fold_fma,
    "math.umulhi": _fold_umulhi,
    "tile.splat": _same_value,
    "tile.broadcast": _same_value,
    "tile.expand_dims": _same_value,
    "tile.reshape": _same_value,
    "tile.permute": _same_value,
    "tile.hint": _same_value,
    "tile.join": _fold_join,
}


def fold_constant(op: Operation, vals: Sequence[Const]) -> Const | None:
    """The constant value of ``op``'s single result given constant operands, or None."""
    fn = FOLDERS.get(op.NAME)
    if fn is None or len(op.results) != 1:
        return None
    return fn(op, vals)
