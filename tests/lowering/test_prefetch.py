"""Software prefetch of the next row (``kdsl.lowering.prefetch``, ``Layout.prefetch``): golden wi IR
of a row-loop softmax, where the prefetches go (the pass with the most arithmetic per row load, never
the first; none for one pass), the next-program form of one-row-per-program kernels, address
arithmetic that must not be cloned, both renderers, the launch knob, and numbers: every kernel shape
that gets prefetches, against numpy and against the same launch with ``lower.prefetch=0``, on every
backend (rows that do not divide among the programs, a descending row loop, the last program).

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
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from kdsl.ops.norms import rms_norm_fwd_kernel
from kdsl.ops.softmax import softmax_kernel
from tests.lowering.test_lowering_golden import _check

VEC = Layout(1, 1, vector_width=16, prefetch=1)
SOFTMAX_SIG = ["*f32", "*f32", "i32", "i32", "i32", "i32"]


@kdsl.kernel
def row_add(o, x, n_rows, n_cols, B: kl.constexpr):
    """One pass over each row: nothing to overlap a prefetch with."""
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        c = kl.arange(0, B)
        kl.store(o + r * n_cols + c, kl.load(x + r * n_cols + c, mask=c < n_cols) + 1.0, mask=c < n_cols)


@kdsl.kernel
def rows_down(o, x, n_rows, n_cols, B: kl.constexpr):
    """A descending row loop (negative step): max pass, then ``exp`` and sum (the host)."""
    for r in kl.range(n_rows - 1, -1, -1):
        c = kl.arange(0, B)
        v = kl.load(x + r * n_cols + c, mask=c < n_cols, other=-float("inf"))
        e = kl.exp(v - kl.max(v, axis=0))
        kl.store(o + r * n_cols + c, e / kl.sum(e, axis=0), mask=c < n_cols)


@kdsl.kernel
def two_pass_program(o, x, n_cols, B: kl.constexpr):
    """One row per program, two loops over it: the next row is program ``id + 1``'s."""
    row = kl.program_id(0)
    acc = kl.zeros([B], dtype=kl.float32)
    for off in range(0, n_cols, B):
        c = off + kl.arange(0, B)
        acc += kl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0)
    s = kl.sum(acc, axis=0)
    for off in range(0, n_cols, B):
        c = off + kl.arange(0, B)
        v = kl.load(x + row * n_cols + c, mask=c < n_cols, other=0.0)
        kl.store(o + row * n_cols + c, kl.exp(v) * s, mask=c < n_cols)


@kdsl.kernel
def divided_row(o, x, n_rows, n_cols, B: kl.constexpr):
    """The row's address divides by a value depending on the row: cloning it for the next row
    could divide by zero, so that load is not prefetched."""
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        c = kl.arange(0, B)
        src = x + (r * n_cols * (r + 1)) // (r + 1) + c
        v = kl.load(src, mask=c < n_cols, other=-float("inf"))
        e = kl.exp(v - kl.max(v, axis=0))
        kl.store(o + r * n_cols + c, e, mask=c < n_cols)


def lower_kernel(kernel: Any, sig: list[str], layout: Layout, **meta: Any) -> Operation:
    """The verified wi module of ``kernel`` specialised to ``sig`` and lowered with ``layout``
    (shared with test_align_stores.py)."""
    mod = kdsl.compile_to_ir(kernel, *sig, optimize=True, **meta)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout)
    verify(wmod)
    return wmod


def _wi(kernel: Any, sig: list[str], layout: Layout = VEC, **meta: Any) -> Operation:
    return lower_kernel(kernel, sig, layout, **meta)


def _func(kernel: Any, sig: list[str], layout: Layout = VEC, **meta: Any) -> Operation:
    return _wi(kernel, sig, layout, **meta).body.ops[0]  # type: ignore[no-any-return]


def _loops_with_prefetch(func: Operation) -> list[Operation]:
    return [op for op in func.walk() if op.NAME == "scf.for"
            and any(o.NAME == "wi.prefetch" for o in op.regions[0].block.ops)]  # fmt: skip


def test_softmax_row_loop_golden() -> None:
    _check("prefetch_rows.mlir", print_op(_wi(softmax_kernel, SOFTMAX_SIG, BLOCK_SIZE=64)))


def test_softmax_prefetches_in_the_exp_pass_only() -> None:
    func = _func(softmax_kernel, SOFTMAX_SIG, BLOCK_SIZE=1024)
    [host] = _loops_with_prefetch(func)
    ops = [o.NAME for o in host.regions[0].block.ops]
    assert "math.exp" in ops and ops.count("wi.prefetch") == ops.count("wi.gvload") == 1
    # the prefetched row is the next iteration's, clamped to the loop: iv + step, selected
    [row_loop] = [op for op in func.regions[0].block.ops if op.NAME == "scf.for"]
    first = row_loop.regions[0].block.ops[0]
    assert first.NAME == "arith.add" and first.operands[0] is row_loop.regions[0].block.args[0]
    assert print_op(_wi(softmax_kernel, SOFTMAX_SIG, Layout(1, 1, vector_width=16), BLOCK_SIZE=1024)).count(
        "wi.prefetch") == 0  # fmt: skip


def test_one_pass_gets_no_prefetch() -> None:
    assert "wi.prefetch" not in print_op(_wi(row_add, ["*f32", "*f32", "i32", "i32"], B=256))


def test_one_row_per_program_prefetches_the_next_program() -> None:
    func = _func(rms_norm_fwd_kernel, ["*f32", "*f32", "*f32", "*f32", "i32", "i32", "fp32"], BLOCK_SIZE=256)
    text = print_op(func)
    assert text.count("wi.prefetch") == 1 and "wi.num_programs {axis = 0}" in text
    # in the second loop (x * rstd * w), not the first (the sum of squares)
    loops = [op for op in func.regions[0].block.ops if op.NAME == "scf.for"]
    assert not any(o.NAME == "wi.prefetch" for o in loops[0].walk())
    assert any(o.NAME == "wi.prefetch" for o in loops[-1].walk())


def test_row_dependent_division_is_not_cloned() -> None:
    text = print_op(_wi(divided_row, ["*f32", "*f32", "i32", "i32"], B=256))
    assert "wi.prefetch" not in text


def test_renderers() -> None:
    func = _wi(softmax_kernel, SOFTMAX_SIG, BLOCK_SIZE=64)
    src = render_opencl(func).source
    assert "#define KD_PREFETCH(p) __builtin_prefetch((p), 0, 3)" in src and "KD_PREFETCH(v" in src
    assert 'call void @"llvm.prefetch.p0"(ptr' in render_llvm(func).ir


def test_cpu_targets_prefetch_by_default() -> None:
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.runtime.cpu.backend import cpu_layout

    assert cpu_layout(LaunchOptions()).prefetch == 1
    assert cpu_layout(LaunchOptions(extra=(("lower.prefetch", 0),))).prefetch == 0
    assert Layout.from_options(1, (), target="opencl").prefetch == 0  # the device decides (a CPU)


# --- numbers: prefetching never changes a result ----------------------------------------------------


def _softmax_ref(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("n_rows", "n_cols", "grid"), [(37, 781, 8), (5, 64, 2), (9, 1000, 16), (1, 33, 1)])
def test_softmax_rows(backend: str, n_rows: int, n_cols: int, grid: int) -> None:
    x = np.random.default_rng(n_rows).standard_normal((n_rows, n_cols), dtype=np.float32)
    outs = []
    for pf in (1, 0):
        o = np.full_like(x, np.nan)
        softmax_kernel[(grid,)](o, x, n_cols, n_cols, n_rows, n_cols, BLOCK_SIZE=1024, **{"lower.prefetch": pf})
        outs.append(o)
    np.testing.assert_allclose(outs[0], _softmax_ref(x), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_descending_rows(backend: str) -> None:
    x = np.random.default_rng(1).standard_normal((13, 300), dtype=np.float32)
    o = np.full_like(x, np.nan)
    rows_down[(1,)](o, x, 13, 300, B=512)
    np.testing.assert_allclose(o, _softmax_ref(x), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("n_rows", [1, 3, 40])
def test_next_program(backend: str, n_rows: int) -> None:
    x = np.random.default_rng(n_rows).uniform(-1, 1, (n_rows, 700)).astype(np.float32)
    o = np.full_like(x, np.nan)
    two_pass_program[(n_rows,)](o, x, 700, B=256)
    want = np.exp(x.astype(np.float64)) * x.astype(np.float64).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(o, want, rtol=2e-5, atol=1e-5)


def test_divided_row_numbers(backend: str) -> None:
    x = np.random.default_rng(2).standard_normal((6, 100), dtype=np.float32)
    o = np.full_like(x, np.nan)
    divided_row[(4,)](o, x, 6, 100, B=128)
    np.testing.assert_allclose(o, np.exp(x - x.max(axis=1, keepdims=True)), rtol=2e-6, atol=1e-7)
