"""libdevice's integer helpers (``byte_perm``, ``sad``, ``mul24``, ``hadd``/``rhadd``, ``abs``, the
32-bit halves of a double) and the elementary functions of ``extra/elementary.py`` (``sinpi``,
``cospi``, ``rcbrt``, the norms, ``ilogb``/``logb``/``ldexp``/``scalbn``, ``remainder``,
``rsqrt_rn``) on every backend.

Exact functions are compared bit for bit (Python integers, ``math.remainder``, ``np.ldexp``,
``np.frexp``; ``rsqrt_rn`` against mpmath at 200 bits). The others are within the ulp bounds of
``test_libdevice.py``'s checker against mpmath (f64) or float64 numpy (f32); vulkan's f32
``sin``/``cos``/``exp``/``log`` are GLSL.std.450's, so there the bound is that file's rtol 3e-5.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.language.extra import libdevice

from .test_libdevice import _ulp_check


@kdsl.kernel
def int_helpers(x_ptr, y_ptr, z_ptr, out_ptr, N: kl.constexpr):
    r = kl.arange(0, N)
    x = kl.load(x_ptr + r)
    y = kl.load(y_ptr + r)
    z = kl.load(z_ptr + r)
    kl.store(out_ptr + r, libdevice.byte_perm(x, y, z))
    kl.store(out_ptr + N + r, libdevice.sad(x, y, z.to(kl.uint32, bitcast=True)))
    kl.store(out_ptr + 2 * N + r, libdevice.mul24(x, y))
    kl.store(out_ptr + 3 * N + r, libdevice.hadd(x, y))
    kl.store(out_ptr + 4 * N + r, libdevice.rhadd(x, y))
    kl.store(out_ptr + 5 * N + r, libdevice.abs(x))
    kl.store(out_ptr + 6 * N + r, libdevice.usad(x.to(kl.uint32, bitcast=True), y.to(kl.uint32, bitcast=True),
                                                 z.to(kl.uint32, bitcast=True)).to(kl.int32, bitcast=True))  # fmt: skip
    kl.store(out_ptr + 7 * N + r, libdevice.umul24(x.to(kl.uint32, bitcast=True), y.to(kl.uint32, bitcast=True)))
    kl.store(out_ptr + 8 * N + r, libdevice.urhadd(x.to(kl.uint32, bitcast=True), y.to(kl.uint32, bitcast=True)))
    d = libdevice.hiloint2double(x, y)
    kl.store(out_ptr + 9 * N + r, libdevice.double2hiint(d) ^ libdevice.double2loint(d))


def _i32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def test_integer_helpers(backend: str) -> None:
    rng = np.random.default_rng(8)
    n = 64
    x, y, z = (rng.integers(-(2**31), 2**31, n, dtype=np.int32) for _ in range(3))
    x[:4] = [-(2**31), 2**31 - 1, 0, -1]
    y[:4] = [-(2**31), 2**31 - 1, -1, 0]
    out = np.zeros(10 * n, np.int32)
    int_helpers[(1,)](x, y, z, out, N=n)
    got = out.reshape(10, n).tolist()
    u = lambda v: int(v) % 2**32  # noqa: E731
    for k in range(n):
        a, b, c = int(x[k]), int(y[k]), int(z[k])
        wide = u(a) | (u(b) << 32)
        perm = sum(((wide >> (8 * ((u(c) >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))
        s24 = lambda v: ((v & 0xFFFFFF) ^ 0x800000) - 0x800000  # noqa: E731
        want = [_i32(perm), _i32(abs(a - b) + u(c)), _i32(s24(a) * s24(b)), (a + b) >> 1, (a + b + 1) >> 1,
                _i32(abs(a)), _i32(abs(u(a) - u(b)) + u(c)), _i32((u(a) & 0xFFFFFF) * (u(b) & 0xFFFFFF)),
                _i32((u(a) + u(b) + 1) >> 1), _i32(a ^ b)]  # fmt: skip
        assert [row[k] for row in got] == want, f"operands {a}, {b}, {c}"


def _mp(fn, dtype: type, *xs: np.ndarray) -> np.ndarray:
    mpmath.mp.prec = 120
    return np.array([float(fn(*(mpmath.mpf(float(v)) for v in vs))) for vs in zip(*xs)], np.float64)


@kdsl.kernel
def unary5(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    kl.store(out_ptr + offs, libdevice.sinpi(x), mask=m)
    kl.store(out_ptr + n + offs, libdevice.cospi(x), mask=m)
    kl.store(out_ptr + 2 * n + offs, libdevice.rcbrt(x), mask=m)
    kl.store(out_ptr + 3 * n + offs, libdevice.logb(x), mask=m)
    kl.store(out_ptr + 4 * n + offs, libdevice.ilogb(x).to(x.dtype), mask=m)


def _inputs(dtype: type) -> np.ndarray:
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.uniform(-4, 4, 600), np.arange(-8, 8.5, 0.5), rng.uniform(-1e6, 1e6, 100),
                        np.exp(rng.uniform(-80, 80, 200)) * rng.choice([-1, 1], 200),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 2.0**60 + 2.0**9, 1e-3, 0.25, -0.75]])  # fmt: skip
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pi_trig_rcbrt_logb(backend: str, dtype: type) -> None:
    x = _inputs(dtype)
    n = x.size
    out = np.zeros(5 * n, dtype)
    unary5[(kdsl.cdiv(n, 256),)](x, out, n, BLOCK=256)
    sinpi, cospi, rcbrt, logb, ilogb = out.reshape(5, n)
    fin = np.isfinite(x)
    with np.errstate(all="ignore"):
        sref = np.where(fin, _mp(mpmath.sinpi, dtype, np.where(fin, x, 0)), np.nan)
        cref = np.where(fin, _mp(mpmath.cospi, dtype, np.where(fin, x, 0)), np.nan)
        rref = 1.0 / np.cbrt(x.astype(np.float64))
    sref = np.where((x == np.round(x)) & fin, np.copysign(0.0, x), sref)  # IEEE sinPi(n) = +-0
    cref = np.where((np.mod(2.0 * x.astype(np.float64), 2.0) == 1.0) & fin, 0.0, cref)
    bound = 2 if dtype == np.float32 else 4
    _ulp_check(sinpi, sref, dtype, bound, "sinpi", backend)
    _ulp_check(cospi, cref, dtype, bound, "cospi", backend)
    _ulp_check(rcbrt, rref, dtype, 2, "rcbrt", backend)
    with np.errstate(all="ignore"):
        e = (np.frexp(x)[1] - 1).astype(np.float64)
    lref = np.where(x == 0, -np.inf, np.where(np.isinf(x), np.inf, np.where(np.isnan(x), np.nan, e)))
    np.testing.assert_array_equal(logb, lref.astype(dtype))
    iref = np.where(np.isinf(x), 2**31 - 1, np.where((x == 0) | np.isnan(x), -(2**31), e))
    np.testing.assert_array_equal(ilogb, iref.astype(dtype))


@kdsl.kernel
def multi_arg(x_ptr, y_ptr, z_ptr, w_ptr, k_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    y = kl.load(y_ptr + offs, mask=m)
    z = kl.load(z_ptr + offs, mask=m)
    w = kl.load(w_ptr + offs, mask=m)
    k = kl.load(k_ptr + offs, mask=m)
    kl.store(out_ptr + offs, libdevice.rhypot(x, y), mask=m)
    kl.store(out_ptr + n + offs, libdevice.norm3d(x, y, z), mask=m)
    kl.store(out_ptr + 2 * n + offs, libdevice.norm4d(x, y, z, w), mask=m)
    kl.store(out_ptr + 3 * n + offs, libdevice.rnorm3d(x, y, z), mask=m)
    kl.store(out_ptr + 4 * n + offs, libdevice.rnorm4d(x, y, z, w), mask=m)
    kl.store(out_ptr + 5 * n + offs, libdevice.ldexp(x, k), mask=m)
    kl.store(out_ptr + 6 * n + offs, libdevice.scalbn(y, k), mask=m)
    kl.store(out_ptr + 7 * n + offs, libdevice.remainder(x, y), mask=m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norms_scaling_remainder(backend: str, dtype: type) -> None:
    rng = np.random.default_rng(21)
    n = 600
    mag = lambda: np.exp(rng.uniform(-30, 30, n)) * rng.choice([-1, 1], n)  # noqa: E731
    x, y, z, w = (mag().astype(dtype) for _ in range(4))
    fi = np.finfo(dtype)
    x[:8] = [np.inf, np.nan, 0.0, fi.max, fi.smallest_subnormal, 5.5, 7.0, -0.0]
    y[:8] = [np.nan, 1.0, 0.0, fi.max, fi.smallest_subnormal, 2.0, 2.0, 3.0]
    y[8:40] = x[8:40] * rng.uniform(1e-6, 1e3, 32).astype(dtype)
    k = rng.integers(-1200, 1200, n).astype(np.int32) if dtype == np.float64 else rng.integers(-300, 300, n).astype(np.int32)
    out = np.zeros(8 * n, dtype)
    # small programs: vulkan's exact fmod (in remainder) loops per element, and lavapipe cuts a program's loops at 65535
    multi_arg[(kdsl.cdiv(n, 16),)](x, y, z, w, k, out, n, BLOCK=16)
    got = out.reshape(8, n)
    X, Y, Z, W = (v.astype(np.float64) for v in (x, y, z, w))
    mpmath.mp.prec = 120
    hyp = lambda *vs: np.array([float(mpmath.sqrt(mpmath.fsum(mpmath.mpf(c) ** 2 for c in t))) if all(map(  # noqa: E731
        math.isfinite, t)) else math.hypot(*t) for t in zip(*(v.tolist() for v in vs))])
    with np.errstate(all="ignore"):
        rhyp = lambda *vs: np.array([float(1 / mpmath.sqrt(mpmath.fsum(mpmath.mpf(c) ** 2 for c in t))) if all(map(  # noqa: E731
            math.isfinite, t)) and any(t) else np.float64(1) / math.hypot(*t) for t in zip(*(v.tolist() for v in vs))])
        refs = [rhyp(X, Y), hyp(X, Y, Z), hyp(X, Y, Z, W), rhyp(X, Y, Z), rhyp(X, Y, Z, W)]
    for name, g, ref in zip(["rhypot", "norm3d", "norm4d", "rnorm3d", "rnorm4d"], got, refs):
        _ulp_check(g, ref, dtype, 3, name, backend)
    np.testing.assert_array_equal(got[5], np.ldexp(x, k))
    np.testing.assert_array_equal(got[6], np.ldexp(y, k))
    with np.errstate(all="ignore"):
        rem = np.array([math.remainder(a, b) if math.isfinite(a) and b != 0 and not math.isnan(b) else math.nan
                        for a, b in zip(x.tolist(), y.tolist())], dtype)  # fmt: skip
    assert np.array_equal(got[7], rem, equal_nan=True) and np.array_equal(np.signbit(got[7]), np.signbit(rem))


@kdsl.kernel
def rsqrt_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, libdevice.rsqrt_rn(kl.load(x_ptr + offs, mask=m)), mask=m)


def test_rsqrt_rn_is_correctly_rounded(backend: str) -> None:
    rng = np.random.default_rng(4)
    bits = rng.integers(1, 0x7F800000, 3000, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), np.float32([1.0, 4.0, 0.25, 2.0, 0.0, -0.0, np.inf, -1.0, np.nan])])
    out = np.zeros_like(x)
    rsqrt_kernel[(kdsl.cdiv(x.size, 512),)](x, out, x.size, BLOCK=512)
    mpmath.mp.prec = 200
    want = np.array([np.float32(float(1 / mpmath.sqrt(mpmath.mpf(float(v))))) if v > 0 and np.isfinite(v)
                     else np.float32(1 / np.sqrt(np.float64(v))) for v in x.tolist()], np.float32)  # fmt: skip
    bad = np.nonzero((out != want) & ~(np.isnan(out) & np.isnan(want)))[0]
    assert bad.size == 0, f"rsqrt_rn({x[bad[0]]!r}) = {out[bad[0]]!r}, want {want[bad[0]]!r}"
