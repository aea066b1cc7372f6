"""f64 ``exp``/``exp2``/``log``/``log2``/``rsqrt``/``tanh`` for the SPIR-V backend (``sin``/``cos``:
:mod:`kdsl.codegen.spirv.trig64`).

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


def _poly(e: Emitter, coefs: tuple[float, ...], x: int) -> int:
    """``sum coefs[n] * x**n`` by Horner's rule (separate multiply and add: two roundings)."""
    f, d = e.f, e.t.float_t(64)
    r = f.const(d, coefs[-1])
    for c in coefs[-2::-1]:
        r = f.binary("add", d, f.binary("mul", d, r, x), f.const(d, c))
    return r


def _pow2(e: Emitter, k: int) -> int:
    """``2.0**k`` for an i32 ``k`` in [-1022, 1023], from the exponent bits."""
    f = e.f
    i64, u64, d = e.t.int_t(64, True), e.t.u64, e.t.float_t(64)
    biased = f.binary("add", i64, f.convert(i64, e.t.i32, k), f.const(i64, 1023))
    return f.bitcast(d, f.binary("shl", u64, f.bitcast(u64, biased), f.const(u64, 52)))


def _scale(e: Emitter, p: int, k: int) -> int:
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
    return _exp_specials(e, x, _scale(e, _poly(e, EXP_COEFS, r), k), EXP_OVERFLOW, EXP_UNDERFLOW)


def exp2_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    xc = f.ext(d, "FClamp", x, f.const(d, -1100.0), f.const(d, 1100.0))
    k = _round_to_i32(e, xc)
    r = f.binary("sub", d, xc, f.convert(d, e.t.i32, k))  # exact
    # 2**x = inf at x >= 1024; 0 below -1075 (the smallest subnormal's half rounds to zero)
    return _exp_specials(e, x, _scale(e, _poly(e, EXP2_COEFS, r), k), 1023.9999999999999, -1075.0)


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
    return f.binary("mul", d, z, _poly(e, LOG_TERMS, z))


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
    em1 = f.binary("mul", d, t, _poly(e, EXPM1_COEFS, t))
    small = f.binary("div", d, em1, f.binary("add", d, em1, f.const(d, 2.0)))
    big_e = exp_f64(e, f.binary("mul", d, f.const(d, 2.0), f.ext(d, "FMin", ax, f.const(d, 40.0))))
    big = f.binary("sub", d, f.const(d, 1.0), f.binary("div", d, f.const(d, 2.0), f.binary("add", d, big_e, f.const(d, 1.0))))
    mag = f.select(d, f.cmp("lt", d, ax, f.const(d, TANH_SMALL)), small, big)
    u64 = e.t.u64  # the sign of x (tanh(-0.0) = -0.0)
    sign = f.binary("and", u64, f.bitcast(u64, x), f.const(u64, 1 << 63))
    r = f.bitcast(d, f.binary("or", u64, f.bitcast(u64, mag), sign))
    return f.select(d, f.isnan(x), x, r)


def rsqrt_f64(e: Emitter, x: int) -> int:
    f, d = e.f, e.t.float_t(64)
    return f.binary("div", d, f.const(d, 1.0), f.ext(d, "Sqrt", x))


F64: dict[str, Callable[[Emitter, int], int]] = {
    "math.exp": exp_f64,
    "math.exp2": exp2_f64,
    "math.log": log_f64,
    "math.log2": log2_f64,
    "math.rsqrt": rsqrt_f64,
    "math.tanh": tanh_f64,
    "math.sin": trig64.sin_f64,
    "math.cos": trig64.cos_f64,
}
