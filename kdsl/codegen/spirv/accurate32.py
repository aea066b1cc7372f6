"""f32 ``sin``/``cos``/``log``/``log2`` where GLSL.std.450 is wrong on lavapipe.

Why: GLSL.std.450 leaves the precision of these to the device, and lavapipe's (Mesa 22.3)
reduces the argument of ``Sin``/``Cos`` in single precision: measured against numpy, ``cos``
is 17 ulp off near 1e4, 150 ulp near 1e6, and from about 1e8 on both return noise
(``sin(1e30) = -1``); ``Log``/``Log2`` of a subnormal are off by up to 16 (``log(2.9e-39)``
gives -87.8). Triton (libdevice) is within an ulp or two everywhere.

* ``sin``/``cos`` (devices with 64-bit floats; others keep the instruction): kdsl's own for
  every argument, within 0.503 ulp of numpy (f64, rounded) for every f32: checked exhaustively
  on lavapipe, sampled by ``tests/vulkan/test_math_f32.py``. ``|x| = k pi/2 + r`` is reduced exactly by
  :func:`reduce_f32`, a Payne-Hanek cut to the size of an f32: ``|x| = m 2**E`` with a
  24-bit integer ``m``, and ``|x| * 2/pi`` modulo 4 quarter turns only needs the bits of 2/pi
  from ``2**(1-E)`` on (higher ones add whole multiples of 4) down to ~104 bits further.
  2/pi is cut into 26-bit chunks, exact in f64 (:func:`two_over_pi_chunks`); the magnitude
  of ``x`` picks four consecutive chunks (the window moves one chunk every 26 binades: five
  positions for all f32, four compares and a select chain each); each ``m * chunk`` is an
  exact f64 (50 bits). The two leading products are taken modulo 4 and summed exactly, ``k``
  is the nearest integer to that plus the third, and the remainder is summed as a
  double-double: the fraction of a quarter turn is good to ~2**-79 absolute, and no f32 comes
  closer to a multiple of pi/2 than ~2**-29 (``16367173 * 2**72``), so ``r`` keeps ~50 bits.
  ``sin r``/``cos r`` (``|r| <= pi/4``) are degree-9/8 polynomials in f64 (Chebyshev
  interpolants of their Taylor series, computed at first use: relative error below 2**-35
  and 2**-31), rounded once to f32; the quadrant ``k mod 4`` picks ``+-sin``/``+-cos``.
  Why this shape: lavapipe's llvmpipe runs both sides of a divergent branch, so everything
  is selects, and every instruction counts in each ``sin``. The f64 ``sin``'s reduction
  (:mod:`kdsl.codegen.spirv.trig64`: 192 bits of 2/pi in u64 limbs, a run-time indexed
  table) made a shader with a few ``sin`` take 30 s to build and a ``sin`` kernel run 4.4x
  slower; an indexed table instead of the select chains here made a ``sin`` kernel 1.5x
  slower. Two f64 polynomials cost less than lavapipe's ``Sin`` and ``Cos`` instructions on
  ``r`` (which are also ~1.3 ulp off where the polynomials are 0.5), Estrin's scheme less than
  Horner's. Measured on lavapipe: a ``sin`` kernel over 4M f32 costs 2% more than the older
  guard (instruction below 512, Cody-Waite in f64 up to 2**30, noise above), three ``sin`` and
  three ``cos`` 10% less, and they build as fast (docs/VULKAN.md).
  Special values as C/numpy: NaN and +-inf give NaN, ``sin(-0.0) = -0.0``.
* ``log``/``log2``: a subnormal argument is scaled by ``2**24`` first and ``24 ln 2`` (``24``)
  subtracted after, two selects.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from numpy.polynomial import chebyshev, polynomial

from kdsl.codegen.spirv import trig64
from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.f64ops import F64Ops

_F32_TINY = 2.0**-126  # the smallest normal f32
_SCALE_BITS = 24
CHUNK_BITS = 26  # 24-bit mantissa * 26-bit chunk: exact in f64; two products mod 4 sum exactly
WINDOW_CHUNKS = 4  # chunks of 2/pi per argument: 104 bits from the first one that matters
# |x| >= WINDOW_STEPS[q]: x = m 2**E with E >= 2 + 26 q, so the chunk q of 2/pi (bits 26q + 1 ...)
# only adds multiples of 4 quarter turns and the window starts one chunk further down
WINDOW_STEPS = (2.0**25, 2.0**51, 2.0**77, 2.0**103)
_ROUND_TO_4 = 3.0 * 2**53  # v + this - this: v rounded to a multiple of 4 (|v| < 2**53)
_ROUND_TO_1 = 1.5 * 2**52  # ... to an integer (|v| < 2**51)
_R_MAX = math.pi / 4 * 1.001  # the polynomials' range (|r| <= pi/4 up to the rounding of k)
_POLY_DEGREE = 3  # in z = r*r: sin r = r + r z P(z) (degree 9), cos r = 1 + z Q(z) (degree 8)


@cache
def two_over_pi_chunks() -> tuple[int, ...]:
    """A zero chunk (the window of arguments below 2**25 starts above the binary point), then
    the bits of 2/pi after the binary point as :data:`CHUNK_BITS`-bit integers, most significant
    first, as far as the window of the largest f32 reaches."""
    n = len(WINDOW_STEPS) + WINDOW_CHUNKS - 1
    bits = CHUNK_BITS * n
    scale = 2 * bits + 8
    t = (1 << (bits + scale + 1)) // trig64.pi_scaled(scale)  # floor(2/pi * 2**bits), pi to 2**-scale
    return (0, *((t >> (CHUNK_BITS * (n - 1 - j))) & ((1 << CHUNK_BITS) - 1) for j in range(n)))


@cache
def sin_cos_polys() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Monomial coefficients of ``P``/``Q`` (``sin r = r + r z P(z)``, ``cos r = 1 + z Q(z)``,
    ``z = r*r``): Chebyshev interpolants on ``[0, _R_MAX**2]`` of the Taylor series
    ``P = sum (-1)**n z**(n-1) / (2n+1)!``, ``Q = sum (-1)**n z**(n-1) / (2n)!`` (no cancellation)."""

    def taylor(z: np.ndarray, odd: int) -> np.ndarray:
        total = np.zeros_like(z)
        for n in range(1, 16):
            total = total + (-1) ** n * z ** (n - 1) / math.factorial(2 * n + odd)
        return total

    def fit(odd: int) -> tuple[float, ...]:
        cheb = chebyshev.Chebyshev.interpolate(lambda z: taylor(z, odd), _POLY_DEGREE, domain=[0.0, _R_MAX**2])
        return tuple(float(c) for c in cheb.convert(kind=polynomial.Polynomial, domain=[-1, 1], window=[-1, 1]).coef)

    return fit(1), fit(0)


def _by_step(h: F64Ops, steps: list[int], values: list[float]) -> int:
    """``values[q]`` (f64 constants) for the number ``q`` of true ``steps``, which hold in
    order: a select chain (an indexed table ran 1.5x slower on lavapipe)."""
    v = h.c(values[0])
    for cond, val in zip(steps, values[1:]):
        v = h.f.select(h.d, cond, h.c(val), v)
    return v


def reduce_f32(h: F64Ops, ax: int) -> tuple[int, int]:
    """``(k mod 4 as i32, r as f64)`` with ``ax = k pi/2 + r``, ``|r| <= pi/4`` (up to the
    rounding of ``k``), for a finite f32 ``ax >= 0``; see the module docstring."""
    e, f, d = h.e, h.f, h.d
    f32 = e.t.f32
    steps = [f.cmp("ge", f32, ax, f.const(f32, s)) for s in WINDOW_STEPS]
    positions = range(len(WINDOW_STEPS) + 1)
    table = two_over_pi_chunks()
    # m 2**s with s = E - 26 q in [-24, 1]: the weight 2**-26(q + i) of chunk q + i becomes 2**-26 i
    m = h.mul(f.convert(d, f32, ax), _by_step(h, steps, [2.0 ** (-CHUNK_BITS * q) for q in positions]))
    p = [h.mul(m, _by_step(h, steps, [math.ldexp(table[q + i], -CHUNK_BITS * i) for q in positions]))
         for i in range(WINDOW_CHUNKS)]  # fmt: skip

    def nearest(v: int, magic: float) -> int:
        return h.sub(h.add(v, h.c(magic)), h.c(magic))

    # p0 < 2**51 (bits down to 2**s), p1 < 2**25 (down to 2**(s - 26)): mod 4 each, in [-2, 2],
    # their sum exact (bits 2**2 .. 2**-50); p2 < 1/2, p3 < 2**-27, the rest < 2**-79
    b = h.add(h.sub(p[0], nearest(p[0], _ROUND_TO_4)), h.sub(p[1], nearest(p[1], _ROUND_TO_4)))
    kd = nearest(h.add(b, p[2]), _ROUND_TO_1)
    hi, lo = h.two_sum(h.sub(b, kd), p[2])  # b - kd exact
    frac = h.add(hi, h.add(lo, p[3]))  # quarter turns, |frac| <= 1/2
    k = f.binary("and", h.i32, f.convert(h.i32, d, kd), f.const(h.i32, 3))
    return k, h.mul(frac, h.c(math.pi / 2))


def trig_f32(e: Emitter, name: str, x: int) -> int:
    """``Sin``/``Cos`` (``name``) of the f32 value ``x``; see the module docstring for accuracy."""
    f, f32 = e.f, e.t.f32
    if not e.target.shader_float64:
        return f.ext(f32, name, x)
    h = F64Ops(e)
    d, i32 = h.d, h.i32
    ax = f.ext(f32, "FAbs", x)
    finite = f.cmp("lt", f32, ax, f.const(f32, math.inf))  # false for NaN too
    k, r = reduce_f32(h, f.select(f32, finite, ax, f.const(f32, 0.0)))  # no NaN into k's conversion
    z = h.mul(r, r)
    z2 = h.mul(z, z)

    def estrin(c: tuple[float, ...]) -> int:  # shorter dependency chains than Horner's rule: faster
        return h.add(h.add(h.c(c[0]), h.mul(h.c(c[1]), z)), h.mul(z2, h.add(h.c(c[2]), h.mul(h.c(c[3]), z))))

    sp, cp = sin_cos_polys()
    s = h.add(r, h.mul(h.mul(r, z), estrin(sp)))
    c = h.add(h.c(1.0), h.mul(z, estrin(cp)))
    if name == "Cos":  # cos x = sin(x + pi/2)
        k = f.binary("and", i32, f.binary("add", i32, k, f.const(i32, 1)), f.const(i32, 3))
    odd = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 1)), f.const(i32, 1))
    negate = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 2)), f.const(i32, 2))
    v = f.convert(f32, d, f.select(d, odd, c, s))
    v = f.select(f32, negate, f.neg(f32, v), v)
    if name == "Sin":  # |x| was reduced: sin(-x) = -sin(x), -0.0 included
        u32 = e.t.u32
        sign = f.binary("and", u32, f.bitcast(u32, x), f.const(u32, 0x80000000))
        v = f.bitcast(f32, f.binary("xor", u32, f.bitcast(u32, v), sign))
    return f.select(f32, finite, v, f.const(f32, math.nan))


def log_f32(e: Emitter, name: str, x: int) -> int:
    """``Log``/``Log2`` (``name``) of the f32 value ``x``, subnormal arguments included."""
    f, f32 = e.f, e.t.f32
    small = f.cmp("lt", f32, x, f.const(f32, _F32_TINY))  # zero and negatives too: harmless
    arg = f.select(f32, small, f.binary("mul", f32, x, f.const(f32, 2.0**_SCALE_BITS)), x)
    r = f.ext(f32, name, arg)
    shift = _SCALE_BITS * math.log(2.0) if name == "Log" else float(_SCALE_BITS)
    return f.select(f32, small, f.binary("sub", f32, r, f.const(f32, shift)), r)
