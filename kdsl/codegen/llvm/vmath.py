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
exp2      n = rint(x), e^(r ln2) with the exp polynomial              0.87 ulp
log       m in [sqrt(.5), sqrt(2)), f - (f^2/2 - s(f^2/2 + R(s^2)))   0.80 ulp
log2      the same log(m) scaled by log2(e), plus the exponent        1.42 ulp
tanh      odd Taylor series to x^19 for |x| < 0.625, else 1-2/(e^2x+1)  1.22 ulp
========  ===========================================================  =========

Special values follow C: exp(-inf) = 0, exp(+inf) = inf, log(0) = -inf,
log(x<0) = NaN, NaN in -> NaN out; subnormal inputs to log are scaled first.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from kdsl.codegen.llvm.types import F32, I32, intrinsic

Body = Callable[["FB", ir.Value], ir.Value]

LN2_HI = 0.693145751953125
LN2_LO = 1.428606765330187045e-06
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
SQRT_HALF_BITS = 0x3F3504F3

# tanh(x) = x * sum_k c_k x^(2k) (Taylor, |x| < 0.625)
_TANH = (
    1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075, -929569 / 638512875,
    6404582 / 10854718875, -443861162 / 1856156927625,
)  # fmt: skip


class FB:
    """A tiny float-expression helper over an IRBuilder (f32 only)."""

    def __init__(self, b: ir.IRBuilder, module: ir.Module) -> None:
        self.b = b
        self.module = module

    def c(self, v: float) -> ir.Constant:
        return ir.Constant(F32, v)

    def ci(self, v: int) -> ir.Constant:
        return ir.Constant(I32, v)

    def intr(self, name: str, *args: ir.Value) -> ir.Value:
        fn = intrinsic(self.module, name, F32, [F32] * len(args), [F32])
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
        return self.b.bitcast(x, I32)

    def flt(self, i: ir.Value) -> ir.Value:
        return self.b.bitcast(i, F32)

    def pow2i(self, n: ir.Value) -> ir.Value:
        """2^n as f32 for n in [-126, 127] (an i32)."""
        return self.flt(self.b.shl(self.b.add(n, self.ci(127)), self.ci(23)))


def _exp_core(f: FB, x: ir.Value, kx: float, lo: float, hi: float) -> ir.Value:
    """e^(x / kx) style kernel: n = rint(x * kx), result = 2^n * e^r."""
    b = f.b
    clamped = f.sel(f.fcmp(">", x, f.c(hi)), f.c(hi), x)
    clamped = f.sel(f.fcmp("<", clamped, f.c(lo)), f.c(lo), clamped)
    clamped = f.sel(f.isnan(x), f.c(0.0), clamped)
    nf = f.intr("llvm.rint", b.fmul(clamped, f.c(kx)))
    if kx == 1.0:  # exp2: r = x - n exactly, then scale to natural units
        r = b.fmul(b.fsub(clamped, nf), f.c(LN2))
    else:
        r = f.fma(b.fneg(nf), f.c(LN2_HI), clamped)
        r = f.fma(b.fneg(nf), f.c(LN2_LO), r)
    p = f.horner(r, (1.0, 1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040))
    n = b.fptosi(nf, I32)
    n1 = b.ashr(n, f.ci(1))
    n2 = b.sub(n, n1)
    res = b.fmul(b.fmul(p, f.pow2i(n1)), f.pow2i(n2))
    return f.sel(f.isnan(x), x, res)


def _exp(f: FB, x: ir.Value) -> ir.Value:
    return _exp_core(f, x, LOG2E, -104.0, 89.0)


def _exp2(f: FB, x: ir.Value) -> ir.Value:
    return _exp_core(f, x, 1.0, -152.0, 129.0)


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
    return b.sitofp(e, F32), lm


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


FUNCS: dict[str, Body] = {"exp": _exp, "exp2": _exp2, "log": _log, "log2": _log2, "tanh": _tanh}


def get(module: ir.Module, name: str) -> ir.Function:
    """The ``kd_<name>f`` function of ``module``, defined on first use."""
    fname = f"kd_{name}f"
    existing = module.globals.get(fname)
    if isinstance(existing, ir.Function):
        return existing
    fn = ir.Function(module, ir.FunctionType(F32, [F32]), fname)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(FUNCS[name](FB(b, module), fn.args[0]))
    return fn


__all__ = ["FUNCS", "get"]
