"""The ``nontemporal`` store hint: Triton's ``eviction_policy="evict_first"`` / ``cache_modifier=".cs"``
on ``tl.store`` reaches ``wi.gstore`` / ``wi.gvstore`` / ``wi.block_store`` and is rendered as
``__builtin_nontemporal_store`` (OpenCL C) and ``!nontemporal`` (LLVM IR); SPIR-V ignores it.
Results never change: numbers against numpy on every backend, masked tails and unaligned rows included.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.llvm import render_llvm
from kdsl.codegen.opencl import render_opencl
from kdsl.ir.core import Operation
from kdsl.ir.dialects import wi
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from tests.lowering.test_block import _block_module, _expected


@kdsl.kernel
def row_copy(o, x, n_rows, n_cols, B: kl.constexpr, HINT: kl.constexpr):
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        c = kl.arange(0, B)
        v = kl.load(x + r * n_cols + c, mask=c < n_cols) * 2.0 + 1.0
        if HINT == 1:
            kl.store(o + r * n_cols + c, v, mask=c < n_cols, eviction_policy="evict_first")
        elif HINT == 2:
            kl.store(o + r * n_cols + c, v, mask=c < n_cols, cache_modifier=".cs")
        else:
            kl.store(o + r * n_cols + c, v, mask=c < n_cols)


def _wi(hint: int, layout: Layout) -> Operation:
    mod = kdsl.compile_to_ir(row_copy, "*f32", "*f32", "i32", "i32", optimize=True, B=64, HINT=hint)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout)
    verify(wmod)
    return wmod


@pytest.mark.parametrize("hint", [1, 2])
def test_hint_reaches_wi_and_renderers(hint: int) -> None:
    vec = _wi(hint, Layout(1, 1, vector_width=8))
    text = print_op(vec)
    assert "wi.gvstore" in text and "nontemporal = true" in text
    stores = [op for op in vec.walk() if op.NAME in ("wi.gstore", "wi.gvstore")]
    assert stores and all(op.attributes.get("nontemporal") is True for op in stores)  # vector body and scalar tail
    src = render_opencl(vec).source
    assert "__builtin_nontemporal_store(" in src and "KD_VST(float, 8, " in src  # vector fallback for unaligned rows
    assert "!nontemporal" in render_llvm(vec).ir
    scalar = render_opencl(_wi(hint, Layout(1))).source
    assert "__builtin_nontemporal_store(" in scalar


def test_no_hint_no_attribute() -> None:
    vec = _wi(0, Layout(1, 1, vector_width=8))
    assert "nontemporal" not in print_op(vec)
    assert "__builtin_nontemporal_store" not in render_opencl(vec).source
    assert "!nontemporal" not in render_llvm(vec).ir


@pytest.mark.parametrize("hint", [0, 1, 2])
@pytest.mark.parametrize("n_cols", [64, 61, 37, 1])
def test_row_copy_numbers(backend: str, hint: int, n_cols: int) -> None:
    rng = np.random.default_rng(n_cols)
    n_rows = 5
    # odd n_cols: rows start at unaligned addresses, so vector stores take the fallback path
    x = rng.standard_normal((n_rows, n_cols)).astype(np.float32)
    o = np.full_like(x, 7.0)
    row_copy[(3,)](o, x, n_rows, n_cols, B=64, HINT=hint)
    np.testing.assert_array_equal(o, x * 2.0 + 1.0)


def _nontemporal_blocks() -> Operation:
    m = _block_module()
    for op in m.walk():
        if isinstance(op, wi.BlockStoreOp):
            op.attributes["nontemporal"] = True
    verify(m)
    return m


@pytest.mark.parametrize("n", [40, 17, 0])
def test_block_store_opencl(n: int) -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("no OpenCL device")
    import pyopencl as cl

    from kdsl.runtime.opencl.device import get_device

    src = render_opencl(_nontemporal_blocks()).source
    assert "__builtin_nontemporal_store(KD_VLD(float, 8, __private, " in src
    dev = get_device()
    x = np.arange(100, dtype=np.float32)
    y = np.full(96, 5.0, np.float32)
    mf = cl.mem_flags
    xb = cl.Buffer(dev.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(dev.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    prog = cl.Program(dev.ctx, src).build()
    off = np.uint64(0)
    prog.blk(dev.queue, (1,), (1,), xb, off, yb, off, np.int32(n))
    cl.enqueue_copy(dev.queue, y, yb)
    np.testing.assert_array_equal(y, _expected(x, n))


@pytest.mark.parametrize("n", [40, 17, 0])
def test_block_store_llvm(n: int) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("no cpu backend")
    import ctypes

    from kdsl.runtime.cpu.compiler import compile_object
    from kdsl.runtime.cpu.loader import LoadedObject
    from kdsl.runtime.cpu.target import host

    rendered = render_llvm(_nontemporal_blocks(), vector_bytes=host().vector_bytes)
    assert "!nontemporal" in rendered.ir
    loaded = LoadedObject(compile_object(rendered.ir, use_cache=False)[0])
    x = np.arange(100, dtype=np.float32)
    y = np.full(96, 5.0, np.float32)
    status = np.zeros(1, np.int32)
    argv = (ctypes.c_uint64 * 4)(x.ctypes.data, y.ctypes.data, n, status.ctypes.data)
    loaded.run(ctypes.addressof(argv), 1, 1, 1, 0, 1)
    np.testing.assert_array_equal(y, _expected(x, n))


