"""``libdevice``: the math library Triton kernels reach through ``triton.language.extra.libdevice``.

Why compositions: Triton binds these names to NVIDIA's/AMD's device libraries; kdsl's targets
have no such library in common, so each function is written here once on top of kl operations
every backend implements (IEEE arithmetic, ``fma``, ``sqrt``, ``exp``/``exp2``/``log``/``log2``,
``floor``/``ceil``, bit casts), the same code on every backend. Functions take f32 or f64
tensors (f16/bf16 are computed in f32 and rounded back) and follow C99/CUDA for special values;
predicates (``isnan``, ``isinf``, ``signbit``, ...) return int32 0/1 as libdevice does.

Accuracy (``tests/language/test_libdevice.py`` measures it against numpy): exact for the rounding,
bit and sign functions; within a few ulp of the correctly rounded result elsewhere -- ``atan``
(f32: Cephes' polynomial after reduction to ``|x| <= tan(pi/8)``; f64: three argument halvings
then the Taylor series), ``log1p``/``expm1`` (series near 0, so they do not depend on how well
a backend's ``log``/``exp`` do there), ``exp10`` (``exp2`` of the product split exactly with an
fma). Functions built on ``exp``/``log``/``sin``/``cos`` inherit the backend's accuracy of those:
on vulkan, f32 ``exp``/``log`` are GLSL.std.450's (``exp`` 3 + 2|x| ulp, ``log`` an absolute
2**-21 near 1), so ``sinh``/``cosh``/``exp10``/``pow``/``log10`` are within a few 1e-5 there.

The library is split by subject; this module re-exports the others: ``bits.py`` (integer
functions, bit casts), ``rounding.py`` (``add/sub/mul/div/rcp/sqrt`` ``_rz/_rd/_ru`` and f32
``fma_r*``, bit-exact), ``convert.py`` (float <-> integer and f64 -> f32 conversions in the four
rounding modes, bit-exact), ``elementary.py`` (``sinpi``/``cospi``, norms, ``ldexp``/``ilogb``,
``remainder``, ``rsqrt_rn``), ``special.py`` (``lgamma``/``tgamma``, ``erfc``/``erfcx``/
``erfinv``/``erfcinv``/``normcdf``/``normcdfinv``), ``bessel.py`` (``j0``/``j1``/``y0``/``y1``/
``jn``/``yn``/``cyl_bessel_i0``/``i1``); ``common.py`` holds the scaffolding they share.
Names Triton's libdevice has and kdsl does not -- ``rcp64h`` and the f64 ``fma_r*`` -- are missing
attributes: a compile error at the call.
"""

from __future__ import annotations

import math as _m
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.ir.types import f32, f64, i64
from kdsl.language.core import NO_SEMANTIC, builtin
from kdsl.language.extra.bessel import *  # noqa: F403  (Bessel functions)
from kdsl.language.extra.bits import *  # noqa: F403  (integer functions and bit casts)
from kdsl.language.extra.common import Ops, as_int32, direct, float_fn, rint_, trunc_
from kdsl.language.extra.common import expm1_ as _expm1
from kdsl.language.extra.common import log1p_ as _log1p
from kdsl.language.extra.convert import *  # noqa: F403  (conversions with a rounding mode)
from kdsl.language.extra.elementary import *  # noqa: F403  (sinpi, norms, ldexp, remainder, ...)
from kdsl.language.extra.rounding import *  # noqa: F403  (directed-rounding arithmetic)
from kdsl.language.extra.special import *  # noqa: F403  (gamma, error-function family)

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

_LOG2_10 = Decimal("3.321928094887362347870319429489390175864831393024580612054756")


# --- classification and sign -------------------------------------------------------------
@float_fn()
def isnan(o: Ops, x: Any) -> Any:
    """1 where ``x`` is NaN (int32)."""
    return as_int32(o, o.isnan(x))


@float_fn()
def isinf(o: Ops, x: Any) -> Any:
    """1 where ``x`` is +-infinity (int32)."""
    return as_int32(o, o.isinf(x))


@float_fn()
def isfinited(o: Ops, x: Any) -> Any:
    """1 where ``x`` is finite (int32)."""
    return as_int32(o, o.lt(o.abs(x), float("inf")))


finitef = isfinited


@float_fn()
def signbit(o: Ops, x: Any) -> Any:
    """1 where the sign bit of ``x`` is set (-0.0 and negative NaNs included; int32)."""
    return as_int32(o, o.signbit(x))


@float_fn(2)
def copysign(o: Ops, x: Any, y: Any) -> Any:
    """``|x|`` with the sign of ``y``."""
    return o.copysign(x, y)


@float_fn()
def fabs(o: Ops, x: Any) -> Any:
    """``|x|``."""
    return o.abs(x)


# --- rounding ------------------------------------------------------------------------------
def _round(o: Ops, x: Any) -> Any:
    t = trunc_(o, x)
    up = o.ge(o.abs(o.sub(x, t)), 0.5)
    return o.where(o.isinf(x), x, o.copysign(o.where(up, o.add(o.abs(t), 1.0), o.abs(t)), x))


floor = direct("floor", "floor", "Largest integer value not greater than ``x``.")


ceil = direct("ceil", "ceil", "Smallest integer value not less than ``x``.")


@float_fn()
def trunc(o: Ops, x: Any) -> Any:
    """``x`` rounded toward zero."""
    return trunc_(o, x)


@float_fn()
def round(o: Ops, x: Any) -> Any:  # libdevice's name (shadows the builtin in this module)
    """``x`` rounded to the nearest integer, halfway cases away from zero."""
    return _round(o, x)


@float_fn()
def rint(o: Ops, x: Any) -> Any:
    """``x`` rounded to the nearest integer, halfway cases to even."""
    return rint_(o, x)


nearbyint = rint


@float_fn()
def llrint(o: Ops, x: Any) -> Any:
    """``rint(x)`` as int64."""
    return o.s.cast(rint_(o, x), i64)


@float_fn()
def llround(o: Ops, x: Any) -> Any:
    """``round(x)`` as int64."""
    return o.s.cast(_round(o, x), i64)


@float_fn(2)
def fmod(o: Ops, x: Any, y: Any) -> Any:
    """C ``fmod``: ``x - trunc(x / y) * y``, exactly, with the sign of ``x``."""
    return o.s.binary("mod", x, y)


@float_fn(2)
def fmin(o: Ops, x: Any, y: Any) -> Any:
    """Minimum; a NaN operand is ignored."""
    return o.s.minmax("min", x, y)


@float_fn(2)
def fmax(o: Ops, x: Any, y: Any) -> Any:
    """Maximum; a NaN operand is ignored."""
    return o.s.minmax("max", x, y)


@float_fn(2)
def fdim(o: Ops, x: Any, y: Any) -> Any:
    """``x - y`` if ``x > y``, else +0 (NaN if either is NaN)."""
    r = o.where(o.gt(x, y), o.sub(x, y), 0.0)
    return o.where(o.or_(o.isnan(x), o.isnan(y)), float("nan"), r)


@float_fn()
def saturatef(o: Ops, x: Any) -> Any:
    """``x`` clamped to [0, 1] (NaN gives 0)."""
    return o.where(o.gt(x, 0.0), o.where(o.lt(x, 1.0), x, 1.0), 0.0)


# --- roots and powers ----------------------------------------------------------------------
sqrt = direct("sqrt", "sqrt_rn", "Square root (correctly rounded).")


sqrt_rn = sqrt


rsqrt = direct("rsqrt", "rsqrt", "``1 / sqrt(x)``.")


@float_fn()
def rcp_rn(o: Ops, x: Any) -> Any:
    """``1 / x`` correctly rounded."""
    return o.s.div_rn(o.const(1.0), x)


@float_fn()
def cbrt(o: Ops, x: Any) -> Any:
    """Cube root (real, odd): ``exp2(log2|x| / 3)`` refined by one Newton step."""
    a = o.abs(x)
    r = o.f("exp2", o.div(o.f("log2", a), 3.0))
    r = o.sub(r, o.div(o.sub(o.mul(o.mul(r, r), r), a), o.mul(o.mul(r, r), 3.0)))
    special = o.or_(o.or_(o.eq(a, 0.0), o.isinf(a)), o.isnan(a))
    return o.where(special, x, o.copysign(r, x))


@float_fn(2)
def hypot(o: Ops, x: Any, y: Any) -> Any:
    """``sqrt(x*x + y*y)`` without overflow or underflow in the squares."""
    a, b = o.abs(x), o.abs(y)
    big, small = o.s.minmax("max", a, b), o.s.minmax("min", a, b)
    q = o.div(small, o.where(o.eq(big, 0.0), 1.0, big))
    r = o.mul(big, o.f("sqrt_rn", o.add(1.0, o.mul(q, q))))
    r = o.where(o.eq(big, 0.0), 0.0, r)
    r = o.where(o.or_(o.isnan(x), o.isnan(y)), float("nan"), r)
    return o.where(o.or_(o.isinf(x), o.isinf(y)), float("inf"), r)


@float_fn(2)
def pow(o: Ops, x: Any, y: Any) -> Any:  # libdevice's name (shadows the builtin in this module)
    """C ``pow``."""
    return o.s.power(x, y)


powf = fast_powf = pow


@builtin
def powi(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """``x ** y`` for an integer exponent ``y``."""
    s = _semantic
    xt = s.to_tensor(x)
    return pow(xt, s.cast(y, xt.dtype if xt.dtype in (f32, f64) else f32), _semantic=s)


# --- exponentials and logarithms --------------------------------------------------------------
exp = direct("exp", "exp", "``e**x``.")


fast_expf = exp


exp2 = direct("exp2", "exp2", "``2**x``.")


@float_fn()
def exp10(o: Ops, x: Any) -> Any:
    """``10**x``: ``exp2`` of ``x * log2(10)``, with the product's rounding error (exact, from an
    fma) and the constant's own applied as a first-order correction."""
    lg = float(_LOG2_10) if o.dt == f64 else float(np.float32(float(_LOG2_10)))
    lo = float(_LOG2_10 - Decimal(lg))
    hi = o.mul(x, lg)
    err = o.add(o.fma(x, lg, o.s.unary("neg", hi)), o.mul(x, lo))
    e = o.f("exp2", hi)
    r = o.fma(e, o.mul(err, _m.log(2.0)), e)
    return o.where(o.or_(o.isinf(e), o.eq(e, 0.0)), e, r)


fast_exp10f = exp10


@float_fn()
def expm1(o: Ops, x: Any) -> Any:
    """``e**x - 1``, accurate near 0."""
    return _expm1(o, x)


log = direct("log", "log", "Natural logarithm.")


fast_logf = log


log2 = direct("log2", "log2", "Base-2 logarithm.")


fast_log2f = log2


@float_fn()
def log10(o: Ops, x: Any) -> Any:
    """Base-10 logarithm."""
    return o.mul(o.f("log2", x), _m.log10(2.0))


fast_log10f = log10


@float_fn()
def log1p(o: Ops, x: Any) -> Any:
    """``log(1 + x)``, accurate near 0."""
    return _log1p(o, x)


# --- trigonometric and hyperbolic ------------------------------------------------------------
sin = direct("sin", "sin", "Sine.")


fast_sinf = sin


cos = direct("cos", "cos", "Cosine.")


fast_cosf = cos


@float_fn()
def tan(o: Ops, x: Any) -> Any:
    """Tangent (``sin / cos``; +-0 kept)."""
    return o.where(o.eq(x, 0.0), x, o.div(o.f("sin", x), o.f("cos", x)))


fast_tanf = tan


def _atan_pos(o: Ops, a: Any) -> Any:
    """atan of a non-negative tensor (inf gives pi/2)."""
    if o.dt == f32:  # Cephes atanf: reduce to |t| <= tan(pi/8), odd polynomial
        big = o.gt(a, 2.414213562373095)
        mid = o.and_(o.gt(a, 0.41421356237309503), o.s.unary("not_", big))
        t = o.where(big, o.div(-1.0, a), o.where(mid, o.div(o.sub(a, 1.0), o.add(a, 1.0)), a))
        base = o.where(big, _m.pi / 2, o.where(mid, _m.pi / 4, 0.0))
        z = o.mul(t, t)
        p = o.poly(z, (-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2))
        return o.add(base, o.fma(o.mul(p, z), t, t))
    inv = o.gt(a, 1.0)  # f64: atan(a) = pi/2 - atan(1/a), three halvings, Taylor to t**17
    t = o.where(inv, o.div(1.0, a), a)
    for _ in range(3):
        t = o.div(t, o.add(1.0, o.f("sqrt_rn", o.fma(t, t, 1.0))))
    z = o.mul(t, t)
    series = o.mul(t, o.poly(z, tuple((-1.0) ** k / (2 * k + 1) for k in range(9))))
    r = o.mul(series, 8.0)
    return o.where(inv, o.sub(_m.pi / 2, r), r)


@float_fn()
def atan(o: Ops, x: Any) -> Any:
    """Arc tangent."""
    r = _atan_pos(o, o.abs(x))
    return o.where(o.isnan(x), x, o.copysign(r, x))


@float_fn(2)
def atan2(o: Ops, y: Any, x: Any) -> Any:
    """Angle of the point ``(x, y)`` in (-pi, pi], with C's signed zeros and infinities."""
    ax, ay = o.abs(x), o.abs(y)
    swap = o.gt(ay, ax)
    num = o.where(swap, ax, ay)
    den = o.where(swap, ay, ax)
    t = o.div(num, o.where(o.eq(den, 0.0), 1.0, den))
    t = o.where(o.and_(o.isinf(ax), o.isinf(ay)), 1.0, t)
    r = _atan_pos(o, t)
    r = o.where(swap, o.sub(_m.pi / 2, r), r)
    neg_x = o.or_(o.lt(x, 0.0), o.and_(o.eq(x, 0.0), o.signbit(x)))
    r = o.where(neg_x, o.sub(_m.pi, r), r)
    r = o.copysign(r, y)
    return o.where(o.or_(o.isnan(x), o.isnan(y)), float("nan"), r)


def _asin_small(o: Ops, a: Any) -> Any:
    """asin for 0 <= a <= 0.5."""
    return _atan_pos(o, o.div(a, o.f("sqrt_rn", o.mul(o.sub(1.0, a), o.add(1.0, a)))))


def _asin_pos(o: Ops, a: Any) -> Any:
    """asin for 0 <= a <= 1 (NaN beyond)."""
    w = o.f("sqrt_rn", o.mul(o.sub(1.0, o.s.minmax("min", a, 1.0)), 0.5))
    big = o.sub(_m.pi / 2, o.mul(_asin_small(o, w), 2.0))
    r = o.where(o.gt(a, 0.5), big, _asin_small(o, o.s.minmax("min", a, 0.5)))
    return o.where(o.gt(a, 1.0), float("nan"), r)


@float_fn()
def asin(o: Ops, x: Any) -> Any:
    """Arc sine (NaN outside [-1, 1])."""
    return o.where(o.isnan(x), x, o.copysign(_asin_pos(o, o.abs(x)), x))


@float_fn()
def acos(o: Ops, x: Any) -> Any:
    """Arc cosine (NaN outside [-1, 1])."""
    a = o.abs(x)
    w = o.f("sqrt_rn", o.mul(o.sub(1.0, o.s.minmax("min", a, 1.0)), 0.5))
    edge = o.mul(_asin_small(o, w), 2.0)  # acos(|x|) for |x| > 0.5
    r = o.where(o.gt(a, 0.5), o.where(o.lt(x, 0.0), o.sub(_m.pi, edge), edge),
                o.sub(_m.pi / 2, o.copysign(_asin_small(o, o.s.minmax("min", a, 0.5)), x)))  # fmt: skip
    return o.where(o.or_(o.gt(a, 1.0), o.isnan(x)), float("nan"), r)


def _large(o: Ops) -> float:
    return 9.0 if o.dt == f32 else 19.0  # beyond: e**-a is below half an ulp of e**a


@float_fn()
def sinh(o: Ops, x: Any) -> Any:
    """Hyperbolic sine."""
    a = o.abs(x)
    em = _expm1(o, a)
    small = o.mul(o.add(em, o.div(em, o.add(em, 1.0))), 0.5)
    h = o.f("exp", o.mul(a, 0.5))
    r = o.where(o.gt(a, _large(o)), o.mul(o.mul(h, 0.5), h), small)
    return o.where(o.isnan(x), x, o.copysign(r, x))


@float_fn()
def cosh(o: Ops, x: Any) -> Any:
    """Hyperbolic cosine."""
    a = o.abs(x)
    e = o.f("exp", a)
    small = o.mul(o.add(e, o.div(1.0, e)), 0.5)
    h = o.f("exp", o.mul(a, 0.5))
    return o.where(o.gt(a, _large(o)), o.mul(o.mul(h, 0.5), h), small)


tanh = direct("tanh", "tanh", "Hyperbolic tangent.")


@float_fn()
def asinh(o: Ops, x: Any) -> Any:
    """Inverse hyperbolic sine."""
    a = o.abs(x)
    huge = 1.0e8 if o.dt == f32 else 1.0e17
    small = _log1p(o, o.add(a, o.div(o.mul(a, a), o.add(1.0, o.f("sqrt_rn", o.fma(a, a, 1.0))))))
    big = o.add(o.f("log", a), _m.log(2.0))
    r = o.where(o.gt(a, huge), big, small)
    return o.where(o.isnan(x), x, o.copysign(r, x))


@float_fn()
def acosh(o: Ops, x: Any) -> Any:
    """Inverse hyperbolic cosine (NaN below 1)."""
    huge = 1.0e8 if o.dt == f32 else 1.0e17
    t = o.sub(x, 1.0)
    small = _log1p(o, o.add(t, o.f("sqrt_rn", o.mul(t, o.add(x, 1.0)))))
    r = o.where(o.gt(x, huge), o.add(o.f("log", x), _m.log(2.0)), small)
    return o.where(o.lt(x, 1.0), float("nan"), r)


@float_fn()
def atanh(o: Ops, x: Any) -> Any:
    """Inverse hyperbolic tangent (+-inf at +-1, NaN beyond)."""
    a = o.abs(x)
    r = o.mul(_log1p(o, o.div(o.mul(a, 2.0), o.sub(1.0, a))), 0.5)
    r = o.where(o.gt(a, 1.0), float("nan"), r)
    return o.where(o.isnan(x), x, o.copysign(r, x))


erf = direct("erf", "erf", "Error function.")


# --- exact arithmetic and scaling -------------------------------------------------------------
@float_fn(2)
def add_rn(o: Ops, x: Any, y: Any) -> Any:
    """``x + y`` rounded to nearest even (IEEE addition)."""
    return o.add(x, y)


@float_fn(2)
def sub_rn(o: Ops, x: Any, y: Any) -> Any:
    """``x - y`` rounded to nearest even."""
    return o.sub(x, y)


@float_fn(2)
def mul_rn(o: Ops, x: Any, y: Any) -> Any:
    """``x * y`` rounded to nearest even."""
    return o.mul(x, y)


@float_fn(2)
def div_rn(o: Ops, x: Any, y: Any) -> Any:
    """``x / y`` correctly rounded."""
    return o.s.div_rn(x, y)


fast_dividef = div_rn


@float_fn(3)
def fma_rn(o: Ops, x: Any, y: Any, z: Any) -> Any:
    """``x * y + z`` with one rounding."""
    return o.fma(x, y, z)


fma = fma_rn


@float_fn(2)
def nextafter(o: Ops, x: Any, y: Any) -> Any:
    """The next representable value after ``x`` toward ``y``."""
    b = o.bits(x)
    toward_zero = o.ne(o.gt(x, y), o.lt(x, 0.0))  # moving toward zero decrements |x|'s bits
    step = o.where(toward_zero, o.s.binary("sub", b, 1), o.s.binary("add", b, 1))
    r = o.from_bits(step)
    tiny = o.from_bits(o.s.full((), 1, o.bits_t))
    r = o.where(o.eq(x, 0.0), o.copysign(tiny, o.sub(y, x)), r)
    r = o.where(o.eq(x, y), y, r)
    return o.where(o.or_(o.isnan(x), o.isnan(y)), float("nan"), r)
