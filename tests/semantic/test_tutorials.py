"""Triton's tutorial kernels with ``tl`` -> ``kl`` and ``triton.jit`` -> ``kdsl.kernel``.

Tutorials (triton-lang.org/main/getting-started/tutorials/): 01 vector add,
02 fused softmax, 03 matrix multiplication (grouped ordering, masks for sizes
that are not multiples of the blocks), 04 low-memory dropout, 05 layer norm
(forward and backward). Sizes are small so the interpreter stays fast.
Tolerances: vector add and dropout exact; softmax rtol 1e-5; matmul (fp16
output) rtol 1e-2 of a float64 reference of the fp16 inputs; layer norm
rtol/atol 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

from .test_random import philox_ref, uniform_ref

# --------------------------------------------------------------- 01 vector add


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    output = x + y
    kl.store(output_ptr + offsets, output, mask=mask)


def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def test_01_vector_add(backend: str) -> None:
    rng = np.random.default_rng(0)
    size = 3000
    x = rng.random(size, dtype=np.float32)
    y = rng.random(size, dtype=np.float32)
    np.testing.assert_array_equal(add(x, y), x + y)


# --------------------------------------------------------------- 02 fused softmax


@kdsl.kernel
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: kl.constexpr, num_stages: kl.constexpr):
    row_start = kl.program_id(0)
    row_step = kl.num_programs(0)
    for row_idx in kl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = kl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = kl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - kl.max(row, axis=0)
        numerator = kl.exp(row_minus_max)
        denominator = kl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        kl.store(output_ptrs, softmax_output, mask=mask)


def softmax(x: np.ndarray, num_programs: int) -> np.ndarray:
    n_rows, n_cols = x.shape
    block_size = 1 << (n_cols - 1).bit_length()
    y = np.empty_like(x)
    softmax_kernel[(num_programs, 1, 1)](y, x, x.shape[1], y.shape[1], n_rows, n_cols,
                                          BLOCK_SIZE=block_size, num_stages=2)
    return y


@pytest.mark.parametrize("num_programs", [1, 4, 13])
def test_02_fused_softmax(backend: str, num_programs: int) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((13, 81)) * 5).astype(np.float32)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(softmax(x, num_programs), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------- 03 matrix multiplication


@kdsl.kernel
def matmul_kernel(
        a_ptr, b_ptr, c_ptr,
        M, N, K,
        stride_am, stride_ak,
        stride_bk, stride_bn,
        stride_cm, stride_cn,
        BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr, BLOCK_SIZE_K: kl.constexpr,
        GROUP_SIZE_M: kl.constexpr,
        ACTIVATION: kl.constexpr,
):
    pid = kl.program_id(axis=0)
    num_pid_m = kl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = kl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = kl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_SIZE_K)):
        a = kl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = kl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = kl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(kl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    kl.store(c_ptrs, c, mask=c_mask)


@kdsl.kernel
def leaky_relu(x):
    return kl.where(x >= 0, x, 0.01 * x)


def matmul(a: np.ndarray, b: np.ndarray, activation: str = "") -> np.ndarray:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = np.empty((M, N), dtype=np.float16)
    grid = lambda META: (kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"]),)  # noqa: E731
    matmul_kernel[grid](
        a, b, c,
        M, N, K,
        a.strides[0] // a.itemsize, a.strides[1] // a.itemsize,
        b.strides[0] // b.itemsize, b.strides[1] // b.itemsize,
        c.strides[0] // c.itemsize, c.strides[1] // c.itemsize,
        BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K=16, GROUP_SIZE_M=2,
        ACTIVATION=activation,
    )
    return c


@pytest.mark.parametrize(("m", "n", "k", "activation"), [(64, 64, 32, ""), (70, 50, 45, ""), (33, 96, 20, "leaky_relu")])
def test_03_matmul(backend: str, m: int, n: int, k: int, activation: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if activation == "leaky_relu":
        ref = np.where(ref >= 0, ref, 0.01 * ref)
    got = matmul(a, b, activation)
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=1e-2, atol=1e-2)


# --------------------------------------------------------------- 04 low-memory dropout


@kdsl.kernel
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    random = kl.rand(seed, offsets)
    x_keep = random > p
    output = kl.where(x_keep, x / (1 - p), 0.0)
    kl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x: np.ndarray, p: float, seed: int) -> np.ndarray:
    output = np.empty_like(x)
    n_elements = x.size
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


def test_04_low_memory_dropout(backend: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(2500).astype(np.float32)
    out1 = seeded_dropout(x, p=0.5, seed=123)
    out2 = seeded_dropout(x, p=0.5, seed=123)
    out3 = seeded_dropout(x, p=0.5, seed=512)
    np.testing.assert_array_equal(out1, out2)
    assert (out1 != out3).any()
    keep = uniform_ref(philox_ref(123, np.arange(x.size))[0]) > np.float32(0.5)
    want = np.where(keep, x / (np.float32(1) - np.float32(0.5)), np.float32(0.0))
    np.testing.assert_array_equal(out1, want)
    assert 0.45 < keep.mean() < 0.55


# --------------------------------------------------------------- 05 layer norm


@kdsl.kernel
def _layer_norm_fwd_fused(
    X,  # pointer to the input
    Y,  # pointer to the output
    W,  # pointer to the weights
    B,  # pointer to the biases
    Mean,  # pointer to the mean
    Rstd,  # pointer to the 1/std
    stride,  # how much to increase the pointer when moving by 1 row
    N,  # number of columns in X
    eps,  # epsilon to avoid division by zero
    BLOCK_SIZE: kl.constexpr,
):
    row = kl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = kl.zeros([BLOCK_SIZE], dtype=kl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        a = kl.load(X + cols, mask=cols < N, other=0.).to(kl.float32)
        _mean += a
    mean = kl.sum(_mean, axis=0) / N
    _var = kl.zeros([BLOCK_SIZE], dtype=kl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        x = kl.load(X + cols, mask=cols < N, other=0.).to(kl.float32)
        x = kl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = kl.sum(_var, axis=0) / N
    rstd = 1 / kl.sqrt(var + eps)
    kl.store(Mean + row, mean)
    kl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = kl.load(W + cols, mask=mask)
        b = kl.load(B + cols, mask=mask)
        x = kl.load(X + cols, mask=mask, other=0.).to(kl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        kl.store(Y + cols, y, mask=mask)


@kdsl.kernel
def _layer_norm_bwd_dx_fused(DX,  # pointer to the input gradient
                             DY,  # pointer to the output gradient
                             DW,  # pointer to the partial sum of weights gradient
                             DB,  # pointer to the partial sum of biases gradient
                             X,  # pointer to the input
                             W,  # pointer to the weights
                             Mean,  # pointer to the mean
                             Rstd,  # pointer to the 1/std
                             Lock,  # pointer to the lock
                             stride,  # how much to increase the pointer when moving by 1 row
                             N,  # number of columns in X
                             GROUP_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr):
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = kl.load(X + cols, mask=mask, other=0).to(kl.float32)
    dy = kl.load(DY + cols, mask=mask, other=0).to(kl.float32)
    w = kl.load(W + cols, mask=mask).to(kl.float32)
    mean = kl.load(Mean + row)
    rstd = kl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = kl.where(mask, xhat, 0.)
    wdy = kl.where(mask, wdy, 0.)
    c1 = kl.sum(xhat * wdy, axis=0) / N
    c2 = kl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    kl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while kl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = kl.load(Count)
    if count == 0:
        kl.atomic_xchg(Count, 1)
    else:
        partial_dw += kl.load(DW, mask=mask)
        partial_db += kl.load(DB, mask=mask)
    kl.store(DW, partial_dw, mask=mask)
    kl.store(DB, partial_db, mask=mask)
    kl.atomic_xchg(Lock, 0)


@kdsl.kernel
def _layer_norm_bwd_dwdb(DW,  # pointer to the partial sum of weights gradient
                         DB,  # pointer to the partial sum of biases gradient
                         FINAL_DW,  # pointer to the weights gradient
                         FINAL_DB,  # pointer to the biases gradient
                         M,  # GROUP_SIZE_M
                         N,  # number of columns
                         BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr):
    pid = kl.program_id(0)
    cols = pid * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
    dw = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    db = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + kl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += kl.load(DW + offs, mask=mask, other=0.)
        db += kl.load(DB + offs, mask=mask, other=0.)
    sum_dw = kl.sum(dw, axis=0)
    sum_db = kl.sum(db, axis=0)
    kl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    kl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def _ln_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x64 - mean[:, None]) * rstd[:, None]
    return xhat * w + b, mean, rstd, xhat


def test_05_layer_norm_forward(backend: str) -> None:
    rng = np.random.default_rng(4)
    m, n, eps = 6, 100, 1e-5
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float32)
    w = rng.random(n).astype(np.float32)
    b = rng.random(n).astype(np.float32)
    y = np.empty_like(x)
    mean = np.empty(m, np.float32)
    rstd = np.empty(m, np.float32)
    _layer_norm_fwd_fused[(m,)](x, y, w, b, mean, rstd, x.shape[1], n, eps, BLOCK_SIZE=32)
    y_ref, mean_ref, rstd_ref, _ = _ln_reference(x, w, b, eps)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-4)
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)


def test_05_layer_norm_backward(backend: str) -> None:
    rng = np.random.default_rng(5)
    m, n, eps, group = 12, 40, 1e-5, 4
    block_n = 64
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.random(n).astype(np.float32)
    b = rng.random(n).astype(np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    y = np.empty_like(x)
    mean = np.empty(m, np.float32)
    rstd = np.empty(m, np.float32)
    _layer_norm_fwd_fused[(m,)](x, y, w, b, mean, rstd, n, n, eps, BLOCK_SIZE=64)
    locks = np.zeros(2 * group, np.int32)
    _dw = np.zeros((group, n), np.float32)
    _db = np.zeros((group, n), np.float32)
    dw = np.empty(n, np.float32)
    db = np.empty(n, np.float32)
    dx = np.empty_like(dy)
    _layer_norm_bwd_dx_fused[(m,)](dx, dy, _dw, _db, x, w, mean, rstd, locks, n, n,
                                   GROUP_SIZE_M=group, BLOCK_SIZE_N=block_n)
    _layer_norm_bwd_dwdb[(kdsl.cdiv(n, 32),)](_dw, _db, dw, db, min(group, m), n,
                                               BLOCK_SIZE_M=32, BLOCK_SIZE_N=32)
    _, _, rstd_ref, xhat = _ln_reference(x, w, b, eps)
    dy64 = dy.astype(np.float64)
    wdy = w * dy64
    c1 = (xhat * wdy).sum(axis=1, keepdims=True) / n
    c2 = wdy.sum(axis=1, keepdims=True) / n
    dx_ref = (wdy - (xhat * c1 + c2)) * rstd_ref[:, None]
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, (dy64 * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db, dy64.sum(axis=0), rtol=1e-4, atol=1e-4)
    assert (locks[:group] == 0).all() and (locks[group:] == 1).all()
