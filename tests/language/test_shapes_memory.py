"""Shapes, broadcasting, creation, memory ops, atomics and debug ops through the semantic."""

from __future__ import annotations

import pytest

import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.ir import types as t

from .helpers import LOC, Kernel


def test_arange_rules() -> None:
    k = Kernel()
    r = k.sem.arange(0, 128)
    assert r.type == t.TileType((128,), t.i32)
    assert kl.arange(kl.constexpr(4), 8, _semantic=k.sem).shape == (4,)
    with pytest.raises(CompilationError, match="power of 2") as info:
        k.sem.arange(0, 12)
    assert info.value.loc == LOC
    with pytest.raises(CompilationError, match="greater than"):
        k.sem.arange(8, 8)
    k2 = Kernel([t.i32])
    with pytest.raises(CompilationError, match="constexpr"):
        k2.sem.arange(0, k2.args[0])
    k.finish()


def test_broadcasting_and_subscripts() -> None:
    k = Kernel([t.TileType((16,), t.i32), t.TileType((8,), t.i32)])
    a, b = k.args
    col = a[:, None]
    row = b[None, :]
    assert col.shape == (16, 1) and row.shape == (1, 8)
    s = col + row
    assert s.shape == (16, 8)
    assert a[None].shape == (1, 16)
    assert (col * 2).shape == (16, 1)
    assert k.sem.broadcast_to(a, (4, 16)).shape == (4, 16)
    with pytest.raises(CompilationError, match="incompatible shapes"):
        k.sem.binary("add", a, b)
    with pytest.raises(CompilationError, match="unsupported tensor index"):
        k.sem.getitem(a, 3)
    with pytest.raises(CompilationError, match="unsupported tensor index"):
        k.sem.getitem(a, slice(0, 4))
    with pytest.raises(CompilationError, match="cannot broadcast"):
        k.sem.broadcast_to(a, (16, 3))
    k.finish()


def test_reshape_permute_join_split() -> None:
    k = Kernel([t.TileType((4, 8), t.f32)])
    x = k.args[0]
    assert x.reshape(32).shape == (32,)
    assert x.reshape((2, 16)).shape == (2, 16)
    assert kl.view(x, 8, 4, _semantic=k.sem).shape == (8, 4)
    assert kl.ravel(x, _semantic=k.sem).shape == (32,)
    assert x.trans().shape == (8, 4)
    assert x.T.shape == (8, 4)
    assert kl.permute(x, (1, 0), _semantic=k.sem).shape == (8, 4)
    assert k.sem.expand_dims(x, (0, -1)).shape == (1, 4, 8, 1)
    j = kl.join(x, x, _semantic=k.sem)
    assert j.shape == (4, 8, 2)
    lo, hi = kl.split(j, _semantic=k.sem)
    assert lo.shape == (4, 8) and hi.shape == (4, 8)
    assert kl.interleave(x, x, _semantic=k.sem).shape == (4, 16)
    with pytest.raises(CompilationError, match="element counts"):
        x.reshape(3, 3)
    with pytest.raises(CompilationError, match="permutation"):
        kl.permute(x, (0, 0), _semantic=k.sem)
    with pytest.raises(CompilationError, match="out of range"):
        k.sem.expand_dims(x, 5)
    k.finish()


def test_full_zeros_cdiv() -> None:
    k = Kernel([t.i32, t.TileType((8,), t.f16)])
    n, h = k.args
    z = kl.zeros((4, 8), kl.float32, _semantic=k.sem)
    assert z.type == t.TileType((4, 8), t.f32) and z.handle.owner_op.NAME == "arith.constant"
    f = kl.full((8,), n, kl.int64, _semantic=k.sem)
    assert f.type == t.TileType((8,), t.i64)
    assert kl.zeros_like(h, _semantic=k.sem).type == h.type
    assert kl.cdiv(10, kl.constexpr(4), _semantic=k.sem).value == 3
    assert kl.cdiv(n, 4, _semantic=k.sem).dtype == t.i32
    k.finish()


def test_load_store_masks_and_implicit_casts() -> None:
    pf16 = t.PointerType(t.f16)
    k = Kernel([pf16, t.i32])
    p, n = k.args
    offs = k.sem.arange(0, 16)
    ptrs = p + offs
    mask = offs < n
    v = kl.load(ptrs, mask=mask, other=0.0, _semantic=k.sem)
    op = v.handle.owner_op
    assert v.type == t.TileType((16,), t.f16)
    assert op.other.type == t.TileType((16,), t.f16)
    kl.store(ptrs, v.to(kl.float32) * 2, mask=mask, _semantic=k.sem)  # f32 value cast to f16 on store
    kl.store(p, 1.0, _semantic=k.sem)  # scalar pointer
    s = kl.load(p, _semantic=k.sem)
    assert s.type == t.f16
    kl.store(ptrs, 3, mask=True, _semantic=k.sem)  # scalar value and mask broadcast
    with pytest.raises(CompilationError, match="without `mask`"):
        kl.load(ptrs, other=1.0, _semantic=k.sem)
    with pytest.raises(CompilationError, match="pointer"):
        kl.load(n, _semantic=k.sem)
    with pytest.raises(CompilationError, match="cannot be a tile"):
        kl.store(p, v, _semantic=k.sem)
    with pytest.raises(CompilationError, match="cannot be broadcast"):
        kl.store(ptrs, k.sem.full((2, 16), 1, t.f16), _semantic=k.sem)
    with pytest.raises(CompilationError, match="boundary_check"):
        kl.load(ptrs, boundary_check=(0,), _semantic=k.sem)
    names = k.op_names()
    assert names.count("tile.store") == 3 and names.count("tile.load") == 2
    k.finish()


def test_hints_atomics_debug() -> None:
    k = Kernel([t.PointerType(t.i32), t.PointerType(t.f32), t.PointerType(t.i8)])
    pi, pf, p8 = k.args
    offs = kl.multiple_of(k.sem.arange(0, 16), 16, _semantic=k.sem)
    offs = kl.max_contiguous(offs, [16], _semantic=k.sem)
    assert offs.handle.owner_op.attributes["max_contiguous"] == (16,)
    old = kl.atomic_add(pi + offs, 1, mask=offs < 8, _semantic=k.sem)
    assert old.type == t.TileType((16,), t.i32)
    fmax = kl.atomic_max(pf + offs, 1.5, sem="relaxed", scope="cta", _semantic=k.sem)
    assert fmax.handle.owner_op.attributes == {"kind": "max", "sem": "relaxed", "scope": "cta"}
    cas = kl.atomic_cas(pi, 0, 1, _semantic=k.sem)
    assert cas.type == t.i32
    with pytest.raises(CompilationError, match="does not support i8"):
        kl.atomic_add(p8, 1, _semantic=k.sem)
    with pytest.raises(CompilationError, match="integer pointee"):
        kl.atomic_xor(pf, 1, _semantic=k.sem)
    with pytest.raises(CompilationError, match="memory semantic"):
        kl.atomic_xchg(pi, 1, sem="seq_cst", _semantic=k.sem)
    kl.device_print("x=", offs, _semantic=k.sem)
    kl.device_assert(offs < 100, "too big", _semantic=k.sem)
    kl.static_assert(kl.constexpr(2) > 1, _semantic=k.sem)
    with pytest.raises(CompilationError, match="static_assert failed: nope") as info:
        kl.static_assert(False, "nope", _semantic=k.sem)
    assert info.value.loc == LOC
    assert {"tile.print", "tile.assert", "tile.hint", "tile.atomic_rmw", "tile.atomic_cas"} <= set(k.op_names())
    k.finish()


def test_math_where_minmax() -> None:
    k = Kernel([t.TileType((16,), t.f32), t.TileType((16,), t.i32), t.TileType((16,), t.bf16)])
    f, i, b = k.args
    assert kl.exp(f, _semantic=k.sem).handle.owner_op.NAME == "math.exp"
    assert kl.math.sqrt(f, _semantic=k.sem).dtype == t.f32
    assert kl.exp(b, _semantic=k.sem).dtype == t.bf16
    with pytest.raises(CompilationError, match="floating-point"):
        kl.exp(i, _semantic=k.sem)
    w = kl.where(i > 0, f, 0, _semantic=k.sem)
    assert w.dtype == t.f32 and w.handle.owner_op.NAME == "arith.select"
    w2 = kl.where(i, i, 1.5, _semantic=k.sem)  # int condition -> != 0, a/b promote to f32
    assert w2.dtype == t.f32
    m = kl.maximum(f, 1.0, propagate_nan=kl.PropagateNan.ALL, _semantic=k.sem)
    assert m.handle.owner_op.attributes["propagate_nan"] is True
    assert kl.minimum(i, 3, _semantic=k.sem).dtype == t.i32
    c = kl.clamp(f, 0.0, 1.0, _semantic=k.sem)
    assert c.dtype == t.f32
    with pytest.raises(CompilationError):
        kl.clamp(i, 0, 1, _semantic=k.sem)
    hi = kl.umulhi(i, 7, _semantic=k.sem)
    assert hi.dtype == t.i32
    assert kl.fma(f, f, 1.0, _semantic=k.sem).handle.owner_op.NAME == "math.fma"
    assert kl.sigmoid(f, _semantic=k.sem).dtype == t.f32
    assert kl.abs(i, _semantic=k.sem).dtype == t.i32
    k.finish()
