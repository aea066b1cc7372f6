"""Automatic streaming stores (``kdsl.lowering.stream_stores``, ``Layout.stream_stores``, the launch's
``large`` fact from ``kdsl.runtime.streaming``): golden wi IR of a vector add whose output is large,
which stores stream (vector stores without a hint, to an array the kernel never reads) and which do
not (an array also loaded, an explicit hint, a strided scalar store, a pointer of unknown origin,
the knob off, no large argument), the specialisation key, and numbers against numpy on every
backend with the threshold lowered so that small arrays count as large.

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
from kdsl.runtime import streaming
from kdsl.runtime.cache import describe_specs
from tests.lowering.test_lowering_golden import _check
from tests.runtime.rt_kernels import add

VEC = Layout(1, 1, vector_width=16, stream_stores=1)


@kdsl.kernel
def add_hinted(x, y, o, n, B: kl.constexpr, EV: kl.constexpr, CM: kl.constexpr):
    offs = kl.program_id(0) * B + kl.arange(0, B)
    m = offs < n
    kl.store(o + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m, eviction_policy=EV,
             cache_modifier=CM)


@kdsl.kernel
def scale_in_place(x, n, B: kl.constexpr):
    offs = kl.program_id(0) * B + kl.arange(0, B)
    m = offs < n
    kl.store(x + offs, kl.load(x + offs, mask=m) * 2.0, mask=m)


@kdsl.kernel
def scatter_column(x, o, n, S: kl.constexpr, B: kl.constexpr):
    """One float per ``S`` floats of the output: scalar stores, which must not stream."""
    offs = kl.program_id(0) * B + kl.arange(0, B)
    m = offs < n
    kl.store(o + offs * S, kl.load(x + offs, mask=m), mask=m)


@kdsl.kernel
def gather_rows(x, idx, o, n, B: kl.constexpr):
    """Reads through a pointer made from an integer loaded from memory: it could be any array."""
    offs = kl.program_id(0) * B + kl.arange(0, B)
    m = offs < n
    base = kl.load(idx).to(kl.pointer_type(kl.float32))
    kl.store(o + offs, kl.load(base + offs, mask=m) + kl.load(x + offs, mask=m), mask=m)


@kdsl.kernel
def narrow_rows(x, o, n_rows, stride, W: kl.constexpr, R: kl.constexpr):
    """Rows of ``W`` floats far apart: each row is a piece of a line, not a run of vectors."""
    r = kl.program_id(0) * R + kl.arange(0, R)[:, None]
    c = kl.arange(0, W)[None, :]
    m = r < n_rows
    kl.store(o + r * stride + c, kl.load(x + r * W + c, mask=m), mask=m)


def _lowered(kernel: Any, sig: list[str], large: tuple[int, ...] | None, layout: Layout = VEC,
             **meta: Any) -> Operation:  # fmt: skip
    """The wi module of ``kernel`` with the launch fact ``large`` (one flag per IR argument)."""
    mod = kdsl.compile_to_ir(kernel, *sig, optimize=True, **meta)
    func = next(op for op in mod.body.ops if op.attributes.get("kernel"))
    if large is not None:
        func.attributes["large"] = large
    verify(mod)
    wmod = lower_to_wi(mod, func.attributes["sym_name"], layout)
    verify(wmod)
    return wmod


def _stores(wmod: Operation) -> list[Operation]:
    return [op for op in wmod.walk() if op.NAME in ("wi.gstore", "wi.gvstore", "wi.block_store")]


def _streaming(wmod: Operation) -> list[str]:
    return [op.NAME for op in _stores(wmod) if op.attributes.get("nontemporal")]


ADD_SIG = ["*f32", "*f32", "*f32", "i32"]


def test_large_output_golden() -> None:
    wmod = _lowered(add, ADD_SIG, (0, 0, 1, 0), BLOCK=64)
    _check("stream_stores_add.mlir", print_op(wmod))
    assert _streaming(wmod) == ["wi.gvstore", "wi.gvstore"]  # the vector body and its lane-count tail
    assert not any("stream" in op.attributes for op in wmod.walk())  # never reaches a renderer
    assert "__builtin_nontemporal_store(" in render_opencl(wmod).source
    assert "!nontemporal" in render_llvm(wmod).ir


@pytest.mark.parametrize(("large", "layout"), [
    (None, VEC),  # no large argument
    ((1, 1, 0, 0), VEC),  # only the inputs are large
    ((0, 0, 1, 0), Layout(1, 1, vector_width=16)),  # the step is off (GPU targets, lower.stream_stores=0)
])  # fmt: skip
def test_no_streaming_without_a_large_written_array(large: tuple[int, ...] | None, layout: Layout) -> None:
    wmod = _lowered(add, ADD_SIG, large, layout, BLOCK=64)
    assert _streaming(wmod) == []
    assert not any("stream" in op.attributes for op in wmod.walk())


def test_an_array_the_kernel_reads_does_not_stream() -> None:
    assert _streaming(_lowered(scale_in_place, ["*f32", "i32"], (1, 0), B=64)) == []


@pytest.mark.parametrize(("ev", "cm", "want"), [
    ("evict_normal", "", ["wi.gvstore", "wi.gvstore"]),  # the default policy, spelled out
    ("", ".wb", ["wi.gvstore", "wi.gvstore"]),  # the default cache modifier
    ("evict_last", "", []),  # the user asks to keep the output cached
    ("", ".cg", []),
    ("evict_first", "", ["wi.gvstore", "wi.gvstore"]),  # the user's own hint, as before
])  # fmt: skip
def test_user_hints_decide(ev: str, cm: str, want: list[str]) -> None:
    wmod = _lowered(add_hinted, ADD_SIG, (0, 0, 1, 0), B=64, EV=ev, CM=cm)
    assert _streaming(wmod) == want


def test_scalar_stores_do_not_stream() -> None:
    wmod = _lowered(scatter_column, ["*f32", "*f32", "i32"], (0, 1, 0), B=64, S=16)
    assert _stores(wmod) and _streaming(wmod) == []


def test_narrow_vectors_stream_only_as_a_run() -> None:
    # 8-float vectors (AVX2-wide) that a loop advances one vector per iteration fill whole lines
    avx2 = Layout(1, 1, vector_width=8, stream_stores=1)
    assert _streaming(_lowered(add, ADD_SIG, (0, 0, 1, 0), avx2, BLOCK=64)) == ["wi.gvstore", "wi.gvstore"]
    # a block store of 8-float rows a runtime stride apart writes half lines: it stays plain
    rows = _lowered(narrow_rows, ["*f32", "*f32", "i32", "i32"], (0, 1, 0, 0), avx2, W=8, R=16)
    assert [op.NAME for op in _stores(rows)] == ["wi.block_store"] and _streaming(rows) == []
    # 16-float rows are whole lines (when aligned; the renderers check)
    rows = _lowered(narrow_rows, ["*f32", "*f32", "i32", "i32"], (0, 1, 0, 0), W=16, R=16)
    assert _streaming(rows) == ["wi.block_store"]


def test_a_pointer_of_unknown_origin_disables_streaming() -> None:
    wmod = _lowered(gather_rows, ["*f32", "*i64", "*f32", "i32"], (0, 0, 1, 0), B=64)
    assert _streaming(wmod) == []


def test_specialisation_records_large_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "LARGE_BYTES", 4096)
    small, big = np.zeros(1023, np.float32), np.zeros(1024, np.float32)
    specs = add.specialization([small, small, big, 1023], {"BLOCK": 64})
    assert [s.large for s in specs[:3]] == [False, False, True]
    assert "out_ptr:ptr<f32>/div16/large" in describe_specs(specs)
    assert specs[2].key() != add.specialization([small, small, small, 1023], {"BLOCK": 64})[2].key()


def test_do_not_specialize_keeps_one_specialisation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parameter in ``do_not_specialize`` gets no size fact: no new compilation when it grows."""
    monkeypatch.setattr(streaming, "LARGE_BYTES", 4096)
    fixed = kdsl.kernel(do_not_specialize=["out_ptr"])(add.fn)
    small, big = np.zeros(1023, np.float32), np.zeros(1024, np.float32)
    assert not fixed.specialization([small, small, big, 1023], {"BLOCK": 64})[2].large


def test_device_array_key_records_large(monkeypatch: pytest.MonkeyPatch) -> None:
    with kdsl.backend("cpu"):
        monkeypatch.setattr(streaming, "LARGE_BYTES", 4096)
        big, small = kdsl.zeros(1024, np.float32), kdsl.zeros(1023, np.float32)
        assert big.large and not small.large
        assert big._key == small._key + ":L"


@pytest.mark.parametrize("n", [1, 1000, 4099])
def test_numbers_with_large_arrays(backend: str, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """Small and large launches of one kernel (two specialisations) agree with numpy."""
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    for threshold in (1 << 40, 64):
        monkeypatch.setattr(streaming, "LARGE_BYTES", threshold)
        o = np.full(n, 7.0, np.float32)
        add[(kdsl.cdiv(n, 256),)](x, y, o, n, BLOCK=256)
        np.testing.assert_array_equal(o, x + y)
        z = x.copy()
        scale_in_place[(kdsl.cdiv(n, 256),)](z, n, B=256)
        np.testing.assert_array_equal(z, x * 2.0)
        o = np.full(n * 4, 7.0, np.float32)
        scatter_column[(kdsl.cdiv(n, 256),)](x, o, n, S=4, B=256)
        want = np.full(n * 4, 7.0, np.float32)
        want[::4] = x
        np.testing.assert_array_equal(o, want)


def test_aliased_output_numbers(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output is also an input (``add(x, y, x)``): every launch still reads before it writes."""
    monkeypatch.setattr(streaming, "LARGE_BYTES", 64)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3001).astype(np.float32), rng.standard_normal(3001).astype(np.float32)
    want = x + y
    add[(kdsl.cdiv(3001, 512),)](x, y, x, 3001, BLOCK=512)
    np.testing.assert_array_equal(x, want)


def test_tutorial_softmax_rows(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's tutorial softmax (a persistent row loop, plain stores) with a large output."""
    from kdsl.ops.softmax import softmax_ref

    @kdsl.kernel
    def softmax(out, inp, in_stride, out_stride, n_rows, n_cols, BLOCK: kl.constexpr):
        for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
            c = kl.arange(0, BLOCK)
            row = kl.load(inp + r * in_stride + c, mask=c < n_cols, other=-float("inf"))
            e = kl.exp(row - kl.max(row, axis=0))
            kl.store(out + r * out_stride + c, e / kl.sum(e, axis=0), mask=c < n_cols)

    monkeypatch.setattr(streaming, "LARGE_BYTES", 1024)
    x = np.random.default_rng(1).standard_normal((37, 781)).astype(np.float32)
    y = np.zeros_like(x)
    softmax[(5,)](y, x, 781, 781, 37, 781, BLOCK=1024)
    np.testing.assert_allclose(y, softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("width", [8, 16])
def test_row_block_numbers(backend: str, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """Block stores of rows (streamed when a row is a whole line) into a strided output."""
    monkeypatch.setattr(streaming, "LARGE_BYTES", 64)
    rng = np.random.default_rng(width)
    n_rows, stride = 45, 37
    x = rng.standard_normal((n_rows, width)).astype(np.float32)
    o = np.full((n_rows, stride), 7.0, np.float32)
    narrow_rows[(kdsl.cdiv(n_rows, 16),)](x, o, n_rows, stride, W=width, R=16)
    want = np.full((n_rows, stride), 7.0, np.float32)
    want[:, :width] = x
    np.testing.assert_array_equal(o, want)
