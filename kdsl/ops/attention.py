"""Fused scaled-dot-product attention (flash-attention forward) and rotary embeddings.

Attention: one program computes ``BLOCK_M`` query rows of one (batch, head). It
streams over the keys in ``BLOCK_N`` blocks, keeping for every query row a
reference ``r`` (at most its running max), a running normaliser ``l`` and an
unnormalised output accumulator. The ``S x S`` score matrix never exists in
memory: that is the whole point of flash attention. Shaped for CPU devices,
where both dots are register-blocked micro-kernels and any elementwise op on a
2-D tile that broadcasts a per-row value runs scalar:

- K is first copied once into ``K^T * scale * log2(e)`` (contiguous rows for
  the score dot's block copies; the scale and ``exp2``'s ``log2(e)`` cost
  nothing afterwards);
- the score dot's accumulator starts at ``-r`` (a tile kept per program), so
  ``p = exp2(s)`` reads a plain tile, no per-row subtraction;
- lazy rescaling (FlashAttention-4): ``r`` is set to the row max by the first
  block (peeled off the loop), then raised -- and ``l`` and the accumulator
  rescaled -- only when a row's sum of probabilities in a block exceeds
  :data:`RESCALE_LIMIT`; the block is then redone. Otherwise probabilities up to ``2**8`` are kept (fp32 has the range),
  and the result is exact because ``l`` and the accumulator share the reference;
- key blocks left of the diagonal (causal) and before the ragged tail run
  without masks; only the last loop masks ``key > query`` / ``key >= SEQ_K``.

Layouts are given by strides (batch, head, sequence; the head dimension is
contiguous), so ``(B, H, S, D)`` arrays and a transformer's ``(B, S, H*D)``
projections are both read in place.

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
from kdsl.ops._common import Array, backend_of, empty, launch, pow2, strides

# A row's probabilities are taken against a reference that may lag its running max: the block is
# redone with a raised reference only when a row's sum of probabilities exceeds this (2**8), so
# p <= 256 and fp32 keeps its range (the lazy rescaling of FlashAttention-4).
RESCALE_LIMIT = kl.constexpr(256.0)
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e))


@kdsl.kernel
def _attn_block(  # type: ignore[no-untyped-def]
    q, acc, l_i, negr, KT, V, start_n, offs_m, SEQ_K, HEAD_DIM, stride_td, stride_vs,
    BLOCK_N: kl.constexpr, BLOCK_D: kl.constexpr, MASKED: kl.constexpr, CAUSAL: kl.constexpr,
    FIRST: kl.constexpr,
):  # fmt: skip
    offs_n = kl.arange(0, BLOCK_N)
    offs_d = kl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    cols = start_n + offs_n
    col_ok = cols < SEQ_K
    kt_mask = d_ok[:, None] & col_ok[None, :]
    kt = kl.load(KT + offs_d[:, None] * stride_td + cols[None, :], mask=kt_mask, other=0.0)
    # Scores relative to the row's reference r: the accumulator starts at -r (negr), so the
    # subtraction costs nothing and exp2 below reads a plain tile (no per-row broadcast). Masked
    # keys get -inf the same way (the mask is built in the accumulator, not applied to s). Their
    # exp2 costs what any other does: the renderers leave lanes whose result is 0 out of the
    # scaling step, which would underflow (28x slower on Intel: codegen/llvm/vmath.py).
    if MASKED:
        valid = col_ok[None, :]
        if CAUSAL:
            valid = valid & (cols[None, :] <= offs_m[:, None])
        s = kl.dot(q, kt, negr + kl.where(valid, 0.0, -float("inf")))
    else:
        s = kl.dot(q, kt, negr)
    if FIRST:
        # The first block sets every row's reference to its max (acc and l are still zero): one
        # exp2 pass, where the lazy rule below would compute p, find it too large and redo it.
        mb = kl.max(s, axis=1)
        d = kl.where(mb == -float("inf"), 0.0, mb)  # a row with no valid key in this block
        p = kl.exp2(s - d[:, None])
        row_sum = kl.sum(p, axis=1)
        negr = negr - d[:, None]
    else:
        p = kl.exp2(s)
        row_sum = kl.sum(p, axis=1)
        if kl.max(row_sum, axis=0) > RESCALE_LIMIT:
            # Some row grew past the limit (inf included): raise the reference of every row to
            # its max (never lower it) and redo the block. Rare after the first block.
            mb = kl.max(s, axis=1)
            d = kl.where(mb == -float("inf"), 0.0, kl.maximum(mb, 0.0))
            alpha = kl.exp2(-d)
            p = kl.exp2(s - d[:, None])
            row_sum = kl.sum(p, axis=1)
            acc = acc * alpha[:, None]
            l_i = l_i * alpha
            negr = negr - d[:, None]
    l_i = l_i + row_sum
    v_mask = col_ok[:, None] & d_ok[None, :]
    v = kl.load(V + cols[:, None] * stride_vs + offs_d[None, :], mask=v_mask, other=0.0).to(kl.float32)
    acc = kl.dot(p, v, acc)
    return acc, l_i, negr


@kdsl.kernel
def attention_fwd_kernel(  # type: ignore[no-untyped-def]
    Q, KT, V, Out, H, SEQ_Q, SEQ_K, HEAD_DIM,
    stride_qb, stride_qh, stride_qs, stride_vb, stride_vh, stride_vs, stride_tbh, stride_td,
    stride_ob, stride_oh, stride_os,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_D: kl.constexpr, CAUSAL: kl.constexpr,
):  # fmt: skip
    start_m = kl.program_id(0)
    bh = kl.program_id(1)
    q_off = (bh // H) * stride_qb + (bh % H) * stride_qh
    v_off = (bh // H) * stride_vb + (bh % H) * stride_vh
    o_off = (bh // H) * stride_ob + (bh % H) * stride_oh
    offs_m = start_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_d = kl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    q_mask = (offs_m[:, None] < SEQ_Q) & d_ok[None, :]
    q = kl.load(Q + q_off + offs_m[:, None] * stride_qs + offs_d[None, :], mask=q_mask, other=0.0).to(kl.float32)
    acc = kl.zeros([BLOCK_M, BLOCK_D], dtype=kl.float32)
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32)
    negr = kl.zeros([BLOCK_M, BLOCK_N], dtype=kl.float32)
    kt_base = KT + bh * stride_tbh
    v_base = V + v_off
    hi = SEQ_K
    if CAUSAL:
        hi = min(SEQ_K, (start_m + 1) * BLOCK_M)  # blocks right of the diagonal are fully masked
        full = min(hi, (start_m * BLOCK_M // BLOCK_N) * BLOCK_N)  # blocks left of it need no mask
    else:
        full = (SEQ_K // BLOCK_N) * BLOCK_N
    # The first key block (masked: it may be ragged or on the diagonal), then the blocks that need
    # no mask, then the masked rest (the diagonal, the ragged tail).
    acc, l_i, negr = _attn_block(q, acc, l_i, negr, kt_base, v_base, 0, offs_m,
                                 SEQ_K, HEAD_DIM, stride_td, stride_vs, BLOCK_N, BLOCK_D, True, CAUSAL, True)  # fmt: skip
    for start_n in range(BLOCK_N, full, BLOCK_N):
        acc, l_i, negr = _attn_block(q, acc, l_i, negr, kt_base, v_base, start_n, offs_m,
                                     SEQ_K, HEAD_DIM, stride_td, stride_vs, BLOCK_N, BLOCK_D, False, False, False)  # fmt: skip
    for start_n in range(max(full, BLOCK_N), hi, BLOCK_N):
        acc, l_i, negr = _attn_block(q, acc, l_i, negr, kt_base, v_base, start_n, offs_m,
                                     SEQ_K, HEAD_DIM, stride_td, stride_vs, BLOCK_N, BLOCK_D, True, CAUSAL, False)  # fmt: skip
    out = acc / l_i[:, None]
    kl.store(Out + o_off + offs_m[:, None] * stride_os + offs_d[None, :], out.to(Out.dtype.element_ty), mask=q_mask)


@kdsl.kernel
def attention_fwd_gather_kernel(  # type: ignore[no-untyped-def]
    Q, K, V, Out, sm_scale, H, SEQ_Q, SEQ_K, HEAD_DIM,
    stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks, stride_ob, stride_oh, stride_os,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_D: kl.constexpr, CAUSAL: kl.constexpr,
):  # fmt: skip
    """The plain online-softmax kernel (K gathered transposed per block, eager rescaling).

    Why it stays: on backends whose dot is not a register-blocked micro-kernel (vulkan) the
    tiles live in work-group shared memory, and this kernel's fewer live tiles fit lavapipe's
    32 KiB at head dim 64 where :func:`attention_fwd_kernel` does not."""
    start_m = kl.program_id(0)
    bh = kl.program_id(1)
    q_off = (bh // H) * stride_qb + (bh % H) * stride_qh
    k_off = (bh // H) * stride_kb + (bh % H) * stride_kh
    o_off = (bh // H) * stride_ob + (bh % H) * stride_oh
    offs_m = start_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    offs_d = kl.arange(0, BLOCK_D)
    d_ok = offs_d < HEAD_DIM
    q_mask = (offs_m[:, None] < SEQ_Q) & d_ok[None, :]
    q = kl.load(Q + q_off + offs_m[:, None] * stride_qs + offs_d[None, :], mask=q_mask, other=0.0).to(kl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    m_i = kl.full([BLOCK_M], -float("inf"), dtype=kl.float32)
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32)
    acc = kl.zeros([BLOCK_M, BLOCK_D], dtype=kl.float32)
    hi = SEQ_K
    if CAUSAL:
        hi = min(SEQ_K, (start_m + 1) * BLOCK_M)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < SEQ_K
        kt = kl.load(
            K + k_off + cols[None, :] * stride_ks + offs_d[:, None], mask=d_ok[:, None] & col_ok[None, :], other=0.0
        ).to(kl.float32)
        qk = kl.dot(q, kt) * qk_scale
        valid = col_ok[None, :]
        if CAUSAL:
            valid = valid & (cols[None, :] <= offs_m[:, None])
        qk = kl.where(valid, qk, -float("inf"))
        m_new = kl.maximum(m_i, kl.max(qk, axis=1))
        p = kl.exp2(qk - m_new[:, None])
        alpha = kl.exp2(m_i - m_new)
        l_i = l_i * alpha + kl.sum(p, axis=1)
        v = kl.load(
            V + k_off + cols[:, None] * stride_ks + offs_d[None, :], mask=col_ok[:, None] & d_ok[None, :], other=0.0
        ).to(kl.float32)
        acc = acc * alpha[:, None] + kl.dot(p, v)
        m_i = m_new
    out = acc / l_i[:, None]
    kl.store(Out + o_off + offs_m[:, None] * stride_os + offs_d[None, :], out.to(Out.dtype.element_ty), mask=q_mask)


@kdsl.kernel
def transpose_keys_kernel(  # type: ignore[no-untyped-def]
    K, KT, qk_scale, H, SEQ_K, HEAD_DIM, stride_kb, stride_kh, stride_ks,
    BLOCK_S: kl.constexpr, BLOCK_D: kl.constexpr, EVEN: kl.constexpr,
):  # fmt: skip
    # KT[bh, d, s] = K[b, h, s, d] * qk_scale: the score dot reads K^T rows contiguously (block
    # copies), and the softmax scale (times log2(e), for exp2) is applied once per key.
    # The tile is read as K lays it out (rows of D) and transposed in registers by kl.trans: both
    # the load and the store then move whole vectors (a transposed load would gather every element).
    # EVEN: the blocks divide SEQ_K and HEAD_DIM, so no mask splits a vector.
    offs_s = kl.program_id(0) * BLOCK_S + kl.arange(0, BLOCK_S)
    bh = kl.program_id(1)
    offs_d = kl.arange(0, BLOCK_D)
    mask = ((offs_s[:, None] < SEQ_K) & (offs_d[None, :] < HEAD_DIM)) | EVEN
    k_off = (bh // H) * stride_kb + (bh % H) * stride_kh
    x = kl.load(K + k_off + offs_s[:, None] * stride_ks + offs_d[None, :], mask=mask, other=0.0).to(kl.float32)
    kl.store(KT + bh * (HEAD_DIM * SEQ_K) + offs_d[:, None] * SEQ_K + offs_s[None, :], kl.trans(x * qk_scale),
             mask=kl.trans(mask))  # fmt: skip


@kdsl.kernel
def rope_kernel(  # type: ignore[no-untyped-def]
    X, Y, n_rows, H, SEQ, HALF: kl.constexpr, pos_offset, log2_base,
    BLOCK_R: kl.constexpr, BLOCK_HALF: kl.constexpr,
):  # fmt: skip
    # HALF is a constant (one compile per head size): the column mask then folds away when
    # HALF == BLOCK_HALF, and the element loop vectorises (a mask varying along the vector
    # keeps it scalar)
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
    so = strides(o)
    (sob, soh, sos) = (so[0], so[1], so[2]) if layout == "bhsd" else (so[0], d, so[1])
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    bd = pow2(d, lo=16)
    if backend_of(q) not in _MAX_BLOCKS:
        return _attention_gather(q, k, v, o, causal, scale, nh, sq, sk, d,
                                 (sqb, sqh, sqs, skb, skh, sks, sob, soh, sos), blocks)  # fmt: skip
    # K^T, contiguous per (batch, head): one pass over K instead of a gathered transpose per query block.
    kt = empty((nb * nh, d, sk), np.float32, k)
    if sk:
        launch(transpose_keys_kernel, (kdsl.cdiv(sk, 64), nb * nh), k, kt, scale * LOG2E, nh, sk, d, skb, skh, sks,
               BLOCK_S=64, BLOCK_D=bd, EVEN=sk % 64 == 0 and d == bd)  # fmt: skip
    bm, bn = blocks or default_blocks(sq, sk, q)
    while True:
        grid = (kdsl.cdiv(sq, bm), nb * nh)
        try:
            launch(attention_fwd_kernel, grid, q, kt, v, o, nh, sq, sk, d, sqb, sqh, sqs, skb, skh, sks,
                   d * sk, sk, sob, soh, sos, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=bd, CAUSAL=causal,
                   **_CLAIM.get(backend_of(q), {}))  # fmt: skip
            return o
        except CompilationError as e:
            # Devices with little shared memory (lavapipe: 32 KiB) cannot hold the
            # default blocks' work-group copies: retry with smaller blocks. Nothing
            # has run yet -- the error comes from compiling the specialisation.
            if blocks is not None or "memory" not in e.message or max(bm, bn) <= 16:
                raise
            bm, bn = max(16, bm // 2), max(16, bn // 2)


# Largest (BLOCK_M, BLOCK_N) per backend. Where dots are register-blocked micro-kernels on a CPU
# (opencl, cpu), 128 query rows re-read K and V half as often as 64, and 64 keys keep the (M, N)
# score/probability arrays at 32 KiB (128 x 128 spills them out of L1/L2 and measured slower: 11.0
# vs 14.4 GFLOP/s on opencl, 1 x 8 x 1024 x 64, docs/OPTIMIZER.md). Elsewhere small private arrays.
_MAX_BLOCKS = {"opencl": (128, 64), "cpu": (128, 64)}
# On PoCL the programs claim their ids (kdsl/codegen/opencl/claim.py): a few dozen programs of equal
# cost, which PoCL would hand out half to the first thread; 9-25 % faster in one-process A/B runs.
_CLAIM: dict[str, dict[str, int]] = {"opencl": {"lower.claim": 2}}
_DEFAULT_MAX_BLOCKS = (32, 32)


def _attention_gather(
    q: Array, k: Array, v: Array, o: Array, causal: bool, scale: float, nh: int, sq: int, sk: int, d: int,
    st: tuple[int, ...], blocks: tuple[int, int] | None,
) -> Array:  # fmt: skip
    """:func:`attention` through :func:`attention_fwd_gather_kernel`, shrinking the blocks while the
    device's shared memory cannot hold them (lavapipe: 32 KiB). Nothing has run when the
    compile error comes, so retrying is safe."""
    bm, bn = blocks or default_blocks(sq, sk, q)
    while True:
        try:
            launch(attention_fwd_gather_kernel, (kdsl.cdiv(sq, bm), int(q.shape[0]) * nh), q, k, v, o, scale, nh,
                   sq, sk, d, *st, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=pow2(d, lo=16), CAUSAL=causal)  # fmt: skip
            return o
        except CompilationError as e:
            if blocks is not None or "memory" not in e.message or max(bm, bn) <= 16:
                raise
            bm, bn = max(16, bm // 2), max(16, bn // 2)


def default_blocks(sq: int, sk: int, like: Array) -> tuple[int, int]:
    """``(BLOCK_M, BLOCK_N)``: the sequence lengths rounded up to powers of two, at least 16, at most
    the backend's maximum (:data:`_MAX_BLOCKS`)."""
    hm, hn = _MAX_BLOCKS.get(backend_of(like), _DEFAULT_MAX_BLOCKS)
    return pow2(sq, lo=16, hi=hm), pow2(sk, lo=16, hi=hn)


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
