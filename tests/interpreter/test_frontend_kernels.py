"""Triton-tutorial kernels written with ``@kdsl.kernel``, run on the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK)
    mask = cols < n_cols
    x = kl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - kl.max(x, axis=0)
    num = kl.exp(x)
    kl.store(out_ptr + row * out_stride + cols, num / kl.sum(num, axis=0), mask=mask)


@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,  # type: ignore[no-untyped-def]
                  BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):  # fmt: skip
    rm = kl.program_id(0) * BM + kl.arange(0, BM)
    rn = kl.program_id(1) * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        a = kl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = kl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(a, b)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    kl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.fixture(autouse=True)
def _interpreter():  # type: ignore[no-untyped-def]
    with kdsl.backend("interpreter"):
        yield


@pytest.mark.parametrize("n", [1, 1000, 4096, 5000])
def test_vector_add(n: int) -> None:
    x = np.random.default_rng(n).random(n, dtype=np.float32)
    y = np.random.default_rng(n + 1).random(n, dtype=np.float32)
    out = np.zeros_like(x)
    add_kernel[(-(-n // 1024),)](x, y, out, n, BLOCK=1024)
    np.testing.assert_array_equal(out, x + y)


def test_softmax_rows() -> None:
    a = np.random.default_rng(0).standard_normal((37, 100)).astype(np.float32)
    out = np.zeros_like(a)
    softmax_kernel[(37,)](out, a, a.strides[0] // 4, out.strides[0] // 4, 100, BLOCK=128)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 64), (50, 70, 90)])
def test_matmul(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    grid = (-(-m // 32), -(-n // 32))
    matmul_kernel[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BM=32, BN=32, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
