"""Branch-free f32 transcendentals written in LLVM IR (no libm calls).

Why: LLVM lowers ``llvm.exp.*`` on a vector to one scalar ``expf`` call per
lane, so a softmax loop would never vectorise (see ``PLATFORM.md``,
"Transcendentals decide memory-bound kernels on a CPU"). These functions are
``internal alwaysinline`` scalar functions made only of arithmetic, selects,
bit casts and vectorisable intrinsics (``rint``, ``fmuladd``); once inlined
into an element loop the loop vectoriser turns them into AVX2/AVX-512 code,
as SLEEF's vector functions would be.

Accuracy (measured against float64 in ``tests/cpu/test_vmath.py``):

========  ===========================================================  =========
function  method                                                       max error
========  ===========================================================  =========
exp       Cody-Waite reduction by ln2, degree-7 Taylor, two-step 2^n   0.92 ulp
          (AVX-512, 16 lanes: the same, vscalefps 2^n in one rounding)
exp2      n = rint(x), e^(r ln2) with the exp polynomial              0.87 ulp
          (AVX-512, 16 lanes: 2^r by a degree-6 fit, vscalefps 2^n)    0.78 ulp
log       m in [sqrt(.5), sqrt(2)), f - (f^2/2 - s(f^2/2 + R(s^2)))   0.80 ulp
log2      the same log(m) scaled by log2(e), plus the exponent        1.42 ulp
tanh      odd Taylor series to x^19 for |x| < 0.625, else 1-2/(e^2x+1)  1.22 ulp
sin, cos  in double: |x| >= 2^24 first reduced exactly mod 2pi through a  0.50 ulp
          table of 2^s mod 2pi (double-double); n = rint(2x/pi), 3-part
          Cody-Waite r = x - n pi/2, Taylor on |r| <= pi/4, quadrant select
========  ===========================================================  =========

Special values follow C: exp(-inf) = 0, exp(+inf) = inf, log(0) = -inf,
log(x<0) = NaN, NaN in -> NaN out; subnormal inputs to log are scaled first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import llvmlite.ir as ir

from kdsl.codegen.llvm.types import F32, I32, intrinsic
from kdsl.codegen.polynomials import EXP2_CLAMP, EXP2_POLY, EXP2_ZERO

Body = Callable[["FB", ir.Value], ir.Value]

LN2_HI = 0.693145751953125
LN2_LO = 1.428606765330187045e-06
LOG2E = 1.4426950408889634
# e^r = sum r^k / k!, k <= 7, for |r| <= ln2 / 2
EXP_TAYLOR = (1.0, 1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040)
# exp's argument is clamped first: beyond it the result is 0 / inf anyway, and rint stays finite
EXP_CLAMP = (-104.0, 89.0)
LN2 = 0.6931471805599453
SQRT_HALF_BITS = 0x3F3504F3

# tanh(x) = x * sum_k c_k x^(2k) (Taylor, |x| < 0.625)
_TANH = (
    1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075, -929569 / 638512875,
    6404582 / 10854718875, -443861162 / 1856156927625,
)  # fmt: skip


class FB:
    """A tiny float-expression helper over an IRBuilder: f32, or ``<lanes x float>``
    when ``lanes > 1`` (the same code, constants splat; used by vectorised loops)."""

    def __init__(self, b: ir.IRBuilder, module: ir.Module, lanes: int = 1) -> None:
        self.b = b
        self.module = module
        self.ft: ir.Type = ir.VectorType(F32, lanes) if lanes > 1 else F32
        self.it: ir.Type = ir.VectorType(I32, lanes) if lanes > 1 else I32

    def c(self, v: float) -> ir.Constant:
        return ir.Constant(self.ft, v)

    def ci(self, v: int) -> ir.Constant:
        return ir.Constant(self.it, v)

    def intr(self, name: str, *args: ir.Value) -> ir.Value:
        fn = intrinsic(self.module, name, self.ft, [self.ft] * len(args), [self.ft])
        return self.b.call(fn, list(args))

    def fma(self, a: ir.Value, x: ir.Value, c: ir.Value) -> ir.Value:
        return self.intr("llvm.fmuladd", a, x, c)

    def horner(self, x: ir.Value, coeffs: tuple[float, ...]) -> ir.Value:
        """sum coeffs[k] x^k, highest degree first in the evaluation."""
        acc: ir.Value = self.c(coeffs[-1])
        for k in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(k))
        return acc

    def sel(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.select(cond, a, b)

    def fcmp(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.fcmp_ordered(op, a, b)

    def isnan(self, x: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", x, x)

    def bits(self, x: ir.Value) -> ir.Value:
        return self.b.bitcast(x, self.it)

    def flt(self, i: ir.Value) -> ir.Value:
        return self.b.bitcast(i, self.ft)

    def pow2i(self, n: ir.Value) -> ir.Value:
        """2^n as f32 for n in [-126, 127] (an i32)."""
        return self.flt(self.b.shl(self.b.add(n, self.ci(127)), self.ci(23)))


def _exp_core(f: FB, x: ir.Value, kx: float, lo: float, hi: float) -> ir.Value:
    """e^(x / kx) style kernel: n = rint(x * kx), result = 2^n * e^r; 0 for ``x <= lo``."""
    b = f.b
    # at or below lo the result is 0: such lanes compute e^0 instead and are zeroed at the end, as
    # the scaling would underflow (see :func:`_underflows`)
    dead = _underflows(f, x, lo)
    clamped = f.sel(f.fcmp(">", x, f.c(hi)), f.c(hi), x)
    clamped = f.sel(b.or_(dead, f.isnan(x)), f.c(0.0), clamped)
    nf = f.intr("llvm.rint", b.fmul(clamped, f.c(kx)))
    if kx == 1.0:  # exp2: r = x - n exactly, then scale to natural units
        r = b.fmul(b.fsub(clamped, nf), f.c(LN2))
    else:
        r = f.fma(b.fneg(nf), f.c(LN2_HI), clamped)
        r = f.fma(b.fneg(nf), f.c(LN2_LO), r)
    p = f.horner(r, EXP_TAYLOR)
    n = b.fptosi(nf, f.it)
    n1 = b.ashr(n, f.ci(1))
    n2 = b.sub(n, n1)
    res = f.sel(dead, f.c(0.0), b.fmul(b.fmul(p, f.pow2i(n1)), f.pow2i(n2)))
    return f.sel(f.isnan(x), x, res)


def _underflows(f: FB, x: ir.Value, lo: float) -> ir.Value:
    """Lanes at or below ``lo``, where the result is 0 (NaN: false).

    Why they are singled out: a multiply or ``vscalefps`` whose result underflows takes a microcode
    assist on Intel cores (without flush-to-zero), about 30 times the instruction's cost: measured
    on this host, ``exp2`` of a tile of ``-inf`` ran 28x slower than of zeros. ``exp2(-inf)`` is
    common: the masked scores of attention (causal diagonal blocks, ragged tails). Subnormal results
    (``lo < x < -126`` for ``exp2``) keep the assist: they are rare and must stay exact."""
    return f.fcmp("<=", x, f.c(lo))


def _exp2_scalef(f: FB, x: ir.Value) -> ir.Value:
    """exp2 on ``<16 x float>`` with AVX-512: ``vscalefps`` computes ``p * 2^n`` in one rounding
    (subnormal results included), so neither the ``ln2`` scaling nor the two-step ``2^n`` of
    :func:`_exp_core` is needed: 15 vector operations instead of 27. Why it matters: the
    ``exp2`` of a flash-attention block was 17 % of the kernel's time on this machine."""
    b = f.b
    lo, hi = EXP2_CLAMP
    clamped = f.sel(f.fcmp(">", x, f.c(hi)), f.c(hi), x)  # inf and huge: n = 129 overflows to inf
    clamped = f.sel(f.fcmp("<", clamped, f.c(lo)), f.c(lo), clamped)  # NaN stays NaN
    nf = f.intr("llvm.rint", clamped)
    p = f.horner(b.fsub(clamped, nf), EXP2_POLY)
    return f.sel(f.isnan(x), x, _scalef(f, p, nf, b.not_(_underflows(f, x, EXP2_ZERO))))


def _scalef(f: FB, p: ir.Value, n: ir.Value, live: ir.Value) -> ir.Value:
    """``p * 2^n`` rounded once (AVX-512 ``vscalefps``, 16 lanes; ``n`` a float integer) in the
    ``live`` lanes, 0 in the others: a masked-off lane does not compute, so it cannot underflow
    (:func:`_underflows`)."""
    i16 = ir.IntType(16)
    fn = intrinsic(f.module, "llvm.x86.avx512.mask.scalef.ps.512", f.ft, [f.ft, f.ft, f.ft, i16, I32], [])
    mask = f.b.bitcast(live, i16)
    return f.b.call(fn, [p, n, f.c(0.0), mask, ir.Constant(I32, 4)])  # 4: the current rounding


def _exp_scalef(f: FB, x: ir.Value) -> ir.Value:
    """exp on ``<16 x float>`` with AVX-512: the reduction and polynomial of :func:`_exp_core`, then
    ``vscalefps`` for ``2^n`` in one rounding instead of the integer two-step scaling (18 vector
    operations instead of 30; a row softmax spends half its time in exp)."""
    b = f.b
    clamped = f.sel(f.fcmp(">", x, f.c(EXP_CLAMP[1])), f.c(EXP_CLAMP[1]), x)  # NaN stays NaN
    clamped = f.sel(f.fcmp("<", clamped, f.c(EXP_CLAMP[0])), f.c(EXP_CLAMP[0]), clamped)
    nf = f.intr("llvm.rint", b.fmul(clamped, f.c(LOG2E)))
    r = f.fma(b.fneg(nf), f.c(LN2_HI), clamped)
    r = f.fma(b.fneg(nf), f.c(LN2_LO), r)
    p = f.horner(r, EXP_TAYLOR)
    return f.sel(f.isnan(x), x, _scalef(f, p, nf, b.not_(_underflows(f, x, EXP_CLAMP[0]))))


def _exp(f: FB, x: ir.Value) -> ir.Value:
    return _exp_core(f, x, LOG2E, *EXP_CLAMP)


def _exp2(f: FB, x: ir.Value) -> ir.Value:
    return _exp_core(f, x, 1.0, EXP2_ZERO, 129.0)


def _log_parts(f: FB, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(exponent as f32, log of the reduced mantissa) with x = 2^e * m."""
    b = f.b
    tiny = f.fcmp("<", x, f.c(1.1754943508222875e-38))
    xs = f.sel(tiny, b.fmul(x, f.c(8388608.0)), x)  # 2^23
    ebias = f.sel(tiny, f.ci(23), f.ci(0))
    ix = b.sub(f.bits(xs), f.ci(SQRT_HALF_BITS))
    e = b.sub(b.ashr(ix, f.ci(23)), ebias)
    m = f.flt(b.add(b.and_(ix, f.ci(0x7FFFFF)), f.ci(SQRT_HALF_BITS)))
    fm = b.fsub(m, f.c(1.0))
    s = b.fdiv(fm, b.fadd(fm, f.c(2.0)))
    s2 = b.fmul(s, s)
    # log(1+fm) = 2s + s*R = fm - (hfsq - s*(hfsq + R)): the leading fm is exact (musl's form)
    r = b.fmul(s2, f.horner(s2, (2 / 3, 2 / 5, 2 / 7, 2 / 9, 2 / 11)))
    hfsq = b.fmul(f.c(0.5), b.fmul(fm, fm))
    lm = b.fsub(fm, b.fsub(hfsq, b.fmul(s, b.fadd(hfsq, r))))
    return b.sitofp(e, f.ft), lm


def _log_specials(f: FB, x: ir.Value, res: ir.Value) -> ir.Value:
    inf = f.c(float("inf"))
    res = f.sel(f.fcmp("==", x, inf), inf, res)
    res = f.sel(f.fcmp("==", x, f.c(0.0)), f.c(float("-inf")), res)
    res = f.sel(f.fcmp("<", x, f.c(0.0)), f.c(float("nan")), res)
    return f.sel(f.isnan(x), x, res)


def _log(f: FB, x: ir.Value) -> ir.Value:
    e, lm = _log_parts(f, x)
    res = f.fma(e, f.c(LN2_HI), f.fma(e, f.c(LN2_LO), lm))
    return _log_specials(f, x, res)


def _log2(f: FB, x: ir.Value) -> ir.Value:
    e, lm = _log_parts(f, x)
    res = f.b.fadd(e, f.b.fmul(lm, f.c(LOG2E)))
    return _log_specials(f, x, res)


def _tanh(f: FB, x: ir.Value) -> ir.Value:
    b = f.b
    ax = f.intr("llvm.fabs", x)
    x2 = b.fmul(x, x)
    small = b.fmul(x, f.horner(x2, _TANH))
    e2 = _exp(f, b.fmul(ax, f.c(2.0)))
    big = b.fsub(f.c(1.0), b.fdiv(f.c(2.0), b.fadd(e2, f.c(1.0))))
    big = f.intr("llvm.copysign", big, x)
    return f.sel(f.fcmp("<", ax, f.c(0.625)), small, big)


# sin/cos: Taylor coefficients of sin(r)/r - 1 over r^2 and of cos(r) (|r| <= pi/4, evaluated in
# double: truncation error < 2e-11 relative, far below half an f32 ulp)
_SIN = (-1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800, 1 / 6227020800)
_COS = (1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600, -1 / 87178291200)
# pi/2 as the sum of three doubles (Cody-Waite with fma; exact products for |n| < 2^27)
PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)
_PI = ("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706"
       "798214808651328230664709384460955058223172535940812848111745028410270193852110555964462294895493038196")


@functools.cache
def _two_pow_mod_2pi() -> tuple[list[float], list[float]]:
    """(hi, lo) doubles of 2^s mod 2pi for s = 0..105 (f32 x >= 2^24 is M * 2^s, M < 2^24)."""
    import decimal

    ctx = decimal.Context(prec=200)
    two_pi = ctx.multiply(decimal.Decimal(_PI), 2)
    his, los = [], []
    for k in range(106):
        p2 = ctx.power(decimal.Decimal(2), k)
        t = ctx.subtract(p2, ctx.multiply(two_pi, ctx.divide_int(p2, two_pi)))
        hi = float(t)
        his.append(hi)
        los.append(float(ctx.subtract(t, decimal.Decimal(hi))))
    return his, los


def _table(f: FB, name: str, values: list[float]) -> ir.GlobalVariable:
    existing = f.module.globals.get(name)
    if isinstance(existing, ir.GlobalVariable):
        return existing
    t = ir.ArrayType(ir.DoubleType(), len(values))
    gv = ir.GlobalVariable(f.module, t, name)
    gv.global_constant = True
    gv.linkage = "private"
    gv.initializer = ir.Constant(t, values)
    return gv


def _trig(f: FB, x: ir.Value, want_cos: bool) -> ir.Value:
    """sin/cos in double, branch-free (so element loops vectorise).

    |x| >= 2^24: x = M 2^s exactly (M < 2^24 integer), replaced by
    y = M * (2^s mod 2pi) from a double-double table (a gather), |y| < 2^27;
    then n = rint(y 2/pi), r = y - n pi/2 (3-part Cody-Waite), Taylor
    polynomials on |r| <= pi/4 and the quadrant of n. inf/NaN -> NaN.
    """
    b = f.b
    d = ir.DoubleType()
    i64 = ir.IntType(64)

    def dc(v: float) -> ir.Constant:
        return ir.Constant(d, v)

    def dfma(a: ir.Value, y: ir.Value, c: ir.Value) -> ir.Value:
        return b.call(intrinsic(f.module, "llvm.fma", d, [d, d, d], [d]), [a, y, c])

    def dhorner(y: ir.Value, coeffs: tuple[float, ...]) -> ir.Value:
        acc: ir.Value = dc(coeffs[-1])
        for k in reversed(coeffs[:-1]):
            acc = dfma(acc, y, dc(k))
        return acc

    his, los = _two_pow_mod_2pi()
    bits = f.bits(x)
    expo = b.and_(b.lshr(bits, f.ci(23)), f.ci(0xFF))
    big = b.icmp_signed(">=", expo, f.ci(127 + 24))
    shift = b.select(big, b.sub(expo, f.ci(127 + 23)), f.ci(0))
    shift = b.select(b.icmp_signed(">", shift, f.ci(105)), f.ci(105), shift)  # inf/NaN: any entry
    mant = b.or_(b.and_(bits, f.ci(0x7FFFFF)), f.ci(0x800000))
    mant = b.select(b.icmp_signed("<", bits, f.ci(0)), b.sub(f.ci(0), mant), mant)
    md = b.sitofp(mant, d)
    idx = b.zext(shift, i64)
    zero = ir.Constant(i64, 0)
    t_hi = b.load(b.gep(_table(f, "kd_2pow_mod_2pi_hi", his), [zero, idx], inbounds=True), typ=d)
    t_lo = b.load(b.gep(_table(f, "kd_2pow_mod_2pi_lo", los), [zero, idx], inbounds=True), typ=d)
    p_hi = b.fmul(md, t_hi)
    p_lo = b.fadd(dfma(md, t_hi, b.fneg(p_hi)), b.fmul(md, t_lo))
    y_hi = b.select(big, p_hi, b.fpext(x, d))
    y_lo = b.select(big, p_lo, dc(0.0))
    n = b.call(intrinsic(f.module, "llvm.rint", d, [d], [d]), [b.fmul(y_hi, dc(0.6366197723675814))])
    neg_n = b.fneg(n)
    r = dfma(neg_n, dc(PIO2[0]), y_hi)
    r = dfma(neg_n, dc(PIO2[1]), r)
    r = b.fadd(r, y_lo)
    r = dfma(neg_n, dc(PIO2[2]), r)
    r2 = b.fmul(r, r)
    sin_r = dfma(b.fmul(r, r2), dhorner(r2, _SIN), r)
    cos_r = dhorner(r2, _COS)
    finite = b.fcmp_ordered("<", f.intr("llvm.fabs", x), f.c(float("inf")))
    n_safe = b.select(finite, n, dc(0.0))  # fptosi of inf/NaN would be poison
    q = b.and_(b.fptosi(n_safe, i64), ir.Constant(i64, 3))
    if want_cos:
        q = b.add(q, ir.Constant(i64, 1))  # cos(x) = sin(x + pi/2)
    odd = b.icmp_unsigned("!=", b.and_(q, ir.Constant(i64, 1)), zero)
    neg = b.icmp_unsigned("!=", b.and_(q, ir.Constant(i64, 2)), zero)
    v = b.select(odd, cos_r, sin_r)
    v = b.select(neg, b.fneg(v), v)
    return f.sel(finite, b.fptrunc(v, F32), b.fsub(x, x))


def _sin(f: FB, x: ir.Value) -> ir.Value:
    return f.sel(f.fcmp("==", x, f.c(0.0)), x, _trig(f, x, False))  # sin(-0) = -0: r = x - n pi/2 loses it


def _cos(f: FB, x: ir.Value) -> ir.Value:
    return _trig(f, x, True)


FUNCS: dict[str, Body] = {"exp": _exp, "exp2": _exp2, "log": _log, "log2": _log2, "tanh": _tanh,
                          "sin": _sin, "cos": _cos}


# the 16-lane AVX-512 variants (``vscalefps``)
_SCALEF: dict[str, Body] = {"exp": _exp_scalef, "exp2": _exp2_scalef}

# functions whose code is lane-wise (no table gathers): available on <N x float> too
VECTOR_FUNCS = ("exp", "exp2", "log", "log2", "tanh")


def get(module: ir.Module, name: str, lanes: int = 1, avx512: bool = False) -> ir.Function:
    """The ``kd_<name>f`` function of ``module`` (``kd_<name>f_v<lanes>`` on
    ``<lanes x float>``, for names in :data:`VECTOR_FUNCS`), defined on first use.
    ``avx512``: the host has AVX-512F, so 16-lane ``exp``/``exp2`` may use ``vscalefps``."""
    body = FUNCS[name]
    if avx512 and lanes == 16 and name in ("exp", "exp2"):
        name, body = f"{name}_scalef", _SCALEF[name]
    fname = f"kd_{name}f" if lanes == 1 else f"kd_{name}f_v{lanes}"
    existing = module.globals.get(fname)
    if isinstance(existing, ir.Function):
        return existing
    ft = ir.VectorType(F32, lanes) if lanes > 1 else F32
    fn = ir.Function(module, ir.FunctionType(ft, [ft]), fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(body(FB(b, module, lanes), fn.args[0]))
    return fn


__all__ = ["FUNCS", "VECTOR_FUNCS", "get"]
