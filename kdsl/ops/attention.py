"""Fused scaled-dot-product attention (flash-attention forward) and rotary embeddings.

Attention: one program computes ``BLOCK_M`` query rows of one (batch, head). It
streams over the keys in ``BLOCK_N`` blocks, keeping for every query row a
running max ``m``, a running normaliser ``l`` and an unnormalised output
accumulator; when the max grows, ``l`` and the accumulator are rescaled by
``exp(m_old - m_new)``. The ``S x S`` score matrix never exists in memory:
that is the whole point of flash attention. Scores use ``exp2`` with the
``log2(e)`` factor folded into the softmax scale. Causal attention masks
``key > query`` and stops the key loop at the diagonal block.

Layouts are given by strides (batch, head, sequence; the head dimension is
contiguous), so ``(B, H, S, D)`` arrays and a transformer's ``(B, S, H*D)``
projections are both read in place, without transposes.

RoPE rotates each pair ``(x[i], x[i + D/2])`` of a head by the angle
``pos * base**(-2i/D)`` (the GPT-NeoX / Llama "rotate half" convention); the
angles are computed in the kernel, no cos/sin tables in memory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.ops._common import Array, empty, launch, pow2, strides


@kdsl.kernel
def attention_fwd_kernel(  # type: ignore[no-untyped-def]
    Q, K, V, Out, sm_scale, H, SEQ_Q, SEQ_K, HEAD_DIM,
    stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_D: kl.constexpr, CAUSAL: kl.constexpr,
):  # fmt: skip
    start_m = kl.program_id(0)
    bh = kl.program_id(1)
    q_off = (bh // H) * stride_qb + (bh % H) * stride_qh
    k_off = (bh // H) * stride_kb + (bh % H) * stride_kh
    offs_m = start_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    offs_d = kl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    q_mask = (offs_m[:, None] < SEQ_Q) & d_ok[None, :]
    q = kl.load(Q + q_off + offs_m[:, None] * stride_qs + offs_d[None, :], mask=q_mask, other=0.0).to(kl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # log2(e): exp(x) = exp2(x * log2(e))

    m_i = kl.full([BLOCK_M], -float("inf"), dtype=kl.float32)
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32)
    acc = kl.zeros([BLOCK_M, BLOCK_D], dtype=kl.float32)
    hi = SEQ_K
    if CAUSAL:
        hi = min(SEQ_K, (start_m + 1) * BLOCK_M)  # blocks right of the diagonal are fully masked
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < SEQ_K
        kt = kl.load(
            K + k_off + cols[None, :] * stride_ks + offs_d[:, None], mask=d_ok[:, None] & col_ok[None, :], other=0.0
        ).to(kl.float32)  # (D, N): K transposed
        qk = kl.dot(q, kt) * qk_scale
        valid = col_ok[None, :]
        if CAUSAL:
            valid = valid & (cols[None, :] <= offs_m[:, None])
        qk = kl.where(valid, qk, -float("inf"))
        m_new = kl.maximum(m_i, kl.max(qk, axis=1))
        p = kl.exp2(qk - m_new[:, None])
        alpha = kl.exp2(m_i - m_new)  # rescales what was accumulated under the old max
        l_i = l_i * alpha + kl.sum(p, axis=1)
        v = kl.load(
            V + k_off + cols[:, None] * stride_ks + offs_d[None, :], mask=col_ok[:, None] & d_ok[None, :], other=0.0
        ).to(kl.float32)
        acc = acc * alpha[:, None] + kl.dot(p, v)
        m_i = m_new
    out = acc / l_i[:, None]
    kl.store(Out + q_off + offs_m[:, None] * stride_qs + offs_d[None, :], out.to(Out.dtype.element_ty), mask=q_mask)


@kdsl.kernel
def rope_kernel(  # type: ignore[no-untyped-def]
    X, Y, n_rows, H, SEQ, HALF, pos_offset, log2_base,
    BLOCK_R: kl.constexpr, BLOCK_HALF: kl.constexpr,
):  # fmt: skip
    # rows are (batch, position, head) triples of a contiguous (B, S, H, 2*HALF) array
    rows = kl.program_id(0) * BLOCK_R + kl.arange(0, BLOCK_R)
    i = kl.arange(0, BLOCK_HALF)
    mask = (rows[:, None] < n_rows) & (i[None, :] < HALF)
    pos = ((rows // H) % SEQ + pos_offset).to(kl.float32)
    inv_freq = kl.exp2(-(i.to(kl.float32) / HALF) * log2_base)  # base ** (-2i / D)
    angle = pos[:, None] * inv_freq[None, :]
    c = kl.cos(angle)
    s = kl.sin(angle)
    base = rows[:, None] * (2 * HALF) + i[None, :]
    x1 = kl.load(X + base, mask=mask, other=0.0).to(kl.float32)
    x2 = kl.load(X + base + HALF, mask=mask, other=0.0).to(kl.float32)
    kl.store(Y + base, (x1 * c - x2 * s).to(Y.dtype.element_ty), mask=mask)
    kl.store(Y + base + HALF, (x2 * c + x1 * s).to(Y.dtype.element_ty), mask=mask)


# --- wrappers -----------------------------------------------------------------------


def attention(
    q: Array,
    k: Array,
    v: Array,
    causal: bool = False,
    sm_scale: float | None = None,
    layout: str = "bhsd",
    heads: int = 0,
    blocks: tuple[int, int] | None = None,
) -> Array:
    """``softmax(q k^T * scale [+ causal mask]) v``.

    ``layout="bhsd"``: q (B, H, Sq, D), k/v (B, H, Sk, D). ``layout="bsd"``:
    q (B, Sq, H*D), k/v (B, Sk, H*D) with ``heads=H`` (a transformer's
    projections, read in place). The output has q's shape. Causal masking
    aligns query ``i`` with key ``i`` (requires Sq <= Sk rows to be meaningful).
    """
    if layout == "bhsd":
        nb, nh, sq, d = (int(s) for s in q.shape)
        sk = int(k.shape[2])
        (sqb, sqh, sqs, _), (skb, skh, sks, _) = strides(q), strides(k)
    elif layout == "bsd":
        if heads <= 0 or q.shape[2] % heads:
            raise ValueError(f"layout 'bsd' needs heads dividing {q.shape[2]}, got {heads}")
        nb, sq, nh, d = int(q.shape[0]), int(q.shape[1]), heads, int(q.shape[2]) // heads
        sk = int(k.shape[1])
        (sqb, sqs, _), (skb, sks, _) = strides(q), strides(k)
        sqh, skh = d, d
    else:
        raise ValueError(f"unknown layout {layout!r} (use 'bhsd' or 'bsd')")
    if strides(k) != strides(v):
        raise ValueError("attention: k and v must have the same layout")
    o = empty(tuple(q.shape), q.dtype, q)
    if nb * nh * sq == 0:
        return o
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    bm, bn = blocks or (pow2(sq, lo=16, hi=32), pow2(sk, lo=16, hi=32))
    while True:
        grid = (kdsl.cdiv(sq, bm), nb * nh)
        try:
            launch(attention_fwd_kernel, grid, q, k, v, o, scale, nh, sq, sk, d, sqb, sqh, sqs, skb, skh, sks,
                   BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=pow2(d, lo=16), CAUSAL=causal)  # fmt: skip
            return o
        except CompilationError as e:
            # Devices with little shared memory (lavapipe: 32 KiB) cannot hold the
            # default blocks' work-group copies: retry with smaller blocks. Nothing
            # has run yet -- the error comes from compiling the specialisation.
            if blocks is not None or "memory" not in e.message or max(bm, bn) <= 16:
                raise
            bm, bn = max(16, bm // 2), max(16, bn // 2)


def rope(x: Array, base: float = 10000.0, pos_offset: int = 0, block_rows: int = 16) -> Array:
    """Rotary position embedding of a contiguous (B, S, H, D) array (D even)."""
    nb, seq, nh, d = (int(s) for s in x.shape)
    if d % 2:
        raise ValueError(f"rope needs an even head dimension, got {d}")
    y = empty(tuple(x.shape), x.dtype, x)
    rows = nb * seq * nh
    if rows == 0:
        return y
    launch(rope_kernel, (kdsl.cdiv(rows, block_rows),), x, y, rows, nh, seq, d // 2, pos_offset, math.log2(base),
           BLOCK_R=block_rows, BLOCK_HALF=pow2(d // 2))  # fmt: skip
    return y


# --- numpy references ---------------------------------------------------------------


def attention_ref(
    q: np.ndarray[Any, Any],
    k: np.ndarray[Any, Any],
    v: np.ndarray[Any, Any],
    causal: bool = False,
    sm_scale: float | None = None,
) -> np.ndarray[Any, Any]:
    """Attention over (..., S, D) arrays in float64."""
    q64, k64, v64 = (np.asarray(t, np.float64) for t in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale
    s = q64 @ np.swapaxes(k64, -1, -2) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return (s / s.sum(axis=-1, keepdims=True)) @ v64  # type: ignore[no-any-return]


def rope_ref(x: np.ndarray[Any, Any], base: float = 10000.0, pos_offset: int = 0) -> np.ndarray[Any, Any]:
    x64 = np.asarray(x, np.float64)
    half = x.shape[-1] // 2
    pos = np.arange(x.shape[1], dtype=np.float64) + pos_offset
    angle = pos[:, None] * base ** (-np.arange(half) / half)  # (S, half)
    c, s = np.cos(angle)[None, :, None, :], np.sin(angle)[None, :, None, :]
    x1, x2 = x64[..., :half], x64[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
