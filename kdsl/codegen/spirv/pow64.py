"""f64 ``pow`` for the SPIR-V backend: ``exp(y * log|x|)`` carried in double-double, plus C's rules.

Why double-double: ``y * log|x|`` reaches +-745 before the result overflows or underflows, and
every bit of its error is amplified by that much -- ``log|x|`` in plain doubles would leave up to
~700 ulp in the result. Here ``log|x|`` is formed to ~2**-63 relative:

* ``|x| = m * 2**e`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` (subnormals scaled first);
  ``c = round(32 m) / 32`` from a table of 23 values whose ``log c`` is stored as a
  double-double (computed here with 50-digit decimals); ``f = m - c`` is exact and
  ``log(m / c) = 2 atanh(s)``, ``s = f / (m + c)`` (``|s| < 0.012``) as a double-double, the
  series tail ``2s (s^2/3 + ... + s^10/11)`` in doubles (it is < 1e-4 of the sum);
* ``e ln2`` with ``ln 2`` in two parts (``e * LN2_HI`` exact), all parts summed with exact
  two-sums;
* ``y * log|x|`` by Dekker's exact product (GLSL ``Fma`` is not fused on lavapipe), then
  ``exp(hi + lo)`` with ``mathlib64``'s reduction and polynomial, ``lo`` added to the reduced
  argument, and the scaling by ``2**k`` in two exact factors (subnormal results round once).

Special cases as C99 Annex F / numpy: ``pow(x, +-0) = 1`` and ``pow(1, y) = 1`` even for NaN;
negative ``x`` with an odd integer ``y`` gives the negated result, with a non-integer ``y`` NaN;
zeros and infinities of ``x`` follow the sign rules; ``|x| == 1`` with infinite ``y`` gives 1.
Accuracy against numpy: ``tests/vulkan/test_math_f64.py``.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.f64ops import F64Ops, poly
from kdsl.codegen.spirv.mathlib64 import EXP_COEFS, INV_LN2, LN2_HI, LN2_LO, scale_pow2

TABLE_FIRST, TABLE_LAST = 23, 45  # c = i / 32 for i in [23, 45] covers [sqrt(1/2), sqrt(2))
ATANH_TAIL = tuple(1 / (2 * k + 1) for k in range(1, 6))  # z/3 + z^2/5 + ... + z^5/11 (times z)


def log_table() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``log(i / 32)`` for the table's ``i`` as double-doubles (hi parts, lo parts)."""
    his, los = [], []
    with localcontext() as ctx:
        ctx.prec = 50
        for i in range(TABLE_FIRST, TABLE_LAST + 1):
            v = (Decimal(i) / 32).ln()
            hi = float(v)
            his.append(hi)
            los.append(float(v - Decimal(hi)))
    return tuple(his), tuple(los)


def _log_dd(h: F64Ops, ax: int) -> tuple[int, int]:
    """``log(ax)`` as a double-double for positive finite ``ax``."""
    e, f, d, i32 = h.e, h.f, h.d, h.i32
    tiny = f.cmp("lt", d, ax, h.c(2.0**-1022))
    xs = f.select(d, tiny, h.mul(ax, h.c(2.0**54)), ax)
    parts = f.ext(e.m.t_struct([d, i32], "frexp64"), "FrexpStruct", xs)
    m = f.op("OpCompositeExtract", d, parts, 0)
    ex = f.op("OpCompositeExtract", i32, parts, 1)
    ex = f.select(i32, tiny, f.binary("sub", i32, ex, f.const(i32, 54)), ex)
    low = f.cmp("lt", d, m, h.c(math.sqrt(0.5)))
    m = f.select(d, low, h.mul(m, h.c(2.0)), m)
    ex = f.select(i32, low, f.binary("sub", i32, ex, f.const(i32, 1)), ex)
    idx_d = f.ext(d, "Floor", h.add(h.mul(m, h.c(32.0)), h.c(0.5)))
    idx_d = f.ext(d, "FClamp", idx_d, h.c(float(TABLE_FIRST)), h.c(float(TABLE_LAST)))
    c = h.mul(idx_d, h.c(1 / 32))
    idx = f.binary("sub", i32, f.convert(i32, d, idx_d), f.const(i32, TABLE_FIRST))
    his, los = log_table()
    logc_hi = h.table(d, [h.c(v) for v in his], "log_c_hi")(idx)
    logc_lo = h.table(d, [h.c(v) for v in los], "log_c_lo")(idx)
    fm = h.sub(m, c)  # exact (Sterbenz)
    den, den_lo = h.two_sum(m, c)
    s_hi = f.binary("div", d, fm, den)
    p, pe = h.two_prod(s_hi, den)
    s_lo = f.binary("div", d, h.sub(h.sub(h.sub(fm, p), pe), h.mul(s_hi, den_lo)), den)
    z = h.mul(s_hi, s_hi)
    tail = h.mul(h.mul(h.mul(h.c(2.0), s_hi), z), poly(e, ATANH_TAIL, z))
    exd = f.convert(d, i32, ex)
    a, a_err = h.two_sum(h.mul(exd, h.c(LN2_HI)), logc_hi)  # e * LN2_HI is exact
    b, b_err = h.two_sum(a, h.mul(h.c(2.0), s_hi))
    low_sum = h.add(h.add(h.add(a_err, b_err), h.add(h.mul(exd, h.c(LN2_LO)), logc_lo)),
                    h.add(h.mul(h.c(2.0), s_lo), tail))  # fmt: skip
    return h.fast_two_sum(b, low_sum)


def _exp_dd(h: F64Ops, hi: int, lo: int) -> int:
    """``exp(hi + lo)``; overflow gives inf and underflow 0 through the scaling."""
    f, d, i32 = h.f, h.d, h.i32
    hc = f.ext(d, "FClamp", hi, h.c(-780.0), h.c(780.0))
    kd = f.ext(d, "Floor", h.add(h.mul(hc, h.c(INV_LN2)), h.c(0.5)))
    r = h.sub(hc, h.mul(kd, h.c(LN2_HI)))  # exact
    r = h.add(r, h.sub(lo, h.mul(kd, h.c(LN2_LO))))
    return scale_pow2(h.e, poly(h.e, EXP_COEFS, r), f.convert(i32, d, kd))


def pow_f64(e: Emitter, x: int, y: int) -> int:
    h = F64Ops(e)
    f, d, b = h.f, h.d, e.t.bool
    ax = f.ext(d, "FAbs", x)
    inf_x, inf_y = f.op("OpIsInf", b, x), f.op("OpIsInf", b, y)
    nan_x, nan_y = f.isnan(x), f.isnan(y)
    usable = f.land(f.lnot(f.lor(inf_x, nan_x)), f.cmp("gt", d, ax, h.c(0.0)))
    l_hi, l_lo = _log_dd(h, f.select(d, usable, ax, h.c(1.0)))
    yf = f.select(d, f.lor(inf_y, nan_y), h.c(0.0), y)
    p, pe = h.two_prod(f.ext(d, "FClamp", yf, h.c(-1e290), h.c(1e290)), l_hi)
    p_lo = h.add(pe, h.mul(yf, l_lo))
    over = f.cmp("gt", d, f.ext(d, "FAbs", p), h.c(1e6))  # far beyond +-745: no finite product terms
    p_lo = f.select(d, over, h.c(0.0), p_lo)
    r = _exp_dd(h, p, p_lo)

    fy = f.ext(d, "Floor", y)
    y_int = f.land(f.cmp("eq", d, fy, y), f.lnot(inf_y))
    half = h.mul(y, h.c(0.5))
    y_odd = f.land(y_int, f.cmp("ne", d, f.ext(d, "Floor", half), half))
    neg = f.cmp("lt", d, x, h.c(0.0))
    r = f.select(d, f.land(neg, y_odd), f.neg(d, r), r)
    r = f.select(d, f.land(neg, f.lnot(f.lor(y_int, inf_y))), h.c(math.nan), r)
    inf, zero = h.c(math.inf), h.c(0.0)
    y_neg = f.cmp("lt", d, y, zero)
    # y = +-inf: |x| < 1 -> 0 or inf, |x| > 1 -> inf or 0, |x| == 1 -> 1
    grows = f.cmp("gt", d, ax, h.c(1.0))
    inf_rule = f.select(d, f.lor(f.land(grows, f.lnot(y_neg)), f.land(f.lnot(grows), y_neg)), inf, zero)
    inf_rule = f.select(d, f.cmp("eq", d, ax, h.c(1.0)), h.c(1.0), inf_rule)
    r = f.select(d, inf_y, inf_rule, r)
    # x = +-0: y < 0 -> inf, y > 0 -> 0; signed when y is an odd integer
    zr = f.select(d, y_neg, inf, zero)
    zr = f.select(d, y_odd, h.copysign(zr, x), zr)
    r = f.select(d, f.cmp("eq", d, x, zero), zr, r)
    # x = +-inf: y < 0 -> 0, y > 0 -> inf; signed when x = -inf and y is an odd integer
    ir = f.select(d, y_neg, zero, inf)
    ir = f.select(d, f.land(y_odd, neg), f.neg(d, ir), ir)
    r = f.select(d, inf_x, ir, r)
    r = f.select(d, f.lor(nan_x, nan_y), h.c(math.nan), r)
    one = f.lor(f.cmp("eq", d, y, zero), f.cmp("eq", d, x, h.c(1.0)))
    return f.select(d, one, h.c(1.0), r)

