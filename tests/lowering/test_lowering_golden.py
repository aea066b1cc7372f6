"""Golden work-item IR and OpenCL C for small kernels, plus structural properties of the lowering.

Regenerate the golden files with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.opencl import render_opencl
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi

GOLDEN = Path(__file__).parent / "golden"


@kdsl.kernel
def add_kernel(x, y, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


@kdsl.kernel
def rowsum_kernel(x, out, C: kl.constexpr):
    c = kl.arange(0, C)
    v = kl.load(x + kl.program_id(0) * C + c)
    kl.store(out + kl.program_id(0), kl.sum(v * v, axis=0))


def _wi(kernel: object, layout: Layout, noalias: bool = True, **meta: object) -> str:
    mod = kdsl.compile_to_ir(kernel, "*f32", "*f32", *(["*f32", "i32"] if kernel is add_kernel else []),
                             optimize=True, **meta)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout, noalias=noalias)
    verify(wmod)
    return print_op(wmod)


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("KDSL_UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(text + "\n")
    assert text + "\n" == path.read_text()


@pytest.mark.parametrize(("nt", "chunk"), [(1, 1), (4, 2)])
def test_vector_add_wi_golden(nt: int, chunk: int) -> None:
    _check(f"add_nt{nt}_c{chunk}.mlir", _wi(add_kernel, Layout(nt, chunk), BLOCK=64))


def test_vector_add_opencl_golden() -> None:
    mod = kdsl.compile_to_ir(add_kernel, "*f32", "*f32", "*f32", "i32", optimize=True, BLOCK=64)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    _check("add_nt1.cl", render_opencl(lower_to_wi(mod, entry, Layout(1))).source.rstrip("\n"))


def test_one_work_item_uses_no_local_memory_or_barrier() -> None:
    text = _wi(rowsum_kernel, Layout(1), C=64)
    assert "wi.barrier" not in text and "local>" not in text
    # the elementwise square fuses into the reduction loop: no array for v * v
    assert text.count("wi.alloc") == 1


def test_several_work_items_share_through_local_memory() -> None:
    text = _wi(rowsum_kernel, Layout(8), C=64)
    # a sum: each work-item folds the 8 elements it owns, the 8 partials meet in __local memory
    # (the row itself is not copied there: ops_collective._reduce_owned)
    assert "wi.local_id" in text and "memref<8xf32, local>" in text and "memref<64xf32, local>" not in text
    assert text.count("wi.barrier") >= 2
    # the scalar store happens once per program, in work-item 0
    assert 'predicate = "eq"' in text


def test_aliasing_safe_variant_splits_loads_from_stores() -> None:
    fused = _wi(add_kernel, Layout(1), BLOCK=64)
    safe = _wi(add_kernel, Layout(1), noalias=False, BLOCK=64)
    assert fused.count("scf.for") == 1
    assert safe.count("scf.for") == 2 and "noalias" not in safe
