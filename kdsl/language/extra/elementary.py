"""libdevice's remaining elementary functions (re-exported by
:mod:`kdsl.language.extra.libdevice`): ``sinpi``/``cospi``, ``rcbrt``, the norms ``rhypot``,
``norm3d``/``norm4d``/``rnorm3d``/``rnorm4d``, the exponent functions ``ilogb``/``logb``/
``ldexp``/``scalbn``, IEEE ``remainder``, and the correctly rounded f32 ``rsqrt_rn``.

Accuracy: exact for ``ilogb``, ``logb``, ``ldexp``, ``scalbn``, ``remainder`` and ``rsqrt_rn``;
``sinpi``/``cospi`` reduce exactly to [-1/4, 1/4] (``x - 2 rint(x/2)`` and a reflection are exact)
and are within the backend's ``sin``/``cos`` accuracy plus one rounding of the product by pi,
with exact zeros and ones at integers and half-integers (signed as IEEE 754 ``sinPi``/``cosPi``);
the norms scale by the largest magnitude first (no overflow or underflow in the squares) and are
within a few ulp.
"""

from __future__ import annotations

import math as _m
from typing import TYPE_CHECKING, Any

from kdsl.ir.types import ScalarType, f32, f64, i32
from kdsl.language.core import NO_SEMANTIC, builtin
from kdsl.language.extra.common import Ops, float_fn, fmt, ldexp_, next_down, next_up, rint_, split_exp
from kdsl.language.extra.rounding import two_prod

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

_INF = float("inf")


def _sin_pi_small(o: Ops, t: Any) -> Any:
    return o.f("sin", o.mul(t, _m.pi))


def _cos_pi_small(o: Ops, t: Any) -> Any:
    return o.f("cos", o.mul(t, _m.pi))


def _reduce(o: Ops, x: Any) -> Any:
    """``x - 2 rint(x / 2)`` in [-1, 1], exact."""
    return o.sub(x, o.mul(rint_(o, o.mul(x, 0.5)), 2.0))


@float_fn()
def sinpi(o: Ops, x: Any) -> Any:
    """``sin(pi x)``; +-0 at integers (the sign of ``x``), NaN at +-inf."""
    r = _reduce(o, x)
    a = o.abs(r)
    t = o.where(o.gt(a, 0.5), o.sub(1.0, a), a)  # sin(pi a) = sin(pi (1 - a)), exact
    v = o.where(o.gt(t, 0.25), _cos_pi_small(o, o.sub(0.5, t)), _sin_pi_small(o, t))
    v = o.copysign(v, r)
    v = o.where(o.eq(v, 0.0), o.copysign(o.const(0.0), x), v)
    return o.where(o.isinf(x), float("nan"), v)


@float_fn()
def cospi(o: Ops, x: Any) -> Any:
    """``cos(pi x)``; +0 at half-integers, NaN at +-inf."""
    a = o.abs(_reduce(o, x))
    near_half = o.and_(o.gt(a, 0.25), o.le(a, 0.75))
    t = o.where(o.gt(a, 0.75), o.sub(1.0, a), a)  # exact
    v = o.where(near_half, _sin_pi_small(o, o.sub(0.5, a)), _cos_pi_small(o, t))
    v = o.where(o.gt(a, 0.75), o.s.unary("neg", v), v)
    v = o.where(o.eq(v, 0.0), 0.0, v)
    return o.where(o.isinf(x), float("nan"), v)


@float_fn()
def rcbrt(o: Ops, x: Any) -> Any:
    """``1 / cbrt(x)`` (+-inf at +-0, +-0 at +-inf)."""
    p, emin, _ = fmt(o)
    tiny = o.lt(o.abs(x), 2.0 ** (emin + p))  # scaled by 8**p first: no subnormal reaches log2
    a = o.where(tiny, o.mul(o.abs(x), 2.0 ** (3 * p)), o.abs(x))
    r = o.f("exp2", o.div(o.f("log2", a), -3.0))
    cube_a = o.mul(o.mul(r, r), o.mul(r, a))  # r**3 a, ~1: no overflow for any a
    r = o.add(r, o.mul(o.mul(r, o.const(1.0 / 3.0)), o.sub(1.0, cube_a)))  # one Newton step
    r = o.where(tiny, o.mul(r, 2.0**p), r)
    r = o.where(o.eq(a, 0.0), _INF, o.where(o.isinf(a), 0.0, r))
    return o.where(o.isnan(x), x, o.copysign(r, x))


def _norm(o: Ops, xs: tuple[Any, ...], reciprocal: bool = False) -> Any:
    """``sqrt(sum x_i**2)`` (or its reciprocal): scaled by a power of two near the largest |x_i|
    (exact), so no square overflows or underflows and the reciprocal of an overflowing norm is
    still the small number it is; +inf (0) if any x_i is infinite (even with a NaN), else NaN with
    one."""
    mags = [o.abs(x) for x in xs]
    big = mags[0]
    for m in mags[1:]:
        big = o.s.minmax("max", big, m)
    _, e = split_exp(o, o.where(o.eq(big, 0.0), 1.0, o.where(o.isinf(big), 1.0, big)))
    scale = o.s.unary("neg", e)
    acc: Any = 0.0
    for m in mags:
        q = ldexp_(o, m, scale)
        acc = o.fma(q, q, acc) if not isinstance(acc, float) else o.mul(q, q)
    root = o.f("sqrt_rn", acc)
    scaled_back = ldexp_(o, o.s.div_rn(o.const(1.0), root), o.s.unary("neg", e)) if reciprocal else None
    r = scaled_back if scaled_back is not None else ldexp_(o, root, e)
    any_nan = o.isnan(mags[0])
    any_inf = o.isinf(mags[0])
    for m in mags[1:]:
        any_nan, any_inf = o.or_(any_nan, o.isnan(m)), o.or_(any_inf, o.isinf(m))
    r = o.where(any_nan, float("nan"), r)
    return o.where(any_inf, 0.0 if reciprocal else _INF, r)


def _rnorm(o: Ops, xs: tuple[Any, ...]) -> Any:
    return _norm(o, xs, reciprocal=True)


@float_fn(2)
def rhypot(o: Ops, x: Any, y: Any) -> Any:
    """``1 / sqrt(x*x + y*y)``."""
    return _rnorm(o, (x, y))


@float_fn(3)
def norm3d(o: Ops, a: Any, b: Any, c: Any) -> Any:
    """``sqrt(a*a + b*b + c*c)``."""
    return _norm(o, (a, b, c))


@float_fn(4)
def norm4d(o: Ops, a: Any, b: Any, c: Any, d: Any) -> Any:
    """``sqrt(a*a + b*b + c*c + d*d)``."""
    return _norm(o, (a, b, c, d))


@float_fn(3)
def rnorm3d(o: Ops, a: Any, b: Any, c: Any) -> Any:
    """``1 / norm3d(a, b, c)``."""
    return _rnorm(o, (a, b, c))


@float_fn(4)
def rnorm4d(o: Ops, a: Any, b: Any, c: Any, d: Any) -> Any:
    """``1 / norm4d(a, b, c, d)``."""
    return _rnorm(o, (a, b, c, d))


@float_fn()
def ilogb(o: Ops, x: Any) -> Any:
    """The unbiased exponent of ``x`` as int32 (INT_MIN for 0 and NaN, INT_MAX for +-inf)."""
    _, e = split_exp(o, x)
    e = o.where(o.isinf(x), 2**31 - 1, e)
    return o.where(o.or_(o.eq(x, 0.0), o.isnan(x)), -(2**31), e)


@float_fn()
def logb(o: Ops, x: Any) -> Any:
    """The unbiased exponent of ``x`` as a float (-inf at 0, +inf at +-inf)."""
    _, e = split_exp(o, x)
    r = o.s.cast(e, o.dt)
    r = o.where(o.eq(x, 0.0), -_INF, o.where(o.isinf(x), _INF, r))
    return o.where(o.isnan(x), x, r)


def _scale_by(name: str) -> Any:
    def fn(x: Any, n: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        xt, nt = s.broadcast_values(s.to_tensor(x), s.to_tensor(n))
        if not (isinstance(xt.dtype, ScalarType) and xt.dtype in (f32, f64)):
            raise s.error(f"libdevice.{name} expects a float32 or float64 first operand, got {xt.dtype}")
        if nt.dtype != i32:
            raise s.error(f"libdevice.{name} expects an int32 exponent, got {nt.dtype}")
        o = Ops(s, xt.dtype)
        r = ldexp_(o, xt, nt)
        return o.where(o.or_(o.eq(xt, 0.0), o.lt(o.abs(xt), _INF)), r, xt)  # inf and NaN unchanged

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "``x * 2**n`` for an int32 ``n``, rounded once (overflow to +-inf, gradual underflow)."
    return builtin(fn)


ldexp = _scale_by("ldexp")
scalbn = _scale_by("scalbn")


@float_fn(2)
def remainder(o: Ops, x: Any, y: Any) -> Any:
    """IEEE ``remainder``: ``x - n y`` with ``n`` the integer nearest ``x / y`` (ties to even),
    exact: from ``fmod(x, 2|y|)`` (exact), then at most two exact subtractions of ``|y|``."""
    _, emin, _ = fmt(o)
    ay = o.abs(y)
    twice = o.mul(ay, 2.0)
    r = o.where(o.isinf(twice), x, o.s.binary("mod", x, twice))
    a = o.abs(r)
    tiny = o.lt(ay, 2.0 ** (emin + 1))  # 0.5 * |y| would round: compare a + a with |y|
    over = o.where(tiny, o.gt(o.add(a, a), ay), o.gt(a, o.mul(ay, 0.5)))
    a = o.where(over, o.sub(a, ay), a)
    again = o.where(tiny, o.ge(o.add(a, a), ay), o.ge(a, o.mul(ay, 0.5)))
    a = o.where(o.and_(over, again), o.sub(a, ay), a)
    res = o.s.unary("neg", a)
    res = o.where(o.signbit(x), res, a)
    bad = o.or_(o.or_(o.isinf(x), o.eq(y, 0.0)), o.or_(o.isnan(x), o.isnan(y)))
    return o.where(bad, float("nan"), res)


@float_fn()
def rsqrt_rn(o: Ops, x: Any) -> Any:
    """``1 / sqrt(x)`` correctly rounded to nearest (float32 only, as Triton): the f64 estimate
    rounded to f32 is right unless the exact value lies across the midpoint next to it, which an
    exact comparison ``mid**2 * x`` against 1 (Dekker's product) settles."""
    if o.dt == f64:
        raise o.s.error("libdevice.rsqrt_rn: float64 is not available (Triton has rsqrt_rn for float32 only)")
    w = Ops(o.s, f64)
    hx = o.s.cast(x, f64)
    y = o.s.div_rn(w.const(1.0), w.f("sqrt_rn", hx))
    f = o.s.cast(y, f32)
    hf = o.s.cast(f, f64)
    d = w.sub(y, hf)
    nb = o.s.cast(o.where(w.gt(d, 0.0), next_up(o, f), next_down(o, f)), f64)
    mid = w.mul(w.add(hf, nb), 0.5)
    ph, pl = two_prod(w, w.mul(mid, mid), hx)
    t = w.sub(w.sub(1.0, ph), pl)  # sign of 1 - mid**2 x: the exact value is beyond mid when > 0 (d > 0)
    step_up = o.and_(w.gt(d, 0.0), w.gt(t, 0.0))
    step_down = o.and_(w.lt(d, 0.0), w.lt(t, 0.0))
    r = o.where(step_up, next_up(o, f), o.where(step_down, next_down(o, f), f))
    normal = o.and_(o.gt(x, 0.0), o.lt(x, _INF))
    return o.where(normal, r, o.f("rsqrt", x))


__all__ = ["cospi", "ilogb", "ldexp", "logb", "norm3d", "norm4d", "rcbrt", "remainder", "rhypot", "rnorm3d",
           "rnorm4d", "rsqrt_rn", "scalbn", "sinpi"]  # fmt: skip
