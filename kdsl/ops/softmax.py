"""Fused row softmax (Triton tutorial 02), with an online fallback for long rows.

One pass: when a row fits in one tile (``n_cols <= BLOCK``) the row is loaded
once, max-subtracted, exponentiated, summed and stored: one read and one write
per element instead of numpy's five passes. Long rows use the *online*
softmax (Milakov & Gimelshein): one sweep over column blocks keeps a running
max ``m`` and a running sum ``l`` rescaled by ``exp(m_old - m_new)`` whenever
the max grows, then a second sweep writes ``exp(x - m) / l``. The kernels are
persistent: program ``p`` handles rows ``p, p + P, p + 2P, ...``. The output
is written once and never read back by the kernel, so its stores carry
``eviction_policy="evict_first"`` (non-temporal stores on opencl/cpu: no
read-for-ownership of the output lines, docs/LOWERING.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, empty, launch, pow2, row_programs, strides


@kdsl.kernel
def softmax_kernel(  # type: ignore[no-untyped-def]
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: kl.constexpr
):
    for row_idx in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):  # type: ignore[attr-defined]
        col_offsets = kl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = kl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
        row = row.to(kl.float32)
        numerator = kl.exp(row - kl.max(row, axis=0))
        out = numerator / kl.sum(numerator, axis=0)
        out_ptrs = output_ptr + row_idx * output_row_stride + col_offsets
        kl.store(out_ptrs, out.to(output_ptr.dtype.element_ty), mask=mask, eviction_policy="evict_first")


@kdsl.kernel
def online_softmax_kernel(  # type: ignore[no-untyped-def]
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: kl.constexpr
):
    for row_idx in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):  # type: ignore[attr-defined]
        in_row = input_ptr + row_idx * input_row_stride
        m = -float("inf")  # running max
        s = 0.0  # running sum of exp(x - m)
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + kl.arange(0, BLOCK_SIZE)
            x = kl.load(in_row + cols, mask=cols < n_cols, other=-float("inf")).to(kl.float32)
            m_new = kl.maximum(m, kl.max(x, axis=0))
            s = s * kl.exp(m - m_new) + kl.sum(kl.exp(x - m_new), axis=0)
            m = m_new  # type: ignore[assignment]  # a kdsl tensor in the kernel
        out_row = output_ptr + row_idx * output_row_stride
        for start in range(0, n_cols, BLOCK_SIZE):
            cols = start + kl.arange(0, BLOCK_SIZE)
            mask = cols < n_cols
            x = kl.load(in_row + cols, mask=mask, other=-float("inf")).to(kl.float32)
            y = (kl.exp(x - m) / s).to(output_ptr.dtype.element_ty)
            kl.store(out_row + cols, y, mask=mask, eviction_policy="evict_first")


def softmax(x: Array, max_block: int = 4096, max_programs: int | None = None, out: Array | None = None) -> Array:
    """Softmax over the last axis of a 2-D array (rows may be strided, columns contiguous).

    ``out``: an array of ``x``'s shape and dtype (and kind) to write into, returned;
    reusing one saves the page faults of a fresh large output on every call. ``max_programs``:
    the persistent programs over the rows (None: :func:`~kdsl.ops._common.row_programs`
    chooses by backend)."""
    if x.ndim != 2:
        raise ValueError(f"softmax expects a 2-D array, got shape {x.shape}")
    n_rows, n_cols = x.shape
    y = empty((n_rows, n_cols), x.dtype, x) if out is None else _check_out(out, x)
    if n_rows == 0 or n_cols == 0:
        return y
    grid = (row_programs(x, n_rows, max_programs),)
    args = (y, x, strides(x)[0], strides(y)[0], n_rows, n_cols)
    if n_cols <= max_block:
        launch(softmax_kernel, grid, *args, BLOCK_SIZE=pow2(n_cols))
    else:
        launch(online_softmax_kernel, grid, *args, BLOCK_SIZE=pow2(max_block))
    return y


def _check_out(out: Array, x: Array) -> Array:
    if tuple(out.shape) != tuple(x.shape) or np.dtype(out.dtype) != np.dtype(x.dtype):
        raise ValueError(f"out must have shape {tuple(x.shape)} and dtype {x.dtype}, got {out.shape} {out.dtype}")
    return out


def softmax_ref(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    x64 = np.asarray(x, np.float64)
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]
