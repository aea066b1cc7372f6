"""The lane-count iteration ending a vector loop (``kdsl.lowering.vector_tail``): golden wi IR, the
lane-count operands of ``wi.gvload``/``wi.gvstore``/``wi.vload``/``wi.vstore`` rendered by both
vector renderers against their meaning (every element type, counts outside ``[0, N]``), the same
hand-written loops run scalar and vectorised, and rows whose length is not a multiple of the
vector width against numpy on every backend (reductions of every kind with NaN, integer wrap,
private and global stores under two bounds, and a hypothesis run over the column count).

Regenerate the golden file with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.ir import types as T
from kdsl.ir.core import Block, Builder, ModuleOp, Operation, Region
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.dialects.wi_vector import GVLoadOp, GVStoreOp, VLoadOp, VStoreOp
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.types import MemRefType, PointerType, ScalarType, VectorType
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from kdsl.lowering.vectorize import vectorize
from kdsl.ops.norms import layer_norm_fwd_kernel
from kdsl.ops.softmax import softmax_kernel
from tests.lowering.test_lowering_golden import _check

# Three loops: a runtime trip count without a mask (min and xor reductions, a private store: the
# lane-count iteration ends at ``n`` and nothing is left), a chunk-guarded 2-D loop with a flat
# bound (the guard folds into the lane count; a streaming store), a strided column read of a
# private tile with a bound (the strided ``wi.vload`` takes the count); then float reductions of
# every kind under a bound (the inactive lanes keep their accumulators).
TAIL = """\
builtin.module {
  wi.func @tail(%x: ptr<f32>, %ix: ptr<i32>, %y: ptr<f32>, %y2: ptr<f32>, %iy: ptr<i32>, %f: ptr<f32>, %n: i32, %rows: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c4 = arith.constant {value = 4} : i32
    %c32 = arith.constant {value = 32} : i32
    %c128 = arith.constant {value = 128} : i32
    %big = arith.constant {value = 2147483647} : i32
    %two = arith.constant {value = 2.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %pinf = arith.constant {value = inf} : f32
    %fz = arith.constant {value = 0.0} : f32
    %fone = arith.constant {value = 1.0} : f32
    %buf = wi.alloc : memref<256xi32, private>
    %t = wi.alloc : memref<128xf32, private>
    %lo, %xr = scf.for %c0, %n, %c1, %big, %c0 : (i32, i32, i32, i32, i32) -> (i32, i32) {
    ^bb0(%s: i32, %a: i32, %b: i32):
      %p = wi.addptr %ix, %s : (ptr<i32>, i32) -> ptr<i32>
      %v = wi.gload %p : (ptr<i32>) -> i32
      wi.store %v, %buf, %s : i32, memref<256xi32, private>, i32
      %a2 = arith.min %a, %v : i32
      %b2 = arith.xor %b, %v : i32
      scf.yield %a2, %b2 : i32, i32
    }
    wi.gstore %iy, %lo : ptr<i32>, i32
    %iy1 = wi.addptr %iy, %c1 : (ptr<i32>, i32) -> ptr<i32>
    wi.gstore %iy1, %xr : ptr<i32>, i32
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%u: i32):
      %r = arith.div %u, %c32 : i32
      %g = arith.cmp %r, %rows {predicate = "lt"} : (i32, i32) -> i1
      %bd = arith.cmp %u, %n {predicate = "lt"} : (i32, i32) -> i1
      %m = arith.and %g, %bd : i1
      %p2 = wi.addptr %x, %u : (ptr<f32>, i32) -> ptr<f32>
      %v2 = wi.gload %p2, %m, %two : (ptr<f32>, i1, f32) -> f32
      %w2 = arith.add %v2, %fone : f32
      %q2 = wi.addptr %y, %u : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q2, %w2, %m {nontemporal = true} : ptr<f32>, f32, i1
      scf.yield
    }
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%z: i32):
      %pz = wi.addptr %x, %z : (ptr<f32>, i32) -> ptr<f32>
      %vz = wi.gload %pz : (ptr<f32>) -> f32
      wi.store %vz, %t, %z : f32, memref<128xf32, private>, i32
      scf.yield
    }
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%w: i32):
      %col = arith.rem %w, %c32 : i32
      %row = arith.div %w, %c32 : i32
      %k = arith.mul %col, %c4 : i32
      %idx = arith.add %k, %row : i32
      %e = wi.load %t, %idx : (memref<128xf32, private>, i32) -> f32
      %ok = arith.cmp %w, %n {predicate = "lt"} : (i32, i32) -> i1
      %q3 = wi.addptr %y2, %w : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q3, %e, %ok : ptr<f32>, f32, i1
      scf.yield
    }
    %sum, %mx, %mn, %mxn, %mnn, %pr = scf.for %c0, %c128, %c1, %fz, %ninf, %pinf, %ninf, %pinf, %fone : (i32, i32, i32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32) {
    ^bb0(%q: i32, %s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32, %s5: f32):
      %pq = wi.addptr %x, %q : (ptr<f32>, i32) -> ptr<f32>
      %mq = arith.cmp %q, %n {predicate = "lt"} : (i32, i32) -> i1
      %vq = wi.gload %pq, %mq, %fone : (ptr<f32>, i1, f32) -> f32
      %r0 = arith.add %s0, %vq : f32
      %r1 = arith.max %s1, %vq {propagate_nan = false} : f32
      %r2 = arith.min %s2, %vq {propagate_nan = false} : f32
      %r3 = arith.max %s3, %vq {propagate_nan = true} : f32
      %r4 = arith.min %s4, %vq {propagate_nan = true} : f32
      %r5 = arith.mul %s5, %vq : f32
      scf.yield %r0, %r1, %r2, %r3, %r4, %r5 : f32, f32, f32, f32, f32, f32
    }
    wi.gstore %f, %sum : ptr<f32>, f32
    %f1 = wi.addptr %f, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f1, %mx : ptr<f32>, f32
    %f2 = wi.addptr %f1, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f2, %mn : ptr<f32>, f32
    %f3 = wi.addptr %f2, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f3, %mxn : ptr<f32>, f32
    %f4 = wi.addptr %f3, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f4, %mnn : ptr<f32>, f32
    %f5 = wi.addptr %f4, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f5, %pr : ptr<f32>, f32
    wi.return
  }
}
"""


def _vectorized(text: str, tail: bool = True) -> str:
    mod = parse_module(text)
    vectorize(mod.body.ops[0], 16, fuse=False, unroll=1, tail=tail)
    verify(mod)
    out = print_op(mod)
    assert print_op(parse_module(out)) == out  # lane counts round-trip
    return out


def _counted(op: Operation) -> bool:
    at = {GVLoadOp: 1, GVStoreOp: 2, VLoadOp: 2, VStoreOp: 3}.get(type(op))
    return at is not None and len(op.operands) > at and op.operands[at].type == T.i32


def test_tail_golden() -> None:
    out = _vectorized(TAIL)
    _check("vectorize_tail.mlir", "// before\n" + TAIL + "// after\n" + out.rstrip("\n"))
    mod = parse_module(out)
    assert sum(_counted(op) for op in mod.walk()) == 7
    assert any(o.NAME == "wi.vload" and _counted(o) and o.attributes.get("stride") == 4 for o in mod.walk())


def test_tail_off_keeps_the_scalar_remainder() -> None:
    out = parse_module(_vectorized(TAIL, tail=False))
    assert not any(_counted(op) for op in out.walk())
    assert sum(isinstance(op, wi.GLoadOp) for op in out.walk()) >= 3


def _unit_loops(func: Operation) -> list[Operation]:
    return [op for op in func.walk() if isinstance(op, scf.ForOp) and _step(op) == 1]


def _step(loop: Operation) -> object:
    c = loop.operands[2].owner_op
    return c.attributes.get("value") if isinstance(c, arith.ConstantOp) else None


@pytest.mark.parametrize("block", [1024, 32, 16])
def test_softmax_and_layer_norm_have_no_scalar_element_loop(block: int) -> None:
    """781 of 1024 columns: the chunk before the bound and the one before the tile's end (the
    masked-off region) both end in lane-count iterations; no element runs alone."""
    for kernel, sig in ((softmax_kernel, ["*f32", "*f32", "i32", "i32", "i32", "i32"]),
                        (layer_norm_fwd_kernel, [*["*f32"] * 6, "i32", "i32", "i32", "i32", "fp32"])):  # fmt: skip
        mod = kdsl.compile_to_ir(kernel, *sig, optimize=True, BLOCK_SIZE=block)
        entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
        func = lower_to_wi(mod, entry, Layout.from_options(1, (), target="opencl")).body.ops[0]
        assert _unit_loops(func) == []
        assert any(_counted(op) for op in func.walk())


# --- the lane-count operands, rendered: every element type, counts outside [0, N] ---------------

ELEMS = ("f32", "i32", "u32", "f64", "i64", "u64", "f16", "u8", "i8", "u16", "i16")
COUNTS = (-3, 0, 1, 7, 15, 16, 40)
LANES = 16


def _counted_module(name: str, lanes: int = LANES) -> ModuleOp:
    """``y[0:16] <- gvload(x, n, other)`` (counted, then whole); ``y[16:32]``: the same through a
    private array (counted ``vstore``, counted ``vload``); ``y[32:48]``: a counted strided
    ``vload`` (lanes ``2i``); ``y[48:64]``: a counted streaming ``gvstore``. ``y`` starts at 5."""
    e = ScalarType(name)
    vt = VectorType(lanes, e)
    m = ModuleOp.empty()
    body = Block()
    x, y, n = body.add_arg(PointerType(e), "x"), body.add_arg(PointerType(e), "y"), body.add_arg(T.i32, "n")
    attrs = {"sym_name": "cnt", "arg_names": ("x", "y", "n"), "num_threads": 1}
    Builder(m.body).create(wi.FuncOp, attributes=attrs, regions=[Region([body])])
    b = Builder(body)

    def c(v: Any, t: Any) -> Any:
        return b.create(arith.ConstantOp, [], [t], {"value": v}).result

    def at(k: int) -> Any:
        return b.create(wi.AddPtrOp, [y, c(k, T.i32)], [PointerType(e)]).result

    other = c(3.0 if e.is_float else 3, e)
    arr = b.create(wi.AllocOp, [], [MemRefType(48, e)]).result
    fill = b.create(GVLoadOp, [x], [vt]).result
    for k in range(48 // lanes):
        b.create(VStoreOp, [fill, arr, c(lanes * k, T.i32)])
    v = b.create(GVLoadOp, [x, n, other], [vt]).result
    b.create(GVStoreOp, [at(0), v])
    zero = c(0, T.i32)
    b.create(VStoreOp, [v, arr, zero, n])
    b.create(GVStoreOp, [at(16), b.create(VLoadOp, [arr, zero, n], [vt]).result])
    b.create(GVStoreOp, [at(32), b.create(VLoadOp, [arr, c(1, T.i32), n], [vt], {"stride": 2}).result])
    b.create(GVStoreOp, [at(48), v, n], [], {"nontemporal": True})
    b.create(wi.ReturnOp)
    verify(m)
    return m


def _counted_expected(x: np.ndarray, n: int, lanes: int = LANES) -> np.ndarray:
    k = max(0, min(n, lanes))
    y = np.full(64, 5, x.dtype)
    y[:k] = x[:k]
    y[k:lanes] = 3
    arr = np.concatenate([x[:lanes]] * (48 // lanes))
    arr[:k] = x[:k]
    y[16 : 16 + k] = arr[:k]
    y[16 + k : 16 + lanes] = 0
    col = arr[1::2][:lanes]
    y[32 : 32 + k] = col[:k]
    y[32 + k : 32 + lanes] = 0
    y[48 : 48 + k] = x[:k]
    return y


_NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "u32": np.uint32,
       "i64": np.int64, "u64": np.uint64, "u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16}  # fmt: skip


def _data(name: str) -> np.ndarray:
    dt = _NP[name]
    x = (np.arange(16) * 7 - 40).astype(np.float64)
    return x.astype(dt) if np.issubdtype(dt, np.floating) or np.issubdtype(dt, np.signedinteger) else \
        np.arange(16).astype(dt) * 9 + 11  # fmt: skip


def _run_opencl(mod: ModuleOp, arrays: list[np.ndarray], scalars: list[int]) -> None:
    """Render ``mod`` as OpenCL C and run one work-item: pointer arguments first (copied back)."""
    import pyopencl as cl

    from kdsl.codegen.opencl import render_opencl
    from kdsl.runtime.opencl.device import get_device

    dev = get_device()
    rendered = render_opencl(mod)
    mf = cl.mem_flags
    bufs = [cl.Buffer(dev.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a) for a in arrays]
    args: list[Any] = []
    for buf in bufs:
        args += [buf, np.uint64(0)]
    args += [np.int32(s) for s in scalars]
    prog = cl.Program(dev.ctx, rendered.source).build()
    getattr(prog, rendered.kernel_name)(dev.queue, (1,), (1,), *args)
    for a, buf in zip(arrays, bufs):
        cl.enqueue_copy(dev.queue, a, buf)


def _run_llvm(mod: ModuleOp, arrays: list[np.ndarray], scalars: list[int]) -> None:
    """Render ``mod`` as LLVM IR and run one program through its ``kdsl_run`` driver."""
    from kdsl.codegen.llvm import render_llvm
    from kdsl.runtime.cpu.compiler import compile_object
    from kdsl.runtime.cpu.loader import LoadedObject
    from kdsl.runtime.cpu.target import host

    rendered = render_llvm(mod, vector_bytes=host().vector_bytes)
    loaded = LoadedObject(compile_object(rendered.ir, use_cache=False)[0])
    status = np.zeros(1, np.int32)
    slots = [a.ctypes.data for a in arrays] + [s & 0xFFFFFFFF for s in scalars] + [status.ctypes.data]
    argv = (ctypes.c_uint64 * len(slots))(*slots)
    loaded.run(ctypes.addressof(argv), 1, 1, 1, 0, 1)


RUNNERS = {"opencl": _run_opencl, "cpu": _run_llvm}


@pytest.fixture(params=tuple(RUNNERS))
def renderer(request: pytest.FixtureRequest) -> str:
    """A backend whose renderer prints vectors (OpenCL C, LLVM IR)."""
    name: str = request.param
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable (see tests/conftest.py for what to install)")
    if name == "opencl":
        from kdsl.runtime.opencl.device import get_device

        if not get_device().fp64:
            pytest.skip("the OpenCL device has no fp64 (the counted-access module is rendered with f64)")
    return name


@pytest.mark.parametrize("elem", ELEMS)
def test_counted_accesses_rendered(renderer: str, elem: str) -> None:
    """Lanes ``i < n`` move, the others read nothing (``other`` / 0) and write nothing; ``n`` past
    ``[0, 16]`` clamps. ``x`` holds exactly 16 elements, so a lane past the count that touched memory
    would read outside it (caught by the values, and by tools like valgrind)."""
    mod = _counted_module(elem)
    for n in COUNTS:
        x = _data(elem)
        y = np.full(64, 5, x.dtype)
        RUNNERS[renderer](mod, [x, y], [n])
        np.testing.assert_array_equal(y, _counted_expected(x, n), err_msg=f"{elem} n={n}")


@pytest.mark.parametrize("lanes", [4, 8])
@pytest.mark.parametrize("elem", ["f32", "i64", "f16"])
def test_counted_accesses_rendered_narrower(renderer: str, elem: str, lanes: int) -> None:
    """The same at the widths ``lower.vector_width`` may ask for (OpenCL: the staged helpers)."""
    mod = _counted_module(elem, lanes)
    for n in (-1, 0, 1, lanes - 1, lanes, 9):
        x = _data(elem)
        y = np.full(64, 5, x.dtype)
        RUNNERS[renderer](mod, [x, y], [n])
        np.testing.assert_array_equal(y, _counted_expected(x, n, lanes), err_msg=f"{elem} n={n}")


# --- the hand-written loops, scalar and vectorised, on each vector renderer -------------------------


def _tail_run(renderer: str, text: str, n: int, rows: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, 256).astype(np.float32)
    x[rng.integers(0, 256, 3)] = np.nan if seed % 3 == 0 else 0.5
    ix = rng.integers(-(2**31), 2**31 - 1, 256, dtype=np.int32)
    y, y2 = np.full(128, -7.0, np.float32), np.full(128, -7.0, np.float32)
    iy, f = np.zeros(2, np.int32), np.zeros(6, np.float32)
    arrays = [x, ix, y, y2, iy, f]
    RUNNERS[renderer](parse_module(text), arrays, [n, rows])
    return arrays[2:]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 140), rows=st.integers(0, 5), seed=st.integers(0, 50))
def test_tail_loops_match_their_scalar_form(renderer: str, n: int, rows: int, seed: int) -> None:
    """The ``TAIL`` loops vectorised (lane-count iterations) and left scalar give the same bits,
    except the float sum and product (reassociated)."""
    vec = _tail_run(renderer, _vectorized(TAIL), n, rows, seed)
    ref = _tail_run(renderer, TAIL, n, rows, seed)
    for got, want in zip(vec[:3], ref[:3]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(vec[3][1:5], ref[3][1:5])  # max/min, with and without NaN propagation
    np.testing.assert_allclose(vec[3][[0, 5]], ref[3][[0, 5]], rtol=1e-5)


# --- rows against numpy, every backend ------------------------------------------------------------


@kdsl.jit
def _max_nan(a, b):  # type: ignore[no-untyped-def]
    return kl.maximum(a, b, propagate_nan=kl.PropagateNan.ALL)


@kdsl.jit
def _min_nan(a, b):  # type: ignore[no-untyped-def]
    return kl.minimum(a, b, propagate_nan=kl.PropagateNan.ALL)


@kdsl.jit
def _mul(a, b):  # type: ignore[no-untyped-def]
    return a * b


@kdsl.jit
def _and(a, b):  # type: ignore[no-untyped-def]
    return a & b


@kdsl.jit
def _or(a, b):  # type: ignore[no-untyped-def]
    return a | b


@kdsl.kernel
def tail_rows_kernel(x_ptr, i_ptr, l_ptr, y_ptr, f_ptr, k_ptr, q_ptr, n_rows, n_cols, m_cols,  # type: ignore[no-untyped-def]
                     BLOCK: kl.constexpr):  # fmt: skip
    """Per row of ``n_cols`` (padded to ``BLOCK``): float reductions (sum, max, min, NaN-propagating
    max/min, product), int32 ones (sum, max, min, xor, and, or, product: wrapping), int64 sum and
    max, and a softmax of the row (exp stored privately) written under a second bound ``m_cols``
    with a streaming-store hint."""
    cols = kl.arange(0, BLOCK)
    m = cols < n_cols
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):  # type: ignore[attr-defined]
        x = kl.load(x_ptr + r * n_cols + cols, mask=m, other=0.0)
        i = kl.load(i_ptr + r * n_cols + cols, mask=m, other=0)
        v = kl.load(l_ptr + r * n_cols + cols, mask=m, other=0)
        f = f_ptr + r * 6
        kl.store(f + 0, kl.sum(x, axis=0))
        kl.store(f + 1, kl.max(kl.where(m, x, -float("inf")), axis=0))
        kl.store(f + 2, kl.min(kl.where(m, x, float("inf")), axis=0))
        kl.store(f + 3, kl.reduce(kl.where(m, x, -float("inf")), 0, _max_nan))
        kl.store(f + 4, kl.reduce(kl.where(m, x, float("inf")), 0, _min_nan))
        kl.store(f + 5, kl.reduce(kl.where(m, 1.0 + x * 0.01, 1.0), 0, _mul))
        k = k_ptr + r * 7
        kl.store(k + 0, kl.sum(i, axis=0))
        kl.store(k + 1, kl.max(kl.where(m, i, -2147483648), axis=0))
        kl.store(k + 2, kl.min(kl.where(m, i, 2147483647), axis=0))
        kl.store(k + 3, kl.xor_sum(i, axis=0))
        kl.store(k + 4, kl.reduce(kl.where(m, i, -1), 0, _and))
        kl.store(k + 5, kl.reduce(i, 0, _or))
        kl.store(k + 6, kl.reduce(kl.where(m, i | 1, 1), 0, _mul))
        kl.store(q_ptr + r * 2 + 0, kl.sum(v, axis=0))
        kl.store(q_ptr + r * 2 + 1, kl.max(kl.where(m, v, -(2**62)), axis=0))
        e = kl.exp(kl.where(m, x, -float("inf")) - kl.max(kl.where(m, x, -float("inf")), axis=0))
        kl.store(y_ptr + r * BLOCK + cols, e / kl.sum(e, axis=0), mask=cols < m_cols, eviction_policy="evict_first")


def _rows(rows: int, cols: int, seed: int, nan: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * 3).astype(np.float32)
    if nan and cols:
        x[0, rng.integers(0, cols)] = np.nan  # one NaN: max/min ignore it, the NaN-propagating ones and sums do not
        x[-1, :] = np.nan if rows > 2 else x[-1, :]  # all NaN
    i = rng.integers(-(2**31), 2**31 - 1, (rows, cols), dtype=np.int32)
    v = rng.integers(-(2**40), 2**40, (rows, cols), dtype=np.int64)
    return x, i, v


def _rows_ref(x: np.ndarray, i: np.ndarray, v: np.ndarray, block: int, m_cols: int) -> dict[str, np.ndarray]:
    rows, cols = x.shape

    def padded(a: np.ndarray, fill: float | int) -> np.ndarray:  # the tile the kernel reduces
        out = np.full((rows, block), fill, a.dtype)
        out[:, :cols] = a
        return out

    with np.errstate(all="ignore"):
        x64 = x.astype(np.float64)
        f = np.stack([
            x64.sum(axis=1),
            np.fmax.reduce(padded(x, -np.inf), axis=1),
            np.fmin.reduce(padded(x, np.inf), axis=1),
            np.max(padded(x, -np.inf), axis=1),
            np.min(padded(x, np.inf), axis=1),
            np.prod(1.0 + x64 * 0.01, axis=1),
        ], axis=1)  # fmt: skip
        k = np.stack([
            i.sum(axis=1, dtype=np.int64).astype(np.int32),
            i.max(axis=1, initial=np.iinfo(np.int32).min),
            i.min(axis=1, initial=np.iinfo(np.int32).max),
            np.bitwise_xor.reduce(i, axis=1),
            np.bitwise_and.reduce(padded(i, -1), axis=1),
            np.bitwise_or.reduce(padded(i, 0), axis=1),
            _wrap_prod(i | 1),
        ], axis=1)  # fmt: skip
        q = np.stack([v.sum(axis=1), v.max(axis=1, initial=-(2**62))], axis=1)
        xb = padded(x64, -np.inf)
        e = np.exp(xb - np.fmax.reduce(xb, axis=1)[:, None])
        y = np.full((rows, block), -7.0)
        k_cols = min(m_cols, block)
        y[:, :k_cols] = (e / e.sum(axis=1, keepdims=True))[:, :k_cols]
    return {"f": f, "k": k, "q": q, "y": y}


def _wrap_prod(a: np.ndarray) -> np.ndarray:
    out = np.ones(a.shape[0], np.uint64)
    for col in a.T.astype(np.int64).astype(np.uint64):
        out = (out * col) & np.uint64(0xFFFFFFFF)
    return out.astype(np.uint32).view(np.int32)


def _run_rows(x: np.ndarray, i: np.ndarray, v: np.ndarray, block: int, m_cols: int) -> dict[str, np.ndarray]:
    rows, cols = x.shape
    out = {"f": np.zeros((rows, 6), np.float32), "k": np.zeros((rows, 7), np.int32),
           "q": np.zeros((rows, 2), np.int64), "y": np.full((rows, block), -7.0, np.float32)}  # fmt: skip
    tail_rows_kernel[(2,)](x, i, v, out["y"], out["f"], out["k"], out["q"], rows, cols, m_cols, BLOCK=block)
    return out


def _check_rows(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    np.testing.assert_array_equal(got["f"][:, 1:5], want["f"][:, 1:5])  # max/min: exact, NaN where NaN
    np.testing.assert_allclose(got["f"][:, 0], want["f"][:, 0], rtol=2e-5, atol=1e-3)  # sums: reassociated
    np.testing.assert_allclose(got["f"][:, 5], want["f"][:, 5], rtol=1e-4)
    np.testing.assert_array_equal(got["k"], want["k"])
    np.testing.assert_array_equal(got["q"], want["q"])
    np.testing.assert_allclose(got["y"], want["y"], rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("cols", [*range(1, 41), 781])
def test_rows_of_any_length(backend: str, cols: int) -> None:
    """Rows of 1..40 and 781 columns (``BLOCK`` the next power of two, and 64 for the short ones:
    a tail before the bound and one in the masked-off region), stores under a shorter, equal or
    longer second bound."""
    x, i, v = _rows(3, cols, cols, nan=cols % 5 == 0)
    blocks = {kdsl.next_power_of_2(cols)} | ({64} if cols <= 40 else set())
    for block in sorted(blocks):
        for m_cols in {cols, max(0, cols - 3), cols + 5}:
            _check_rows(_run_rows(x, i, v, block, m_cols), _rows_ref(x, i, v, block, m_cols))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cols=st.integers(0, 300), extra=st.integers(-20, 20), block=st.sampled_from([16, 64, 256, 512]),
       seed=st.integers(0, 10_000), nan=st.booleans())  # fmt: skip
def test_rows_property(backend: str, cols: int, extra: int, block: int, seed: int, nan: bool) -> None:
    """Any column count (past ``BLOCK`` too: the tile then sees only its first ``BLOCK`` columns)."""
    seen = min(cols, block)
    x, i, v = _rows(3, cols, seed, nan)
    m_cols = max(0, seen + extra)
    got = _run_rows(x, i, v, block, m_cols)
    xs, is_, vs = (a[:, :seen] for a in (x, i, v))
    want = _rows_ref(np.ascontiguousarray(xs), np.ascontiguousarray(is_), np.ascontiguousarray(vs), block, m_cols)
    _check_rows(got, want)


@kdsl.kernel
def narrow_tail_kernel(h_ptr, b_ptr, out_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    """f16 and u8 lanes in a lane-count iteration: loaded (``other`` past ``n``), widened,
    combined, rounded back to f16 and stored."""
    offs = kl.arange(0, BLOCK)
    h = kl.load(h_ptr + offs, mask=offs < n, other=1.5)
    b = kl.load(b_ptr + offs, mask=offs < n, other=3)
    kl.store(out_ptr + offs, (h.to(kl.float32) * 2.0 + b.to(kl.float32)).to(kl.float16), mask=offs < n)


@pytest.mark.parametrize("n", [0, 1, 13, 16, 29, 64, 100])
def test_narrow_lanes(backend: str, n: int) -> None:
    rng = np.random.default_rng(n)
    h = rng.uniform(-100, 100, 100).astype(np.float16)
    h[3] = np.float16("nan")
    b = rng.integers(0, 256, 100).astype(np.uint8)
    out = np.full(100, 7.0, np.float16)
    narrow_tail_kernel[(1,)](h, b, out, n, BLOCK=64)
    want = np.full(100, 7.0, np.float16)
    k = min(n, 64)
    want[:k] = (h[:k].astype(np.float32) * 2 + b[:k].astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
