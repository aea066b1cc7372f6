"""Typing and promotion rules of the semantic layer, checked on the emitted IR."""

from __future__ import annotations

import pytest

from kdsl.errors import CompilationError
from kdsl.frontend.semantic_types import computation_type, integer_promote, python_scalar_type
from kdsl.ir import types as t
from kdsl.language.core import constexpr

from .helpers import LOC, Kernel

TILE = (16,)


def _tile_arg(dtype: t.ScalarType) -> Kernel:
    return Kernel([t.TileType(TILE, dtype)])


@pytest.mark.parametrize(
    ("dtype", "scalar", "op", "want"),
    [
        (t.i8, 3, "add", t.i8),
        (t.i16, 4.0, "add", t.f32),
        (t.f16, 2.0, "add", t.f16),
        (t.u8, 1, "add", t.u8),
        (t.bf16, 2.0, "mul", t.bf16),
        (t.f16, 2.0, "truediv", t.f32),
        (t.f16, 2, "mod", t.f32),
        (t.i32, 2, "truediv", t.f32),
        (t.i64, 1, "sub", t.i64),
        (t.i32, 1e300, "add", t.f64),
        (t.f32, 1e300, "add", t.f32),  # same kind: the scalar does not promote
        (t.i1, True, "add", t.i1),
        (t.i1, 1, "add", t.i32),
        (t.f64, 0.5, "mul", t.f64),
    ],
)
def test_python_scalar_promotion(dtype: t.ScalarType, scalar: object, op: str, want: t.ScalarType) -> None:
    k = _tile_arg(dtype)
    r = k.sem.binary(op, k.args[0], scalar)
    assert r.type == t.TileType(TILE, want)
    r2 = k.sem.binary(op, scalar, k.args[0])
    assert r2.dtype == want
    k.finish()


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (t.i8, t.i32, t.i32),
        (t.i32, t.u32, t.u32),
        (t.u8, t.i32, t.i32),
        (t.i64, t.u32, t.i64),
        (t.f16, t.bf16, t.f16),
        (t.bf16, t.bf16, t.bf16),
        (t.bf16, t.i32, t.f32),
        (t.f16, t.f32, t.f32),
        (t.f32, t.f64, t.f64),
        (t.i64, t.f16, t.f16),
        (t.i1, t.i8, t.i8),
    ],
)
def test_tensor_tensor_promotion(a: t.ScalarType, b: t.ScalarType, want: t.ScalarType) -> None:
    k = Kernel([t.TileType(TILE, a), t.TileType(TILE, b)])
    assert k.sem.binary("add", *k.args).dtype == want
    assert k.sem.binary("mul", k.args[1], k.args[0]).dtype == want
    k.finish()


def test_scalar_kernel_args_promote_like_tensors() -> None:
    k = Kernel([t.TileType(TILE, t.i8), t.i32])
    r = k.sem.binary("add", k.args[0], k.args[1])
    assert r.type == t.TileType(TILE, t.i32)
    k.finish()


def test_computation_type_table_facts() -> None:
    assert computation_type(t.f16, False, t.f16, False, True) == t.f32
    assert computation_type(t.bf16, False, t.f16, False, False) == t.f16
    assert integer_promote(t.i32, t.u32) == t.u32
    assert integer_promote(t.u16, t.i32) == t.i32
    assert python_scalar_type(2**31) == t.u32
    assert python_scalar_type(2**32) == t.i64
    assert python_scalar_type(2**63) == t.u64
    assert python_scalar_type(-(2**31)) == t.i32
    assert python_scalar_type(True) == t.i1
    assert python_scalar_type(0.1) == t.f32


def test_int_true_division_is_f32_and_floor_division_stays_int() -> None:
    k = Kernel([t.TileType(TILE, t.i32), t.TileType(TILE, t.i32)])
    x, y = k.args
    q = k.sem.binary("truediv", x, y)
    assert q.dtype == t.f32
    fd = k.sem.binary("floordiv", x, y)
    md = k.sem.binary("mod", x, y)
    assert fd.dtype == t.i32 and md.dtype == t.i32
    assert fd.handle.owner_op.NAME == "arith.div"
    assert md.handle.owner_op.NAME == "arith.rem"
    k.finish()


def test_float_mod_is_rem_and_floordiv_rejected() -> None:
    k = Kernel([t.TileType(TILE, t.f32)])
    x = k.args[0]
    assert k.sem.binary("mod", x, 2.0).handle.owner_op.NAME == "arith.rem"
    with pytest.raises(CompilationError, match="only supported on integers"):
        k.sem.binary("floordiv", x, 2.0)


@pytest.mark.parametrize("op", ["truediv", "floordiv", "mod"])
def test_mixed_signedness_division_is_an_error(op: str) -> None:
    k = Kernel([t.TileType(TILE, t.i32), t.TileType(TILE, t.u32)])
    with pytest.raises(CompilationError, match="different signedness") as info:
        k.sem.binary(op, *k.args)
    assert info.value.loc == LOC


@pytest.mark.parametrize("op", ["and_", "or_", "xor", "lshift", "rshift"])
def test_bitwise_on_floats_is_an_error_at_the_location(op: str) -> None:
    k = Kernel([t.TileType(TILE, t.f32), t.TileType(TILE, t.i32)])
    with pytest.raises(CompilationError, match="bitwise operators need integers") as info:
        k.sem.binary(op, k.args[1], k.args[0])
    assert info.value.loc == LOC
    assert "kernel.py:7:5" in str(info.value)
    with pytest.raises(CompilationError):
        k.sem.binary(op, k.args[1], 1.5)


def test_shift_right_keeps_signedness_and_invert() -> None:
    k = Kernel([t.TileType(TILE, t.u16), t.TileType(TILE, t.i8)])
    u, s = k.args
    assert k.sem.binary("rshift", u, 3).dtype == t.u16
    inv = k.sem.unary("invert", s)
    assert inv.handle.owner_op.NAME == "arith.xor"
    assert inv.handle.owner_op.rhs.owner_op.attributes["value"] == -1
    invu = k.sem.unary("invert", u)
    assert invu.handle.owner_op.rhs.owner_op.attributes["value"] == 0xFFFF
    k.finish()


def test_negative_scalar_with_unsigned_and_out_of_range_scalar_are_errors() -> None:
    k = Kernel([t.TileType(TILE, t.u8), t.TileType(TILE, t.i8)])
    with pytest.raises(CompilationError, match="negative scalar"):
        k.sem.binary("add", k.args[0], -1)
    with pytest.raises(CompilationError, match="out of range"):
        k.sem.binary("add", k.args[1], 300)


def test_comparisons_give_i1_and_not_is_logical() -> None:
    k = Kernel([t.TileType(TILE, t.f32), t.TileType(TILE, t.i32)])
    f, i = k.args
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        r = k.sem.binary(op, f, i)
        assert r.type == t.TileType(TILE, t.i1)
        assert r.handle.owner_op.attributes["predicate"] == op
    n = k.sem.unary("not_", i)
    assert n.dtype == t.i1
    with pytest.raises(CompilationError, match="invert"):
        k.sem.unary("invert", f)
    k.finish()


def test_constexpr_operands_fold_but_division_by_zero_stays_ir() -> None:
    k = Kernel()
    r = k.sem.binary("add", constexpr(2), 3)
    assert isinstance(r, constexpr) and r.value == 5
    assert k.sem.binary("floordiv", constexpr(-7), 2).value == -4  # Python semantics for constexprs
    z = k.sem.binary("truediv", constexpr(1), constexpr(0))
    assert z.dtype == t.f32 and z.handle.owner_op.NAME == "arith.div"
    zi = k.sem.binary("floordiv", 1, 0)
    assert zi.dtype == t.i32
    k.finish()


def test_power_rules() -> None:
    k = Kernel([t.TileType(TILE, t.f32), t.TileType(TILE, t.i32)])
    f, i = k.args
    assert k.sem.binary("pow", f, 2.0).handle.owner_op.NAME == "math.pow"
    cube = k.sem.binary("pow", i, 3)
    assert cube.dtype == t.i32 and cube.handle.owner_op.NAME == "arith.mul"
    one = k.sem.binary("pow", i, 0)
    assert one.handle.owner_op.attributes["value"] == 1
    assert k.sem.binary("pow", 2, 10).value == 1024
    with pytest.raises(CompilationError, match=r"'\*\*' is not supported between i32 and i32"):
        k.sem.binary("pow", i, i)
    with pytest.raises(CompilationError, match=r"\*\*"):
        k.sem.binary("pow", i, -1)
    k.finish()


def test_pointer_arithmetic_and_comparisons() -> None:
    pty = t.PointerType(t.f32)
    k = Kernel([pty, t.TileType(TILE, t.i32), t.TileType(TILE, t.u32)])
    p, offs, uoffs = k.args
    a = k.sem.binary("add", p, offs)
    assert a.type == t.TileType(TILE, pty) and a.handle.owner_op.NAME == "tile.addptr"
    b = k.sem.binary("add", offs, p)
    assert b.type == a.type
    c = k.sem.binary("sub", a, uoffs)
    assert c.type == a.type
    cmp = k.sem.binary("lt", a, b)
    assert cmp.dtype == t.i1
    with pytest.raises(CompilationError):
        k.sem.binary("add", p, 1.0)
    with pytest.raises(CompilationError, match="cannot add pointers"):
        k.sem.binary("add", a, b)
    with pytest.raises(CompilationError):
        k.sem.binary("mul", p, 2)
    k.finish()


def test_casts_including_pointers_and_bitcast() -> None:
    k = Kernel([t.PointerType(t.f32), t.TileType(TILE, t.f32)])
    p, x = k.args
    assert k.sem.cast(p, t.PointerType(t.i32)).handle.owner_op.NAME == "arith.bitcast"
    addr = k.sem.cast(p, t.i64)
    assert addr.dtype == t.i64
    back = k.sem.cast(addr, t.PointerType(t.f16))
    assert back.dtype == t.PointerType(t.f16)
    assert k.sem.cast(p, t.i1).dtype == t.i1
    bits = k.sem.cast(x, t.u32, bitcast=True)
    assert bits.handle.owner_op.NAME == "arith.bitcast"
    with pytest.raises(CompilationError, match="bitcast"):
        k.sem.cast(x, t.f16, bitcast=True)
    with pytest.raises(CompilationError):
        k.sem.cast(p, t.f32)
    assert k.sem.cast(x, t.f32) is x
    k.finish()


def test_tensor_bool_is_a_compilation_error() -> None:
    k = Kernel([t.i32])
    with pytest.raises(CompilationError, match="truth value"):
        bool(k.args[0])


def test_tensor_dunders_delegate() -> None:
    k = Kernel([t.TileType(TILE, t.i32)])
    x = k.args[0]
    assert (x + 1).dtype == t.i32
    assert (1 - x).handle.owner_op.NAME == "arith.sub"
    assert (2.5 * x).dtype == t.f32
    assert (x << 2).dtype == t.i32
    assert (x == 3).dtype == t.i1
    assert (-x).handle.owner_op.NAME == "arith.neg"
    assert (constexpr(4) * x).dtype == t.i32
    assert x.to(t.f16).dtype == t.f16
    k.finish()


def test_tensor_math_members() -> None:
    k = Kernel([t.TileType(TILE, t.f32), t.TileType(TILE, t.i32)])
    f, i = k.args
    assert f.exp().handle.owner_op.NAME == "math.exp"
    assert f.sqrt().dtype == t.f32
    assert abs(i).handle.owner_op.NAME == "math.abs"
    k.finish()
