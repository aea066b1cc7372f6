"""Element-loop fusion (``kdsl.lowering.fuse_loops``) and unrolled vector reductions
(``kdsl.lowering.vector_unroll``): golden wi IR before/after, loops they must leave alone, the
reduction identities bit for bit, the fused row kernels' structure, and numbers on the
vectorising backends against the interpreter (the untransformed tile IR) and numpy.

Regenerate the golden file with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.core import Operation, Value
from kdsl.ir.dialects import scf, wi
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.types import ScalarType
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from kdsl.lowering.fuse_loops import fuse_loops, identity
from kdsl.lowering.vectorize import vectorize
from kdsl.ops.norms import layer_norm, layer_norm_fwd_kernel, layer_norm_ref
from kdsl.ops.softmax import softmax, softmax_kernel, softmax_ref
from tests.lowering.test_lowering_golden import _check

HEAD = "builtin.module {\n  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = NT} {\n"
TAIL = "    wi.return\n  }\n}\n"

# what the lowering emits for a row softmax: load loop, max from slot 1, exp loop, sum from slot 1, divide loop
ROW = """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %ninf = arith.constant {value = -inf} : f32
    %a = wi.alloc : memref<64xf32, private>
    %e = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      wi.store %v, %a, %s : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %a0 = wi.load %a, %c0 : (memref<64xf32, private>, i32) -> f32
    %mx = scf.for %c1, %c64, %c1, %a0 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s2: i32, %acc: f32):
      %l = wi.load %a, %s2 : (memref<64xf32, private>, i32) -> f32
      %r = arith.max %acc, %l {propagate_nan = false} : f32
      scf.yield %r : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s3: i32):
      %l3 = wi.load %a, %s3 : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %l3, %mx : f32
      %x3 = math.exp %d : f32
      wi.store %x3, %e, %s3 : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %e0 = wi.load %e, %c0 : (memref<64xf32, private>, i32) -> f32
    %sum = scf.for %c1, %c64, %c1, %e0 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s4: i32, %acc4: f32):
      %l4 = wi.load %e, %s4 : (memref<64xf32, private>, i32) -> f32
      %r4 = arith.add %acc4, %l4 : f32
      scf.yield %r4 : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s5: i32):
      %l5 = wi.load %e, %s5 : (memref<64xf32, private>, i32) -> f32
      %q = arith.div %l5, %sum : f32
      %p5 = wi.addptr %y, %s5 : (ptr<f32>, i32) -> ptr<f32>
      %m5 = arith.cmp %s5, %n {predicate = "lt"} : (i32, i32) -> i1
      wi.gstore %p5, %q, %m5 : ptr<f32>, f32, i1
      scf.yield
    }
"""

# pairs that must stay apart: a shifted read of the array the first loop writes; a global store
# then a global load; a reduction whose init is not slot 0 of its array
APART = """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c2 = arith.constant {value = 2} : i32
    %c63 = arith.constant {value = 63} : i32
    %a = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c63, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      wi.store %v, %a, %s : f32, memref<64xf32, private>, i32
      scf.yield
    }
    scf.for %c0, %c63, %c1 : i32, i32, i32 {
    ^bb0(%s2: i32):
      %i = arith.add %s2, %c1 : i32
      %l = wi.load %a, %i : (memref<64xf32, private>, i32) -> f32
      %p2 = wi.addptr %y, %s2 : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %p2, %l : ptr<f32>, f32
      scf.yield
    }
    scf.for %c0, %c63, %c1 : i32, i32, i32 {
    ^bb0(%s3: i32):
      %p3 = wi.addptr %y, %s3 : (ptr<f32>, i32) -> ptr<f32>
      %v3 = wi.gload %p3 : (ptr<f32>) -> f32
      wi.store %v3, %a, %s3 : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %a2 = wi.load %a, %c2 : (memref<64xf32, private>, i32) -> f32
    %sum = scf.for %c1, %c63, %c1, %a2 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s4: i32, %acc: f32):
      %l4 = wi.load %a, %s4 : (memref<64xf32, private>, i32) -> f32
      %r4 = arith.add %acc, %l4 : f32
      scf.yield %r4 : f32
    }
    wi.gstore %y, %sum : ptr<f32>, f32
"""


def _fused(body: str, nt: int = 1) -> tuple[str, int]:
    mod = parse_module(HEAD.replace("NT", str(nt)) + body + TAIL)
    n = fuse_loops(mod.body.ops[0])
    verify(mod)
    out = print_op(mod)
    assert print_op(parse_module(out)) == out
    return out, n


def test_fuse_row_golden() -> None:
    out, n = _fused(ROW)
    assert n == 2  # load+max, exp+sum; the divide needs the finished sum
    assert out.count("scf.for") == 3 and out.count("wi.alloc") == 1  # the input row is read again, not staged
    _check("fuse_loops_row.mlir", "// before\n" + HEAD.replace("NT", "1") + ROW + TAIL + "// after\n" + out.rstrip())


def test_fuse_leaves_dependent_loops_apart() -> None:
    out, n = _fused(APART)
    assert n == 0
    assert out.count("scf.for") == 4
    assert out.count("wi.load") == 3  # the shifted read, the slot-2 init and the reduction's read


def test_fuse_needs_one_work_item() -> None:
    src = HEAD.replace("NT", "4") + ROW + TAIL
    out, n = _fused(ROW, nt=4)
    assert n == 0 and out == print_op(parse_module(src))


# a sum and a max over a masked global row: one vector loop with two reductions, no transcendental
SUMMAX = """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c256 = arith.constant {value = 256} : i32
    %z = arith.constant {value = -0.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %sum, %mx = scf.for %c0, %c256, %c1, %z, %ninf : (i32, i32, i32, f32, f32) -> (f32, f32) {
    ^bb0(%s: i32, %a: f32, %b: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %a2 = arith.add %a, %v : f32
      %b2 = arith.max %b, %v {propagate_nan = true} : f32
      scf.yield %a2, %b2 : f32, f32
    }
    %r = arith.add %sum, %mx : f32
    wi.gstore %y, %r : ptr<f32>, f32
"""


def test_unrolled_reduction_golden() -> None:
    mod = parse_module(HEAD.replace("NT", "1") + SUMMAX + TAIL)
    assert vectorize(mod.body.ops[0], 16, fuse=False, unroll=4) == 1
    verify(mod)
    out = print_op(mod)
    assert print_op(parse_module(out)) == out
    # unrolled x4 (4 accumulator pairs), vector tail, scalar tail up to n; then past n (the masked-off
    # region of the 256-element tile, where every load is -inf) the same three again
    assert out.count("scf.for") == 6
    _check("vector_unroll.mlir", "// before\n" + HEAD.replace("NT", "1") + SUMMAX + TAIL + "// after\n" + out.rstrip())


_F32, _I32, _U32 = ScalarType("f32"), ScalarType("i32"), ScalarType("u32")
_SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-45, -3e38], np.float32)


@pytest.mark.parametrize(("kind", "nan", "fn"), [
    ("add", False, np.add), ("mul", False, np.multiply), ("max", False, np.fmax), ("min", False, np.fmin),
    ("max", True, np.maximum), ("min", True, np.minimum),
])  # fmt: skip
def test_identity_is_exact_for_floats(kind: str, nan: bool, fn: np.ufunc) -> None:
    e = identity(kind, _F32, nan)
    assert e is not None
    got = fn(np.float32(e), _SPECIAL)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), _SPECIAL.view(np.uint32))  # signed zeros, NaN


@pytest.mark.parametrize("t", [_I32, _U32])
@pytest.mark.parametrize(("kind", "fn"), [("add", np.add), ("mul", np.multiply), ("max", np.maximum),
                                          ("min", np.minimum)])  # fmt: skip
def test_identity_is_exact_for_ints(t: ScalarType, kind: str, fn: np.ufunc) -> None:
    dt = np.int32 if t.is_signed else np.uint32
    info = np.iinfo(dt)
    xs = np.array([info.min, info.max, 0, 1, 7], dt)
    e = identity(kind, t, False)
    assert e is not None and not (isinstance(e, float) and math.isnan(e))
    np.testing.assert_array_equal(fn(dt(e), xs), xs)


def _lowered(kernel: object, *sig: str, **meta: object) -> wi.FuncOp:
    mod = kdsl.compile_to_ir(kernel, *sig, optimize=True, **meta)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, Layout.from_options(1, (), target="opencl"))
    verify(wmod)
    func: wi.FuncOp = wmod.body.ops[0]
    return func


def _row_loops(func: wi.FuncOp) -> int:
    """Vector element loops (``scf.for`` of step 16) in ``func`` that read memory whole: the passes
    over the row (a padded tile's masked-off vector loops read nothing; the lane-count iteration
    ending a pass reads with a lane count)."""
    return sum(
        1 for op in func.walk()
        if isinstance(op, scf.ForOp) and _const_of(op.operands[2]) == 16
        and any(_whole_read(o) for o in op.regions[0].block.ops)
    )  # fmt: skip


def _whole_read(op: Operation) -> bool:
    at = {"wi.gvload": 1, "wi.vload": 2}.get(op.NAME)  # where a lane count would sit
    return at is not None and (len(op.operands) <= at or op.operands[at].type != ScalarType("i32"))


def _const_of(v: Value) -> object:
    return v.owner_op.attributes.get("value") if v.owner_op is not None else None


def test_softmax_is_three_passes_over_one_array() -> None:
    f = _lowered(softmax_kernel, "*f32", "*f32", "i32", "i32", "i32", "i32", BLOCK_SIZE=4096)
    assert sum(isinstance(op, wi.AllocOp) for op in f.walk()) == 1  # exp(x - max), read by the divide
    assert _row_loops(f) == 3


def test_layer_norm_is_three_passes_over_no_array() -> None:
    f = _lowered(layer_norm_fwd_kernel, *(["*f32"] * 6), "i32", "i32", "i32", "i32", "fp32", BLOCK_SIZE=4096)
    assert not any(isinstance(op, wi.AllocOp) for op in f.walk())  # every pass reads the row from memory
    assert _row_loops(f) == 3


# --- numbers: fused + vectorised vs the interpreter (the untransformed tile IR) ----------------


@kdsl.kernel
def rowstats_kernel(x_ptr, i_ptr, out_ptr, iout_ptr, n_rows, n_cols, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    cols = kl.arange(0, BLOCK)
    m = cols < n_cols
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):  # type: ignore[attr-defined]
        x = kl.load(x_ptr + r * n_cols + cols, mask=m, other=0.0)
        i = kl.load(i_ptr + r * n_cols + cols, mask=m, other=0)
        kl.store(out_ptr + r * 4 + 0, kl.sum(x, axis=0))
        kl.store(out_ptr + r * 4 + 1, kl.max(kl.where(m, x, -float("inf")), axis=0))
        kl.store(out_ptr + r * 4 + 2, kl.min(kl.where(m, x, float("inf")), axis=0))
        kl.store(out_ptr + r * 4 + 3, kl.sum(x * x, axis=0))
        kl.store(iout_ptr + r * 3 + 0, kl.max(i, axis=0))
        kl.store(iout_ptr + r * 3 + 1, kl.min(i, axis=0))
        kl.store(iout_ptr + r * 3 + 2, kl.sum(i, axis=0))


@pytest.fixture(params=("opencl", "cpu"))
def vbackend(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable (see tests/conftest.py for what to install)")
    with kdsl.backend(name):
        yield name


def _rowstats(backend: str, x: np.ndarray, i: np.ndarray, programs: int) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros((x.shape[0], 4), np.float32)
    iout = np.zeros((x.shape[0], 3), np.int32)
    with kdsl.backend(backend):
        rowstats_kernel[(programs,)](x, i, out, iout, x.shape[0], x.shape[1], BLOCK=kdsl.next_power_of_2(x.shape[1]))
    return out, iout


@pytest.mark.parametrize("n_cols", [1, 16, 37, 64, 100, 1000])
def test_fused_reductions_match_interpreter(vbackend: str, n_cols: int) -> None:
    rng = np.random.default_rng(n_cols)
    x = (rng.standard_normal((7, n_cols)) * 3).astype(np.float32)
    x[1, :] = np.nan  # all NaN: fmax/fmin give NaN
    x[2, ::3] = np.nan  # some NaN: ignored by max/min, propagated by the sums
    x[3, :] = -0.0  # the sum of -0.0 is -0.0 (the add identity must not turn it into +0.0)
    x[4, : (n_cols + 1) // 2] = np.inf
    x[5, :] = -np.inf
    i = rng.integers(-(2**31), 2**31 - 1, (7, n_cols), dtype=np.int32)
    got, igot = _rowstats(vbackend, x, i, programs=3)
    want, iwant = _rowstats("interpreter", x, i, programs=3)
    np.testing.assert_array_equal(got[:, 1:3], want[:, 1:3])  # max/min exact, NaN where NaN
    np.testing.assert_allclose(got[:, [0, 3]], want[:, [0, 3]], rtol=1e-5, atol=1e-5)
    assert np.signbit(got[3, 0]) == np.signbit(want[3, 0])
    np.testing.assert_array_equal(igot, iwant)
    np.testing.assert_array_equal(iwant[:, 0], i.max(axis=1))


@pytest.mark.parametrize("shape", [(3, 1), (5, 37), (4, 64), (9, 100), (2, 1000)])
def test_fused_softmax_layer_norm(vbackend: str, shape: tuple[int, int]) -> None:
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32) * 3
    np.testing.assert_allclose(softmax(x, max_programs=2), softmax_ref(x), rtol=1e-5, atol=1e-7)
    w = np.random.default_rng(7).standard_normal(shape[1]).astype(np.float32)
    b = np.random.default_rng(8).standard_normal(shape[1]).astype(np.float32)
    y, mean, rstd = layer_norm(x, w, b, max_programs=2)
    ry, rmean, rrstd = layer_norm_ref(x, w, b)
    np.testing.assert_allclose(y, ry, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, rmean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rrstd, rtol=1e-4)
