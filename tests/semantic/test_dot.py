"""``kl.dot``: 2-D and batched 3-D products, f16 inputs with an f32 accumulator,
int8 inputs with an int32 accumulator, and the ``acc`` argument.

Triton facts (triton-lang.org/main/python-api/generated/triton.language.dot.html):
``dot(a, b, acc=None, input_precision=None, ..., out_dtype=float32)`` returns
``a @ b (+ acc)`` for 2-D or batched 3-D tiles (all dims >= 16 on GPUs, so the
tests use 16); int8 inputs accumulate in int32; ``input_precision="ieee"``
requests full float32 precision (not tf32).
Tolerances: int8 exact; float32 / float16 inputs rtol 1e-5 relative to a
float64 reference of the same (rounded) inputs, atol 1e-4 (summation order is
unspecified).
"""

from __future__ import annotations

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def dot2d_kernel(a_ptr, b_ptr, c_ptr, acc_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr,
                 USE_ACC: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    rk = kl.arange(0, K)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if USE_ACC:
        acc = kl.load(acc_ptr + rm[:, None] * N + rn[None, :])
        c = kl.dot(a, b, acc)
    else:
        c = kl.dot(a, b, input_precision="ieee") if a.dtype == kl.float32 else kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _run(a: np.ndarray, b: np.ndarray, out_dtype: type, acc: np.ndarray | None = None) -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n), out_dtype)
    acc_arr = np.zeros((m, n), out_dtype) if acc is None else acc
    dot2d_kernel[(1,)](a, b, c, acc_arr, M=m, N=n, K=k, USE_ACC=acc is not None)
    return c


def test_dot_f32(backend: str) -> None:
    rng = np.random.default_rng(21)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    np.testing.assert_allclose(_run(a, b, np.float32), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)


def test_dot_f16_inputs_f32_accumulator(backend: str) -> None:
    rng = np.random.default_rng(22)
    a = rng.standard_normal((16, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    got = _run(a, b, np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_dot_int8_int32_accumulator_exact(backend: str) -> None:
    rng = np.random.default_rng(23)
    a = rng.integers(-128, 128, (16, 64)).astype(np.int8)
    b = rng.integers(-128, 128, (64, 16)).astype(np.int8)
    a[0, :] = -128
    b[:, 0] = -128  # 64 * 16384 overflows int16 but not int32
    got = _run(a, b, np.int32)
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))


def test_dot_with_acc_argument(backend: str) -> None:
    rng = np.random.default_rng(24)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 32)).astype(np.float32)
    acc = rng.standard_normal((16, 32)).astype(np.float32)
    got = _run(a, b, np.float32, acc=acc.copy())
    np.testing.assert_allclose(got, acc + a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    ai = np.ones((16, 16), np.int8)
    acci = np.full((16, 16), 2**31 - 10, np.int32)
    got = _run(ai, ai.copy(), np.int32, acc=acci.copy())
    np.testing.assert_array_equal(got, np.full((16, 16), -(2**31) + 6, np.int32))  # acc + 16 wraps in int32


@kdsl.kernel
def dot3d_kernel(a_ptr, b_ptr, c_ptr, B: kl.constexpr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    rb = kl.arange(0, B)[:, None, None]
    rm = kl.arange(0, M)[None, :, None]
    rn = kl.arange(0, N)[None, None, :]
    rk_col = kl.arange(0, K)[None, None, :]
    rk_row = kl.arange(0, K)[None, :, None]
    a = kl.load(a_ptr + rb * (M * K) + rm * K + rk_col)
    b = kl.load(b_ptr + rb * (K * N) + rk_row * N + rn)
    c = kl.dot(a, b)
    kl.store(c_ptr + rb * (M * N) + rm * N + rn, c)


def test_dot_batched_3d(backend: str) -> None:
    rng = np.random.default_rng(25)
    a = rng.standard_normal((2, 16, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 32)).astype(np.float32)
    c = np.zeros((2, 16, 32), np.float32)
    dot3d_kernel[(1,)](a, b, c, B=2, M=16, N=32, K=16)
    np.testing.assert_allclose(c, np.matmul(a.astype(np.float64), b), rtol=1e-5, atol=1e-4)
