"""f64 ``sin``/``cos`` for the SPIR-V backend, correct for every finite argument.

Why our own: GLSL.std.450's ``Sin``/``Cos`` take 16/32-bit floats only. The hard part of a
double-precision sine is the argument reduction ``x = k * pi/2 + r``: near a multiple of pi/2
the remainder keeps only the bits of ``x`` that the subtraction did not cancel, so pi/2 is
needed to ~150 bits for moderate arguments and to ``1024 + 150`` bits for the largest ones.

* ``|x| < 2**19`` (Cody-Waite): ``k = round(x * 2/pi)``; pi/2 in four parts, the first three
  of 33 bits so ``k * part`` is exact (``k < 2**19``); ``r`` accumulated as a double-double.
* larger ``|x|`` (Payne-Hanek): ``x = m * 2**e`` with an integer ``m < 2**53``. Only a 192-bit
  window of the bits of 2/pi matters -- higher bits give multiples of 4 quarter turns, lower
  ones less than ``2**-120`` of one. The window is cut from a table of 32-bit words (an
  array indexed by the exponent), multiplied by ``m`` in 64-bit integer limbs, and the product
  read as quarter turns: the top bits give ``k mod 4``, the next 128 bits the remainder as a
  double-double, then times pi/2.
* ``sin``/``cos`` of ``r`` (``|r| <= pi/4``) by their Taylor series to degree 23/24 (truncation
  < ``2**-60`` relative), with the low part of ``r`` and the rounding error of ``r*r`` carried
  (``cos``: ``1 - r*r/2`` is formed as ``w + ((1 - w) - r*r/2)``); the quadrant ``k mod 4``
  picks ``+-sin r`` or ``+-cos r``.

Special values as C/numpy: NaN and +-inf give NaN, ``sin(-0.0) = -0.0``. The bits of 2/pi and
the parts of pi/2 are computed here from pi (Machin's formula in integers), not typed in.
Accuracy against numpy: ``tests/vulkan/test_math_f64.py``.
"""

from __future__ import annotations

import math
from functools import cache

from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.f64ops import F64Ops

CW_LIMIT = 2.0**19  # below: Cody-Waite (k < 2**19, so k * 33-bit part is exact)
TABLE_BITS = 1216  # 2/pi to 2**-1216: enough for exponents up to 1023 (+175 window bits)
WINDOW_LIMBS = 6  # 192 bits of 2/pi per argument
SIN_TERMS = tuple((-1) ** n / math.factorial(2 * n + 1) for n in range(1, 12))  # z**(n-1) coefficients
COS_TERMS = tuple((-1) ** n / math.factorial(2 * n) for n in range(2, 13))  # z**(n-2) coefficients


def _atan_inv(n: int, bits: int) -> int:
    """``atan(1/n) * 2**bits`` in integers (the alternating series), truncated."""
    total, term, k, sign = 0, (1 << bits) // n, 1, 1
    while term:
        total += sign * (term // k)
        term //= n * n
        k += 2
        sign = -sign
    return total


@cache
def pi_scaled(bits: int) -> int:
    """``floor(pi * 2**bits)`` (Machin: pi = 16 atan(1/5) - 4 atan(1/239)), with guard bits."""
    g = bits + 64
    return (16 * _atan_inv(5, g) - 4 * _atan_inv(239, g)) >> 64


def two_over_pi_words() -> tuple[int, ...]:
    """The bits of 2/pi as 32-bit words, least significant first: ``sum w[j] 2**(32j) = floor(2/pi * 2**TABLE_BITS)``,
    plus zero words above (a window may reach past the top bit)."""
    scale = 2 * TABLE_BITS + 8
    t = ((1 << (TABLE_BITS + scale)) * 2) // pi_scaled(scale)  # 2/pi * 2**TABLE_BITS
    words = [(t >> (32 * j)) & 0xFFFFFFFF for j in range(TABLE_BITS // 32)]
    return (*words, *([0] * (WINDOW_LIMBS + 2)))


def pio2_parts() -> tuple[float, float, float, float]:
    """pi/2 as P1 + P2 + P3 + P4: three 33-bit heads (exact products with k < 2**19), the rest."""
    bits = 200
    p = pi_scaled(bits)  # pi/2 = p / 2**(bits + 1)
    parts = []
    rest = p
    for i in range(3):
        shift = bits + 1 - 32 - 33 * i  # keep 33 significant bits (pi/2 < 2: one integer bit)
        head = (rest >> shift) << shift
        parts.append(math.ldexp(head, -(bits + 1)))
        rest -= head
    parts.append(math.ldexp(rest, -(bits + 1)))
    return parts[0], parts[1], parts[2], parts[3]


def pio2_double_double() -> tuple[float, float]:
    p = pi_scaled(200)
    hi = math.ldexp(p, -201)
    lo = math.ldexp(p - int(math.ldexp(hi, 201)), -201)
    return hi, lo


def _cody_waite(h: F64Ops, x: int) -> tuple[int, int, int]:
    """``(k mod 4 as i32, r_hi, r_lo)`` for ``|x| < CW_LIMIT``."""
    f = h.f
    p1, p2, p3, p4 = (h.c(p) for p in pio2_parts())
    kd = f.ext(h.d, "Floor", h.add(h.mul(x, h.c(2 / math.pi)), h.c(0.5)))
    a = h.sub(x, h.mul(kd, p1))  # exact: k * p1 exact, then Sterbenz
    s1, e1 = h.two_sum(a, f.neg(h.d, h.mul(kd, p2)))
    s2, e2 = h.two_sum(s1, f.neg(h.d, h.mul(kd, p3)))
    lo = h.sub(h.add(e1, e2), h.mul(kd, p4))
    r_hi, r_lo = h.fast_two_sum(s2, lo)
    k = f.convert(h.i32, h.d, kd)
    return f.binary("and", h.i32, k, f.const(h.i32, 3)), r_hi, r_lo


def _payne_hanek(h: F64Ops, ax: int) -> tuple[int, int, int]:
    """``(k mod 4 as i32, r_hi, r_lo)`` for positive finite ``ax >= CW_LIMIT`` (other inputs: garbage,
    but no out-of-range access: the exponent is clamped)."""
    f, u, i32 = h.f, h.u, h.i32
    mask32 = h.cu(0xFFFFFFFF)
    bits = f.bitcast(u, ax)
    be = h.uop("and", h.uop("shr", bits, h.cu(52)), h.cu(0x7FF))
    lo_be, hi_be = h.cu(1075 - 33), h.cu(2046)
    be = f.select(u, f.cmp("lt", u, be, lo_be), lo_be, f.select(u, f.cmp("gt", u, be, hi_be), hi_be, be))
    m = h.uop("or", h.uop("and", bits, h.cu((1 << 52) - 1)), h.cu(1 << 52))
    # x = m * 2**(be - 1075); x * 2/pi = m * T * 2**-(TABLE_BITS - be + 1075); window from bit b
    b = h.uop("sub", h.cu(TABLE_BITS + 1075 - 175), be)
    q = h.uop("shr", b, h.cu(5))
    o = h.uop("and", b, h.cu(31))
    word = h.table(u, [h.cu(w) for w in two_over_pi_words()], "two_over_pi")  # 2/pi as u64 words
    raw = [word(f.convert(i32, u, h.uop("add", q, h.cu(j)))) for j in range(WINDOW_LIMBS + 1)]
    w = [h.uop("and", h.uop("shr", h.uop("or", h.uop("shl", raw[j + 1], h.cu(32)), raw[j]), o), mask32)
         for j in range(WINDOW_LIMBS)]  # fmt: skip
    m_lo, m_hi = h.uop("and", m, mask32), h.uop("shr", m, h.cu(32))
    lprod = [h.uop("mul", m_lo, wj) for wj in w]  # < 2**64
    hprod = [h.uop("mul", m_hi, wj) for wj in w]  # < 2**53, one limb up

    def lo32(v: int) -> int:
        return h.uop("and", v, mask32)

    def hi32(v: int) -> int:
        return h.uop("shr", v, h.cu(32))

    limbs: list[int] = []
    carry = h.cu(0)
    for k in range(WINDOW_LIMBS):
        col = h.uop("add", carry, lo32(lprod[k]))
        if k >= 1:
            col = h.uop("add", col, h.uop("add", hi32(lprod[k - 1]), lo32(hprod[k - 1])))
        if k >= 2:
            col = h.uop("add", col, hi32(hprod[k - 2]))
        limbs.append(lo32(col))
        carry = hi32(col)
    # quarter turns in units of 2**-175: round to nearest (add half), k = bits 175..176
    top = h.uop("add", limbs[5], h.cu(1 << 14))
    k = f.convert(i32, u, h.uop("and", h.uop("shr", top, h.cu(15)), h.cu(3)))
    frac_top = h.uop("and", top, h.cu(0x7FFF))  # bits 160..174 of (P + half) mod 2**175
    g1 = h.uop("or", h.uop("or", h.uop("shl", frac_top, h.cu(49)), h.uop("shl", limbs[4], h.cu(17))),
               h.uop("shr", limbs[3], h.cu(15)))  # fmt: skip  bits 111..174
    g2 = h.uop("or", h.uop("or", h.uop("shl", h.uop("and", limbs[3], h.cu(0x7FFF)), h.cu(49)),
                           h.uop("shl", limbs[2], h.cu(17))), h.uop("shr", limbs[1], h.cu(15)))  # fmt: skip
    # remainder = (g1 - 2**63) * 2**-64 + g2 * 2**-128 quarter turns, in [-1/2, 1/2)
    g1s = f.bitcast(h.i, h.uop("xor", g1, h.cu(1 << 63)))
    a_hi = f.binary("shr", h.i, g1s, f.const(h.i, 32))  # arithmetic: signed top half
    v3 = h.mul(f.convert(h.d, h.i, a_hi), h.c(2.0**-32))
    v2 = h.mul(h.u_to_d(lo32(g1)), h.c(2.0**-64))
    v1 = h.mul(h.u_to_d(hi32(g2)), h.c(2.0**-96))
    v0 = h.mul(h.u_to_d(lo32(g2)), h.c(2.0**-128))
    t_hi, t_lo = h.fast_two_sum(v3, v2)
    t_lo = h.add(t_lo, h.add(v1, v0))
    t_hi, t_lo = h.fast_two_sum(t_hi, t_lo)
    ph, pl = pio2_double_double()
    r_hi, r_err = h.two_prod(t_hi, h.c(ph))
    r_lo = h.add(r_err, h.add(h.mul(t_hi, h.c(pl)), h.mul(t_lo, h.c(ph))))
    r_hi, r_lo = h.fast_two_sum(r_hi, r_lo)
    return k, r_hi, r_lo


def _reduce(h: F64Ops, x: int) -> tuple[int, int, int]:
    """``x = k * pi/2 + r`` for finite ``x``: ``(k mod 4, r_hi, r_lo)``, ``|r| <= pi/4`` (about)."""
    f, d, i32 = h.f, h.d, h.i32
    ax = f.ext(d, "FAbs", x)
    small = f.cmp("lt", d, ax, h.c(CW_LIMIT))
    xs = f.select(d, small, x, h.c(0.0))
    kc, hc, lc = _cody_waite(h, xs)
    big = f.select(d, small, h.c(CW_LIMIT), ax)
    kp, hp, lp = _payne_hanek(h, big)
    neg = f.cmp("lt", d, x, h.c(0.0))  # the large path reduced |x|: mirror it
    kp = f.select(i32, neg, f.binary("and", i32, f.binary("sub", i32, f.const(i32, 4), kp), f.const(i32, 3)), kp)
    hp = f.select(d, neg, f.neg(d, hp), hp)
    lp = f.select(d, neg, f.neg(d, lp), lp)
    return f.select(i32, small, kc, kp), f.select(d, small, hc, hp), f.select(d, small, lc, lp)


def _kernels(h: F64Ops, r_hi: int, r_lo: int) -> tuple[int, int]:
    """``(sin r, cos r)`` for ``r = r_hi + r_lo``, ``|r| <= ~pi/4``."""
    z, z_err = h.two_prod(r_hi, r_hi)
    half_z = h.mul(z, h.c(0.5))
    s_tail = h.add(h.mul(h.mul(r_hi, z), h.poly(SIN_TERMS, z)), h.mul(r_lo, h.sub(h.c(1.0), half_z)))
    sin_r = h.add(r_hi, s_tail)
    w = h.sub(h.c(1.0), half_z)
    c_tail = h.add(h.sub(h.sub(h.c(1.0), w), half_z),
                   h.sub(h.mul(h.mul(z, z), h.poly(COS_TERMS, z)), h.add(h.mul(r_hi, r_lo), h.mul(h.c(0.5), z_err))))  # fmt: skip
    cos_r = h.add(w, c_tail)
    return sin_r, cos_r


def _sincos(e: Emitter, x: int, want_sin: bool) -> int:
    h = F64Ops(e)
    f, d, i32 = h.f, h.d, h.i32
    finite = f.lnot(f.lor(f.isnan(x), f.op("OpIsInf", e.t.bool, x)))
    xf = f.select(d, finite, x, h.c(0.0))
    k, r_hi, r_lo = _reduce(h, xf)
    s, c = _kernels(h, r_hi, r_lo)
    if not want_sin:
        k = f.binary("and", i32, f.binary("add", i32, k, f.const(i32, 1)), f.const(i32, 3))  # cos x = sin(x + pi/2)
    odd = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 1)), f.const(i32, 1))
    negate = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 2)), f.const(i32, 2))
    v = f.select(d, odd, c, s)
    v = f.select(d, negate, f.neg(d, v), v)
    if want_sin:
        v = f.select(d, f.cmp("eq", d, x, h.c(0.0)), x, v)  # sin(-0.0) = -0.0
    return f.select(d, finite, v, h.c(math.nan))


def sin_f64(e: Emitter, x: int) -> int:
    return _sincos(e, x, True)


def cos_f64(e: Emitter, x: int) -> int:
    return _sincos(e, x, False)
