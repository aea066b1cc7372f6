"""Kernels whose tiles need more work-group memory than a device offers still run, exactly.

On vulkan (lavapipe: 32 KiB of shared memory) each kernel here keeps 64 KiB or more of
``__local`` buffers -- a sort network, a transposed tile, a row reduction and a scan of a large
tile, a transpose repeated in a loop -- and so runs with the largest buffers in per-work-group
slices of a scratch buffer (``kdsl/lowering/scratch.py``). Every launch has several programs, so
slices that overlapped between concurrently running work-groups would mix rows. The other
backends run the same kernels (their limits are larger); every result is compared exactly with
numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def sort_rows_kernel(X, Z, N: kl.constexpr):
    offs = kl.program_id(0) * N + kl.arange(0, N)
    kl.store(Z + offs, kl.sort(kl.load(X + offs)))


def test_sort_4096_per_program(backend: str) -> None:
    x = np.random.default_rng(7).standard_normal((3, 4096)).astype(np.float32)
    z = np.zeros_like(x)
    sort_rows_kernel[(3,)](x, z, 4096)
    assert np.array_equal(z, np.sort(x, axis=1))


@kdsl.kernel
def trans_blocks_kernel(X, Z, M: kl.constexpr, N: kl.constexpr):
    """Program (i, j) transposes the (M, N) block i*gy + j of X into Z's (N, M) block."""
    block = kl.program_id(0) * kl.num_programs(1) + kl.program_id(1)
    src = block * M * N + kl.arange(0, M)[:, None] * N + kl.arange(0, N)[None, :]
    dst = block * M * N + kl.arange(0, N)[:, None] * M + kl.arange(0, M)[None, :]
    kl.store(Z + dst, kl.trans(kl.load(X + src)))


@pytest.mark.parametrize(
    "dtype, m, n",
    [(np.float32, 128, 128), (np.float16, 256, 128), (np.int8, 256, 256), (np.bool_, 128, 256)],
    ids=["f32", "f16", "i8", "i1"],
)
def test_transpose_of_a_large_tile(backend: str, dtype: type, m: int, n: int) -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(-100, 100, (2, 3, m, n)).astype(dtype) if dtype is not np.bool_ else rng.random((2, 3, m, n)) < 0.5
    z = np.zeros((2, 3, n, m), dtype)
    trans_blocks_kernel[(2, 3)](x, z, m, n)
    assert np.array_equal(z, np.swapaxes(x, 2, 3))


@kdsl.kernel
def row_stats_kernel(X, S, C, M: kl.constexpr, N: kl.constexpr):
    base = kl.program_id(0) * M
    offs = (base + kl.arange(0, M))[:, None] * N + kl.arange(0, N)[None, :]
    x = kl.load(X + offs)
    kl.store(S + base + kl.arange(0, M), kl.sum(x, 1))
    kl.store(C + offs, kl.cumsum(x, 1))


def test_row_sum_and_scan_of_a_large_tile(backend: str) -> None:
    # small integers in f32: every partial sum is exact, so the order of additions cannot matter
    x = np.random.default_rng(5).integers(-50, 50, (4 * 64, 256)).astype(np.float32)
    s = np.zeros(4 * 64, np.float32)
    c = np.zeros_like(x)
    row_stats_kernel[(4,)](x, s, c, 64, 256)
    assert np.array_equal(s, x.sum(axis=1))
    assert np.array_equal(c, np.cumsum(x, axis=1))


@kdsl.kernel
def trans_loop_kernel(X, Z, iters, N: kl.constexpr):
    """Each iteration exchanges the whole tile through work-group memory (barriers in a loop)."""
    offs = kl.program_id(0) * N * N + kl.arange(0, N)[:, None] * N + kl.arange(0, N)[None, :]
    x = kl.load(X + offs)
    acc = kl.zeros((N, N), kl.int32)
    for i in range(iters):
        x = kl.trans(x) + i
        acc += x * (i + 1)
    kl.store(Z + offs, acc)


def test_transpose_in_a_loop_reuses_its_buffer(backend: str) -> None:
    n, iters = 128, 3
    x = np.random.default_rng(2).integers(-1000, 1000, (3, n, n)).astype(np.int32)
    z = np.zeros_like(x)
    trans_loop_kernel[(3,)](x, z, iters, n)
    ref_x, acc = x.copy(), np.zeros_like(x)
    for i in range(iters):
        ref_x = np.swapaxes(ref_x, 1, 2) + i
        acc += ref_x * (i + 1)
    assert np.array_equal(z, acc)
