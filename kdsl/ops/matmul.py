"""Blocked matrix multiplication (Triton tutorial 03) and its variants, in one kernel.

Each program computes a ``BLOCK_M x BLOCK_N`` tile of ``C`` by walking ``K`` in
``BLOCK_K`` steps with ``kl.dot``. Compile-time switches select the variant, so
each combination compiles to straight-line code with no dead branches:

- input types: fp32; fp16 with fp32 accumulation (``kl.dot`` of f16 tiles
  accumulates in f32); int8 x int8 with int32 accumulation (``ACC_INT``);
- int8 weight-only quantisation (``HAS_SCALE``): ``B`` holds int8 weights with a
  per-output-channel scale; tiles of ``B`` are converted to ``A``'s type in
  registers and the scale is applied to the accumulator once at the end
  (exact: a per-column scale factors out of the sum over ``K``);
- fused epilogue: ``+ bias[n]``, an activation from :mod:`kdsl.ops.elementwise`,
  ``+ residual[m, n]``, then the cast to ``C``'s type: one store, no extra pass;
- grouped program ordering (``GROUP_M``): consecutive programs cover a column of
  ``GROUP_M`` row-blocks before moving right, so the ``B`` tiles they share stay
  in cache (the "super-grouping" of the tutorial);
- batching: grid axis 1 is the batch, with batch strides (0 broadcasts an operand).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, backend_of, empty, launch, pow2, strides
from kdsl.ops.elementwise import ACTIVATIONS, activate, activation_ref
from kdsl.target import target_for


@kdsl.kernel
def matmul_kernel(  # type: ignore[no-untyped-def]
    a_ptr, b_ptr, c_ptr, bias_ptr, scale_ptr, res_ptr,
    M, N, K,
    stride_ab, stride_am, stride_ak,
    stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr, GROUP_M: kl.constexpr,
    ACTIVATION: kl.constexpr, HAS_BIAS: kl.constexpr, HAS_SCALE: kl.constexpr, HAS_RESIDUAL: kl.constexpr,
    ACC_INT: kl.constexpr,
):  # fmt: skip
    # Grouped ordering: program ids walk GROUP_M row-blocks down, then one column-block right.
    pid = kl.program_id(axis=0)
    batch = kl.program_id(axis=1)
    num_pid_m = kl.cdiv(M, BLOCK_M)
    num_pid_n = kl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
    offs_k = kl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + batch * stride_ab + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + batch * stride_bb + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.int32 if ACC_INT else kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K  # the last K block is partial: mask it
        a = kl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_left), other=0)
        b = kl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & mask_n[None, :], other=0)
        if HAS_SCALE:
            b = b.to(a.dtype)  # dequantise int8 weights in registers
        acc = kl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # Epilogue, all in registers: scale, bias, activation, residual, cast.
    if HAS_SCALE:
        acc = acc * kl.load(scale_ptr + offs_n, mask=mask_n, other=0.0)[None, :]
    if HAS_BIAS:
        acc = acc + kl.load(bias_ptr + offs_n, mask=mask_n, other=0.0).to(kl.float32)[None, :]
    acc = activate(acc, ACTIVATION)
    c_offs = batch * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = mask_m[:, None] & mask_n[None, :]
    if HAS_RESIDUAL:
        acc = acc + kl.load(res_ptr + c_offs, mask=c_mask, other=0.0)
    kl.store(c_ptr + c_offs, acc.to(c_ptr.dtype.element_ty), mask=c_mask)


def _default_out_dtype(a: Array, b: Array, scale: Array | None) -> Any:
    if scale is None and np.dtype(a.dtype) == np.int8 and np.dtype(b.dtype) == np.int8:
        return np.int32
    return np.float32


# Backends whose lowering turns ``kl.dot`` into the register-blocked ``wi.mma`` on block-copied
# private tiles (A row-major, B packed panel-major: kdsl/codegen/packing.py). Their defaults are
# derived from the target description (:func:`kdsl.target.target_for`) by :func:`_mma_plan`; the
# scalar Vulkan path keeps small private arrays.
MMA_BACKENDS = ("opencl", "cpu")
_DEFAULT_MAX_BLOCKS = (64, 64, 32)


@cache
def _mma_plan(backend: str) -> tuple[tuple[int, int, int], tuple[tuple[str, int], ...]]:
    """(largest ``(BLOCK_M, BLOCK_N, BLOCK_K)``, lowering options) for ``backend``.

    Micro-kernel (``wi.mma``): half the vector registers hold accumulators as ``rows x 4``
    vectors (4 x 64 fp32 on AVX-512: 16 zmm, 4 vector loads of B + 4 broadcasts of A per
    16 FMAs), leaving registers for the B vectors and the broadcast. ``BLOCK_K`` makes the
    ``BLOCK_K x 4 vectors`` panel of B 32 KiB (128 x 64 fp32), so it stays in a 48 KiB L1
    while every row block streams over it (B is packed panel-major for that). Tiles are
    256 x 256 on 32-register CPUs: each A and B element is copied once per 256 columns / rows
    of C (half the copies of 128 x 128: 1.1-1.2x at 2048 in one A/B run on both backends,
    docs/OPTIMIZER.md); the private tiles (2 x 128 KiB operands + 256 KiB C) stay in L2.
    """
    t = target_for(backend)
    lanes = max(1, t.simd_bytes // 4)
    rows = max(1, t.registers // 8)
    block_n = 4 * lanes
    block_k = max(16, (32 * 1024) // (block_n * 4))
    big = t.kind == "cpu" and t.registers >= 32
    blocks = (256, 256, block_k) if big else (128, 128, block_k)
    return blocks, (("lower.dot_block_m", rows), ("lower.dot_block_n", block_n))


def default_blocks(m: int, n: int, k: int, backend: str = "") -> tuple[int, int, int]:
    """``(BLOCK_M, BLOCK_N, BLOCK_K)`` for an ``m x n x k`` product on ``backend``.

    ``BLOCK_K`` is ``k`` rounded up to a power of two, at least 16 and at most the backend's
    maximum (:func:`_mma_plan`). On the micro-kernel backends the output tile comes from
    :func:`_output_tile`; elsewhere each side is its extent rounded up the same way, then the
    larger side is halved while the grid would have fewer than two programs.
    """
    hm, hn, hk = _mma_plan(backend)[0] if backend in MMA_BACKENDS else _DEFAULT_MAX_BLOCKS
    bk = pow2(k, lo=16, hi=hk)
    if backend in MMA_BACKENDS:
        bm, bn = _output_tile(m, n, hm, hn, target_for(backend).compute_units)
        return bm, bn, bk
    bm, bn = pow2(m, lo=16, hi=hm), pow2(n, lo=16, hi=hn)
    while kdsl.cdiv(m, bm) * kdsl.cdiv(n, bn) < 2 and max(bm, bn) > 16:
        if bm >= bn:
            bm //= 2
        else:
            bn //= 2
    return bm, bn, bk


# Per-tile overhead of the micro-kernel backends, in rows/columns of work: copying a tile's
# operands and its loop set-up cost about what 8 more rows or columns of FMAs would.
_TILE_OVERHEAD = 8


@cache  # a few dozen candidates scored in Python: not on every call
def _output_tile(m: int, n: int, hm: int, hn: int, units: int) -> tuple[int, int]:
    """The power-of-two ``(BLOCK_M, BLOCK_N)``, at most ``(hm, hn)``, that finishes an ``m x n``
    output soonest on ``units`` cores.

    Why a model: the largest tile copies each operand least often (the 2048-cube optimum), but
    on sizes that are not a multiple of it, it computes masked padding (384 as 256-tiles pads
    to 512: 56 % useful work) and leaves cores idle (4 tiles on 3 cores). Estimated time: the
    tiles each core runs, ``ceil(programs / units)``, times a tile's padded work with a fixed
    per-tile overhead (:data:`_TILE_OVERHEAD`). Measured on 2 Zen 4 cores (GFLOP/s,
    old choice -> this one): 384: 110 -> 176, 256 and 512 unchanged, the
    sizes from 1024 up keep the largest tile.
    """
    best: tuple[float, int, int] | None = None
    for bm in _pow2_range(m, hm):
        for bn in _pow2_range(n, hn):
            programs = kdsl.cdiv(m, bm) * kdsl.cdiv(n, bn)
            per_tile = bm * bn * (1 + _TILE_OVERHEAD / bm + _TILE_OVERHEAD / bn)
            cost = -(-programs // units) * per_tile
            # ties: the larger tile (fewer copies of the operands)
            cand = (cost, -bm * bn, -bm)
            if best is None or cand < (best[0], -best[1] * best[2], -best[1]):
                best = (cost, bm, bn)
    assert best is not None
    return best[1], best[2]


def _pow2_range(extent: int, hi: int) -> list[int]:
    """Powers of two from 16 up to ``extent`` rounded up to one, at most ``hi``."""
    top = pow2(extent, lo=16, hi=hi)
    out, b = [], 16
    while b <= top:
        out.append(b)
        b *= 2
    return out


def default_options(backend: str) -> dict[str, Any]:
    """Launch options the op passes on ``backend``: the micro-kernel's register blocking."""
    return dict(_mma_plan(backend)[1]) if backend in MMA_BACKENDS else {}


def matmul(
    a: Array,
    b: Array,
    bias: Array | None = None,
    activation: str = "",
    residual: Array | None = None,
    scale: Array | None = None,
    out_dtype: Any = None,
    blocks: tuple[int, int, int] | None = None,
    group_m: int = 8,
    options: dict[str, Any] | None = None,
) -> Array:
    """``act(a @ (b * scale) + bias) + residual`` for 2-D ``a``/``b``, or batched 3-D.

    ``a``: (M, K) or (batch, M, K); ``b``: (K, N) or (batch, K, N) (a 2-D ``b``
    is shared by every batch). Types: f32@f32, f16@f16 (f32 accumulation),
    i8@i8 (i32 accumulation, i32 result), f32|f16 @ i8 with ``scale`` (N,)
    (weight-only quantisation). ``residual`` has the output's shape.
    ``options``: extra launch options (e.g. ``{"lower.dot_block_m": 8}``) over the
    backend's defaults (:func:`default_options`).
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; choose from {ACTIVATIONS}")
    batched = a.ndim == 3
    M, K = a.shape[-2:]
    K2, N = b.shape[-2:]
    if K != K2:
        raise ValueError(f"matmul: inner dimensions differ: {a.shape} @ {b.shape}")
    nb = int(a.shape[0]) if batched else 1
    out_dtype = out_dtype or _default_out_dtype(a, b, scale)
    c = empty((nb, M, N) if batched else (M, N), out_dtype, a)
    if M == 0 or N == 0:
        return c
    sa, sb, sc = strides(a), strides(b), strides(c)
    sa3 = sa if batched else (0, *sa)
    sb3 = sb if b.ndim == 3 else (0, *sb)
    sc3 = sc if batched else (0, *sc)
    if residual is not None and strides(residual) != sc:
        raise ValueError("matmul: residual must have the output's shape and layout")
    backend = backend_of(a)
    bm, bn, bk = blocks or default_blocks(M, N, K, backend)
    int_acc = np.dtype(a.dtype) == np.int8 and scale is None
    grid = (kdsl.cdiv(M, bm) * kdsl.cdiv(N, bn), nb)
    launch(
        matmul_kernel, grid,
        a, b, c,
        bias if bias is not None else c, scale if scale is not None else c, residual if residual is not None else c,
        M, N, K, *sa3, *sb3, *sc3,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m, ACTIVATION=activation,
        HAS_BIAS=bias is not None, HAS_SCALE=scale is not None, HAS_RESIDUAL=residual is not None, ACC_INT=int_acc,
        **{**default_options(backend), **(options or {})},
    )  # fmt: skip
    return c


def quantize_per_channel(w: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Symmetric int8 quantisation of a (K, N) weight, one scale per output column."""
    amax = np.abs(w).max(axis=0)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def matmul_ref(
    a: np.ndarray[Any, Any],
    b: np.ndarray[Any, Any],
    bias: np.ndarray[Any, Any] | None = None,
    activation: str = "",
    residual: np.ndarray[Any, Any] | None = None,
    scale: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    """The same computation in float64 (int64 for int8 x int8)."""
    if np.dtype(a.dtype) == np.int8 and scale is None:
        return np.matmul(a.astype(np.int64), b.astype(np.int64))  # type: ignore[no-any-return]
    bf = b.astype(np.float64) * (scale.astype(np.float64) if scale is not None else 1.0)
    c = np.matmul(a.astype(np.float64), bf)
    if bias is not None:
        c = c + bias.astype(np.float64)
    c = activation_ref(c, activation)
    if residual is not None:
        c = c + residual.astype(np.float64)
    return c  # type: ignore[no-any-return]
