"""libdevice's special functions (re-exported by :mod:`kdsl.language.extra.libdevice`): the gamma
functions ``lgamma``/``tgamma``, the error-function family ``erfc``/``erfcx``/``erfinv``/
``erfcinv``/``normcdf``/``normcdfinv``, and the Bessel functions ``j0``/``j1``/``y0``/``y1``/
``jn``/``yn``/``cyl_bessel_i0``/``cyl_bessel_i1``.

Why written this way: like the rest of libdevice, each function is one formula on kl operations
(so every backend has it), and each is arranged so that its accuracy does not hinge on a rounding
the formula itself introduces -- arguments that would be rounded before a function with a large
derivative (``1 - x`` in a reflection, ``x + n`` in a recurrence, ``-x / sqrt(2)`` in ``normcdf``,
``x * x`` under ``exp``) are carried as an exact pair (value, rounding error) and the error is
applied as a first-order correction. What remains is the backend's ``exp``/``log``/``pow``/``sin``
accuracy (see libdevice's module doc; on vulkan f32 that is GLSL.std.450's).

Methods (accuracy measured against mpmath in ``tests/language/test_libdevice_special*.py``):

- ``lgamma``: Taylor series of ``lgamma(2 + z)`` (coefficients ``(-1)**k (zeta(k) - 1) / k``) on
  |z| <= 1/2, reached from (0, 8) by at most six exact steps of ``lgamma(x + 1) = lgamma(x) +
  log(x)`` (so the zeros at 1 and 2 keep relative accuracy), Stirling's series from 8 on, and the
  reflection formula with an exactly reduced ``sinpi`` below 0; poles give +inf.
- ``tgamma``: Stirling's formula at ``z = x + n >= 8`` as ``p * (e**-z sqrt(2 pi) S) * p`` with
  ``p = z**(z/2 - 1/4)`` (no intermediate overflow, and ``pow`` of the exact ``z`` rather than
  ``exp`` of a rounded logarithm), divided by ``x (x + 1) ... (x + n - 1)``; the reflection formula
  below -1. Poles at negative integers are NaN, +-0 give +-inf.
- ``erfcx``: a degree-11 (f32) / 25 (f64) polynomial fit (computed with mpmath) of
  ``(1 + 2x) erfcx(x)`` in ``t = (x - 3.75) / (x + 3.75)`` on x >= 0, no exp at all; ``erfc`` (f64)
  and ``normcdf`` multiply it by ``e**-x*x`` with ``x*x`` split exactly; negative arguments by
  ``erfc(-x) = 2 - erfc(x)``.
- ``erfinv`` (f64), ``erfcinv``, ``normcdfinv``: Giles' single-precision approximation (or, deep in
  the tail, the asymptotic ``x**2 ~ w + log 2 - log(x sqrt(pi))``) refined by Halley steps on
  ``erf`` (|result| < 1/2) or on the scaled ``erfcx`` (the tails, down to the smallest subnormal).
  ``erfc``/``erfinv`` on float32 keep their float32 approximations.
- ``j0``/``j1``/``y0``/``y1``: polynomial fits (mpmath) in ``x*x`` up to 8 -- J0 and J1 as a fit
  times ``prod (x*x - z*z)`` over their first three zeros, each zero an exact pair, so J keeps
  relative accuracy at its zeros; Y as ``2/pi log(x) J(x)`` plus a fit, so near Y's zeros its error
  is absolute (a few eps) -- and the Hankel asymptotic forms with fitted ``P``/``Q`` beyond 8,
  their phase taken from ``sin(x)``/``cos(x)`` themselves. ``cyl_bessel_i0``/``i1``: the Taylor
  series (positive terms) up to 8, then a fit of ``sqrt(x) e**-x I(x)`` in ``8/x``.
- ``jn(n, x)``/``yn(n, x)`` (int32 ``n``, as Triton): ``yn`` by forward recurrence from Y0 and Y1
  (stable: Y grows with the order); ``jn`` forward where ``n < |x|``, else by Miller's backward
  recurrence normalised by J0 or J1, rescaled by exact powers of two, and by the series' first
  term for |x| < 2**-30. Both recur in an ``scf.for`` whose trip count is the tile's largest order
  (the order is a run-time value per element).
"""

from __future__ import annotations

import math as _m
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.ir.types import f64
from kdsl.language.extra.common import Ops, expm1_, float_fn, fmt, log1p_
from kdsl.language.extra.elementary import _cos_pi_small, _reduce, _sin_pi_small
from kdsl.language.extra.rounding import two_prod, two_sum_err

if TYPE_CHECKING:
    pass

_INF = float("inf")
_NAN = float("nan")

# lgamma(2 + z) = sum_k _LG2[k-1] z**k: c_1 = 1 - Euler's gamma, c_k = (-1)**k (zeta(k) - 1) / k.
_LG2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546, -0.007385551028673986,
        0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425, -0.00022315475845357939,
        9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05, -9.439488275268397e-06,
        4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07, -4.492469198764566e-07,
        2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08, -2.2711094608943164e-08,
        1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09, -1.1921401405860912e-09,
        5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10)  # fmt: skip
# Stirling's series: lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ sum_k B_2k / (2k (2k-1) x**(2k-1)).
_STIRLING = (0.08333333333333333, -0.002777777777777778, 0.0007936507936507937, -0.0005952380952380953,
             0.0008417508417508417, -0.0019175269175269176, 0.00641025641025641, -0.029550653594771242,
             0.17964437236883057, -1.3924322169059011)  # fmt: skip
_STIRLING_FROM = 8.0  # the series above has f64 accuracy with 10 terms from here on (f32: 5)


def _two_sum(o: Ops, a: Any, b: Any) -> tuple[Any, Any]:
    s = o.add(a, b)
    return s, two_sum_err(o, a, b, s)


def _sinpi(o: Ops, x: Any) -> Any:
    """``sin(pi x)`` for finite ``x``, reduced exactly to [-1/4, 1/4] (as ``libdevice.sinpi``)."""
    r = _reduce(o, x)
    a = o.abs(r)
    t = o.where(o.gt(a, 0.5), o.sub(1.0, a), a)
    v = o.where(o.gt(t, 0.25), _cos_pi_small(o, o.sub(0.5, t)), _sin_pi_small(o, t))
    return o.copysign(v, r)


def _log(o: Ops, a: Any) -> Any:
    """``log(a)`` for a >= 0 with subnormal ``a`` scaled into the normal range first (a backend's
    ``log`` may flush subnormals: vulkan's does)."""
    p, emin, _ = fmt(o)
    tiny = o.lt(a, 2.0 ** (emin + 2))
    return o.sub(o.f("log", o.where(tiny, o.mul(a, 2.0**p), a)), o.where(tiny, o.const(p * _m.log(2.0)), 0.0))


def _stirling_sum(o: Ops, r: Any) -> Any:
    """Stirling's correction series at ``r = 1/x``, x >= 8."""
    return o.mul(r, o.poly(o.mul(r, r), _STIRLING[: 10 if o.dt == f64 else 5]))


def _lgamma_pos(o: Ops, a: Any) -> Any:
    """``lgamma`` for a > 0 (inf included)."""
    k = o.s.minmax("max", o.f("ceil", o.sub(a, 2.5)), o.const(0.0))  # steps from (2.5, 8) down to (1.5, 2.5]
    prod: Any = o.const(1.0)
    for j in range(1, 7):
        prod = o.mul(prod, o.where(o.ge(k, float(j)), o.sub(a, float(j)), 1.0))  # exact differences
    f = o.sub(a, k)
    z = o.where(o.lt(a, 0.5), a, o.where(o.lt(a, 1.5), o.sub(a, 1.0), o.sub(f, 2.0)))  # exact
    lg2 = o.mul(z, o.poly(z, _LG2[: 28 if o.dt == f64 else 13]))  # lgamma(2 + z)
    small = o.where(o.lt(a, 0.5), o.sub(o.sub(lg2, log1p_(o, a)), _log(o, a)),
                    o.where(o.lt(a, 1.5), o.sub(lg2, log1p_(o, z)), o.add(lg2, o.f("log", prod))))  # fmt: skip
    big_a = o.s.minmax("max", a, o.const(_STIRLING_FROM))
    r = o.div(1.0, big_a)
    half_log_2pi = 0.5 * _m.log(2 * _m.pi)
    big = o.add(o.fma(o.sub(big_a, 0.5), o.sub(o.f("log", big_a), 1.0), half_log_2pi - 0.5), _stirling_sum(o, r))
    return o.where(o.lt(a, _STIRLING_FROM), small, big)


@float_fn()
def lgamma(o: Ops, x: Any) -> Any:
    """``log|Gamma(x)|``; +inf at the poles (0 and the negative integers) and at +-inf."""
    neg = o.lt(x, 0.0)
    lp = _lgamma_pos(o, o.where(neg, o.sub(1.0, x), o.abs(x)))
    refl = o.sub(o.sub(_m.log(_m.pi), _log(o, o.abs(_sinpi(o, o.where(o.isinf(x), 0.5, x))))), lp)
    r = o.where(neg, refl, lp)
    r = o.where(o.and_(o.le(x, 0.0), o.eq(o.f("floor", x), x)), _INF, r)
    return o.where(o.isnan(x), x, r)


@float_fn()
def tgamma(o: Ops, x: Any) -> Any:
    """``Gamma(x)``: +-inf at +-0, NaN at the negative integers and -inf, overflow to +inf."""
    return _tgamma(o, x)


def _tgamma(o: Ops, x: Any) -> Any:
    neg = o.lt(x, -1.0)
    one_minus = o.sub(1.0, x)
    yh = o.where(neg, one_minus, x)
    yl = o.where(neg, two_sum_err(o, o.const(1.0), o.s.unary("neg", x), one_minus), 0.0)
    # z = y + n >= 8 and Gamma(y) = Gamma(z) / (y (y + 1) ... (y + n - 1)), factors as exact pairs
    n = o.s.minmax("max", o.f("ceil", o.sub(_STIRLING_FROM, yh)), o.const(0.0))
    prod: Any = o.const(1.0)
    corr: Any = o.const(0.0)
    for k in range(9):  # y >= -1: n <= 9
        on = o.gt(n, float(k))
        h, err = _two_sum(o, yh, o.const(float(k)))
        prod = o.mul(prod, o.where(on, h, 1.0))
        corr = o.add(corr, o.where(on, o.div(o.add(err, yl), h), 0.0))
    z, zerr = _two_sum(o, yh, n)
    z = o.s.minmax("max", z, o.const(_STIRLING_FROM))  # masked lanes (inf, NaN) stay harmless
    zl = o.add(zerr, yl)
    r = o.div(1.0, z)
    psi = o.sub(o.f("log", z), o.mul(r, 0.5))  # digamma(z) to first order: Gamma(z + zl) ~ Gamma(z)(1 + psi zl)
    s_corr = o.add(1.0, expm1_(o, _stirling_sum(o, r)))
    m = o.mul(o.mul(o.f("exp", o.s.unary("neg", z)), _m.sqrt(2 * _m.pi)), s_corr)
    m = o.div(o.mul(m, o.fma(psi, zl, o.const(1.0))), o.mul(prod, o.add(corr, 1.0)))
    p = o.s.power(z, o.sub(o.mul(z, 0.5), 0.25))
    pos = o.mul(o.mul(p, m), p)
    s = _sinpi(o, o.where(neg, x, 0.5))
    refl = o.div(o.div(o.div(_m.pi, o.mul(s, p)), m), p)
    overflow, underflow = (171.7, 190.0) if o.dt == f64 else (35.1, 45.0)
    res = o.where(neg, o.where(o.gt(one_minus, underflow), o.copysign(o.const(0.0), s), refl), pos)
    res = o.where(o.gt(x, overflow), _INF, res)
    res = o.where(o.eq(x, 0.0), o.copysign(o.const(_INF), x), res)
    res = o.where(o.and_(o.lt(x, 0.0), o.eq(o.f("floor", x), x)), _NAN, res)
    return o.where(o.isnan(x), x, res)


# --- the error-function family -------------------------------------------------------------------
# (1 + 2x) erfcx(x) = sum_k c_k t**k, t = (x - 3.75) / (x + 3.75), x >= 0: mpmath.chebyfit, maximum
# relative error 1.8e-8 (12 terms, for f32) and 2.4e-18 (26 terms, f64).
_ERFCX_K = 3.75
_ERFCX32 = (1.2375126184625718, -0.14024060801000693, 0.003586310101688852, 0.08227741756036867, -0.10881458496174144,
            0.092296367961203, -0.0586459828677125, 0.02839648212065827, -0.009845491094959295,
            0.0016886622311156746, 0.0003967046382800549, -0.00022874723359084774)  # fmt: skip
_ERFCX64 = (1.2375126308378275, -0.14024059858554702, 0.0035854154854644583, 0.08227673849015109,
            -0.10880393014175023, 0.09230432116019638, -0.05869339858961116, 0.02836227742154398,
            -0.009746579558275152, 0.0017556258321915355, 0.0002937136669846131, -0.0002901539781378384,
            5.1649093885821704e-05, 2.238390827660038e-05, -1.1444134389658475e-05, -9.728413451815077e-07,
            1.7516189406943677e-06, -5.827501862768691e-08, -2.586489910718322e-07, 2.4301839484503084e-08,
            3.866242066283792e-08, -4.396921916762906e-09, -5.169080644815932e-09, 5.485084520083625e-10,
            4.2433038251096756e-10, -3.7980647235900285e-11)  # fmt: skip
_TWO_OVER_SQRT_PI = 2.0 / _m.sqrt(_m.pi)
_SQRT_HALF = Decimal("0.70710678118654752440084436210484903928483593768847403658833987")
_SQRT_HALF_HI = float(_SQRT_HALF)


def _erfcx_pos(o: Ops, a: Any) -> Any:
    """``erfcx(a)`` for a >= 0 (0 at +inf): the fit above, without overflow for any ``a``."""
    t = o.sub(1.0, o.div(2.0 * _ERFCX_K, o.add(a, _ERFCX_K)))
    g = o.poly(t, _ERFCX64 if o.dt == f64 else _ERFCX32)
    return o.div(o.mul(g, 0.5), o.add(a, 0.5))


def _exp_sq(o: Ops, a: Any, sign: float, scale: float = 1.0) -> tuple[Any, Any]:
    """``(e**(sign scale ah*ah), e**(sign lo))`` with ``ah*ah + lo = a*a``: ``ah`` keeps the upper
    half of ``a``'s significand, so ``ah*ah`` is exact and no rounding of ``a*a`` reaches the
    exponent (``scale`` a power of two: ``1/2`` gives a factor to use twice where ``e**(a*a)``
    itself would overflow)."""
    a = o.s.minmax("min", o.abs(a), o.const(2.0**40))  # beyond, e**(+-a*a) is 0 or inf anyway
    split = 134217729.0 if o.dt == f64 else 4097.0  # Veltkamp: 2**ceil(p/2) + 1
    c = o.mul(a, split)
    ah = o.sub(c, o.sub(c, a))
    lo = o.mul(o.sub(a, ah), o.add(a, ah))
    return o.f("exp", o.mul(o.mul(ah, ah), sign * scale)), o.f("exp", o.mul(lo, sign))


def _erfc_pair(o: Ops, zh: Any, zl: Any) -> Any:
    """``erfc(zh + zl)`` for a small ``zl``: ``erfc(|zh|) = erfcx(|zh|) e**-zh*zh`` with the first-order
    term of ``zl`` applied inside, before the (possibly underflowing) exponential."""
    a = o.abs(zh)
    eh, el = _exp_sq(o, a, -1.0)
    slope = o.mul(zl, _TWO_OVER_SQRT_PI)
    v = o.mul(o.mul(o.sub(_erfcx_pos(o, a), o.where(o.lt(zh, 0.0), o.s.unary("neg", slope), slope)), el), eh)
    r = o.where(o.lt(zh, 0.0), o.sub(2.0, v), v)
    # |z| < 1/2: 1 - erf(z) (cancels by at most a factor 2) is closer than the fit's many terms
    near = o.sub(o.sub(1.0, o.f("erf", zh)), o.mul(o.mul(slope, el), eh))
    r = o.where(o.lt(a, 0.5), near, r)
    return o.where(o.isnan(zh), zh, r)


@float_fn()
def erfcx(o: Ops, x: Any) -> Any:
    """Scaled complementary error function ``e**(x*x) erfc(x)``, without overflow or underflow for
    large ``x`` (``~ 1 / (x sqrt(pi))``); +inf below about -26.6 (f32: -9.4) where it overflows."""
    ex = _erfcx_pos(o, o.abs(x))
    eh, el = _exp_sq(o, x, 1.0)
    return o.where(o.lt(x, 0.0), o.sub(o.mul(o.mul(eh, el), 2.0), ex), ex)


@float_fn()
def normcdf(o: Ops, x: Any) -> Any:
    """Standard normal cumulative distribution ``erfc(-x / sqrt(2)) / 2``; ``-x / sqrt(2)`` is kept
    as an exact pair, as its rounding would be amplified ~x*x times in the tails."""
    c_hi = _SQRT_HALF_HI if o.dt == f64 else float(np.float32(_SQRT_HALF_HI))
    c_lo = float(_SQRT_HALF - Decimal(c_hi))
    zh, err = two_prod(o, x, o.const(-c_hi))
    zl = o.where(o.lt(o.abs(x), 1e15 if o.dt == f64 else 1e6), o.sub(err, o.mul(x, c_lo)), 0.0)
    return o.mul(_erfc_pair(o, zh, zl), 0.5)


# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing Gems): a
# polynomial in w = -log(1 - x*x), one for the centre (w < 5), one in sqrt(w) for the tails.
_ERFINV_CENTRE = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941)  # fmt: skip
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                0.00943887047, 1.00167406, 2.83297682)  # fmt: skip


def _giles(o: Ops, w: Any) -> Any:
    """Giles' ``erfinv(x) / x`` as a function of ``w = -log(1 - x*x)``."""
    centre = o.poly(o.sub(w, 2.5), tuple(reversed(_ERFINV_CENTRE)))
    tail = o.poly(o.sub(o.f("sqrt", o.s.minmax("max", w, o.const(5.0))), 3.0), tuple(reversed(_ERFINV_TAIL)))
    return o.where(o.lt(w, 5.0), centre, tail)


def _erfinv_small(o: Ops, p: Any) -> Any:
    """``erfinv(p)`` for |p| <= 1/2: Giles' value refined by Halley steps on ``erf(x) - p``
    (relative accuracy down to subnormal ``p``: no ``1 - p`` is formed)."""
    x = o.mul(_giles(o, o.s.unary("neg", log1p_(o, o.s.unary("neg", o.mul(p, p))))), p)
    for _ in range(2 if o.dt == f64 else 1):
        u = o.mul(o.mul(o.sub(o.f("erf", x), p), 1.0 / _TWO_OVER_SQRT_PI), o.f("exp", o.mul(x, x)))
        x = o.sub(x, o.div(u, o.fma(x, u, o.const(1.0))))
    return x


def _erfcinv_tail(o: Ops, q: Any) -> Any:
    """``erfcinv(q)`` for 0 < q <= 1/2 (subnormal ``q`` included): Giles' value for ``1 - q`` (or the
    asymptotic one beyond its range) refined by Halley steps on ``erfcx(x) - q e**(x*x)``, which
    keeps every quantity in range and relative."""
    p, emin, _ = fmt(o)
    tiny = o.lt(q, 2.0 ** (emin + 2))  # log of a subnormal: scale first (backends may flush it)
    qs = o.where(tiny, o.mul(q, 2.0**p), q)
    w = o.s.unary("neg", _log(o, o.mul(q, o.sub(2.0, q))))
    r0 = o.f("sqrt", w)
    asym = o.f("sqrt", o.sub(o.add(w, _m.log(2.0)), o.f("log", o.mul(r0, _m.sqrt(_m.pi)))))
    x = o.where(o.lt(w, 16.0), o.mul(_giles(o, w), o.sub(1.0, q)), asym)
    for _ in range(3 if o.dt == f64 else 2):
        e1, el = _exp_sq(o, x, 1.0, 0.5)  # e1 * e1 * el = e**(x*x), e1 in range for every q
        q_scaled = o.mul(o.mul(o.mul(qs, e1), el), e1)
        q_scaled = o.where(tiny, o.mul(q_scaled, 2.0**-p), q_scaled)
        u = o.mul(o.sub(_erfcx_pos(o, x), q_scaled), -1.0 / _TWO_OVER_SQRT_PI)
        x = o.sub(x, o.div(u, o.fma(x, u, o.const(1.0))))
    return x


@float_fn()
def erfc(o: Ops, x: Any) -> Any:
    """Complementary error function ``1 - erf(x)``, accurate where it is tiny (f32: a float32 fit
    of ``erfc`` itself; f64: ``erfcx(|x|) e**(-x*x)``)."""
    if o.dt == f64:
        return _erfc_pair(o, x, o.const(0.0))
    z = o.abs(x)
    t = o.div(1.0, o.fma(z, 0.5, 1.0))
    # exp(-z*z + P): z*z split exactly (zh has 12 significant bits, so zh*zh is exact) and the large
    # part exponentiated alone, so no rounding of a sum near -z*z enters the exponent
    zh = o.from_bits(o.s.binary("and_", o.bits(z), 0xFFFFF000))
    lo = o.mul(o.sub(z, zh), o.add(z, zh))
    e = o.mul(o.f("exp", o.s.unary("neg", o.mul(zh, zh))), o.f("exp", o.sub(o.poly(t, _ERFC), lo)))
    r = o.where(o.isinf(z), 0.0, o.mul(t, e))
    r = o.where(o.lt(x, 0.0), o.sub(2.0, r), r)
    return o.where(o.isnan(x), x, r)


# Chebyshev fit of erfc(z) = t * exp(-z*z + P(t)), t = 1 / (1 + z/2), z >= 0: relative error below
# 1.2e-7 for every z (Numerical Recipes' erfcc) -- float32 accuracy.
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
         -0.82215223, 0.17087277)  # fmt: skip


@float_fn()
def erfinv(o: Ops, x: Any) -> Any:
    """Inverse error function on (-1, 1) (+-inf at +-1, NaN beyond). f32: Giles' approximation;
    f64: refined to double accuracy by Halley steps (on ``erf`` for |x| <= 1/2, else on
    ``erfcx`` at ``1 - |x|``, which is exact there)."""
    a = o.abs(x)
    if o.dt == f64:
        small = _erfinv_small(o, o.where(o.le(a, 0.5), x, 0.0))
        tail = _erfcinv_tail(o, o.where(o.and_(o.gt(a, 0.5), o.lt(a, 1.0)), o.sub(1.0, a), 0.25))
        r = o.where(o.le(a, 0.5), small, o.copysign(tail, x))
    else:
        w = o.s.unary("neg", o.f("log", o.mul(o.sub(1.0, x), o.add(1.0, x))))
        r = o.mul(_giles(o, w), x)
    r = o.where(o.eq(a, 1.0), o.copysign(o.const(_INF), x), r)
    return o.where(o.or_(o.gt(a, 1.0), o.isnan(x)), _NAN, r)


def _erfcinv(o: Ops, y: Any) -> Any:
    lower, upper = o.le(y, 0.5), o.ge(y, 1.5)
    tail = _erfcinv_tail(o, o.where(lower, o.s.minmax("max", y, o.const(0.0)), o.where(upper, o.sub(2.0, y), 0.25)))
    small = _erfinv_small(o, o.where(o.or_(lower, upper), 0.0, o.sub(1.0, y)))  # 1 - y exact on [1/2, 3/2]
    r = o.where(lower, tail, o.where(upper, o.s.unary("neg", tail), small))
    r = o.where(o.eq(y, 0.0), _INF, o.where(o.eq(y, 2.0), -_INF, r))
    return o.where(o.or_(o.or_(o.lt(y, 0.0), o.gt(y, 2.0)), o.isnan(y)), _NAN, r)


@float_fn()
def erfcinv(o: Ops, y: Any) -> Any:
    """Inverse complementary error function on (0, 2) (+inf at 0, -inf at 2, NaN outside)."""
    return _erfcinv(o, y)


@float_fn()
def normcdfinv(o: Ops, p: Any) -> Any:
    """Inverse of ``normcdf`` on (0, 1): ``-sqrt(2) erfcinv(2p)`` (-inf at 0, +inf at 1, +0 at 1/2)."""
    r = o.mul(_erfcinv(o, o.mul(p, 2.0)), -_m.sqrt(2.0))
    return o.where(o.eq(r, 0.0), 0.0, r)


__all__ = ["erfc", "erfcinv", "erfcx", "erfinv", "lgamma", "normcdf", "normcdfinv", "tgamma"]
