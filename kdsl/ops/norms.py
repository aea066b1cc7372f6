"""LayerNorm forward and backward (Triton tutorial 05) and RMSNorm forward.

Forward: a row that fits in one tile (``N <= max_block``) is loaded once and
normalised from registers/cache (``layer_norm_fwd_kernel``: persistent
programs, program ``p`` handles rows ``p, p + P, ...``, as the fused softmax);
after loop fusion (``kdsl/lowering/fuse_loops.py``) that is three vector passes
over the row (load + sum, centred sum of squares, normalise + streaming store).
Longer rows are swept in ``BLOCK_SIZE`` chunks three times (mean, variance,
normalise: ``layer_norm_fwd_blocked_kernel``), so any row length works with a bounded
tile. ``Mean`` and ``Rstd`` are saved for the backward pass.

Backward: ``dx`` needs whole-row sums, so a program owns rows. ``dw``/``db``
are sums over *rows* — a reduction across programs. Triton's tutorial
accumulates them into ``GROUP_SIZE_M`` buffers guarded by spin locks
(atomics); here the same two-stage reduction is done without atomics, so it
runs on every backend: program ``g`` of stage 1 handles rows ``g, g+G, ...``,
accumulating its partial ``dw``/``db`` in registers and storing them once into
row ``g`` of a ``(G, N)`` buffer; stage 2 sums the ``G`` partial rows per column
block. Same arithmetic, deterministic order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, empty, launch, pow2, row_programs, strides


@kdsl.kernel
def layer_norm_fwd_kernel(  # type: ignore[no-untyped-def]
    X, Y, W, B, Mean, Rstd, x_stride, y_stride, M, N, eps, BLOCK_SIZE: kl.constexpr
):
    cols = kl.arange(0, BLOCK_SIZE)
    mask = cols < N
    for row in kl.range(kl.program_id(0), M, kl.num_programs(0)):  # type: ignore[attr-defined]
        x = kl.load(X + row * x_stride + cols, mask=mask, other=0.0).to(kl.float32)
        mean = kl.sum(x, axis=0) / N
        xc = kl.where(mask, x - mean, 0.0)
        rstd = 1 / kl.sqrt(kl.sum(xc * xc, axis=0) / N + eps)
        kl.store(Mean + row, mean)
        kl.store(Rstd + row, rstd)
        w = kl.load(W + cols, mask=mask)
        b = kl.load(B + cols, mask=mask)
        y = (x - mean) * rstd * w + b
        kl.store(Y + row * y_stride + cols, y.to(Y.dtype.element_ty), mask=mask, eviction_policy="evict_first")


@kdsl.kernel
def layer_norm_fwd_blocked_kernel(  # type: ignore[no-untyped-def]
    X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: kl.constexpr
):
    row = kl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = kl.zeros([BLOCK_SIZE], dtype=kl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        acc += kl.load(X + cols, mask=cols < N, other=0.0).to(kl.float32)
    mean = kl.sum(acc, axis=0) / N
    acc = kl.zeros([BLOCK_SIZE], dtype=kl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        x = kl.load(X + cols, mask=cols < N, other=0.0).to(kl.float32)
        x = kl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / kl.sqrt(kl.sum(acc, axis=0) / N + eps)
    kl.store(Mean + row, mean)
    kl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = kl.load(W + cols, mask=mask)
        b = kl.load(B + cols, mask=mask)
        x = kl.load(X + cols, mask=mask, other=0.0).to(kl.float32)
        y = (x - mean) * rstd * w + b
        kl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask, eviction_policy="evict_first")


@kdsl.kernel
def rms_norm_fwd_kernel(X, Y, W, Rstd, stride, N, eps, BLOCK_SIZE: kl.constexpr):  # type: ignore[no-untyped-def]
    row = kl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = kl.zeros([BLOCK_SIZE], dtype=kl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        x = kl.load(X + cols, mask=cols < N, other=0.0).to(kl.float32)
        acc += x * x
    rstd = kl.rsqrt(kl.sum(acc, axis=0) / N + eps)
    kl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + kl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = kl.load(X + cols, mask=mask, other=0.0).to(kl.float32)
        w = kl.load(W + cols, mask=mask)
        kl.store(Y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask, eviction_policy="evict_first")


@kdsl.kernel
def layer_norm_bwd_dx_kernel(  # type: ignore[no-untyped-def]
    DX, DY, PartialDW, PartialDB, X, W, Mean, Rstd, stride, M, N, BLOCK_SIZE_N: kl.constexpr
):
    # Stage 1: program g owns rows g, g + G, ...; its dw/db partial sums stay in registers.
    group = kl.program_id(0)
    n_groups = kl.num_programs(0)
    cols = kl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    w = kl.load(W + cols, mask=mask, other=0.0).to(kl.float32)
    dw = kl.zeros([BLOCK_SIZE_N], dtype=kl.float32)
    db = kl.zeros([BLOCK_SIZE_N], dtype=kl.float32)
    for row in range(group, M, n_groups):
        x = kl.load(X + row * stride + cols, mask=mask, other=0.0).to(kl.float32)
        dy = kl.load(DY + row * stride + cols, mask=mask, other=0.0).to(kl.float32)
        mean = kl.load(Mean + row)
        rstd = kl.load(Rstd + row)
        xhat = kl.where(mask, (x - mean) * rstd, 0.0)
        wdy = kl.where(mask, w * dy, 0.0)
        c1 = kl.sum(xhat * wdy, axis=0) / N
        c2 = kl.sum(wdy, axis=0) / N
        dx = (wdy - (xhat * c1 + c2)) * rstd
        kl.store(DX + row * stride + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dy * xhat
        db += dy
    kl.store(PartialDW + group * N + cols, dw, mask=mask)
    kl.store(PartialDB + group * N + cols, db, mask=mask)


@kdsl.kernel
def layer_norm_bwd_dwdb_kernel(  # type: ignore[no-untyped-def]
    PartialDW, PartialDB, FinalDW, FinalDB, G, N, BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr
):
    # Stage 2: sum the G partial rows, one column block per program.
    cols = kl.program_id(0) * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
    dw = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    db = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    for i in range(0, G, BLOCK_SIZE_M):
        rows = i + kl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < G) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += kl.load(PartialDW + offs, mask=mask, other=0.0)
        db += kl.load(PartialDB + offs, mask=mask, other=0.0)
    kl.store(FinalDW + cols, kl.sum(dw, axis=0).to(FinalDW.dtype.element_ty), mask=cols < N)
    kl.store(FinalDB + cols, kl.sum(db, axis=0).to(FinalDB.dtype.element_ty), mask=cols < N)


# --- wrappers -----------------------------------------------------------------------


def _rows(x: Array) -> tuple[int, int]:
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D (rows, features) array, got shape {x.shape}")
    return int(x.shape[0]), int(x.shape[1])


def layer_norm(
    x: Array,
    weight: Array,
    bias: Array,
    eps: float = 1e-5,
    block: int = 4096,
    max_programs: int | None = None,
    out: Array | None = None,
) -> tuple[Array, Array, Array]:
    """LayerNorm over the last axis of a C-contiguous 2-D ``x``: ``(y, mean, rstd)``.

    Rows of up to ``block`` features are normalised whole (one load per element, by
    ``max_programs`` persistent programs: :func:`~kdsl.ops._common.row_programs` chooses them by
    backend when None); longer rows are swept in ``block`` chunks.
    ``out``: an array like ``x`` to write ``y`` into (saves a fresh output's page faults)."""
    m, n = _rows(x)
    if out is not None and (tuple(out.shape) != (m, n) or np.dtype(out.dtype) != np.dtype(x.dtype)):
        raise ValueError(f"out must have shape {(m, n)} and dtype {x.dtype}, got {out.shape} {out.dtype}")
    if out is not None and n > block and strides(out)[0] != strides(x)[0]:
        raise ValueError("out must have the row stride of x when rows are longer than block")
    y = empty((m, n), x.dtype, x) if out is None else out
    mean = empty((m,), np.float32, x)
    rstd = empty((m,), np.float32, x)
    if m and n <= block:
        launch(layer_norm_fwd_kernel, (row_programs(x, m, max_programs),), x, y, weight, bias, mean, rstd,
               strides(x)[0], strides(y)[0], m, n, eps, BLOCK_SIZE=pow2(n))  # fmt: skip
    elif m:
        launch(layer_norm_fwd_blocked_kernel, (m,), x, y, weight, bias, mean, rstd, strides(x)[0], n, eps,
               BLOCK_SIZE=pow2(block))  # fmt: skip
    return y, mean, rstd


def rms_norm(x: Array, weight: Array, eps: float = 1e-6, block: int = 1024) -> Array:
    """RMSNorm over the last axis: ``x / sqrt(mean(x^2) + eps) * weight``."""
    m, n = _rows(x)
    y = empty((m, n), x.dtype, x)
    rstd = empty((max(m, 1),), np.float32, x)
    if m:
        launch(rms_norm_fwd_kernel, (m,), x, y, weight, rstd, strides(x)[0], n, eps, BLOCK_SIZE=pow2(n, hi=block))
    return y


def layer_norm_backward(
    dy: Array, x: Array, weight: Array, mean: Array, rstd: Array, groups: int = 32
) -> tuple[Array, Array, Array]:
    """Gradients ``(dx, dw, db)`` of :func:`layer_norm` (a row must fit in one tile)."""
    m, n = _rows(x)
    g = max(1, min(groups, m))
    dx = empty((m, n), x.dtype, x)
    partial_dw = empty((g, n), np.float32, x)
    partial_db = empty((g, n), np.float32, x)
    dw = empty((n,), weight.dtype, x)
    db = empty((n,), weight.dtype, x)
    bn = pow2(n)
    launch(layer_norm_bwd_dx_kernel, (g,), dx, dy, partial_dw, partial_db, x, weight, mean, rstd,
           strides(x)[0], m, n, BLOCK_SIZE_N=bn)  # fmt: skip
    bn2 = pow2(n, hi=64)
    launch(layer_norm_bwd_dwdb_kernel, (kdsl.cdiv(n, bn2),), partial_dw, partial_db, dw, db, g, n,
           BLOCK_SIZE_M=pow2(g, hi=32), BLOCK_SIZE_N=bn2)  # fmt: skip
    return dx, dw, db


# --- numpy references ---------------------------------------------------------------


def layer_norm_ref(
    x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], b: np.ndarray[Any, Any], eps: float = 1e-5
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    x64 = np.asarray(x, np.float64)
    mean = x64.mean(axis=-1)
    rstd = 1.0 / np.sqrt(((x64 - mean[..., None]) ** 2).mean(axis=-1) + eps)
    return (x64 - mean[..., None]) * rstd[..., None] * w + b, mean, rstd


def rms_norm_ref(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], eps: float = 1e-6) -> np.ndarray[Any, Any]:
    x64 = np.asarray(x, np.float64)
    return x64 / np.sqrt((x64 * x64).mean(axis=-1, keepdims=True) + eps) * w  # type: ignore[no-any-return]


def layer_norm_backward_ref(
    dy: np.ndarray[Any, Any], x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], eps: float = 1e-5
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    x64, dy64 = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    n = x64.shape[-1]
    mean = x64.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = (x64 - mean) * rstd
    wdy = w * dy64
    c1 = (xhat * wdy).sum(axis=-1, keepdims=True) / n
    c2 = wdy.sum(axis=-1, keepdims=True) / n
    return (wdy - (xhat * c1 + c2)) * rstd, (dy64 * xhat).sum(axis=0), dy64.sum(axis=0)
