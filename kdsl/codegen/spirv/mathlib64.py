"""f64 ``exp``/``exp2``/``log``/``log2``/``rsqrt``/``tanh``/``erf`` for the SPIR-V backend
(``sin``/``cos``: :mod:`kdsl.codegen.spirv.trig64`).

Why our own: GLSL.std.450's ``Exp``/``Exp2``/``Log``/``Log2`` accept 16/32-bit floats only,
so an f64 kernel using them had no lowering on Vulkan. These follow the classic libm
construction, in plain f64 arithmetic the backend has (add/mul/div, ``Floor``, ``Frexp``,
bit casts):

* ``exp(x) = 2**k * exp(r)``, ``k = round(x / ln 2)``, ``r = x - k*ln2_hi - k*ln2_lo`` (ln 2 in
  two parts, the high part with trailing zero bits so ``k*ln2_hi`` is exact), ``exp(r)`` by its
  Taylor polynomial to degree 13 (``|r| <= ln(2)/2``: truncation < 5e-18 relative);
  ``exp2(x)``: ``k = round(x)``, ``r = x - k`` exactly, the polynomial with coefficients
  ``ln(2)**n / n!``. ``2**k`` is applied as two exact power-of-two factors built from exponent
  bits, so subnormal results are rounded once and nothing overflows early.
* ``log(x)``: ``x = m * 2**e`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` (``Frexp``, subnormals
  scaled first), ``f = m - 1``, ``s = f / (2 + f)``, ``log(m) = f - (f*f/2 - s*(f*f/2 + R(s*s)))``
  with ``R(z) = sum 2 z**k / (2k+1)`` to ``k = 11`` (the ``atanh`` series), plus ``e*ln2_hi +
  e*ln2_lo``. ``log2(x) = e + log(m) / ln 2`` -- exact for powers of two.
* ``rsqrt(x) = 1 / sqrt(x)`` (GLSL ``Sqrt`` takes f64; two roundings).
* ``tanh(x)``: ``expm1(2|x|) / (expm1(2|x|) + 2)`` below 0.55 (``expm1`` by its Taylor series, no
  cancellation near 0), ``1 - 2 / (exp(2|x|) + 1)`` above, the sign of ``x`` put back (-0 stays -0).

Special values follow C/numpy: NaN in, NaN out; ``exp(+-inf) = inf, 0``; ``log(0) = -inf``,
``log(x < 0) = NaN``, ``log(inf) = inf``. Accuracy against numpy (``tests/vulkan/test_math_f64.py``):
within 2 ulp. The coefficients are computed here from their definitions (factorials, powers of
``ln 2``), not typed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext

from kdsl.codegen.spirv import trig64
from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.f64ops import F64Ops, poly

LN2_HI = 6.93147180369123816490e-01  # ln 2 rounded to 32 significant bits: k * LN2_HI is exact


def _ln2_rest() -> float:
    """ln 2 - LN2_HI to full double precision (``math.log(2) - LN2_HI`` would keep only the bits
    of the *rounded* ln 2: ~2**-54 of error times k, ~200 ulp at |x| ~ 700)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(2).ln() - Decimal(LN2_HI))


LN2_LO = _ln2_rest()
INV_LN2 = 1 / math.log(2)
EXP_DEGREE = 13
EXP_COEFS = tuple(1 / math.factorial(n) for n in range(EXP_DEGREE + 1))
EXP2_COEFS = tuple(math.log(2) ** n / math.factorial(n) for n in range(EXP_DEGREE + 1))
LOG_TERMS = tuple(2 / (2 * k + 1) for k in range(1, 12))  # R(z) = sum_k 2 z^k / (2k+1)
EXP_OVERFLOW = 709.782712893384  # exp(x) = inf above (largest x with a finite result)
EXP_UNDERFLOW = -745.1332191019412  # exp(x) = 0 below (rounds to zero)


def _pow2(e: Emitter, k: int) -> int:
    """``2.0**k`` for an i32 ``k`` in [-1022, 1023], from the exponent bits."""
    f = e.f
    i64, u64, d = e.t.int_t(64, True), e.t.u64, e.t.float_t(64)
    biased = f.binary("add", i64, f.convert(i64, e.t.i32, k), f.const(i64, 1023))
    return f.bitcast(d, f.binary("shl", u64, f.bitcast(u64, biased), f.const(u64, 52)))


def scale_pow2(e: Emitter, p: int, k: int) -> int:
    """``p * 2**k`` for ``p`` in ~[0.7, 1.5] and ``k`` in [-1100, 1100]: two exact factors, the
    first leaving the product normal, so a subnormal result is rounded once."""
    f, i32, d = e.f, e.t.i32, e.t.float_t(64)
    k1 = f.binary("div", i32, k, f.const(i32, 2))
    k2 = f.binary("sub", i32, k, k1)
    return f.binary("mul", d, f.binary("mul", d, p, _pow2(e, k1)), _pow2(e, k2))


def _round_to_i32(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    return f.convert(e.t.i32, d, f.ext(d, "Floor", f.binary("add", d, x, f.const(d, 0.5))))


def _exp_specials(e: Emitter, x: int, r: int, over: float, under: float) -> int:
    f, d = e.f, e.t.float_t(64)
    r = f.select(d, f.cmp("gt", d, x, f.const(d, over)), f.const(d, math.inf), r)
    r = f.select(d, f.cmp("lt", d, x, f.const(d, under)), f.const(d, 0.0), r)
    return f.select(d, f.isnan(x), x, r)


def exp_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    xc = f.ext(d, "FClamp", x, f.const(d, -800.0), f.const(d, 800.0))  # keeps k in range; specials below
    k = _round_to_i32(e, f.binary("mul", d, xc, f.const(d, INV_LN2)))
    kd = f.convert(d, e.t.i32, k)
    hi = f.binary("sub", d, xc, f.binary("mul", d, kd, f.const(d, LN2_HI)))
    r = f.binary("sub", d, hi, f.binary("mul", d, kd, f.const(d, LN2_LO)))
    return _exp_specials(e, x, scale_pow2(e, poly(e, EXP_COEFS, r), k), EXP_OVERFLOW, EXP_UNDERFLOW)


def exp2_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    xc = f.ext(d, "FClamp", x, f.const(d, -1100.0), f.const(d, 1100.0))
    k = _round_to_i32(e, xc)
    r = f.binary("sub", d, xc, f.convert(d, e.t.i32, k))  # exact
    # 2**x = inf at x >= 1024; 0 below -1075 (the smallest subnormal's half rounds to zero)
    return _exp_specials(e, x, scale_pow2(e, poly(e, EXP2_COEFS, r), k), 1023.9999999999999, -1075.0)


def _log_parts(e: Emitter, x: int) -> tuple[int, int]:
    """``(ex, log(m))`` with ``x = m * 2**ex``, ``m`` in [sqrt(1/2), sqrt(2)), for positive finite ``x``."""
    f, d, i32 = e.f, e.t.float_t(64), e.t.i32
    tiny = f.cmp("lt", d, x, f.const(d, 2.0**-1022))
    xs = f.select(d, tiny, f.binary("mul", d, x, f.const(d, 2.0**54)), x)  # subnormals: normal first
    frexp = e.m.t_struct([d, i32], "frexp64")
    parts = f.ext(frexp, "FrexpStruct", xs)
    m = f.op("OpCompositeExtract", d, parts, 0)
    ex = f.op("OpCompositeExtract", i32, parts, 1)
    ex = f.select(i32, tiny, f.binary("sub", i32, ex, f.const(i32, 54)), ex)
    low = f.cmp("lt", d, m, f.const(d, math.sqrt(0.5)))
    m = f.select(d, low, f.binary("mul", d, m, f.const(d, 2.0)), m)
    ex = f.select(i32, low, f.binary("sub", i32, ex, f.const(i32, 1)), ex)
    fm = f.binary("sub", d, m, f.const(d, 1.0))  # exact (Sterbenz)
    s = f.binary("div", d, fm, f.binary("add", d, f.const(d, 2.0), fm))
    z = f.binary("mul", d, s, s)
    rz = _log_r(e, z)
    hfsq = f.binary("mul", d, f.const(d, 0.5), f.binary("mul", d, fm, fm))
    inner = f.binary("sub", d, hfsq, f.binary("mul", d, s, f.binary("add", d, hfsq, rz)))
    return ex, f.binary("sub", d, fm, inner)


def _log_r(e: Emitter, z: int) -> int:
    """``R(z) = sum_{k>=1} 2 z**k / (2k+1)``."""
    f, d = e.f, e.t.float_t(64)
    return f.binary("mul", d, z, poly(e, LOG_TERMS, z))


def _log_specials(e: Emitter, x: int, r: int) -> int:
    f, d, b = e.f, e.t.float_t(64), e.t.bool
    r = f.select(d, f.cmp("eq", d, x, f.const(d, 0.0)), f.const(d, -math.inf), r)
    r = f.select(d, f.cmp("lt", d, x, f.const(d, 0.0)), f.const(d, math.nan), r)
    r = f.select(d, f.land(f.op("OpIsInf", b, x), f.cmp("gt", d, x, f.const(d, 0.0))), x, r)
    return f.select(d, f.isnan(x), x, r)


def _positive(e: Emitter, x: int) -> int:
    """``x`` where it is a positive finite number, else 1 (the specials are selected afterwards)."""
    f, d, b = e.f, e.t.float_t(64), e.t.bool
    ok = f.land(f.cmp("gt", d, x, f.const(d, 0.0)), f.lnot(f.op("OpIsInf", b, x)))
    return f.select(d, ok, x, f.const(d, 1.0))


def log_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    ex, lm = _log_parts(e, _positive(e, x))
    exd = f.convert(d, e.t.i32, ex)
    r = f.binary("add", d, f.binary("mul", d, exd, f.const(d, LN2_HI)),
                 f.binary("add", d, lm, f.binary("mul", d, exd, f.const(d, LN2_LO))))  # fmt: skip
    return _log_specials(e, x, r)


def log2_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    ex, lm = _log_parts(e, _positive(e, x))
    r = f.binary("add", d, f.convert(d, e.t.i32, ex), f.binary("mul", d, lm, f.const(d, INV_LN2)))
    return _log_specials(e, x, r)


EXPM1_DEGREE = 20  # expm1(t) = t * sum t**n / (n+1)! for |t| <= 1.1: truncation < 1e-18 relative
EXPM1_COEFS = tuple(1 / math.factorial(n + 1) for n in range(EXPM1_DEGREE))
TANH_SMALL = 0.55  # below: tanh(x) = expm1(2x) / (expm1(2x) + 2) (no cancellation); above: 1 - 2/(exp(2|x|)+1)


def tanh_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    ax = f.ext(d, "FAbs", x)
    t = f.binary("mul", d, f.const(d, 2.0), f.ext(d, "FMin", ax, f.const(d, TANH_SMALL)))
    em1 = f.binary("mul", d, t, poly(e, EXPM1_COEFS, t))
    small = f.binary("div", d, em1, f.binary("add", d, em1, f.const(d, 2.0)))
    big_e = exp_f64(e, f.binary("mul", d, f.const(d, 2.0), f.ext(d, "FMin", ax, f.const(d, 40.0))))
    big = f.binary("sub", d, f.const(d, 1.0), f.binary("div", d, f.const(d, 2.0), f.binary("add", d, big_e, f.const(d, 1.0))))
    mag = f.select(d, f.cmp("lt", d, ax, f.const(d, TANH_SMALL)), small, big)
    r = F64Ops(e).copysign(mag, x)  # tanh(-0.0) = -0.0
    return f.select(d, f.isnan(x), x, r)


def rsqrt_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    return f.binary("div", d, f.const(d, 1.0), f.ext(d, "Sqrt", x))


def _two_over_sqrt_pi() -> float:
    with localcontext() as ctx:
        ctx.prec = 60
        pi = Decimal(trig64.pi_scaled(200)) / Decimal(2) ** 200
        return float(2 / pi.sqrt())


ERF_TAYLOR = tuple(_two_over_sqrt_pi() * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(22))
ERF_PIECES = ((1.0, 2.0), (2.0, 3.5), (3.5, 6.0))  # erfc(x) * exp(x*x) interpolated on each
ERF_ONE = 6.0  # erf(x) rounds to +-1 from here (erfc(6) = 2e-17 < half an ulp of 1)
# Chebyshev coefficients of erfc(x) * exp(x*x) on each piece (in u = (x - mid) / half), from
# tools/gen_erf64.py (300-bit arithmetic, rounded once; interpolating in doubles instead left
# ~1e-14 of error at the ends of each piece). tests/vulkan/test_math_f64.py recomputes them.
ERF_COEFS = (
    (  # [1.0, 2.0], 18 terms
        0.331427281639452,
        -0.0850021377067432,
        0.009951127341466115,
        -0.0010810888102208325,
        0.0001102324363119495,
        -1.0636830518218601e-05,
        9.775012680479055e-07,
        -8.597922867888315e-08,
        7.2677084117248425e-09,
        -5.923543840592542e-10,
        4.6683928572294154e-11,
        -3.56612770156775e-12,
        2.6458779519104523e-13,
        -1.9101658673527567e-14,
        1.343976588479829e-15,
        -9.228790549094326e-17,
        6.19267308464391e-18,
        -4.0652224326488762e-19,
    ),
    (  # [2.0, 3.5], 19 terms
        0.19943078169681192,
        -0.04938002535992735,
        0.00584049638189269,
        -0.0006632226933017975,
        7.259178935511736e-05,
        -7.682952765978158e-06,
        7.883915794570548e-07,
        -7.861599623239447e-08,
        7.632681897920269e-09,
        -7.227220937985042e-10,
        6.683956650788739e-11,
        -6.045467151546551e-12,
        5.353822288044628e-13,
        -4.6471602519833763e-14,
        3.957386034387205e-15,
        -3.3089920479178426e-16,
        2.7188560214028356e-17,
        -2.196787001971828e-18,
        1.7465619718983957e-19,
    ),
    (  # [3.5, 6.0], 20 terms
        0.12011119518612726,
        -0.03077508367843977,
        0.003865397162805732,
        -0.00047649553104630324,
        5.770371528146291e-05,
        -6.87063803752421e-06,
        8.049536979209691e-07,
        -9.285957122953073e-08,
        1.055453759031051e-08,
        -1.1826607946099641e-09,
        1.3071369079163705e-10,
        -1.4257239280506568e-11,
        1.5353276736774004e-12,
        -1.6330584393840345e-13,
        1.716360603412163e-14,
        -1.7831232826173895e-15,
        1.83176561966693e-16,
        -1.861292377204558e-17,
        1.871317819141625e-18,
        -1.8620581628727267e-19,
    ),
)


def _clenshaw(e: Emitter, coefs: tuple[float, ...], u: int) -> int:
    """``sum coefs[k] T_k(u)``."""
    f, d = e.f, e.t.float_t(64)
    two_u = f.binary("mul", d, f.const(d, 2.0), u)
    b1, b2 = f.const(d, 0.0), f.const(d, 0.0)
    for c in coefs[:0:-1]:
        b1, b2 = f.binary("add", d, f.binary("sub", d, f.binary("mul", d, two_u, b1), b2), f.const(d, c)), b1
    return f.binary("add", d, f.binary("sub", d, f.binary("mul", d, u, b1), b2), f.const(d, coefs[0]))


def erf_f64(e: Emitter, x: int) -> int:
    """``x * P(x*x)`` (Taylor) below 1; ``1 - exp(-x*x) * R(|x|)`` with ``R = erfc * exp(x*x)``
    interpolated on three pieces up to 6; +-1 beyond. ``x*x`` is split exactly (Dekker) so
    ``exp(-x*x)`` keeps full precision."""
    f, d = e.f, e.t.float_t(64)
    ax = f.ext(d, "FAbs", x)
    small = f.binary("mul", d, x, poly(e, ERF_TAYLOR, f.binary("mul", d, x, x)))
    a = f.ext(d, "FClamp", ax, f.const(d, 1.0), f.const(d, ERF_ONE))
    r = f.const(d, 0.0)
    for (lo, hi), coefs in zip(ERF_PIECES, ERF_COEFS):
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        u = f.binary("mul", d, f.binary("sub", d, a, f.const(d, mid)), f.const(d, 1 / half))
        piece = _clenshaw(e, coefs, u)
        r = f.select(d, f.cmp("lt", d, a, f.const(d, lo)), r, piece)
    h = F64Ops(e)
    sq, sq_err = h.two_prod(a, a)
    ex = exp_f64(e, f.neg(d, sq))
    ex = f.binary("sub", d, ex, f.binary("mul", d, ex, sq_err))  # exp(-(sq + err)) = exp(-sq) (1 - err)
    big = f.binary("sub", d, f.const(d, 1.0), f.binary("mul", d, ex, r))
    big = f.select(d, f.cmp("ge", d, ax, f.const(d, ERF_ONE)), f.const(d, 1.0), big)
    big = h.copysign(big, x)
    out = f.select(d, f.cmp("lt", d, ax, f.const(d, 1.0)), small, big)
    return f.select(d, f.isnan(x), x, out)


def fma_f64(e: Emitter, a: int, b: int, c: int) -> int:
    """Correctly rounded f64 ``a*b+c`` without a fused instruction (lavapipe's GLSL ``Fma`` rounds
    the product first). Boldo & Melquiond's emulation through rounding to odd: Dekker's exact
    product ``ph + pl``, ``c + ph = sh + sl`` exactly (TwoSum), ``v = RO(sl + pl)`` (the rounded
    sum moved one ulp towards its error when inexact with an even last bit), then ``sh + v``
    rounds once. It needs the Veltkamp split not to overflow (``|a|, |b| < 2**995``), the
    product's error term above the subnormal range (``|a*b| >= 2**-968``) and a finite ``sh``;
    elsewhere (zeros, infinities, NaN, extreme ranges) ``a*b + c`` is used, which is exact for
    the special values and at worst doubly rounded in the extreme ranges."""
    h, f = F64Ops(e), e.f
    d, u = h.d, h.u
    ph, pl = h.two_prod(a, b)
    sh, sl = h.two_sum(c, ph)
    v, err = h.two_sum(sl, pl)
    zero = h.c(0.0)
    inexact = f.lor(f.cmp("lt", d, err, zero), f.cmp("gt", d, err, zero))
    bits = f.bitcast(u, v)
    even = f.cmp("eq", u, h.uop("and", bits, h.cu(1)), h.cu(0))
    away = f.op("OpLogicalEqual", e.t.bool, f.cmp("lt", d, err, zero), f.cmp("lt", d, v, zero))
    step = f.select(u, away, h.cu(1), h.cu((1 << 64) - 1))
    v = f.select(d, f.land(inexact, even), f.bitcast(d, h.uop("add", bits, step)), v)
    exact = h.add(sh, v)
    aa, ab, aph, ash = (f.ext(d, "FAbs", x) for x in (a, b, ph, sh))
    ok = f.land(f.cmp("lt", d, aa, h.c(2.0**995)), f.cmp("lt", d, ab, h.c(2.0**995)))
    ok = f.land(ok, f.land(f.cmp("ge", d, aph, h.c(2.0**-968)), f.cmp("lt", d, ash, h.c(math.inf))))
    return f.select(d, ok, exact, h.add(ph, c))


F64: dict[str, Callable[[Emitter, int], int]] = {
    "math.exp": exp_f64,
    "math.exp2": exp2_f64,
    "math.log": log_f64,
    "math.log2": log2_f64,
    "math.rsqrt": rsqrt_f64,
    "math.tanh": tanh_f64,
    "math.sin": trig64.sin_f64,
    "math.cos": trig64.cos_f64,
    "math.erf": erf_f64,
}
