"""Block pointers (``kl.make_block_ptr``/``kl.advance``) and tensor descriptors
(``kl.make_tensor_descriptor``) against numpy, on every backend.

Triton's documented semantics (python-api ``make_block_ptr``, ``advance``,
``load``, ``store``, ``make_tensor_descriptor``): element ``i`` of the block
lives at ``base + sum_d (offsets[d] + i_d) * strides[d]``; with
``boundary_check`` the listed dimensions' out-of-range elements are not
accessed (loads give the padding: zero, or NaN for ``padding_option="nan"``);
descriptors check every dimension. Several cases share one kernel launch (each
program reads its offsets from memory) to keep the number of compiled
specialisations small.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.tools.tensor_descriptor import TensorDescriptor

from ._util import line_of, source_line

FILE = Path(__file__).name


def _ref_tile(mem: np.ndarray, shape: tuple[int, ...], origin: tuple[int, ...], block: tuple[int, ...],
              checked: tuple[int, ...], pad: float) -> np.ndarray:
    """The block at ``origin`` of the logical ``shape`` view of ``mem`` (row-major strides of ``mem``)."""
    out = np.full(block, pad, dtype=mem.dtype)
    for idx in np.ndindex(*block):
        pos = tuple(o + i for o, i in zip(origin, idx))
        if any(not 0 <= pos[d] < shape[d] for d in checked):
            continue
        out[idx] = mem[pos]
    return out


# --- 2-D loads: boundary_check per dimension, ragged edges, negative offsets, padding ----------
@kdsl.kernel
def load_cases_kernel(x_ptr, offs_ptr, out_ptr, M, N, stride_m, stride_n, BM: kl.constexpr, BN: kl.constexpr,
                      CHECK: kl.constexpr, PAD: kl.constexpr):
    pid = kl.program_id(0)
    om = kl.load(offs_ptr + 2 * pid)
    on = kl.load(offs_ptr + 2 * pid + 1)
    bp = kl.make_block_ptr(x_ptr, shape=(M, N), strides=(stride_m, stride_n), offsets=(om, on),
                           block_shape=(BM, BN), order=(1, 0))
    tile = kl.load(bp, boundary_check=CHECK, padding_option=PAD)
    rows = kl.arange(0, BM)[:, None]
    cols = kl.arange(0, BN)[None, :]
    kl.store(out_ptr + pid * BM * BN + rows * BN + cols, tile)


MEM = (24, 40)  # memory behind the logical (13, 21) view: unchecked dims may read past the view
SHAPE = (13, 21)
BLOCK = (8, 16)


def _cases(checked: tuple[int, ...]) -> list[tuple[int, int]]:
    """Offsets: checked dims go negative and past the edge, unchecked ones stay inside MEM."""
    rows = [0, 8, 5, -3, 11] if 0 in checked else [0, 8, 5, 16]
    cols = [0, 16, 13, -5, 20] if 1 in checked else [0, 16, 13, 24]
    return [(r, c) for r in rows for c in cols]


def _run_load(checked: tuple[int, ...], pad: str, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    mem = (np.arange(MEM[0] * MEM[1]) % 251 - 100).astype(dtype).reshape(MEM)
    cases = _cases(checked)
    offs = np.array(cases, dtype=np.int32).ravel()
    out = np.zeros((len(cases), *BLOCK), dtype)
    load_cases_kernel[(len(cases),)](mem, offs, out, SHAPE[0], SHAPE[1], MEM[1], 1, BM=BLOCK[0], BN=BLOCK[1],
                                     CHECK=checked, PAD=pad)
    fill = np.nan if pad == "nan" else 0
    ref = np.stack([_ref_tile(mem, SHAPE, c, BLOCK, checked, fill) for c in cases])
    return out, ref


@pytest.mark.parametrize("checked", [(), (0,), (1,), (0, 1)], ids=["none", "dim0", "dim1", "both"])
def test_load_2d_boundary_check(backend: str, checked: tuple[int, ...]) -> None:
    out, ref = _run_load(checked, "", np.float32)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_load_padding_option(backend: str, pad: str) -> None:
    out, ref = _run_load((0, 1), pad, np.float32)
    np.testing.assert_array_equal(out, ref)  # NaNs compare equal position by position
    assert np.isnan(out).any() == (pad == "nan")


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_load_other_pointee_types(backend: str, dtype: type) -> None:
    out, ref = _run_load((0, 1), "zero", dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref)


# --- 2-D stores ---------------------------------------------------------------------------------
@kdsl.kernel
def store_cases_kernel(y_ptr, offs_ptr, M, N, stride_m, BM: kl.constexpr, BN: kl.constexpr, CHECK: kl.constexpr):
    pid = kl.program_id(0)
    om = kl.load(offs_ptr + 2 * pid)
    on = kl.load(offs_ptr + 2 * pid + 1)
    bp = kl.make_block_ptr(y_ptr + pid * stride_m * 24, (M, N), (stride_m, 1), (om, on), (BM, BN), (1, 0))
    value = (kl.arange(0, BM)[:, None] * 100 + kl.arange(0, BN)[None, :]).to(kl.float32)
    kl.store(bp, value + 0.5, boundary_check=CHECK)


@pytest.mark.parametrize("checked", [(0, 1), (1,)], ids=["both", "dim1"])
def test_store_2d_boundary_check(backend: str, checked: tuple[int, ...]) -> None:
    cases = _cases(checked)
    offs = np.array(cases, dtype=np.int32).ravel()
    y = np.full((len(cases), *MEM), -1.0, np.float32)
    store_cases_kernel[(len(cases),)](y, offs, SHAPE[0], SHAPE[1], MEM[1], BM=BLOCK[0], BN=BLOCK[1], CHECK=checked)
    value = (np.arange(BLOCK[0])[:, None] * 100 + np.arange(BLOCK[1])[None, :]).astype(np.float32) + 0.5
    ref = np.full_like(y, -1.0)
    for k, (r0, c0) in enumerate(cases):
        for i, j in np.ndindex(*BLOCK):
            r, c = r0 + i, c0 + j
            if (0 in checked and not 0 <= r < SHAPE[0]) or (1 in checked and not 0 <= c < SHAPE[1]):
                continue
            ref[k, r, c] = value[i, j]
    np.testing.assert_array_equal(y, ref)


# --- non-contiguous strides: a transposed view (order=(0, 1)) -------------------------------------
@kdsl.kernel
def transpose_kernel(x_ptr, y_ptr, M, N, BM: kl.constexpr, BN: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    # x is (N, M) row-major; read it as its (M, N) transpose: strides (1, M).
    src = kl.make_block_ptr(x_ptr, (M, N), (1, M), (pm * BM, pn * BN), (BM, BN), order=(0, 1))
    dst = kl.make_block_ptr(y_ptr, (M, N), (N, 1), (pm * BM, pn * BN), (BM, BN), order=(1, 0))
    kl.store(dst, kl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))


def test_transposed_view(backend: str) -> None:
    M, N = 19, 11
    x = np.arange(N * M, dtype=np.float32).reshape(N, M)
    y = np.zeros((M, N), np.float32)
    transpose_kernel[(3, 2)](x, y, M, N, BM=8, BN=8)
    np.testing.assert_array_equal(y, x.T)


# --- 1-D and 3-D ------------------------------------------------------------------------------------
@kdsl.kernel
def copy_1d_kernel(x_ptr, y_ptr, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    src = kl.make_block_ptr(x_ptr, (n,), (1,), (pid * BLOCK,), (BLOCK,), (0,))
    dst = kl.make_block_ptr(y_ptr, (n,), (1,), (pid * BLOCK,), (BLOCK,), (0,))
    kl.store(dst, kl.load(src, boundary_check=(0,)) * 2, boundary_check=(0,))


def test_1d(backend: str) -> None:
    x = np.arange(37, dtype=np.int32) - 5
    y = np.full(40, 7, np.int32)
    copy_1d_kernel[(3,)](x, y, 37, BLOCK=16)
    np.testing.assert_array_equal(y[:37], x * 2)
    np.testing.assert_array_equal(y[37:], 7)


@kdsl.kernel
def copy_3d_kernel(x_ptr, y_ptr, A, B, C, BA: kl.constexpr, BB: kl.constexpr, BC: kl.constexpr):
    pa = kl.program_id(0)
    pb = kl.program_id(1)
    pc = kl.program_id(2)
    offs = (pa * BA, pb * BB, pc * BC)
    src = kl.make_block_ptr(x_ptr, (A, B, C), (B * C, C, 1), offs, (BA, BB, BC), (2, 1, 0))
    dst = kl.make_block_ptr(y_ptr, (A, B, C), (B * C, C, 1), offs, (BA, BB, BC), (2, 1, 0))
    kl.store(dst, kl.load(src, boundary_check=(0, 1, 2)) + 1.0, boundary_check=(0, 1, 2))


def test_3d(backend: str) -> None:
    A, B, C = 3, 5, 9
    x = np.arange(A * B * C, dtype=np.float32).reshape(A, B, C)
    y = np.zeros_like(x)
    copy_3d_kernel[(2, 2, 2)](x, y, A, B, C, BA=2, BB=4, BC=8)
    np.testing.assert_array_equal(y, x + 1)


# --- advance in a loop: Triton's block-pointer matmul, ragged M/N/K ----------------------------------
@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pid_m = kl.program_id(0)
    pid_n = kl.program_id(1)
    a_block_ptr = kl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, 1), offsets=(pid_m * BM, 0),
                                    block_shape=(BM, BK), order=(1, 0))
    b_block_ptr = kl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, 1), offsets=(0, pid_n * BN),
                                    block_shape=(BK, BN), order=(1, 0))
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for _ in range(0, K, BK):
        a = kl.load(a_block_ptr, boundary_check=(0, 1))
        b = kl.load(b_block_ptr, boundary_check=(0, 1))
        acc += kl.dot(a, b)
        a_block_ptr = kl.advance(a_block_ptr, (0, BK))
        b_block_ptr = b_block_ptr.advance((BK, 0))
    c_block_ptr = kl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, 1), offsets=(pid_m * BM, pid_n * BN),
                                    block_shape=(BM, BN), order=(1, 0))
    kl.store(c_block_ptr, acc, boundary_check=(0, 1))


def test_matmul_advance_in_for_loop(backend: str) -> None:
    M, N, K = 19, 21, 37
    rng = np.random.default_rng(0)
    a = rng.integers(-4, 5, (M, K)).astype(np.float32)
    b = rng.integers(-4, 5, (K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[(2, 2)](a, b, c, M, N, K, K, N, N, BM=16, BN=16, BK=16)
    np.testing.assert_array_equal(c, a @ b)


# --- while loops, if/else merges, nested kernel functions, tuples -----------------------------------
@kdsl.kernel
def pick(p, which):
    if which > 0:  # noqa: SIM108 -- a runtime if merging two block pointers is the point
        q = kl.advance(p, (0, 8))
    else:
        q = kl.advance(p, (4, 0))
    return q


@kdsl.kernel
def load_pair(ptrs):
    first, second = ptrs
    return kl.load(first, boundary_check=(0, 1)) + kl.load(second, boundary_check=(0, 1))


@kdsl.kernel
def control_flow_kernel(x_ptr, out_ptr, M, N, which, BM: kl.constexpr, BN: kl.constexpr):
    p = kl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    if which > 0:  # noqa: SIM108 -- a block pointer merged by a runtime if
        p = kl.advance(p, (1, 0))
    else:
        p = kl.advance(p, (0, 2))
    q = pick(p, which)  # passed to and returned from a nested kernel function
    total = load_pair((p, q))  # a tuple of block pointers as an argument
    col = 0
    r = p
    while col < N:  # a loop-carried block pointer in a while loop
        total += kl.load(r, boundary_check=(0, 1))
        r = r.advance((0, BN))
        col += BN
    rows = kl.arange(0, BM)[:, None]
    cols = kl.arange(0, BN)[None, :]
    kl.store(out_ptr + rows * BN + cols, total)


def test_control_flow_and_calls(backend: str) -> None:
    M, N, BM, BN = 10, 13, 8, 8
    x = (np.arange(M * N) % 17).astype(np.float32).reshape(M, N)
    for which in (3, 0):
        out = np.zeros((BM, BN), np.float32)
        control_flow_kernel[(1,)](x, out, M, N, which, BM=BM, BN=BN)
        p = (1, 0) if which > 0 else (0, 2)
        q = (p[0], p[1] + 8) if which > 0 else (p[0] + 4, p[1])

        def tile(o: tuple[int, int]) -> np.ndarray:
            return _ref_tile(x, (M, N), o, (BM, BN), (0, 1), 0)

        ref = tile(p) + tile(q)
        for col in range(0, N, BN):
            ref += tile((p[0], p[1] + col))
        np.testing.assert_array_equal(out, ref)


@kdsl.kernel
def merge_static_shapes_kernel(x_ptr, out_ptr, n, flag, B: kl.constexpr):
    # Compile-time shapes that differ between branches (or are runtime in one) merge as runtime values.
    if flag > 0:
        p = kl.make_block_ptr(x_ptr, (5,), (1,), (0,), (B,), (0,))
    else:
        p = kl.make_block_ptr(x_ptr, (n,), (1,), (0,), (B,), (0,))
    q = kl.make_block_ptr(x_ptr, (7,), (1,), (0,), (B,), (0,)) if flag > 0 else kl.make_block_ptr(
        x_ptr, (3,), (1,), (0,), (B,), (0,))
    offs = kl.arange(0, B)
    kl.store(out_ptr + offs, kl.load(p, boundary_check=(0,)))
    kl.store(out_ptr + B + offs, kl.load(q, boundary_check=(0,)))


def test_if_merges_different_compile_time_shapes(backend: str) -> None:
    x = np.arange(16, dtype=np.float32) + 1
    for flag, (n_p, n_q) in ((2, (5, 7)), (0, (11, 3))):
        out = np.zeros(32, np.float32)
        merge_static_shapes_kernel[(1,)](x, out, 11, flag, B=16)
        np.testing.assert_array_equal(out[:16], np.where(np.arange(16) < n_p, x, 0))
        np.testing.assert_array_equal(out[16:], np.where(np.arange(16) < n_q, x, 0))


# --- tensor descriptors -------------------------------------------------------------------------
@kdsl.kernel
def descriptor_kernel(x_ptr, y_ptr, M, N, BM: kl.constexpr, BN: kl.constexpr):
    src = kl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = kl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = kl.program_id(0) * BM - 4  # shifted so blocks straddle every edge, negative ones included
    on = kl.program_id(1) * BN - 4
    v = src.load([om, on])
    acc = kl.zeros(src.block_shape, src.dtype)
    kl.store_tensor_descriptor(dst, [om, on], v * 2 + acc)
    again = kl.load_tensor_descriptor(dst, [om, on])
    dst.store([om, on], again + 1)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_tensor_descriptor(backend: str, dtype: type) -> None:
    M, N = 13, 19
    x = (np.arange(M * N) % 23 - 11).astype(dtype).reshape(M, N)
    y = np.zeros_like(x)
    descriptor_kernel[(3, 3)](x, y, M, N, BM=8, BN=8)
    np.testing.assert_array_equal(y, x * 2 + 1)


@kdsl.kernel
def descriptor_pad_kernel(x_ptr, out_ptr, M, N, BM: kl.constexpr, BN: kl.constexpr):
    desc = kl.make_tensor_descriptor(x_ptr, (M, N), (N, 1), (BM, BN), padding_option="nan")
    v = desc.load([M - 3, -2])
    kl.store(out_ptr + kl.arange(0, BM)[:, None] * BN + kl.arange(0, BN)[None, :], v)


def test_tensor_descriptor_nan_padding(backend: str) -> None:
    M, N = 6, 5
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    out = np.zeros((4, 8), np.float32)
    descriptor_pad_kernel[(1,)](x, out, M, N, BM=4, BN=8)
    np.testing.assert_array_equal(out, _ref_tile(x, (M, N), (M - 3, -2), (4, 8), (0, 1), np.nan))


# --- host-side descriptors (triton.tools.tensor_descriptor.TensorDescriptor) -------------------------
@kdsl.kernel
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    # Triton's tutorial 06 helper: a host descriptor passes through, a pointer gets one.
    if isinstance(desc_or_ptr, kl.tensor_descriptor):
        return desc_or_ptr
    else:
        return kl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@kdsl.kernel
def host_descriptor_kernel(x_desc, y_ptr, M, N, BM: kl.constexpr, BN: kl.constexpr):
    x_desc = _maybe_make_tensor_desc(x_desc, [M, N], [N, 1], [BM, BN])
    y_desc = _maybe_make_tensor_desc(y_ptr, [M, N], [N, 1], [BM, BN])
    om = kl.program_id(0) * BM
    on = kl.program_id(1) * BN
    y_desc.store([om, on], x_desc.load([om, on]) * 3)


def test_host_tensor_descriptor(backend: str) -> None:
    M, N = 13, 19
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    for _ in range(2):  # the second launch takes the fast path
        y = np.zeros_like(x)
        host_descriptor_kernel[(2, 2)](TensorDescriptor.from_tensor(x, [8, 16]), y, M, N, BM=8, BN=16)
        np.testing.assert_array_equal(y, x * 3)
    # a transposed view: strides (1, 20), no unit last stride
    base = np.arange(12 * 20, dtype=np.float32).reshape(12, 20)
    y = np.zeros((20, 12), np.float32)
    host_descriptor_kernel[(3, 1)](TensorDescriptor(base, [20, 12], [1, 20], [8, 16]), y, 20, 12, BM=8, BN=16)
    np.testing.assert_array_equal(y, base.T * 3)
    # a device array as the base
    d = kdsl.tensor(x)
    y = np.zeros_like(x)
    host_descriptor_kernel[(2, 2)](TensorDescriptor.from_tensor(d, [8, 16]), y, M, N, BM=8, BN=16)
    np.testing.assert_array_equal(y, x * 3)


def test_host_tensor_descriptor_checks_its_fields() -> None:
    with pytest.raises(ValueError, match="same"):
        TensorDescriptor(np.zeros(4, np.float32), [4], [1, 1], [4])
    with pytest.raises(ValueError, match="powers of 2"):
        TensorDescriptor(np.zeros(4, np.float32), [4], [1], [3])


# --- attention as in Triton's tutorials: block pointers (old 06) and host descriptors (3.3+ 06) ------
@kdsl.kernel
def attn_bp(Q, K, V, Out, N_CTX, stride_qm, stride_kn, stride_vn, stride_om, sm_scale,
            BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, D: kl.constexpr):
    start_m = kl.program_id(0)
    Q_block_ptr = kl.make_block_ptr(base=Q, shape=(N_CTX, D), strides=(stride_qm, 1), offsets=(start_m * BLOCK_M, 0),
                                    block_shape=(BLOCK_M, D), order=(1, 0))
    K_block_ptr = kl.make_block_ptr(base=K, shape=(D, N_CTX), strides=(1, stride_kn), offsets=(0, 0),
                                    block_shape=(D, BLOCK_N), order=(0, 1))
    V_block_ptr = kl.make_block_ptr(base=V, shape=(N_CTX, D), strides=(stride_vn, 1), offsets=(0, 0),
                                    block_shape=(BLOCK_N, D), order=(1, 0))
    m_i = kl.zeros([BLOCK_M], dtype=kl.float32) - float("inf")
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32)
    acc = kl.zeros([BLOCK_M, D], dtype=kl.float32)
    q = kl.load(Q_block_ptr, boundary_check=(0,))
    for start_n in range(0, N_CTX, BLOCK_N):
        k = kl.load(K_block_ptr, boundary_check=(1,))
        qk = kl.dot(q, k) * sm_scale
        cols = start_n + kl.arange(0, BLOCK_N)
        qk = kl.where(cols[None, :] < N_CTX, qk, float("-inf"))
        m_ij = kl.maximum(m_i, kl.max(qk, 1))
        p = kl.exp(qk - m_ij[:, None])
        alpha = kl.exp(m_i - m_ij)
        l_i = l_i * alpha + kl.sum(p, 1)
        v = kl.load(V_block_ptr, boundary_check=(0,))
        acc = acc * alpha[:, None] + kl.dot(p, v)
        m_i = m_ij
        V_block_ptr = kl.advance(V_block_ptr, (BLOCK_N, 0))
        K_block_ptr = kl.advance(K_block_ptr, (0, BLOCK_N))
    acc = acc / l_i[:, None]
    O_block_ptr = kl.make_block_ptr(base=Out, shape=(N_CTX, D), strides=(stride_om, 1), offsets=(start_m * BLOCK_M, 0),
                                    block_shape=(BLOCK_M, D), order=(1, 0))
    kl.store(O_block_ptr, acc, boundary_check=(0,))

@kdsl.kernel
def attn_desc(desc_q, desc_k, desc_v, desc_o, N_CTX, sm_scale, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, D: kl.constexpr):
    start_m = kl.program_id(0)
    q = desc_q.load([start_m * BLOCK_M, 0])
    m_i = kl.zeros([BLOCK_M], dtype=kl.float32) - float("inf")
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32)
    acc = kl.zeros([BLOCK_M, D], dtype=kl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = desc_k.load([start_n, 0]).T
        qk = kl.dot(q, k) * sm_scale
        cols = start_n + kl.arange(0, BLOCK_N)
        qk = kl.where(cols[None, :] < N_CTX, qk, float("-inf"))
        m_ij = kl.maximum(m_i, kl.max(qk, 1))
        p = kl.exp(qk - m_ij[:, None])
        alpha = kl.exp(m_i - m_ij)
        l_i = l_i * alpha + kl.sum(p, 1)
        v = desc_v.load([start_n, 0])
        acc = acc * alpha[:, None] + kl.dot(p, v)
        m_i = m_ij
    desc_o.store([start_m * BLOCK_M, 0], acc / l_i[:, None])


def test_attention_tutorial_styles(backend: str) -> None:
    n, d = 37, 16
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(3))
    s = q @ k.T * 0.25
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v
    o = np.zeros_like(q)
    attn_bp[(3,)](q, k, v, o, n, d, d, d, d, 0.25, BLOCK_M=16, BLOCK_N=16, D=d)
    np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5)
    o2 = np.zeros_like(q)
    descs = [TensorDescriptor.from_tensor(a, [16, d]) for a in (q, k, v, o2)]
    attn_desc[(3,)](*descs, n, 0.25, BLOCK_M=16, BLOCK_N=16, D=d)
    np.testing.assert_allclose(o2, ref, rtol=1e-5, atol=1e-5)


# --- errors name the kernel's line ---------------------------------------------------------------
@kdsl.kernel
def mask_with_block_ptr_kernel(x_ptr):
    p = kl.make_block_ptr(x_ptr, (16,), (1,), (0,), (16,), (0,))
    kl.load(p, mask=kl.arange(0, 16) < 8)  # MARK: mask-block-ptr


@kdsl.kernel
def bad_boundary_dim_kernel(x_ptr):
    p = kl.make_block_ptr(x_ptr, (4, 4), (4, 1), (0, 0), (4, 4), (1, 0))
    kl.load(p, boundary_check=(0, 2))  # MARK: bad-dim


@kdsl.kernel
def nan_padding_int_kernel(x_ptr):
    p = kl.make_block_ptr(x_ptr, (16,), (1,), (0,), (16,), (0,))
    kl.load(p, boundary_check=(0,), padding_option="nan")  # MARK: nan-int


@kdsl.kernel
def rank_mismatch_kernel(x_ptr):
    kl.make_block_ptr(x_ptr, (4, 4), (4, 1), (0, 0), (4,), (0,))  # MARK: rank-mismatch


@kdsl.kernel
def branch_mismatch_kernel(x_ptr, flag):
    p = kl.make_block_ptr(x_ptr, (16,), (1,), (0,), (16,), (0,))
    if flag > 0:  # MARK: branch-mismatch
        p = kl.make_block_ptr(x_ptr, (16,), (1,), (0,), (8,), (0,))
    kl.store(x_ptr, kl.sum(kl.load(p), 0))


@kdsl.kernel
def bad_order_kernel(x_ptr):
    kl.make_block_ptr(x_ptr, (4, 4), (4, 1), (0, 0), (4, 4), (1, 1))  # MARK: bad-order


@kdsl.kernel
def loop_mismatch_kernel(x_ptr, flag):
    p = kl.make_block_ptr(x_ptr, (16,), (1,), (0,), (16,), (0,))
    for _ in range(flag):  # MARK: loop-mismatch
        p = kl.make_block_ptr(x_ptr, (8,), (1,), (0,), (16,), (0,))
    kl.store(x_ptr, kl.sum(kl.load(p), 0))


ERRORS = [
    (mask_with_block_ptr_kernel, np.float32, "mask-block-ptr", "cannot be used with a block pointer"),
    (bad_boundary_dim_kernel, np.float32, "bad-dim", "boundary_check dimension 2 is out of range"),
    (nan_padding_int_kernel, np.int32, "nan-int", "'nan' needs a floating-point pointee"),
    (rank_mismatch_kernel, np.float32, "rank-mismatch", "shape has 2 entries but block_shape has 1"),
    (branch_mismatch_kernel, np.float32, "branch-mismatch", "Mismatched type for p"),
    (bad_order_kernel, np.float32, "bad-order", "order must be a permutation of (0, 1)"),
    (loop_mismatch_kernel, np.float32, "loop-mismatch", "Loop-carried variable p has initial type block_ptr<"),
]


@pytest.mark.parametrize(("kernel", "dtype", "marker", "message"), ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_point_at_source(kernel: object, dtype: type, marker: str, message: str) -> None:
    x = np.zeros(16, dtype)
    args = (x, 2) if kernel in (branch_mismatch_kernel, loop_mismatch_kernel) else (x,)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](*args)  # type: ignore[index]
    line = line_of(__file__, f"MARK: {marker}")
    text = str(info.value)
    assert message in text
    assert info.value.loc.line == line
    assert f"{FILE}:{line}:" in text
    assert source_line(__file__, line).split("#")[0].strip() in text


def test_branch_mismatch_names_both_block_shapes() -> None:
    with pytest.raises(CompilationError) as info:
        branch_mismatch_kernel[(1,)](np.zeros(16, np.float32), 2)
    text = str(info.value)
    assert "block_shape=(16,)" in text and "block_shape=(8,)" in text


# --- property: random windows of random arrays --------------------------------------------------


@kdsl.kernel
def window_kernel(x_ptr, y_ptr, M, N, sm, sn, om, on, CHECK: kl.constexpr):
    # an 8 x 16 window at (om, on) of an (M, N) array with strides (sm, sn), copied to y (8 x 16)
    src = kl.make_block_ptr(x_ptr, (M, N), (sm, sn), (om, on), (8, 16), (1, 0))
    dst = kl.make_block_ptr(y_ptr, (8, 16), (16, 1), (0, 0), (8, 16), (1, 0))
    if CHECK == 0:
        kl.store(dst, kl.load(src, boundary_check=(0,), padding_option="zero"))
    elif CHECK == 1:
        kl.store(dst, kl.load(src, boundary_check=(1,), padding_option="zero"))
    else:
        kl.store(dst, kl.load(src, boundary_check=(0, 1), padding_option="zero"))


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 20), n=st.integers(1, 40), om=st.integers(-10, 25), on=st.integers(-20, 45),
    check=st.sampled_from([0, 1, 2]), transposed=st.booleans(),
)  # fmt: skip
def test_random_windows_match_numpy(m: int, n: int, om: int, on: int, check: int, transposed: bool) -> None:
    # Triton: dims in boundary_check read zero outside [0, shape); the others must stay inside,
    # so the window is moved inside along unchecked dims (reading outside would be undefined).
    checked = {0: (0,), 1: (1,), 2: (0, 1)}[check]
    if 0 not in checked:
        om = min(max(om, 0), max(m - 8, 0)) if m >= 8 else None  # type: ignore[assignment]
    if 1 not in checked:
        on = min(max(on, 0), max(n - 16, 0)) if n >= 16 else None  # type: ignore[assignment]
    assume(om is not None and on is not None)
    rng = np.random.default_rng(m * 1000 + n)
    base = rng.standard_normal((n, m) if transposed else (m, n)).astype(np.float32)
    x = base.T if transposed else base
    sm, sn = (1, m) if transposed else (n, 1)
    y = np.full((8, 16), -7.0, np.float32)
    with kdsl.backend("cpu"):
        window_kernel[(1,)](base, y, m, n, sm, sn, om, on, CHECK=check)
    want = np.zeros((8, 16), np.float32)
    for i in range(8):
        for j in range(16):
            r, c = om + i, on + j
            if 0 <= r < m and 0 <= c < n:
                want[i, j] = x[r, c]
    np.testing.assert_array_equal(y, want)
