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


def softmax_as_tutorial(x: np.ndarray) -> np.ndarray:
    """Tutorial 02's host code as Triton writes it: the persistent grid comes from the driver's
    device properties and the warmed kernel's ``n_regs`` / ``metadata.shared``."""
    from kdsl.runtime import driver

    properties = driver.active.utils.get_device_properties(driver.active.get_current_device())
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    n_rows, n_cols = x.shape
    BLOCK_SIZE = kdsl.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if SIZE_SMEM > 200000 else 2
    y = np.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, x.shape[1], y.shape[1], n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                   num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = NUM_SM * occupancy
    num_programs = min(num_programs, n_rows)
    assert 1 <= num_programs < n_rows  # a persistent grid: each program loops over rows
    kernel[(num_programs, 1, 1)](y, x, x.shape[1], y.shape[1], n_rows, n_cols, BLOCK_SIZE, num_stages)
    return y


def test_02_fused_softmax_host_code(backend: str) -> None:
    """Enough rows per program that vulkan's one-invocation mapping would pass lavapipe's loop cap:
    the launch takes the work-group mapping instead (VulkanKernel.spread_when)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 781)).astype(np.float32)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(softmax_as_tutorial(x), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


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


# --------------------------------------------------------------- 06 fused attention, forward and backward
# The structure of Triton's 06 (Flash Attention v2): a forward pass whose inner loop lives in a helper
# taking tensors through ``kl.constexpr``-annotated parameters (Triton binds constexpr-ness of a
# nested call by the values passed, not by the annotations), block pointers whose order depends on
# ``V.dtype.element_ty == kl.float8e5``, exp2 with a pre-scaled qk; a backward pass of a row-sum
# preprocess and one kernel computing dK/dV (masked diagonal steps, then the rest) and dQ.


@kdsl.kernel
def _fa_inner(acc, l_i, m_i, q, k_bp, v_bp, start_m, qk_scale, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr,
              CAUSAL: kl.constexpr, offs_m: kl.constexpr, offs_n: kl.constexpr, N_CTX: kl.constexpr,
              fp8_v: kl.constexpr):  # fmt: skip
    diag = start_m * BLOCK_M if CAUSAL else N_CTX
    for start_n in range(0, N_CTX, BLOCK_N):
        start_n = kl.multiple_of(start_n, BLOCK_N)
        qk = kl.dot(q, kl.load(k_bp))
        if start_n >= diag:  # blocks on or past the diagonal get the causal mask
            keep = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + kl.where(keep, 0, -1.0e6)
            m_ij = kl.maximum(m_i, kl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = kl.maximum(m_i, kl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = kl.math.exp2(qk)
        alpha = kl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + kl.sum(p, 1)
        p = p.to(kl.float8e5) if fp8_v else p.to(kl.float16)
        acc = kl.dot(p, kl.load(v_bp), acc * alpha[:, None])
        m_i = m_ij
        k_bp = kl.advance(k_bp, (0, BLOCK_N))
        v_bp = kl.advance(v_bp, (BLOCK_N, 0))
    return acc, l_i, m_i


@kdsl.kernel
def _fa_fwd(Q, K, V, sm_scale, M, Out, s_z, s_h, s_m, H, N_CTX, HEAD_DIM: kl.constexpr, BLOCK_M: kl.constexpr,
            BLOCK_N: kl.constexpr, CAUSAL: kl.constexpr):  # fmt: skip
    kl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = kl.program_id(0)
    off_hz = kl.program_id(1)
    base = (off_hz // H).to(kl.int64) * s_z + (off_hz % H).to(kl.int64) * s_h
    q_bp = kl.make_block_ptr(Q + base, (N_CTX, HEAD_DIM), (s_m, 1), (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM), (1, 0))
    v_order: kl.constexpr = (0, 1) if V.dtype.element_ty == kl.float8e5 else (1, 0)
    v_bp = kl.make_block_ptr(V + base, (N_CTX, HEAD_DIM), (s_m, 1), (0, 0), (BLOCK_N, HEAD_DIM), v_order)
    k_bp = kl.make_block_ptr(K + base, (HEAD_DIM, N_CTX), (1, s_m), (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))
    o_bp = kl.make_block_ptr(Out + base, (N_CTX, HEAD_DIM), (s_m, 1), (start_m * BLOCK_M, 0), (BLOCK_M, HEAD_DIM),
                             (1, 0))  # fmt: skip
    offs_m = start_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    m_i = kl.zeros([BLOCK_M], dtype=kl.float32) - float("inf")
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32) + 1.0
    acc = kl.zeros([BLOCK_M, HEAD_DIM], dtype=kl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504
    acc, l_i, m_i = _fa_inner(acc, l_i, m_i, kl.load(q_bp), k_bp, v_bp, start_m, qk_scale, BLOCK_M, BLOCK_N, CAUSAL,
                              offs_m, offs_n, N_CTX, V.dtype.element_ty == kl.float8e5)  # fmt: skip
    m_i += kl.math.log2(l_i)
    kl.store(M + off_hz * N_CTX + offs_m, m_i)
    kl.store(o_bp, (acc / l_i[:, None]).to(Out.type.element_ty))


@kdsl.kernel
def _fa_bwd_pre(Out, DO, Delta, N_CTX, BLOCK_M: kl.constexpr, HEAD_DIM: kl.constexpr):
    rows = kl.program_id(0) * BLOCK_M + kl.arange(0, BLOCK_M)
    off_hz = kl.program_id(1)
    at = off_hz * HEAD_DIM * N_CTX + rows[:, None] * HEAD_DIM + kl.arange(0, HEAD_DIM)[None, :]
    o = kl.load(Out + at)
    do = kl.load(DO + at).to(kl.float32)
    kl.store(Delta + off_hz * N_CTX + rows, kl.sum(o * do, axis=1))


@kdsl.kernel
def _fa_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, BLOCK_M1: kl.constexpr, BLOCK_N1: kl.constexpr,
             HEAD_DIM: kl.constexpr, start_n, start_m, num_steps, MASK: kl.constexpr):  # fmt: skip
    offs_n = start_n + kl.arange(0, BLOCK_N1)
    offs_k = kl.arange(0, HEAD_DIM)
    qT_ptrs = Q + (start_m + kl.arange(0, BLOCK_M1))[None, :] * stride_tok + offs_k[:, None]
    do_ptrs = DO + (start_m + kl.arange(0, BLOCK_M1))[:, None] * stride_tok + offs_k[None, :]
    kl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    curr_m = start_m
    for _ in range(num_steps):
        qT = kl.load(qT_ptrs)
        offs_m = curr_m + kl.arange(0, BLOCK_M1)
        pT = kl.math.exp2(kl.dot(k, qT) - kl.load(M + offs_m)[None, :])
        if MASK:
            pT = kl.where(offs_m[None, :] >= offs_n[:, None], pT, 0.0)
        do = kl.load(do_ptrs)
        dv += kl.dot(pT.to(kl.float16), do)
        dpT = kl.dot(v, kl.trans(do)).to(kl.float32)
        dsT = (pT * (dpT - kl.load(D + offs_m)[None, :])).to(kl.float16)
        dk += kl.dot(dsT, kl.trans(qT))
        curr_m += BLOCK_M1
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    return dk, dv


@kdsl.kernel
def _fa_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2: kl.constexpr, BLOCK_N2: kl.constexpr,
           HEAD_DIM: kl.constexpr, start_m, start_n, num_steps, MASK: kl.constexpr):  # fmt: skip
    offs_m = start_m + kl.arange(0, BLOCK_M2)
    offs_k = kl.arange(0, HEAD_DIM)
    kT_ptrs = K + (start_n + kl.arange(0, BLOCK_N2))[None, :] * stride_tok + offs_k[:, None]
    vT_ptrs = V + (start_n + kl.arange(0, BLOCK_N2))[None, :] * stride_tok + offs_k[:, None]
    Di = kl.load(D + offs_m)
    curr_n = start_n
    for _ in range(num_steps):
        kT = kl.load(kT_ptrs)
        p = kl.math.exp2(kl.dot(q, kT) - m)
        if MASK:
            p = kl.where(offs_m[:, None] >= (curr_n + kl.arange(0, BLOCK_N2))[None, :], p, 0.0)
        dp = kl.dot(do, kl.load(vT_ptrs)).to(kl.float32)
        ds = (p * (dp - Di[:, None])).to(kl.float16)
        dq += kl.dot(ds, kl.trans(kT))
        curr_n += BLOCK_N2
        kT_ptrs += BLOCK_N2 * stride_tok
        vT_ptrs += BLOCK_N2 * stride_tok
    return dq


@kdsl.kernel
def _fa_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, H, N_CTX,
            BLOCK_M1: kl.constexpr, BLOCK_N1: kl.constexpr, BLOCK_M2: kl.constexpr, BLOCK_N2: kl.constexpr,
            SLICE: kl.constexpr, HEAD_DIM: kl.constexpr):  # fmt: skip
    LN2: kl.constexpr = 0.6931471824645996
    bhid = kl.program_id(2)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(kl.int64)
    row0 = (bhid * N_CTX).to(kl.int64)
    pid = kl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += row0
    D += row0
    offs_k = kl.arange(0, HEAD_DIM)
    start_n = pid * BLOCK_N1
    offs_n = start_n + kl.arange(0, BLOCK_N1)
    at_n = offs_n[:, None] * stride_tok + offs_k[None, :]
    k = kl.load(K + at_n)
    v = kl.load(V + at_n)
    dk = kl.zeros([BLOCK_N1, HEAD_DIM], dtype=kl.float32)
    dv = kl.zeros([BLOCK_N1, HEAD_DIM], dtype=kl.float32)
    MASK_M1: kl.constexpr = BLOCK_M1 // SLICE
    steps = BLOCK_N1 // MASK_M1
    dk, dv = _fa_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, MASK_M1, BLOCK_N1, HEAD_DIM, start_n, start_n, steps,
                      MASK=True)  # fmt: skip
    start_m = start_n + steps * MASK_M1
    dk, dv = _fa_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m,
                      (N_CTX - start_m) // BLOCK_M1, MASK=False)  # fmt: skip
    kl.store(DV + at_n, dv)
    dk *= sm_scale
    kl.store(DK + at_n, dk)
    start_m = pid * BLOCK_M2
    offs_m = start_m + kl.arange(0, BLOCK_M2)
    at_m = offs_m[:, None] * stride_tok + offs_k[None, :]
    q = kl.load(Q + at_m)
    do = kl.load(DO + at_m)
    m = kl.load(M + offs_m)[:, None]
    dq = kl.zeros([BLOCK_M2, HEAD_DIM], dtype=kl.float32)
    MASK_N2: kl.constexpr = BLOCK_N2 // SLICE
    steps = BLOCK_M2 // MASK_N2
    end_n = start_m + BLOCK_M2 - steps * MASK_N2
    dq = _fa_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, MASK_N2, HEAD_DIM, start_m, end_n, steps, MASK=True)
    steps = end_n // BLOCK_N2
    dq = _fa_dq(dq, q, K, V, do, m, D, stride_tok, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m, end_n - steps * BLOCK_N2,
                steps, MASK=False)  # fmt: skip
    kl.store(DQ + at_m, dq * LN2)


def test_06_fused_attention_forward_and_backward(backend: str) -> None:
    z, h, n, d = 1, 2, 128, 32
    rng = np.random.default_rng(20)
    q, k, v = ((rng.standard_normal((z, h, n, d)) * 0.5).astype(np.float16) for _ in range(3))
    do = rng.standard_normal((z, h, n, d)).astype(np.float16)
    scale = 0.5
    # reference (float64 from the fp16 inputs), causal
    q64, k64, v64, do64 = (a.astype(np.float64) for a in (q, k, v, do))
    s = q64 @ k64.transpose(0, 1, 3, 2) * scale
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o_ref = p @ v64
    dv_ref = p.transpose(0, 1, 3, 2) @ do64
    dp = do64 @ v64.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq_ref = ds @ k64 * scale
    dk_ref = ds.transpose(0, 1, 3, 2) @ q64 * scale

    o = np.empty_like(q)
    lse = np.empty((z, h, n), np.float32)
    block = 32
    _fa_fwd[(n // block, z * h, 1)](q, k, v, scale, lse, o, n * h * d, n * d, d, h, n, HEAD_DIM=d, BLOCK_M=block,
                                    BLOCK_N=block, CAUSAL=True)  # fmt: skip
    np.testing.assert_allclose(o.astype(np.float64), o_ref, atol=1e-2)
    delta = np.empty_like(lse)
    _fa_bwd_pre[(n // block, z * h)](o, do, delta, n, BLOCK_M=block, HEAD_DIM=d)
    dq, dk, dv = np.empty_like(q), np.empty_like(k), np.empty_like(v)
    k_scaled = (k.astype(np.float32) * (scale * 1.4426950408889634)).astype(np.float16)
    _fa_bwd[(n // 32, 1, z * h)](q, k_scaled, v, scale, do, dq, dk, dv, lse, delta, n * h * d, n * d, d, h, n,
                                 BLOCK_M1=16, BLOCK_N1=32, BLOCK_M2=32, BLOCK_N2=16, SLICE=2, HEAD_DIM=d)  # fmt: skip
    for got, want in ((dv, dv_ref), (dk, dk_ref), (dq, dq_ref)):
        np.testing.assert_allclose(got.astype(np.float64), want, atol=2e-2)


# --------------------------------------------------------------- 09 persistent matmul
# A fixed number of programs walks the output tiles (``kl.range(..., flatten=True)``), a helper
# returns the grouped tile coordinates as a tuple, the epilogue picks fp8 or fp16 output from
# ``c_ptr.dtype.element_ty``; ``@kdsl.jit(launch_metadata=...)`` as Triton's profiler hook.


@kdsl.jit
def _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M):
    first_pid_m = (tile_id // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    return first_pid_m + (tile_id % group_size_m), (tile_id % num_pid_in_group) // group_size_m


@kdsl.jit(launch_metadata=lambda grid, kernel, args: {"name": "persistent"})
def _persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BLOCK_M: kl.constexpr,
                       BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr, GROUP_SIZE_M: kl.constexpr,
                       NUM_PROGRAMS: kl.constexpr):  # fmt: skip
    num_pid_m = kl.cdiv(M, BLOCK_M)
    num_pid_n = kl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    rk = kl.arange(0, BLOCK_K)
    for tile_id in kl.range(kl.program_id(0), num_pid_m * num_pid_n, NUM_PROGRAMS, flatten=True):
        pid_m, pid_n = _tile_coords(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = kl.where(pid_m * BLOCK_M + kl.arange(0, BLOCK_M) < M, pid_m * BLOCK_M + kl.arange(0, BLOCK_M), 0)
        offs_bn = kl.where(pid_n * BLOCK_N + kl.arange(0, BLOCK_N) < N, pid_n * BLOCK_N + kl.arange(0, BLOCK_N), 0)
        offs_am = kl.max_contiguous(kl.multiple_of(offs_am, BLOCK_M), BLOCK_M)
        offs_bn = kl.max_contiguous(kl.multiple_of(offs_bn, BLOCK_N), BLOCK_N)
        acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
        for ki in range(kl.cdiv(K, BLOCK_K)):
            offs_k = ki * BLOCK_K + rk
            a = kl.load(a_ptr + offs_am[:, None] * stride_am + offs_k[None, :], mask=rk[None, :] < K - ki * BLOCK_K,
                        other=0.0)  # fmt: skip
            b = kl.load(b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :], mask=rk[:, None] < K - ki * BLOCK_K,
                        other=0.0)  # fmt: skip
            acc = kl.dot(a, b, acc)
        offs_cm = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
        c = acc.to(kl.float8e4nv) if c_ptr.dtype.element_ty == kl.float8e4nv else acc.to(kl.float16)
        kl.store(c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :], c,
                 mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))  # fmt: skip


@pytest.mark.parametrize("out", ["float16", "float8e4nv"])
def test_09_persistent_matmul(backend: str, out: str) -> None:
    from kdsl.ir import floatcodec
    from kdsl.ir.types import FLOAT_FORMATS

    m, n, k, programs = 70, 50, 45, 3
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16 if out == "float16" else np.uint8)
    c_arg = c if out == "float16" else kdsl.reinterpret(c, kl.float8e4nv)
    _persistent_matmul[(programs,)](a, b, c_arg, m, n, k, k, n, n, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_SIZE_M=2,
                                    NUM_PROGRAMS=programs)  # fmt: skip
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if out == "float16":
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=1e-2, atol=1e-2)
    else:
        fmt = FLOAT_FORMATS["fp8e4nv"]
        want = np.array([floatcodec.encode(float(v), fmt) for v in ref.astype(np.float32).ravel()])
        assert np.abs(c.ravel().astype(np.int64) - want).max() <= 1  # one fp8 step (f32 accumulation order)
