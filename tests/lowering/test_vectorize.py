"""The element-loop vectoriser (``kdsl.lowering.vectorize``): golden wi IR before/after on
hand-written loops, loops it must leave scalar, and numbers against numpy on the backends
that vectorise (``opencl``, ``cpu``): vector add, softmax, LayerNorm, elementwise ops,
reductions, and (hypothesis) every loop length / remainder / mask bound.

Regenerate the golden files with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering.vectorize import vector_width, vectorize
from kdsl.ops.norms import layer_norm, layer_norm_ref, rms_norm, rms_norm_ref
from kdsl.ops.softmax import softmax, softmax_ref
from tests.lowering.test_lowering_golden import _check

VECTOR_BACKENDS = ("opencl", "cpu")

HEAD = "builtin.module {\n  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {\n"
TAIL = "    wi.return\n  }\n}\n"

# a masked contiguous load/compute/store loop (vector add)
MASKED = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %pid = wi.program_id {axis = 0} : i32
    %base = arith.mul %pid, %c64 : i32
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %i = arith.add %base, %s : i32
      %p = wi.addptr %x, %i : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %i, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m : (ptr<f32>, i1) -> f32
      %w = math.exp %v : f32
      %q = wi.addptr %y, %i : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %w, %m : ptr<f32>, f32, i1
      scf.yield
    }
"""
    + TAIL
)

# reductions over a private array: max from slot 1 (init = slot 0), a sum, constant bounds
REDUCE = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      wi.store %v, %row, %s : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %first = wi.load %row, %c0 : (memref<64xf32, private>, i32) -> f32
    %mx = scf.for %c1, %c64, %c1, %first : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s2: i32, %acc: f32):
      %e = wi.load %row, %s2 : (memref<64xf32, private>, i32) -> f32
      %r = arith.max %acc, %e {propagate_nan = false} : f32
      scf.yield %r : f32
    }
    %sum = scf.for %c0, %c64, %c1, %z : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s3: i32, %acc2: f32):
      %e2 = wi.load %row, %s3 : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %e2, %mx : f32
      %r2 = arith.add %acc2, %d : f32
      scf.yield %r2 : f32
    }
    wi.gstore %y, %sum : ptr<f32>, f32
"""
    + TAIL
)

# loops that must stay scalar: stride 2, a gather through a loaded index, a nested branch
SCALAR = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c2 = arith.constant {value = 2} : i32
    %c64 = arith.constant {value = 64} : i32
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %i = arith.mul %s, %c2 : i32
      %p = wi.addptr %x, %i : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %v : ptr<f32>, f32
      scf.yield
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s2: i32):
      %m = arith.cmp %s2, %n {predicate = "lt"} : (i32, i32) -> i1
      scf.if %m : i1 {
        %p2 = wi.addptr %x, %s2 : (ptr<f32>, i32) -> ptr<f32>
        %v2 = wi.gload %p2 : (ptr<f32>) -> f32
        wi.gstore %p2, %v2 : ptr<f32>, f32
        scf.yield
      } {
        scf.yield
      }
      scf.yield
    }
"""
    + TAIL
)


# a flat 2-D element loop (64 x 64 tile): row = s / 64 is the same on every lane of a 16-lane chunk,
# col = s % 64 counts up by one -- a row broadcast read, a 2-D global load and store
BROADCAST = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %rowmax = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %start = arith.mul %row, %c64 : i32
      %prow = wi.addptr %x, %start : (ptr<f32>, i32) -> ptr<f32>
      %p = wi.addptr %prow, %col : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      %m = wi.load %rowmax, %row : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %v, %m : f32
      %e = math.exp2 %d : f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %e : ptr<f32>, f32
      scf.yield
    }
"""
    + TAIL
)

# a flat 2-D element loop whose load and store masks are the same on every lane of a chunk
# (row < n, a row of the tile inside or outside the array): one scalar guard per vector
GUARDED = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %z = arith.constant {value = -1.0} : f32
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %row = arith.div %s, %c64 : i32
      %m = arith.cmp %row, %n {predicate = "lt"} : (i32, i32) -> i1
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p, %m, %z : (ptr<f32>, i1, f32) -> f32
      %w = math.exp2 %v : f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %w, %m : ptr<f32>, f32, i1
      scf.yield
    }
"""
    + TAIL
)

# the write side of a transpose: a 64 x 64 private tile read down its columns
# (index = (s % 64) * 64 + s / 64, a stride of 64 per lane), written as contiguous rows
COLUMNS = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %tile = wi.alloc : memref<4096xf32, private>
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %t = arith.mul %col, %c64 : i32
      %i = arith.add %t, %row : i32
      %v = wi.load %tile, %i : (memref<4096xf32, private>, i32) -> f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %v : ptr<f32>, f32
      scf.yield
    }
"""
    + TAIL
)

# a causal mask over a flat 2-D loop: col <= row compares two indices as data (lane ids), and the
# column index itself becomes a float
CAUSAL = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %ninf = arith.constant {value = -inf} : f32
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %m = arith.cmp %col, %row {predicate = "le"} : (i32, i32) -> i1
      %fc = arith.cast %col : (i32) -> f32
      %v = arith.select %m, %fc, %ninf : (i1, f32, f32) -> f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %v : ptr<f32>, f32
      scf.yield
    }
"""
    + TAIL
)

# must stay scalar: a column mask (col < n holds for some lanes of a chunk only), a divisor the
# width does not divide (48 % 32), a loop starting off a chunk boundary
BROADCAST_SCALAR = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c3 = arith.constant {value = 3} : i32
    %c48 = arith.constant {value = 48} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %m = arith.cmp %col, %n {predicate = "lt"} : (i32, i32) -> i1
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p, %m : (ptr<f32>, i1) -> f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %v, %m : ptr<f32>, f32, i1
      scf.yield
    }
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s2: i32):
      %col2 = arith.rem %s2, %c48 : i32
      %p2 = wi.addptr %x, %col2 : (ptr<f32>, i32) -> ptr<f32>
      %v2 = wi.gload %p2 : (ptr<f32>) -> f32
      %q2 = wi.addptr %y, %s2 : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q2, %v2 : ptr<f32>, f32
      scf.yield
    }
    scf.for %c3, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s3: i32):
      %col3 = arith.rem %s3, %c64 : i32
      %p3 = wi.addptr %x, %col3 : (ptr<f32>, i32) -> ptr<f32>
      %v3 = wi.gload %p3 : (ptr<f32>) -> f32
      %q3 = wi.addptr %y, %s3 : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q3, %v3 : ptr<f32>, f32
      scf.yield
    }
"""
    + TAIL
)


# a padded tile's loops: past every mask bound the loads are ``other`` and the stores vanish, so the
# remainder splits there and that region is vectorised with the masks false (a reduction with a
# private store stays; a loop whose stores are all masked off is deleted there). The second loop has
# two bounds (``< n`` and ``<= n``): its masked-off region starts past the larger one.
PADDED = (
    HEAD
    + """\
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %ninf = arith.constant {value = -inf} : f32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    %sum = scf.for %c0, %c64, %c1, %z : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s: i32, %acc: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %e = math.exp %v : f32
      wi.store %e, %row, %s : f32, memref<64xf32, private>, i32
      %r = arith.add %acc, %e : f32
      scf.yield %r : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%t: i32):
      %p2 = wi.addptr %x, %t : (ptr<f32>, i32) -> ptr<f32>
      %m2 = arith.cmp %t, %n {predicate = "lt"} : (i32, i32) -> i1
      %v2 = wi.gload %p2, %m2, %sum : (ptr<f32>, i1, f32) -> f32
      %q2 = wi.addptr %y, %t : (ptr<f32>, i32) -> ptr<f32>
      %m3 = arith.cmp %t, %n {predicate = "le"} : (i32, i32) -> i1
      wi.gstore %q2, %v2, %m3 : ptr<f32>, f32, i1
      scf.yield
    }
"""
    + TAIL
)


def _vectorized(text: str, width: int = 16) -> tuple[str, int]:
    mod = parse_module(text)
    n = vectorize(mod.body.ops[0], width, fuse=False, unroll=1)  # fusion, unrolling: test_fuse_loops.py
    verify(mod)
    out = print_op(mod)
    assert print_op(parse_module(out)) == out  # vector types round-trip
    return out, n


@pytest.mark.parametrize(
    ("name", "text", "loops"),
    [("masked", MASKED, 1), ("reduce", REDUCE, 3), ("broadcast", BROADCAST, 1), ("guarded", GUARDED, 1),
     ("columns", COLUMNS, 1), ("causal", CAUSAL, 1), ("padded", PADDED, 2)],
)
def test_vectorize_golden(name: str, text: str, loops: int) -> None:
    out, n = _vectorized(text)
    assert n == loops
    _check(f"vectorize_{name}.mlir", "// before\n" + text + "// after\n" + out.rstrip("\n"))


def test_vectorize_leaves_unvectorisable_loops_alone() -> None:
    out, n = _vectorized(SCALAR)
    assert n == 0
    assert out == print_op(parse_module(SCALAR))


def test_chunk_indices_stay_scalar_where_lanes_differ() -> None:
    out, n = _vectorized(BROADCAST_SCALAR, 32)
    assert n == 0
    assert out == print_op(parse_module(BROADCAST_SCALAR))


def test_vectorize_off_and_widths() -> None:
    assert _vectorized(MASKED, 1)[1] == 0
    assert vector_width(12) == 8 and vector_width(16) == 16 and vector_width(3) == 2
    out, _ = _vectorized(MASKED, 4)
    assert "vector<4xf32>" in out


# --- numbers against numpy -----------------------------------------------------------


@pytest.fixture(params=VECTOR_BACKENDS)
def vbackend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each backend that vectorises, made the active backend."""
    name: str = request.param
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable (see tests/conftest.py for what to install)")
    with kdsl.backend(name):
        yield name


@kdsl.kernel
def ew_kernel(x_ptr, y_ptr, i_ptr, out_ptr, iout_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask, other=1.0)
    y = kl.load(y_ptr + offs, mask=mask, other=1.0)
    i = kl.load(i_ptr + offs, mask=mask, other=0)
    z = kl.where(x > y, kl.exp(x) - kl.sqrt(kl.abs(y)), kl.log(kl.abs(x) + 1.0) * kl.maximum(x, y))
    z = z + kl.sin(x) * kl.tanh(y) + i.to(kl.float32) / 3.0
    kl.store(out_ptr + offs, z, mask=mask)
    j = (i * 7 - 3) ^ (i & 12) | 1
    kl.store(iout_ptr + offs, kl.minimum(j, 1000) + x.to(kl.int32), mask=mask)


@kdsl.kernel
def reduce_kernel(x_ptr, i_ptr, out_ptr, iout_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n, other=0.0)
    i = kl.load(i_ptr + offs, mask=offs < n, other=0)
    kl.store(out_ptr + 0, kl.sum(x, axis=0))
    kl.store(out_ptr + 1, kl.max(kl.where(offs < n, x, -float("inf")), axis=0))
    kl.store(out_ptr + 2, kl.min(kl.where(offs < n, x, float("inf")), axis=0))
    kl.store(iout_ptr + 0, kl.sum(i, axis=0))
    kl.store(iout_ptr + 1, kl.max(i, axis=0))
    kl.store(iout_ptr + 2, kl.xor_sum(i, axis=0))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100, 256])
def test_elementwise_ops(vbackend: str, n: int) -> None:
    x = _rng(1).uniform(-3, 3, n).astype(np.float32)
    y = _rng(2).uniform(-3, 3, n).astype(np.float32)
    i = _rng(3).integers(-50, 50, n).astype(np.int32)
    out, iout = np.zeros(n, np.float32), np.zeros(n, np.int32)
    ew_kernel[(kdsl.cdiv(n, 64),)](x, y, i, out, iout, n, BLOCK=64)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    ref = np.where(x > y, np.exp(x64) - np.sqrt(np.abs(y64)), np.log(np.abs(x64) + 1) * np.maximum(x64, y64))
    ref = ref + np.sin(x64) * np.tanh(y64) + i / 3.0
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5)
    j = ((i * 7 - 3) ^ (i & 12)) | 1
    np.testing.assert_array_equal(iout, np.minimum(j, 1000) + x.astype(np.int32))


@pytest.mark.parametrize("n", [1, 16, 33, 128])
def test_reductions(vbackend: str, n: int) -> None:
    x = _rng(4).standard_normal(n).astype(np.float32)
    i = _rng(5).integers(-1000, 1000, n).astype(np.int32)
    out, iout = np.zeros(3, np.float32), np.zeros(3, np.int32)
    reduce_kernel[(1,)](x, i, out, iout, n, BLOCK=128)
    np.testing.assert_allclose(out, [x.astype(np.float64).sum(), x.max(), x.min()], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(iout, [i.sum(), i.max(), np.bitwise_xor.reduce(i)])


@pytest.mark.parametrize("shape", [(3, 1), (5, 37), (4, 64), (7, 100), (2, 1000)])
def test_softmax_layernorm(vbackend: str, shape: tuple[int, int]) -> None:
    x = _rng(6).standard_normal(shape).astype(np.float32) * 3
    np.testing.assert_allclose(softmax(x), softmax_ref(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(softmax(x, max_block=32), softmax_ref(x), rtol=1e-5, atol=1e-7)
    w = _rng(7).standard_normal(shape[1]).astype(np.float32)
    b = _rng(8).standard_normal(shape[1]).astype(np.float32)
    y, mean, rstd = layer_norm(x, w, b, block=64)
    ry, rmean, rrstd = layer_norm_ref(x, w, b)
    np.testing.assert_allclose(y, ry, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, rmean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rrstd, rtol=1e-4)
    np.testing.assert_allclose(rms_norm(x, w, block=64), rms_norm_ref(x, w), rtol=1e-4, atol=1e-4)


@kdsl.kernel
def rows_kernel(x_ptr, b_ptr, out_ptr, iout_ptr, BM: kl.constexpr, BN: kl.constexpr):  # type: ignore[no-untyped-def]
    """2-D tiles with per-row broadcasts and row reductions (softmax-like), float and int."""
    r = kl.arange(0, BM)
    c = kl.arange(0, BN)
    x = kl.load(x_ptr + r[:, None] * BN + c[None, :])
    b = kl.load(b_ptr + r)
    m = kl.max(x, axis=1)
    p = kl.exp2(x - m[:, None]) * b[:, None]
    kl.store(out_ptr + r[:, None] * BN + c[None, :], p / kl.sum(p, axis=1)[:, None] + c[None, :].to(x.dtype))
    i = x.to(kl.int32)
    kl.store(iout_ptr + r[:, None] * BN + c[None, :], i * 3 - kl.max(i, axis=1)[:, None] + r[:, None])


def _rows_ref(x: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bm, bn = x.shape
    x64 = x.astype(np.float64)
    p = np.exp2(x64 - x64.max(axis=1, keepdims=True)) * b.astype(np.float64)[:, None]
    out = p / p.sum(axis=1, keepdims=True) + np.arange(bn)[None, :]
    i = x.astype(np.int32)
    iout = i * 3 - i.max(axis=1, keepdims=True) + np.arange(bm, dtype=np.int32)[:, None]
    return out, iout


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bm=st.sampled_from([1, 2, 4, 8]), bn=st.sampled_from([1, 8, 16, 32, 64, 128]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 1000))  # fmt: skip
def test_row_broadcasts_and_reductions(vbackend: str, bm: int, bn: int, dtype: type, seed: int) -> None:
    """Flat 2-D element loops (``s / BN``, ``s % BN``) vectorised or not, against numpy."""
    if dtype is np.float64 and vbackend == "opencl" and not _fp64("opencl"):
        pytest.skip("the OpenCL device has no fp64")
    x = (_rng(seed).standard_normal((bm, bn)) * 20).astype(dtype)
    b = _rng(seed + 1).uniform(0.5, 2, bm).astype(dtype)
    out, iout = np.zeros((bm, bn), dtype), np.zeros((bm, bn), np.int32)
    rows_kernel[(1,)](x, b, out, iout, BM=bm, BN=bn)
    want, iwant = _rows_ref(x, b)
    np.testing.assert_allclose(out, want, rtol=1e-5 if dtype is np.float32 else 1e-12, atol=1e-6)
    np.testing.assert_array_equal(iout, iwant)


def _fp64(name: str) -> bool:
    from kdsl.runtime.opencl import get_device

    return bool(get_device().fp64)


@kdsl.kernel
def span_kernel(x_ptr, out_ptr, sums_ptr, start, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = start + kl.arange(0, BLOCK)
    mask = (offs < n) & (offs >= start)
    x = kl.load(x_ptr + offs, mask=mask, other=0.0)
    kl.store(out_ptr + offs, x * 2.0 + 1.0, mask=mask)
    kl.store(sums_ptr + 0, kl.sum(x, axis=0))
    kl.store(sums_ptr + 1, kl.max(kl.where(mask, x, -1.0), axis=0))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(block=st.sampled_from([16, 32, 128]), start=st.integers(0, 40), n=st.integers(0, 200))
def test_any_length_and_remainder(vbackend: str, block: int, start: int, n: int) -> None:
    """Masks ``start <= i < n`` over every split into vector part and scalar remainder."""
    x = _rng(n).uniform(0, 1, 256).astype(np.float32)
    out = np.full(256, -7.0, np.float32)
    sums = np.zeros(2, np.float32)
    span_kernel[(1,)](x, out, sums, start, n, BLOCK=block)
    lanes = np.arange(start, start + block)
    live = lanes[lanes < n]
    want = np.full(256, -7.0, np.float32)
    want[live] = x[live] * 2 + 1
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(sums[0], x[live].astype(np.float64).sum(), rtol=1e-5, atol=1e-6)
    assert sums[1] == (x[live].max() if live.size else -1.0)



@kdsl.kernel
def padded_kernel(x_ptr, out_ptr, sums_ptr, n, m, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n, other=0.5)
    e = kl.exp(kl.load(x_ptr + offs, mask=offs < n, other=-float("inf")))
    kl.store(out_ptr + offs, x * 2.0 + e, mask=offs < m)
    kl.store(sums_ptr + 0, kl.sum(x, axis=0))
    kl.store(sums_ptr + 1, kl.sum(e, axis=0))
    kl.store(sums_ptr + 2, kl.max(kl.where(offs < n, x, -1.0), axis=0))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(block=st.sampled_from([32, 64, 256]), n=st.integers(0, 280), m=st.integers(0, 280))
def test_padded_tiles(vbackend: str, block: int, n: int, m: int) -> None:
    """A tile padded past its data (``n``, ``m`` below, at or above ``BLOCK``): masked-off lanes
    load exactly ``other`` (``0.5`` and ``-inf``, so they add ``0.5`` and ``exp(-inf) = 0`` to the
    sums) and store nothing, whether they run in the scalar remainder or the masked-off vector loop;
    two different bounds (``n`` for loads, ``m`` for stores)."""
    x = _rng(n * 300 + m).uniform(-1, 1, 300).astype(np.float32)
    out = np.full(300, -7.0, np.float32)
    sums = np.zeros(3, np.float32)
    padded_kernel[(1,)](x, out, sums, n, m, BLOCK=block)
    live = np.arange(block) < n
    xs = np.where(live, x[:block], np.float32(0.5))
    es = np.where(live, np.exp(x[:block].astype(np.float64)), 0.0)
    want = np.full(300, -7.0, np.float32)
    k = min(m, block)
    want[:k] = (xs[:k] * 2 + es[:k]).astype(np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)  # f32 exp vs the f64 reference
    np.testing.assert_allclose(sums[0], xs.astype(np.float64).sum(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sums[1], es.sum(), rtol=1e-5, atol=1e-6)
    assert sums[2] == np.where(live, xs, np.float32(-1.0)).max()

@kdsl.kernel
def guarded_kernel(x_ptr, y_ptr, rows, cols, pad, BR: kl.constexpr, BC: kl.constexpr):  # type: ignore[no-untyped-def]
    # rows r - pad of x (rows x cols), zero outside it: the row mask is one guard per channel vector
    r = kl.arange(0, BR) - pad
    c = kl.arange(0, BC)
    inside = (r >= 0)[:, None] & (r < rows)[:, None]
    x = kl.load(x_ptr + r[:, None] * cols + c[None, :], mask=inside & (c < cols)[None, :], other=-2.0)
    keep = (r < rows - 1)[:, None] & (c < cols)[None, :]
    kl.store(y_ptr + (r[:, None] + pad) * BC + c[None, :], x * 3.0, mask=keep)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 9), cols=st.integers(1, 40), pad=st.integers(0, 3), seed=st.integers(0, 100))
def test_chunk_guarded_loads_and_stores(vbackend: str, rows: int, cols: int, pad: int, seed: int) -> None:
    """Row-uniform masks (vector guards) with and without a ragged column bound, against numpy;
    the masked rows lie outside ``x``, so a guard that touched memory would read past it."""
    br, bc = 16, 32 if cols <= 32 else 64
    x = _rng(seed).uniform(-1, 1, (rows, cols)).astype(np.float32)
    y = np.full((br, bc), 5.0, np.float32)
    guarded_kernel[(1,)](x, y, rows, cols, pad, BR=br, BC=bc)
    want = np.full((br, bc), 5.0, np.float32)
    for i in range(br):
        r = i - pad
        if r < rows - 1:
            want[i, :cols] = (x[r] if r >= 0 else np.full(cols, -2.0, np.float32)) * 3.0
    np.testing.assert_array_equal(y, want)


@kdsl.kernel
def transpose_kernel(x_ptr, y_ptr, BR: kl.constexpr, BC: kl.constexpr):  # type: ignore[no-untyped-def]
    r = kl.arange(0, BR)
    c = kl.arange(0, BC)
    x = kl.load(x_ptr + r[:, None] * BC + c[None, :])
    kl.store(y_ptr + c[:, None] * BR + r[None, :], kl.trans(x) * 2 + 1)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(br=st.sampled_from([1, 4, 16, 32, 64]), bc=st.sampled_from([1, 8, 16, 64]),
       dtype=st.sampled_from([np.float32, np.int32, np.float64]), seed=st.integers(0, 100))  # fmt: skip
def test_transpose_column_loads(vbackend: str, br: int, bc: int, dtype: type, seed: int) -> None:
    """``kl.trans`` of a private tile (strided ``wi.vload`` where a chunk fits) against numpy."""
    if dtype is np.float64 and vbackend == "opencl" and not _fp64("opencl"):
        pytest.skip("the OpenCL device has no fp64")
    x = (_rng(seed).standard_normal((br, bc)) * 50).astype(dtype)
    y = np.zeros((bc, br), dtype)
    transpose_kernel[(1,)](x, y, BR=br, BC=bc)
    np.testing.assert_array_equal(y, x.T * 2 + 1)


@kdsl.kernel
def exp2_kernel(x_ptr, y_ptr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(y_ptr + offs, kl.exp2(kl.load(x_ptr + offs)))


def test_vector_exp2_accuracy(vbackend: str) -> None:
    """``exp2`` in vector loops (on AVX-512 hosts ``vscalefps``-based: ``codegen/llvm/vmath.py``,
    ``codegen/opencl/vexp2.py``) within 1 ulp, subnormal results within one unit of 2^-149,
    special values exact."""
    rng = _rng(11)
    x = np.concatenate([
        rng.uniform(-160.0, 130.0, 200_000), rng.uniform(-150.0, -120.0, 50_000), rng.uniform(-1, 1, 10_000),
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 127.99, 128.0, -149.0, -149.5, -150.0, -126.0, 200.0, -200.0],
    ]).astype(np.float32)  # fmt: skip
    x = np.resize(x, -(-x.size // 1024) * 1024)
    y = np.empty_like(x)
    exp2_kernel[(x.size // 1024,)](x, y, BLOCK=1024)
    with np.errstate(all="ignore"):
        want64 = np.exp2(x.astype(np.float64))
        want = want64.astype(np.float32)
    special = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(y[special], want[special])
    sub = (want64 < 2.0**-126) & ~special
    assert np.abs(y[sub].astype(np.float64) - want64[sub]).max() <= 2.0**-149
    norm = ~special & ~sub
    ulps = np.abs(y[norm].astype(np.float64) - want64[norm]) / np.spacing(want[norm]).astype(np.float64)
    assert ulps.max() <= 1.0, (float(ulps.max()), x[norm][np.argmax(ulps)])


@kdsl.kernel
def sincos_kernel(x_ptr, s_ptr, c_ptr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(s_ptr + offs, kl.sin(x))
    kl.store(c_ptr + offs, kl.cos(x))


def test_vector_sin_cos_accuracy(vbackend: str) -> None:
    """``sin``/``cos`` in vector loops (cpu: ``codegen/llvm/vmath.py``; OpenCL: ``codegen/opencl/
    vtrig.py``, double-precision reduction below 2^24 and the builtins for vectors holding a huge,
    infinite or NaN lane) within 1 ulp (plus 2^-149 near zeros), sin(-0) = -0, specials as numpy."""
    rng = _rng(12)
    x = np.concatenate([
        rng.uniform(-10.0, 10.0, 100_000), rng.uniform(-3e4, 3e4, 100_000), rng.uniform(-1.6e7, 1.6e7, 20_000),
        np.arange(1, 2001) * np.pi / 2, -np.arange(1, 2001) * np.pi / 2, rng.uniform(-1e-30, 1e-30, 1000),
    ]).astype(np.float32)  # fmt: skip
    edge = np.array([0.0, -0.0, 1e-45, -1e-45, 2.0**24, -(2.0**24), 3e38, np.inf, -np.inf, np.nan], np.float32)
    x = np.concatenate([np.resize(x, -(-x.size // 1024) * 1024 - 1024), np.resize(edge, 1024)])
    s, c = np.empty_like(x), np.empty_like(x)
    sincos_kernel[(x.size // 1024,)](x, s, c, BLOCK=1024)
    for got, ref in ((s, np.sin), (c, np.cos)):
        with np.errstate(all="ignore"):
            want64 = ref(x.astype(np.float64))
        want = want64.astype(np.float32)
        fin = np.isfinite(x)
        np.testing.assert_array_equal(np.isnan(got[~fin]), True)
        err = np.abs(got[fin].astype(np.float64) - want64[fin])
        ulps = err / np.maximum(np.spacing(np.abs(want[fin])).astype(np.float64), 2.0**-149)
        assert ulps.max() <= 1.0, (ref.__name__, float(ulps.max()), x[fin][np.argmax(ulps)])
    assert np.signbit(s[x.size - 1024 + 1]) and s[x.size - 1024 + 1] == 0  # sin(-0)


@kdsl.kernel
def causal_kernel(x_ptr, y_ptr, start, BM: kl.constexpr, BN: kl.constexpr):  # type: ignore[no-untyped-def]
    rows = start + kl.arange(0, BM)
    cols = kl.arange(0, BN)
    x = kl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    y = kl.where(cols[None, :] <= rows[:, None], x + cols[None, :].to(kl.float32), -float("inf"))
    kl.store(y_ptr + rows[:, None] * BN + cols[None, :], y - (rows[:, None] * 3 == cols[None, :]).to(kl.float32))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bm=st.sampled_from([1, 4, 16]), bn=st.sampled_from([16, 32, 64]), start=st.integers(0, 40),
       seed=st.integers(0, 100))  # fmt: skip
def test_index_compares_as_data(vbackend: str, bm: int, bn: int, start: int, seed: int) -> None:
    """Compares of row/column indices and indices as floats (vector lane ids) against numpy."""
    x = _rng(seed).standard_normal((start + bm, bn)).astype(np.float32)
    y = np.zeros_like(x)
    causal_kernel[(1,)](x, y, start, BM=bm, BN=bn)
    r = np.arange(start, start + bm)[:, None]
    c = np.arange(bn)[None, :]
    want = np.where(c <= r, x[start:] + c.astype(np.float32), -np.inf) - (r * 3 == c).astype(np.float32)
    np.testing.assert_array_equal(y[start:], want.astype(np.float32))


@kdsl.kernel
def mulhi_bits_kernel(a_ptr, b_ptr, h_ptr, f_ptr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    a = kl.load(a_ptr + offs)
    b = kl.load(b_ptr + offs)
    kl.store(h_ptr + offs, kl.umulhi(a, b) ^ (a * b))
    kl.store(f_ptr + offs, ((a >> 9) | 0x3F800000).to(kl.float32, bitcast=True) - 1.0)
    s = a.to(kl.int32, bitcast=True)
    kl.store(h_ptr + 4096 + offs, ((s >> 3) ^ (s << 5)).to(kl.uint32, bitcast=True))


def test_umulhi_and_bitcast_lanes(vbackend: str) -> None:
    """The RNG's ops in vector loops (``math.umulhi``, ``arith.bitcast``, constant shifts, signed
    and unsigned) against numpy."""
    rng = _rng(5)
    a, b = (rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    h, f = np.zeros(8192, np.uint32), np.zeros(4096, np.float32)
    mulhi_bits_kernel[(4,)](a, b, h, f, BLOCK=1024)
    prod = a.astype(np.uint64) * b.astype(np.uint64)
    np.testing.assert_array_equal(h[:4096], (prod >> np.uint64(32)).astype(np.uint32) ^ (a * b))
    si = a.view(np.int32)
    np.testing.assert_array_equal(h[4096:], ((si >> 3) ^ (si << 5)).view(np.uint32))
    np.testing.assert_array_equal(f, ((a >> 9) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0))


def test_vector_width_one_is_scalar(vbackend: str) -> None:
    x = _rng(9).standard_normal(100).astype(np.float32)
    out = np.zeros(256, np.float32)
    sums = np.zeros(2, np.float32)
    span_kernel[(1,)](x, out, sums, 0, 100, BLOCK=128, **_extra(vector_width=1))
    np.testing.assert_allclose(out[:100], x * 2 + 1, rtol=1e-6)


def _extra(**fields: int) -> dict[str, Any]:
    """Launch options setting ``lower.<field>``."""
    return {f"lower.{k}": v for k, v in fields.items()}


@kdsl.kernel
def round_through_f16_dot(x_ptr, y_ptr, N: kl.constexpr):  # type: ignore[no-untyped-def]
    """``p.to(float16)`` before a dot, as in Triton's attention tutorial: the cast loop stores f16
    lanes into the dot's private array (vectorised); an identity matrix reads them back exactly."""
    r = kl.arange(0, N)
    x = kl.load(x_ptr + r[:, None] * N + r[None, :])
    eye = kl.where(r[:, None] == r[None, :], 1.0, 0.0).to(kl.float16)
    y = kl.dot(x.to(kl.float16), eye)
    kl.store(y_ptr + r[:, None] * N + r[None, :], y)


@kdsl.kernel
def round_through_f16(x_ptr, y_ptr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, BLOCK)
    kl.store(y_ptr + offs, kl.load(x_ptr + offs).to(kl.float16).to(kl.float32))


def _f16_cases(n: int, special: bool) -> np.ndarray:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(n * n) * rng.choice([1e-6, 1e-3, 1.0, 1e3, 1e4], n * n)).astype(np.float32)
    x[:4] = [65519.0, -65519.0, 2.0**-25, 3 * 2.0**-26]  # the largest that rounds down; subnormal ties
    x[4] = 1 + 2.0**-11  # a tie to even
    if special:
        x[5:9] = [np.inf, -np.inf, 70000.0, np.nan]  # 70000 overflows to inf
    return x


@pytest.mark.parametrize("backend", [b for b in ("cpu", "opencl") if b in kdsl.available_backends()])
def test_vectorised_f32_to_f16_rounding(backend: str) -> None:
    """f16 lanes (``_storable``): rounded like numpy, NaN and infinities included."""
    n = 16
    x = _f16_cases(n, True)
    y = np.zeros_like(x)
    with kdsl.backend(backend):
        round_through_f16[(1,)](x, y, BLOCK=n * n)
        text = round_through_f16.warmup(x, y, BLOCK=n * n, grid=(1,)).asm["wi.mlir"]
    assert "vector<16xf16>" in text
    want = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_array_equal(np.nan_to_num(y), np.nan_to_num(want))
    # into a dot's private f16 array (finite values: 0 * inf would be NaN in the identity dot)
    x2 = _f16_cases(n, False).reshape(n, n)
    y2 = np.zeros_like(x2)
    with kdsl.backend(backend):
        round_through_f16_dot[(1,)](x2, y2, N=n)
        text = round_through_f16_dot.warmup(x2, y2, N=n, grid=(1,)).asm["wi.mlir"]
    assert "vector<16xf16>" in text
    np.testing.assert_array_equal(y2, x2.astype(np.float16).astype(np.float32))


@kdsl.kernel
def widen_and_narrow_f16(x_ptr, y_ptr, z_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, BLOCK)
    v = kl.load(x_ptr + offs, mask=offs < n, other=0.0).to(kl.float32)
    kl.store(y_ptr + offs, v, mask=offs < n)
    kl.store(z_ptr + offs, (v * 3.0).to(kl.float16), mask=offs < n)


@pytest.mark.parametrize("backend", [b for b in ("cpu", "opencl") if b in kdsl.available_backends()])
def test_vectorised_f16_global_loads_and_stores(backend: str) -> None:
    """fp16 rows in global memory move as vectors (OpenCL: ``kd_ldhN``/``kd_sthN``) with the
    scalar path's results, NaN payloads and infinities included."""
    n = 300
    bits = np.random.default_rng(3).integers(0, 1 << 16, n).astype(np.uint16)
    bits[:6] = [0x7C00, 0xFC00, 0x7E01, 0x7C01, 0xFD55, 0x0001]  # inf, -inf, NaN payloads, a subnormal
    x = bits.view(np.float16)
    y = np.zeros(n, np.float32)
    z = np.zeros(n, np.float16)
    with kdsl.backend(backend):
        widen_and_narrow_f16[(1,)](x, y, z, n, BLOCK=512)
        text = widen_and_narrow_f16.warmup(x, y, z, n, BLOCK=512, grid=(1,)).asm["wi.mlir"]
    assert "wi.gvload" in text and "vector<16xf16>" in text
    want = x.astype(np.float32)
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(y[finite], want[finite])
    if backend == "opencl":  # the payload rules of kd_h2f / kd_f2h (numpy's, bit for bit)
        np.testing.assert_array_equal(y.view(np.uint32), want.view(np.uint32))
    assert np.isnan(y[~finite]).all()
    with np.errstate(over="ignore", invalid="ignore"):
        z_want = (want * np.float32(3.0)).astype(np.float16)
    np.testing.assert_array_equal(np.isnan(z), np.isnan(z_want))
    np.testing.assert_array_equal(z[~np.isnan(z)], z_want[~np.isnan(z_want)])
    if backend == "opencl":
        np.testing.assert_array_equal(z.view(np.uint16), z_want.view(np.uint16))
