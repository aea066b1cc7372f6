"""Compute-area cases ported from Triton's unit tests and documented semantics
(python/test/unit/language/test_core.py, triton/language/core.py, standard.py, math.py),
kept where they found a divergence or cover something the other semantic tests do not.

Facts checked (Triton's behaviour, reproduced by kdsl on every backend):
- ``tl.fma`` is one rounding of ``a*b + c``, also for float64 (LLVM ``llvm.fma``), including
  when the product alone overflows but the sum does not, or ``c`` cancels it.
- Python-scalar promotion (``semantic.computation_type_impl``): a scalar of a kind (bool <
  int < float) no higher than the tensor's takes the tensor's type; a float scalar with an
  int tensor takes its own type, float64 when the value is not representable as a normal
  float32 (``to_tensor_type``), so ``int32 + 1e300`` is float64 and ``int32 + 0.1`` float32.
- Reverse scans combine ``combine(accumulated_right_part, element)``, like the forward scan
  of the flipped input.
- ``sum``/``cumsum`` of bool accumulate in uint32 (``_pick_sum_dtype``: int1 is unsigned);
  ``max`` of bool/uint8 widen to int32; ``xor_sum`` keeps the type.
Integer references are exact; float references exact unless a tolerance is named.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def fma_kernel(a_ptr, b_ptr, c_ptr, o_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    r = kl.fma(kl.load(a_ptr + offs), kl.load(b_ptr + offs), kl.load(c_ptr + offs))
    kl.store(o_ptr + offs, r)


def _fma_ref(a: float, b: float, c: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c
    try:
        return float(exact)
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


def test_fma_float64_single_rounding(backend: str) -> None:
    rng = np.random.default_rng(7)
    n = 64
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)
    b = rng.standard_normal(n)
    c = -(a * b) * (1 + rng.standard_normal(n) * 1e-12)  # heavy cancellation: the product's low bits decide
    c[::3] = rng.standard_normal(n)[::3]
    a[:6] = [1 + 2**-30, 0.0, -0.0, 1e300, 1e-300, 3.0]
    b[:6] = [1 + 2**-30, 5.0, 5.0, 1e10, 1e-20, 0.0]
    c[:6] = [-(1 + 2**-29), -0.0, 0.0, -1e300, 1e-310, -0.0]  # [0] is 2**-60 fused, 0 unfused
    want = np.array([_fma_ref(*v) for v in zip(a.tolist(), b.tolist(), c.tolist())])
    out = np.zeros(n)
    fma_kernel[(1,)](a, b, c, out, N=n)
    assert np.array_equal(out.view(np.uint64), want.view(np.uint64)), (out - want)[out != want]


@kdsl.kernel
def to_bf16_bits_kernel(x_ptr, o_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    kl.store(o_ptr + offs, kl.load(x_ptr + offs).to(kl.bfloat16).to(kl.uint16, bitcast=True))


@kdsl.kernel
def to_f16_kernel(x_ptr, o_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    kl.store(o_ptr + offs, kl.load(x_ptr + offs).to(kl.float16))


def _bf16_bits_via_f32(x: np.ndarray) -> np.ndarray:
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def test_int_to_bf16_rounds_through_f32(backend: str) -> None:
    # Triton's GPU lowering converts an integer to bf16 as sitofp to f32, then f32 -> bf16 (torch
    # too): two roundings. 2**24 + 2**16 + 1 rounds to the bf16 midpoint in f32, then to even
    # (2**24); rounded once it would be 2**24 + 2**17.
    ints = np.array([2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 1, 0, 2**31 - 1, -(2**31), 65793, 12345], np.int32)
    out = np.zeros(8, np.uint16)
    to_bf16_bits_kernel[(1,)](ints, out, N=8)
    assert np.array_equal(out, _bf16_bits_via_f32(ints)), out
    i64 = np.array([2**62 + 2**38 + 1, -(2**62), 2**53 + 1, 3, 2**24 + 2**16 + 1, 0, -1, 2**63 - 1], np.int64)
    to_bf16_bits_kernel[(1,)](i64, out, N=8)
    assert np.array_equal(out, _bf16_bits_via_f32(i64)), out


def _bf16_bits_once(x: float) -> int:
    """One round-to-nearest-even of a finite double to bf16 (8 significant bits), as bits."""
    m, e = math.frexp(x)
    r = round(m * 256) * 2.0 ** (e - 8)  # m * 256 is exact; round() ties to even
    return int(np.array([r], np.float32).view(np.uint32)[0] >> 16)


def test_f64_to_bf16_rounds_once(backend: str) -> None:
    # fptrunc f64 -> bf16 (Triton's cast: "truncation fp64 => fp32, fp16, bf16") rounds once;
    # 1 + 2**-8 + 2**-30 is just above a bf16 midpoint but rounds to the midpoint in f32.
    d = np.array([1 + 2**-8 + 2**-30, 1 + 2**-8, 1 / 3, -2.5, 3e38 * (1 + 2**-30), -(1 + 2**-8 + 2**-40),
                  65536.5, -(1 + 3 * 2**-8 - 2**-35)])  # fmt: skip
    out = np.zeros(8, np.uint16)
    to_bf16_bits_kernel[(1,)](d, out, N=8)
    assert out.tolist() == [_bf16_bits_once(v) for v in d.tolist()]


def test_f64_to_f16_rounds_once(backend: str) -> None:
    # fptrunc f64 -> f16 is one rounding (numpy's astype); through f32 it would round twice:
    # 1 + 2**-11 + 2**-40 is just above an f16 midpoint, but rounds to the midpoint in f32.
    rng = np.random.default_rng(1)
    n = 256
    base = rng.standard_normal(n).astype(np.float16).astype(np.float64) * 2.0 ** rng.integers(-20, 14, n)
    base = base.astype(np.float16).astype(np.float64)
    half_ulp = np.abs(np.spacing(base.astype(np.float16)).astype(np.float64)) / 2
    x = base + half_ulp * rng.choice([1, -1], n) + rng.choice([0.0, 2.0**-40, -(2.0**-40)], n) * np.abs(base)
    x[:8] = [1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), np.nan, -np.inf, 1e300, -0.0, 1e-300, 65519.99]
    out = np.zeros(n, np.float16)
    to_f16_kernel[(1,)](x, out, N=n)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16)), np.nonzero(out.view(np.uint16) != want.view(np.uint16))


@kdsl.kernel
def trans_batched_kernel(x_ptr, o_ptr, t_ptr):
    x = kl.load(x_ptr + kl.arange(0, 16)).reshape(2, 4, 2)
    kl.store(o_ptr + kl.arange(0, 16), kl.reshape(kl.trans(x), 16))
    kl.store(t_ptr + kl.arange(0, 16), kl.reshape(x.T, 16))


def test_trans_without_dims_swaps_the_last_two(backend: str) -> None:
    # Triton: "If dims is not specified, the function defaults to swapping the last two axes,
    # thereby performing an (optionally batched) 2D transpose" (also ``x.T``).
    x = np.arange(16, dtype=np.int32) * 3 - 20
    out, t = np.zeros(16, np.int32), np.zeros(16, np.int32)
    trans_batched_kernel[(1,)](x, out, t)
    want = x.reshape(2, 4, 2).transpose(0, 2, 1).ravel()
    assert np.array_equal(out, want) and np.array_equal(t, want)


@kdsl.kernel
def shape_compare_kernel(o_ptr, N: kl.constexpr):
    data = kl.arange(0, N)
    kl.static_assert(data.shape == [N])  # a shape equals the list of its sizes, as in Triton
    kl.static_assert(data[None, :, None].shape == [1, N, 1])
    kl.static_assert(kl.full([], 1, kl.int32).shape == [])
    kl.static_assert(kl.full([], 1, kl.int32)[None, None].shape == [1, 1])
    kl.static_assert(kl.expand_dims(data, (-4, 2, -1)).shape == [1, N, 1, 1])
    kl.static_assert(kl.expand_dims(data, (3, 1, 2)).shape == (N, 1, 1, 1))
    kl.static_assert(data.shape != [N, 1])
    t = kl.expand_dims(kl.sum(data), -1) + kl.expand_dims(N, -1)
    kl.store(o_ptr + kl.arange(0, 1), t)


def test_shape_equals_list_and_expand_dims_forms(backend: str) -> None:
    out = np.zeros(1, np.int32)
    shape_compare_kernel[(1,)](out, N=8)
    assert out[0] == 28 + 8


# --- Triton's test_scan2d combine functions (a non-commutative one, tuples of 2 and 3) ---
@kdsl.kernel
def get_first_element(a, b):
    return a


@kdsl.kernel
def linear_recurrence(a1, b1, a2, b2):
    return a1 * a2, b1 * a2 + b2


@kdsl.kernel
def roll(a1, b1_last, b1_cur, a2, b2_last, b2_cur):
    return a1 + a2, kl.where(a2 == 1, b1_cur, 0) + b2_last, b2_cur


@kdsl.kernel
def kernel(X, Y, Z, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, AXIS: kl.constexpr, OP: kl.constexpr,
           REV: kl.constexpr):  # fmt: skip
    # named ``kernel`` like Triton's tests: an OpenCL C keyword, renamed in the generated source
    range_m = kl.arange(0, BLOCK_M)
    range_n = kl.arange(0, BLOCK_N)
    x = kl.load(X + range_m[:, None] * BLOCK_N + range_n[None, :])
    y = kl.load(Y + range_m[:, None] * BLOCK_N + range_n[None, :])
    if OP == "first":
        z = kl.associative_scan(x, axis=AXIS, combine_fn=get_first_element, reverse=REV)
    elif OP == "roll":
        _, z, _ = kl.associative_scan((1 + 0 * x, 0 * x, x), axis=AXIS, combine_fn=roll, reverse=REV)
    else:
        _, z = kl.associative_scan((x, y), axis=AXIS, combine_fn=linear_recurrence, reverse=REV)
    kl.store(Z + range_m[:, None] * BLOCK_N + range_n[None, :], z)


def _scan_ref(op: str, x: np.ndarray, y: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    xa, ya = np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1)
    if reverse:
        xa, ya = xa[:, ::-1], ya[:, ::-1]
    if op == "first":
        z = np.repeat(xa[:, :1], xa.shape[1], axis=1)
    elif op == "roll":
        z = np.concatenate([np.zeros_like(xa[:, :1]), xa[:, :-1]], axis=1)
    else:
        z = np.zeros_like(xa)
        acc = np.zeros(xa.shape[0], xa.dtype)
        for j in range(xa.shape[1]):
            acc = xa[:, j] * acc + ya[:, j]
            z[:, j] = acc
    if reverse:
        z = z[:, ::-1]
    return np.ascontiguousarray(np.moveaxis(z, -1, axis))


def test_scan2d_triton_combines(backend: str) -> None:
    rng = np.random.default_rng(17)
    shape = (8, 32)
    x = rng.integers(-1, 2, shape).astype(np.int32)
    y = rng.integers(-1, 2, shape).astype(np.int32)
    for op, axis, reverse in [("first", 0, True), ("first", 1, False), ("roll", 1, True), ("roll", 0, False),
                              ("lin", 0, True), ("lin", 1, False)]:  # fmt: skip
        z = np.zeros(shape, np.int32)
        kernel[(1,)](x, y, z, BLOCK_M=shape[0], BLOCK_N=shape[1], AXIS=axis, OP=op, REV=reverse)
        assert np.array_equal(z, _scan_ref(op, x, y, axis, reverse)), (op, axis, reverse)


@kdsl.kernel
def reduce_keepdims_all_kernel(X, Z, Zb, M: kl.constexpr, N: kl.constexpr):
    # Triton's test_reduce: a scalar pointer indexed [None, None, :] gets shape (1, 1), matching
    # a keep_dims reduction over all axes; a full slice past the last dimension changes nothing.
    x = kl.load(X + kl.arange(0, M)[:, None] * N + kl.arange(0, N)[None, :])
    z = kl.max(x, axis=None, keep_dims=True)
    z_ptr = Z[None, None, :]
    kl.static_assert(z_ptr.shape == [1, 1] and z.shape == [1, 1])
    kl.store(z_ptr, z)
    b = kl.xor_sum(kl.cast(x, kl.int1), axis=0)  # xor of bools stays a bool
    kl.store(Zb + kl.arange(0, N), b)


def test_reduce_keep_dims_all_axes_into_indexed_scalar_pointer(backend: str) -> None:
    rng = np.random.default_rng(17)
    x = rng.integers(-3, 3, (4, 32)).astype(np.int32)
    z, zb = np.zeros(1, np.int32), np.zeros(32, np.int8)
    reduce_keepdims_all_kernel[(1,)](x, z, zb, M=4, N=32)
    assert z[0] == x.max()
    assert np.array_equal(zb, np.bitwise_xor.reduce(x != 0, axis=0).astype(np.int8))


@kdsl.kernel
def minmax_promotion_kernel(h_ptr, i_ptr, o_ptr, oi_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    h = kl.load(h_ptr + offs)  # f16
    i8 = kl.load(i_ptr + offs)
    relu = kl.maximum(h, 0.0)  # Triton: to_tensor(0.0) is an f32 tensor, so the result is f32
    kl.static_assert(relu.dtype == kl.float32)
    kl.static_assert(kl.maximum(i8, 5).dtype == kl.int32 and kl.minimum(5, i8).dtype == kl.int32)
    kl.static_assert(kl.fma(h, 2.0, 1.0).dtype == kl.float32)
    kl.static_assert(kl.clamp(h, 0.0, h).dtype == kl.float32 and kl.clamp(h, h, h).dtype == kl.float16)
    b = h.to(kl.bfloat16)
    kl.static_assert(kl.maximum(b, b).dtype == kl.float32)  # bf16 operands are promoted to f32
    kl.store(o_ptr + offs, relu * h)  # f32 * f16 in f32: no f16 rounding of the product
    kl.store(oi_ptr + offs, kl.maximum(i8, 100) + i8)  # i32: 100 + 100 does not wrap


def test_maximum_minimum_fma_turn_numbers_into_tensors(backend: str) -> None:
    # Triton's maximum/minimum/clamp/fma call to_tensor on Python numbers (int -> int32, float ->
    # float32) before promoting, unlike the arithmetic operators' scalar rule; bf16 -> f32.
    h = np.array([0.1, -2.0, 3.3, 1000.1, -0.5, 7.7, 0.0, 65.3], np.float16)
    i8 = np.array([100, -128, 5, 127, 0, -1, 99, 101], np.int8)
    out, oi = np.zeros(8, np.float32), np.zeros(8, np.int32)
    minmax_promotion_kernel[(1,)](h, i8, out, oi, N=8)
    hf = h.astype(np.float32)
    assert np.array_equal(out, np.maximum(hf, 0) * hf)
    assert np.array_equal(oi, np.maximum(i8.astype(np.int32), 100) + i8)


@kdsl.kernel
def sort_rows_kernel(X, Z, N: kl.constexpr, M: kl.constexpr, descending: kl.constexpr):
    off2d = kl.arange(0, M)[None, :] + (kl.arange(0, N) * M)[:, None]
    kl.store(Z + off2d, kl.sort(kl.load(X + off2d), descending=descending))


def test_sort_4096_float32_rows(backend: str) -> None:
    # Triton's test_sort shape (M, N) = (256, 16) with float32. On vulkan the bitonic network keeps
    # ~40 KiB of __local buffers, over lavapipe's 32 KiB: the largest live in the scratch buffer.
    x = np.random.default_rng(3).standard_normal((16, 256)).astype(np.float32)
    z = np.zeros_like(x)
    sort_rows_kernel[(1,)](x, z, 16, 256, True)
    assert np.array_equal(z, -np.sort(-x, axis=1))


@kdsl.kernel
def cumsum_f16_kernel(x_ptr, o_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    h = kl.load(x_ptr + offs)
    c = kl.cumsum(h, 0, reverse=True)
    # Triton's cumsum upcasts integers narrower than 32 bits and bf16 only: f16 stays f16
    kl.static_assert(c.dtype == kl.float16)
    kl.static_assert(kl.cumsum(h.to(kl.bfloat16), 0).dtype == kl.float32)
    kl.static_assert(kl.cumsum(h.to(kl.int8), 0).dtype == kl.int32)
    kl.store(o_ptr + offs, c)


def test_cumsum_of_float16_stays_float16(backend: str) -> None:
    h = np.array([3, 1, -2, 0.5, 7, 2, -1, 4] * 2, np.float16)  # every partial sum is exact in f16
    out = np.zeros(16, np.float16)
    cumsum_f16_kernel[(1,)](h, out, N=16)
    assert np.array_equal(out, np.cumsum(h[::-1].astype(np.float32))[::-1].astype(np.float16))
