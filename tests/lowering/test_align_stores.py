"""Aligned streaming stores (``kdsl.lowering.align_stores``, ``Layout.align_stores``): golden wi IR of a
streaming row loop, which loops get the aligning head (streaming stores, no reductions, a lane-count
tail after them), ``wi.align_gap`` in both renderers, the launch knob, and numbers: rows at every
offset in their line (odd strides, views that start mid-line, rows shorter than the head) against
numpy and against ``lower.align_stores=0``, on every backend.

Regenerate the golden file with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.llvm import render_llvm
from kdsl.codegen.opencl import render_opencl
from kdsl.ir.core import Operation
from kdsl.ir.printer import print_op
from kdsl.lowering import Layout
from kdsl.ops.softmax import softmax_kernel
from tests.lowering.test_lowering_golden import _check
from tests.lowering.test_prefetch import lower_kernel

VEC = Layout(1, 1, vector_width=16, align_stores=1)


@kdsl.kernel
def scale_rows(o, x, n_rows, n_cols, x_stride, o_stride, B: kl.constexpr, NT: kl.constexpr):
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        c = kl.arange(0, B)
        v = kl.load(x + r * x_stride + c, mask=c < n_cols) * 3.0 - 1.0
        if NT:
            kl.store(o + r * o_stride + c, v, mask=c < n_cols, eviction_policy="evict_first")
        else:
            kl.store(o + r * o_stride + c, v, mask=c < n_cols)


SIG = ["*f32", "*f32", "i32", "i32", "i32", "i32"]


def _wi(kernel: Any, sig: list[str], layout: Layout = VEC, **meta: Any) -> Operation:
    return lower_kernel(kernel, sig, layout, **meta)


def _count(mod: Operation, name: str) -> int:
    return sum(1 for op in mod.walk() if name == op.NAME)


def test_streaming_row_loop_golden() -> None:
    _check("align_stores.mlir", print_op(_wi(scale_rows, SIG, B=64, NT=True)))


def test_head_before_the_vector_loop() -> None:
    mod = _wi(scale_rows, SIG, B=1024, NT=True)
    [gap] = [op for op in mod.walk() if op.NAME == "wi.align_gap"]
    assert gap.attributes["bytes"] == 64
    block = gap.parent
    assert block is not None
    loops = [op for op in block.ops if op.NAME == "scf.for"]
    # head (lane-count accesses), vector loop (whole vectors), tail (lane-count accesses)
    assert len(loops) == 3
    counted = [any(o.NAME == "wi.gvstore" and len(o.operands) == 3 for o in lp.walk()) for lp in loops]
    assert counted == [True, False, True]


def test_which_loops() -> None:
    assert _count(_wi(scale_rows, SIG, B=1024, NT=False), "wi.align_gap") == 0  # plain stores
    assert _count(_wi(scale_rows, SIG, Layout(1, 1, vector_width=16), B=1024, NT=True), "wi.align_gap") == 0
    # softmax: only the normalising loop streams; the max and sum loops reduce and keep their start
    sm = _wi(softmax_kernel, SIG, BLOCK_SIZE=1024)
    assert _count(sm, "wi.align_gap") == 1


def test_renderers() -> None:
    mod = _wi(scale_rows, SIG, B=64, NT=True)
    assert "(((0 - (ulong)(" in render_opencl(mod).source
    ir = render_llvm(mod).ir
    assert "ptrtoint ptr" in ir and "udiv i64" in ir


def test_cpu_targets_align_by_default() -> None:
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.runtime.cpu.backend import cpu_layout

    assert cpu_layout(LaunchOptions()).align_stores == 1
    assert cpu_layout(LaunchOptions(extra=(("lower.align_stores", 0),))).align_stores == 0


@pytest.mark.parametrize(("n_cols", "x_start", "o_start"), [(781, 0, 0), (781, 1, 3), (40, 5, 0), (16, 0, 7),
                                                             (7, 2, 9), (1, 0, 1), (200, 15, 15)])  # fmt: skip
def test_rows_at_every_offset(backend: str, n_cols: int, x_start: int, o_start: int) -> None:
    rows = 37
    stride = n_cols + 3  # odd: every row starts at another offset in its line
    xb = np.random.default_rng(n_cols).standard_normal((rows, stride + 16), dtype=np.float32)
    x = xb[:, x_start:x_start + n_cols]
    outs = []
    for aligned in (1, 0):
        ob = np.full((rows, stride + 16), np.nan, np.float32)
        scale_rows[(8,)](ob[:, o_start:], x, rows, n_cols, xb.shape[1], ob.shape[1], B=1024, NT=True,
                         **{"lower.align_stores": aligned})  # fmt: skip
        outs.append(ob)
    want = np.full_like(outs[0], np.nan)
    want[:, o_start:o_start + n_cols] = x * np.float32(3.0) - np.float32(1.0)
    np.testing.assert_array_equal(outs[0], want)  # and nothing outside the rows was written
    np.testing.assert_array_equal(outs[0], outs[1])


def test_softmax_odd_rows(backend: str) -> None:
    x = np.random.default_rng(3).standard_normal((29, 781), dtype=np.float32)
    o = np.full_like(x, np.nan)
    softmax_kernel[(8,)](o, x, 781, 781, 29, 781, BLOCK_SIZE=1024)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o, e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-8)


@kdsl.kernel
def flat_scale(o, x, n, B: kl.constexpr):
    offs = kl.program_id(0) * B + kl.arange(0, B)
    kl.store(o + offs, kl.load(x + offs, mask=offs < n) * 2.0, mask=offs < n, eviction_policy="evict_first")


def test_flat_index_gets_a_head() -> None:
    """``addptr(o, pid * B + iv)``: the row base is ``o`` shifted by an index fixed in the loop."""
    assert _count(_wi(flat_scale, ["*f32", "*f32", "i32"], B=1024), "wi.align_gap") == 1


@pytest.mark.parametrize(("n", "start"), [(1000, 1), (3, 5), (4096, 0), (2049, 13)])
def test_flat_numbers(backend: str, n: int, start: int) -> None:
    x = np.random.default_rng(n).standard_normal(n, dtype=np.float32)
    ob = np.full(n + 32, np.nan, np.float32)
    flat_scale[(kdsl.cdiv(n, 512),)](ob[start:], x, n, B=512)
    want = np.full_like(ob, np.nan)
    want[start:start + n] = x * np.float32(2.0)
    np.testing.assert_array_equal(ob, want)
