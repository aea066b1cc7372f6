"""Math functions against numpy / Python references.

Triton facts: triton-lang.org/main/python-api/triton.language.html "Math Ops"
(abs exp exp2 log log2 sqrt sqrt_rn rsqrt sin cos erf floor ceil fma maximum
minimum clamp sigmoid umulhi div_rn; ``where`` under "Indexing Ops"):
- ``maximum``/``minimum`` default ``propagate_nan=PropagateNan.NONE`` (a NaN
  operand is ignored, IEEE maxNum); ``PropagateNan.ALL`` returns NaN.
- ``clamp(x, min, max)`` restricts floats to [min, max].
- ``umulhi(x, y)``: the most significant 32 bits of the 64-bit product; Triton
  lowers it to an *unsigned* multiply-high (``tt.mulhiui``).
- ``div_rn`` / ``sqrt_rn``: IEEE round-to-nearest division / square root.
Tolerances: abs, floor, ceil, fma, div_rn, sqrt_rn, maximum, minimum, clamp,
where, umulhi are exact; sqrt within 1 ulp (rtol 1.2e-7); exp, exp2, log, log2,
sin, cos, tanh, erf, rsqrt, sigmoid within rtol 2e-6 / atol 1e-6 of a float64
reference (a few ulp, as kdsl's math dialect contract states).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

N = 64


@kdsl.kernel
def unary_math_kernel(x_ptr, out_ptr, n, FN: kl.constexpr, BLOCK: kl.constexpr):  # noqa: C901
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask, other=1.0)
    if FN == "abs":
        y = kl.abs(x)
    elif FN == "exp":
        y = kl.exp(x)
    elif FN == "exp2":
        y = kl.exp2(x)
    elif FN == "log":
        y = kl.log(x)
    elif FN == "log2":
        y = kl.log2(x)
    elif FN == "sqrt":
        y = kl.sqrt(x)
    elif FN == "sqrt_rn":
        y = kl.sqrt_rn(x)
    elif FN == "rsqrt":
        y = kl.rsqrt(x)
    elif FN == "sin":
        y = kl.sin(x)
    elif FN == "cos":
        y = kl.cos(x)
    elif FN == "tanh":
        y = kl.tanh(x)
    elif FN == "erf":
        y = kl.erf(x)
    elif FN == "floor":
        y = kl.floor(x)
    elif FN == "ceil":
        y = kl.ceil(x)
    elif FN == "sigmoid":
        y = kl.sigmoid(x)
    else:
        kl.static_assert(False, "unknown function")
    kl.store(out_ptr + offs, y, mask=mask)


def _f64(fn):
    return lambda x: fn(x.astype(np.float64))


REFERENCES = {
    "exp": _f64(np.exp),
    "exp2": _f64(np.exp2),
    "log": _f64(np.log),
    "log2": _f64(np.log2),
    "rsqrt": _f64(lambda v: 1.0 / np.sqrt(v)),
    "sin": _f64(np.sin),
    "cos": _f64(np.cos),
    "tanh": _f64(np.tanh),
    "erf": lambda x: np.array([math.erf(float(v)) for v in x]),
    "sigmoid": _f64(lambda v: 1.0 / (1.0 + np.exp(-v))),
}
POSITIVE = {"log", "log2", "rsqrt", "sqrt", "sqrt_rn"}


def _inputs(fn: str) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(fn)) % 2**32)
    if fn in POSITIVE:
        return (rng.random(N) * 100 + 1e-3).astype(np.float32)
    if fn in ("exp", "exp2"):
        return (rng.standard_normal(N) * 10).astype(np.float32)
    if fn in ("sin", "cos"):
        return (rng.standard_normal(N) * 4).astype(np.float32)
    return (rng.standard_normal(N) * 3).astype(np.float32)


def _run_unary(fn: str, x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    unary_math_kernel[(1,)](x, out, x.size, FN=fn, BLOCK=N)
    return out


@pytest.mark.parametrize("fn", sorted(REFERENCES))
def test_transcendental_within_tolerance(backend: str, fn: str) -> None:
    x = _inputs(fn)
    np.testing.assert_allclose(_run_unary(fn, x), REFERENCES[fn](x), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("fn", ["abs", "floor", "ceil", "sqrt_rn"])
def test_exact_unary(backend: str, fn: str) -> None:
    x = _inputs(fn)
    x[:6] = [-0.0, 2.5, -2.5, 0.5, -1.0, 3.0] if fn != "sqrt_rn" else [0.0, 2.0, 4.0, 1e-30, 3.0, 1e30]
    ref = {"abs": np.abs, "floor": np.floor, "ceil": np.ceil, "sqrt_rn": np.sqrt}[fn](x)
    np.testing.assert_array_equal(_run_unary(fn, x), ref.astype(np.float32))


def test_sqrt_within_one_ulp(backend: str) -> None:
    x = _inputs("sqrt")
    np.testing.assert_allclose(_run_unary("sqrt", x), np.sqrt(x.astype(np.float64)), rtol=1.2e-7)


def test_special_values(backend: str) -> None:
    x = np.array([0.0, -1.0, np.inf, np.nan], dtype=np.float32)
    with np.errstate(all="ignore"):
        got = _run_unary("log", x)
    assert got[0] == -np.inf and np.isnan(got[1]) and got[2] == np.inf and np.isnan(got[3])
    e = _run_unary("exp", np.array([-np.inf, np.inf, 0.0, 1000.0], dtype=np.float32))
    np.testing.assert_array_equal(e, [0.0, np.inf, 1.0, np.inf])


@kdsl.kernel
def abs_int_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 4)
    kl.store(out_ptr + offs, kl.abs(kl.load(x_ptr + offs)))


def test_abs_integer(backend: str) -> None:
    x = np.array([-5, 5, 0, -(2**31)], np.int32)
    out = np.zeros(4, np.int32)
    abs_int_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, [5, 5, 0, -(2**31)])  # abs(INT_MIN) wraps


@kdsl.kernel
def binary_math_kernel(x_ptr, y_ptr, z_ptr, out_ptr, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    z = kl.load(z_ptr + offs)
    if FN == "fma":
        r = kl.fma(x, y, z)
    elif FN == "maximum":
        r = kl.maximum(x, y)
    elif FN == "minimum":
        r = kl.minimum(x, y)
    elif FN == "maximum_nan":
        r = kl.maximum(x, y, propagate_nan=kl.PropagateNan.ALL)
    elif FN == "minimum_nan":
        r = kl.minimum(x, y, propagate_nan=kl.PropagateNan.ALL)
    elif FN == "clamp":
        r = kl.clamp(x, y, z)
    elif FN == "where":
        r = kl.where(x > y, x, z)
    elif FN == "div_rn":
        r = kl.div_rn(x, y)
    elif FN == "umulhi":
        r = kl.umulhi(x, y)
    else:
        kl.static_assert(False, "unknown function")
    kl.store(out_ptr + offs, r)


def _run_binary(fn: str, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> np.ndarray:
    z = np.zeros_like(x) if z is None else z
    out = np.zeros_like(x)
    binary_math_kernel[(1,)](x, y, z, out, FN=fn, BLOCK=x.size)
    return out


def _rand3(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple((rng.standard_normal(N) * 10).astype(np.float32) for _ in range(3))  # type: ignore[return-value]


def test_fma_single_rounding(backend: str) -> None:
    x, y, z = _rand3(3)
    x[0], y[0], z[0] = 1 + 2**-12, 1 + 2**-12, -(1 + 2**-11)  # product's low bits survive only in an fma
    ref = (x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)).astype(np.float32)
    got = _run_binary("fma", x, y, z)
    np.testing.assert_array_equal(got, ref)
    assert got[0] == np.float32(2**-24)


def test_maximum_minimum_and_nan_propagation(backend: str) -> None:
    x, y, _ = _rand3(4)
    x[:4] = [np.nan, 1.0, np.nan, -0.0]
    y[:4] = [2.0, np.nan, np.nan, 5.0]
    np.testing.assert_array_equal(_run_binary("maximum", x, y), np.fmax(x, y))
    np.testing.assert_array_equal(_run_binary("minimum", x, y), np.fmin(x, y))
    np.testing.assert_array_equal(_run_binary("maximum_nan", x, y), np.maximum(x, y))
    np.testing.assert_array_equal(_run_binary("minimum_nan", x, y), np.minimum(x, y))


def test_integer_maximum_minimum_signedness(backend: str) -> None:
    x = np.array([0xFFFFFFFF, 1, 5, 0x80000000], np.uint32)
    y = np.array([1, 0xFFFFFFFF, 5, 0x7FFFFFFF], np.uint32)
    np.testing.assert_array_equal(_run_binary("maximum", x, y), np.maximum(x, y))
    xi = x.view(np.int32)
    yi = y.view(np.int32)
    np.testing.assert_array_equal(_run_binary("minimum", xi, yi), np.minimum(xi, yi))


def test_clamp_and_where(backend: str) -> None:
    x, _, _ = _rand3(5)
    lo = np.full(N, -3.0, np.float32)
    hi = np.full(N, 4.0, np.float32)
    np.testing.assert_array_equal(_run_binary("clamp", x, lo, hi), np.clip(x, lo, hi))
    a, b, c = _rand3(6)
    np.testing.assert_array_equal(_run_binary("where", a, b, c), np.where(a > b, a, c))


def test_div_rn_exact(backend: str) -> None:
    x, y, _ = _rand3(7)
    y[0] = 3.0
    x[0] = 1.0
    np.testing.assert_array_equal(_run_binary("div_rn", x, y), x / y)


def test_umulhi_uint32(backend: str) -> None:
    rng = np.random.default_rng(8)
    x = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    y = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    x[:3] = [0xFFFFFFFF, 0xD2511F53, 2]
    y[:3] = [0xFFFFFFFF, 0xCD9E8D57, 3]
    ref = ((x.astype(object) * y.astype(object)) >> 32).astype(np.uint32)
    np.testing.assert_array_equal(_run_binary("umulhi", x, y), ref)


def test_umulhi_int32_is_unsigned_high_product(backend: str) -> None:
    # tt.mulhiui: the bits of signed operands are multiplied as unsigned values.
    x = np.array([-1, -2, 3, -(2**31)], np.int32)
    y = np.array([-1, 3, -4, 2], np.int32)
    ux = x.view(np.uint32).astype(object)
    uy = y.view(np.uint32).astype(object)
    ref = ((ux * uy) >> 32).astype(np.uint32).view(np.int32)
    np.testing.assert_array_equal(_run_binary("umulhi", x, y), ref)


@kdsl.kernel
def signed_zero_kernel(x_ptr, y_ptr, out_ptr, N: kl.constexpr):
    r = kl.arange(0, N)
    x = kl.load(x_ptr + r)
    kl.store(out_ptr + r, kl.sin(x))
    kl.store(out_ptr + N + r, kl.erf(x))
    kl.store(out_ptr + 2 * N + r, kl.tanh(x))
    kl.store(out_ptr + 3 * N + r, x ** kl.load(y_ptr + r))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_odd_functions_keep_negative_zero_and_pow_propagates_nan(backend: str, dtype: type) -> None:
    """C: sin/erf/tanh(-0) = -0; pow(NaN, y) = NaN unless y == 0, pow(x, 0) = pow(1, y) = 1.
    (Found by libdevice's tests: cpu sin and interpreter erf returned +0; vulkan's f32 pow(NaN, 30) 0.)"""
    x = np.array([-0.0, 0.0, np.nan, np.nan, 1.0, -0.0, 2.0, np.nan], dtype)
    y = np.array([1.0, 1.0, 30.0, 0.0, np.nan, 2.0, 0.0, -3.0], dtype)
    out = np.zeros(4 * 8, dtype)
    signed_zero_kernel[(1,)](x, y, out, N=8)
    for k in range(3):
        got = out[k * 8:k * 8 + 2]
        assert list(np.signbit(got)) == [True, False] and list(got) == [0.0, 0.0], k
    with np.errstate(invalid="ignore"):
        want = np.power(x, y)
    np.testing.assert_array_equal(out[24:], want)
