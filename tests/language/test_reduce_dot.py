"""Reductions, scans and dot through the semantic (IR types and structure)."""

from __future__ import annotations

from typing import Any

import pytest

import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.frontend.semantic import Semantic
from kdsl.ir import types as t

from .helpers import Kernel


@pytest.mark.parametrize(
    ("dtype", "want"),
    [(t.i8, t.i32), (t.i16, t.i32), (t.u8, t.u32), (t.i1, t.u32), (t.i32, t.i32), (t.i64, t.i64),
     (t.f16, t.f32), (t.bf16, t.f32), (t.f32, t.f32)],
)
def test_sum_accumulation_type(dtype: t.ScalarType, want: t.ScalarType) -> None:
    k = Kernel([t.TileType((4, 8), dtype)])
    x = k.args[0]
    r = kl.sum(x, axis=1, _semantic=k.sem)
    assert r.type == t.TileType((4,), want)
    full = kl.sum(x, _semantic=k.sem)
    assert full.type == want
    kd = kl.sum(x, 0, keep_dims=True, _semantic=k.sem)
    assert kd.shape == (1, 8)
    k.finish()


@pytest.mark.parametrize(("dtype", "want"), [(t.f16, t.f32), (t.bf16, t.f32), (t.i8, t.i32), (t.u16, t.i32),
                                             (t.u32, t.u32), (t.f64, t.f64)])
def test_max_min_widen_small_types(dtype: t.ScalarType, want: t.ScalarType) -> None:
    k = Kernel([t.TileType((16,), dtype)])
    assert kl.max(k.args[0], 0, _semantic=k.sem).type == want
    assert k.args[0].min(axis=0).type == want
    k.finish()


def test_argmax_and_return_indices() -> None:
    k = Kernel([t.TileType((4, 8), t.f32)])
    x = k.args[0]
    a = kl.argmax(x, 1, _semantic=k.sem)
    assert a.type == t.TileType((4,), t.i32)
    v, i = kl.min(x, 0, return_indices=True, _semantic=k.sem)
    assert v.type == t.TileType((8,), t.f32) and i.type == t.TileType((8,), t.i32)
    assert x.argmin(None).type == t.i32
    reduces = [op for op in k.func.walk() if op.NAME == "tile.reduce"]
    assert all(len(op.operands) == 2 for op in reduces)
    k.finish()


def test_scans_and_xor_sum() -> None:
    k = Kernel([t.TileType((4, 8), t.i8), t.TileType((4, 8), t.f32)])
    i8, f = k.args
    cs = kl.cumsum(i8, 1, _semantic=k.sem)
    assert cs.type == t.TileType((4, 8), t.i32)
    cp = kl.cumprod(f, 0, reverse=True, _semantic=k.sem)
    assert cp.handle.owner_op.attributes == {"axis": 0, "reverse": True}
    assert kl.xor_sum(i8, 1, _semantic=k.sem).dtype == t.i8
    with pytest.raises(CompilationError, match="integers"):
        kl.xor_sum(f, 1, _semantic=k.sem)
    with pytest.raises(CompilationError, match="out of range"):
        kl.sum(f, 2, _semantic=k.sem)
    k.finish()


def test_user_combine_function_tuple_reduce() -> None:
    calls: list[Any] = []
    holder: dict[str, Semantic] = {}

    def call_function(fn: Any, args: list[Any]) -> Any:
        calls.append(fn)
        return fn(holder["sem"], *args)

    def welford_like(sem: Semantic, a: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any]:
        return sem.add(a, c), sem.minmax("max", b, d)

    k = Kernel([t.TileType((8, 16), t.f32), t.TileType((8, 16), t.i32)], call_function=call_function)
    holder["sem"] = k.sem
    s, m = kl.reduce((k.args[0], k.args[1]), 1, welford_like, _semantic=k.sem)
    assert s.type == t.TileType((8,), t.f32) and m.type == t.TileType((8,), t.i32)
    sc = kl.associative_scan(k.args[0], 0, lambda sem, x, y: sem.mul(x, y), _semantic=k.sem)
    assert sc.type == k.args[0].type
    assert len(calls) == 2
    k.finish()


@pytest.mark.parametrize(
    ("dtype", "out", "want"),
    [(t.f32, None, t.f32), (t.f16, None, t.f32), (t.f16, t.f16, t.f16), (t.bf16, None, t.f32),
     (t.f64, None, t.f64), (t.i8, None, t.i32)],
)
def test_dot_result_types(dtype: t.ScalarType, out: t.ScalarType | None, want: t.ScalarType) -> None:
    k = Kernel([t.TileType((16, 32), dtype), t.TileType((32, 8), dtype)])
    r = kl.dot(k.args[0], k.args[1], out_dtype=out, _semantic=k.sem)
    assert r.type == t.TileType((16, 8), want)
    k.finish()


def test_dot_acc_batched_and_errors() -> None:
    k = Kernel([t.TileType((2, 16, 32), t.f32), t.TileType((2, 32, 8), t.f32), t.TileType((16, 8), t.f16),
                t.TileType((16, 32), t.f16)])
    a, b, _acc16, h = k.args
    r = kl.dot(a, b, allow_tf32=False, _semantic=k.sem)
    assert r.type == t.TileType((2, 16, 8), t.f32)
    assert r.handle.owner_op.attributes["input_precision"] == "ieee"
    a2 = a.reshape(32, 32)
    b2 = b.reshape(64, 8)
    with pytest.raises(CompilationError, match="incompatible shapes"):
        kl.dot(a2, b2, _semantic=k.sem)
    with pytest.raises(CompilationError, match="same dtype"):
        kl.dot(h, b2.reshape(32, 16), _semantic=k.sem)
    with pytest.raises(CompilationError, match="2-D or both 3-D"):
        kl.dot(a, b2, _semantic=k.sem)
    r2 = kl.dot(h, h.trans(), _semantic=k.sem)
    assert r2.dtype == t.f32
    k.finish()


def test_dot_acc_is_cast_and_broadcast() -> None:
    k = Kernel([t.TileType((16, 32), t.f16), t.TileType((32, 8), t.f16), t.TileType((16, 8), t.f16),
                t.TileType((8,), t.f32)])
    a, b, acc16, row = k.args
    r = kl.dot(a, b, acc=acc16, _semantic=k.sem)
    assert r.type == t.TileType((16, 8), t.f32)
    assert r.handle.owner_op.acc.owner_op.NAME == "arith.cast"
    r2 = kl.dot(a, b, row, _semantic=k.sem)
    assert r2.handle.owner_op.acc.owner_op.NAME == "tile.broadcast"
    k.finish()
