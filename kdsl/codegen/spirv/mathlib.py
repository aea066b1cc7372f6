"""kdsl's own f32 math where GLSL.std.450 lacks the function or its accuracy.

``erf`` has no GLSL instruction; ``tanh`` from lavapipe loses relative
accuracy near 0 (it evaluates an exp formula); ``pow`` in GLSL is undefined
for ``x < 0`` and for the C special cases. The polynomial coefficients are
Chebyshev interpolants of Python's ``math.erf``/``math.tanh`` computed here
at first use (no hand-typed constants); their f32 Horner evaluation stays
within ~2e-7 relative error (``tests/spirv/test_mathlib.py`` checks the fit,
``tests/vulkan`` the device results against numpy).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numpy.polynomial import chebyshev

from kdsl.codegen.spirv.emit import Emitter

Poly = tuple[float, float, tuple[float, ...]]  # (mid, half-width, monomial coefficients in u = (x - mid) / half)


@functools.cache
def fit(name: str, lo: float, hi: float, deg: int) -> Poly:
    """Chebyshev interpolant of a reference function on [lo, hi], as monomials in u."""
    ref = REFERENCES[name]
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    cheb = chebyshev.Chebyshev.interpolate(lambda u: np.vectorize(ref)(mid + half * u), deg)
    mono = chebyshev.cheb2poly(cheb.coef)
    return mid, half, tuple(float(np.float32(c)) for c in mono)


def _erf_over_x(s: float) -> float:
    """erf(sqrt(s)) / sqrt(s): erf(x) = x * g(x*x) with g smooth on [0, 1]."""
    return math.erf(math.sqrt(s)) / math.sqrt(s) if s > 0 else 2 / math.sqrt(math.pi)


def _tanh_over_x(s: float) -> float:
    return math.tanh(math.sqrt(s)) / math.sqrt(s) if s > 0 else 1.0


REFERENCES: dict[str, Callable[[float], float]] = {"erf": math.erf, "erf_over_x": _erf_over_x,
                                                    "tanh_over_x": _tanh_over_x}

TANH_SMALL = 0.625  # below: odd polynomial; above: 1 - 2 / (exp(2|x|) + 1)


def horner(e: Emitter, poly: Poly, x: int) -> int:
    f, t = e.f, e.t.f32
    mid, half, coefs = poly
    u = f.binary("mul", t, f.binary("sub", t, x, f.const(t, mid)), f.const(t, 1.0 / half))
    r = f.const(t, coefs[-1])
    for c in coefs[-2::-1]:
        r = f.ext(t, "Fma", r, u, f.const(t, c))
    return r


def erf_f32(e: Emitter, x: int) -> int:
    f, t = e.f, e.t.f32
    ax = f.ext(t, "FAbs", x)
    small = f.binary("mul", t, x, horner(e, fit("erf_over_x", 0.0, 1.0, 7), f.binary("mul", t, x, x)))
    mid = horner(e, fit("erf", 1.0, 2.5, 10), ax)
    high = horner(e, fit("erf", 2.5, 4.0, 8), ax)
    big = f.select(t, f.cmp("lt", t, ax, f.const(t, 2.5)), mid, high)
    big = f.select(t, f.cmp("lt", t, ax, f.const(t, 4.0)), big, f.const(t, 1.0))
    big = _copysign(e, big, x)
    r = f.select(t, f.cmp("lt", t, ax, f.const(t, 1.0)), small, big)
    return f.select(t, f.isnan(x), x, r)


def _copysign(e: Emitter, mag: int, sign_of: int) -> int:
    f, u32 = e.f, e.t.u32
    m = f.binary("and", u32, f.bitcast(u32, mag), e.cu32(0x7FFFFFFF))
    s = f.binary("and", u32, f.bitcast(u32, sign_of), e.cu32(0x80000000))
    return f.bitcast(e.t.f32, f.binary("or", u32, m, s))


def tanh_f32(e: Emitter, x: int) -> int:
    f, t = e.f, e.t.f32
    ax = f.ext(t, "FAbs", x)
    small = f.binary("mul", t, x, horner(e, fit("tanh_over_x", 0.0, TANH_SMALL**2, 7), f.binary("mul", t, x, x)))
    e2 = f.ext(t, "Exp", f.binary("mul", t, f.ext(t, "FMin", ax, f.const(t, 20.0)), f.const(t, 2.0)))
    big = f.binary("sub", t, f.const(t, 1.0), f.binary("div", t, f.const(t, 2.0), f.binary("add", t, e2,
                                                                                             f.const(t, 1.0))))
    r = f.select(t, f.cmp("lt", t, ax, f.const(t, TANH_SMALL)), small, _copysign(e, big, x))
    return f.select(t, f.isnan(x), x, r)


def pow_f32(e: Emitter, x: int, y: int) -> int:
    """C ``powf``: GLSL ``Pow`` on ``|x|`` plus the sign rule for negative ``x``
    with integral ``y`` and C's special cases (``pow(x, 0) == pow(1, y) == 1``)."""
    f, t, b = e.f, e.t.f32, e.t.bool
    ax = f.ext(t, "FAbs", x)
    r = f.ext(t, "Pow", ax, y)
    fy = f.ext(t, "Floor", y)
    y_int = f.land(f.cmp("eq", t, fy, y), f.lnot(f.op("OpIsInf", b, y)))
    half = f.binary("mul", t, y, f.const(t, 0.5))
    y_odd = f.land(y_int, f.cmp("ne", t, f.ext(t, "Floor", half), half))
    neg = f.cmp("lt", t, x, f.const(t, 0.0))
    r = f.select(t, f.land(neg, y_odd), f.neg(t, r), r)
    nan = f.const(t, float("nan"))
    r = f.select(t, f.land(neg, f.lnot(f.lor(y_int, f.op("OpIsInf", b, y)))), nan, r)
    # zero base: y > 0 -> +-0, y < 0 -> +-inf (sign of x when y is an odd integer)
    zero = f.cmp("eq", t, x, f.const(t, 0.0))
    zr = f.select(t, f.cmp("lt", t, y, f.const(t, 0.0)), f.const(t, float("inf")), f.const(t, 0.0))
    zr = f.select(t, y_odd, _copysign(e, zr, x), zr)
    r = f.select(t, zero, zr, r)
    # NaN operands give NaN (llvmpipe's Pow(NaN, y) is 0), except for the exact-one cases below
    r = f.select(t, f.lor(f.isnan(x), f.isnan(y)), nan, r)
    # |x| == 1 with infinite y, and the exact-one cases
    one = f.const(t, 1.0)
    r = f.select(t, f.land(f.cmp("eq", t, ax, one), f.op("OpIsInf", b, y)), one, r)
    r = f.select(t, f.lor(f.cmp("eq", t, y, f.const(t, 0.0)), f.cmp("eq", t, x, one)), one, r)
    return r


F32: dict[str, Callable[[Emitter, int], int]] = {"math.erf": erf_f32, "math.tanh": tanh_f32}


def fma_f32_exact(e: Emitter, a: int, b: int, c: int) -> int:
    """Correctly rounded f32 ``a*b+c`` without a fused instruction (GLSL ``Fma`` is not
    guaranteed fused; lavapipe's is not): the product is exact in f64, the sum is
    rounded to odd in f64 (TwoSum error decides the sticky bit), then to f32 once."""
    f = e.f
    d, f32 = e.t.float_t(64), e.t.f32
    u64 = e.t.u64
    p = f.binary("mul", d, f.convert(d, f32, a), f.convert(d, f32, b))
    cd = f.convert(d, f32, c)
    s = f.binary("add", d, p, cd)
    bb = f.binary("sub", d, s, p)
    err = f.binary("add", d, f.binary("sub", d, p, f.binary("sub", d, s, bb)), f.binary("sub", d, cd, bb))
    zero = f.const(d, 0.0)
    inexact = f.lor(f.cmp("lt", d, err, zero), f.cmp("gt", d, err, zero))
    bits = f.bitcast(u64, s)
    even = f.cmp("eq", u64, f.binary("and", u64, bits, f.const(u64, 1)), f.const(u64, 0))
    same_sign = f.op("OpLogicalEqual", e.t.bool, f.cmp("lt", d, err, zero), f.cmp("lt", d, s, zero))
    step = f.select(u64, same_sign, f.const(u64, 1), f.const(u64, (1 << 64) - 1))
    odd = f.bitcast(d, f.binary("add", u64, bits, step))
    s = f.select(d, f.land(inexact, even), odd, s)
    return f.convert(f32, d, s)


def fmod_exact(e: Emitter, rt: int, x: int, y: int) -> int:
    """C ``fmod`` exactly (OpFRem is ``x - y*trunc(x/y)`` on lavapipe): subtract
    ``|y| * 2**k`` for the largest fitting ``k`` until the rest is below ``|y|``;
    each subtraction is exact (Sterbenz), at most ~280 (f32) / ~2100 (f64) rounds."""
    f, b = e.f, e.t.bool
    i32 = e.t.i32
    ax, ay = f.ext(rt, "FAbs", x), f.ext(rt, "FAbs", y)
    special = f.lor(f.lor(f.isnan(x), f.isnan(y)), f.lor(f.op("OpIsInf", b, x), f.cmp("eq", rt, ay, f.const(rt, 0.0))))
    r0 = f.select(rt, special, f.const(rt, 0.0), ax)
    frexp = e.m.t_struct([rt, i32], f"frexp{e.m.info[rt].bits}")
    ey = f.op("OpCompositeExtract", i32, f.ext(frexp, "FrexpStruct", ay), 1)
    # a counted loop (the subtraction count is bounded by the exponent range): lavapipe
    # mis-executes a data-dependent loop exit nested in another loop
    rounds = {16: 40, 32: 280, 64: 2100}[e.m.info[rt].bits]
    pre = f.block
    header, body, cont, merge = (f.new_label() for _ in range(4))
    f.branch(header)
    f.label(header)
    r_next, i_next = e.m.new_id(), e.m.new_id()
    r = f.phi(rt, [(r0, pre), (r_next, cont)])
    i = f.phi(i32, [(e.ci32(0), pre), (i_next, cont)])
    more = f.cmp("lt", i32, i, e.ci32(rounds))
    f.loop_merge(merge, cont)
    f.branch_cond(more, body, merge)
    f.label(body)
    ex = f.op("OpCompositeExtract", i32, f.ext(frexp, "FrexpStruct", r), 1)
    k = f.binary("sub", i32, ex, ey)
    t = f.ext(rt, "Ldexp", ay, k)
    t = f.select(rt, f.cmp("gt", rt, t, r), f.ext(rt, "Ldexp", ay, f.binary("sub", i32, k, e.ci32(1))), t)
    diff = f.select(rt, f.cmp("ge", rt, r, ay), f.binary("sub", rt, r, t), r)
    f.branch(cont)
    f.label(cont)
    f.emit("OpCopyObject", rt, r_next, diff)
    f.emit("OpIAdd", i32, i_next, i, e.ci32(1))
    f.branch(header)
    f.label(merge)
    ut = e.t.int_t(e.m.info[rt].bits, False)
    bits = e.m.info[rt].bits
    sign = f.binary("and", ut, f.bitcast(ut, x), f.const(ut, 1 << (bits - 1)))
    res = f.bitcast(rt, f.binary("or", ut, f.bitcast(ut, r), sign))
    return f.select(rt, special, f.const(rt, float("nan")), res)
