"""Triton-style specialisation: argument types, value-1 constants, divisibility, cache keys."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.dialects.tile import FuncOp
from kdsl.ir.types import PointerType, ScalarType

from . import fe_kernels as K


@kdsl.kernel
def store_scalar(out_ptr, v):
    kl.store(out_ptr, v)


@kdsl.kernel(do_not_specialize=["n"])
def add_nospec(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=offs < n) + kl.load(y_ptr + offs, mask=offs < n), mask=offs < n)


def entry(module: object) -> FuncOp:
    funcs = [op for op in module.body.ops if isinstance(op, FuncOp) and op.attributes.get("kernel")]  # type: ignore[attr-defined]
    assert len(funcs) == 1
    return funcs[0]


def arg_types(module: object) -> dict[str, object]:
    fn = entry(module)
    return dict(zip(fn.attributes["arg_names"], fn.arg_types))


F = np.zeros(64, np.float32)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (5, "i32"),
        (-(2**31), "i32"),
        (2**31, "i64"),
        (-(2**31) - 1, "i64"),
        (2**63, "u64"),
        (True, "i1"),
        (1.5, "f32"),
        (np.float64(2.0), "f32"),  # a Python float subclass: fp32, as Triton specialises it
        (np.int64(5), "i64"),
        (np.uint8(3), "u8"),
        (np.float16(1.0), "f16"),
    ],
)
def test_scalar_argument_types(value: object, expected: str) -> None:
    out = np.zeros(1, np.float64)
    types = arg_types(kdsl.compile_to_ir(store_scalar, out, value))
    assert types["v"] == ScalarType(expected)


def test_array_arguments_are_pointers_to_their_dtype() -> None:
    types = arg_types(kdsl.compile_to_ir(store_scalar, np.zeros(4, np.int16), 3))
    assert types["out_ptr"] == PointerType(ScalarType("i16"))


def test_int_equal_to_one_becomes_constant() -> None:
    fn = entry(kdsl.compile_to_ir(K.vector_add, F, F, F, 1, BLOCK=16))
    assert "n" not in fn.attributes["arg_names"]
    fn = entry(kdsl.compile_to_ir(K.vector_add, F, F, F, 2, BLOCK=16))
    assert "n" in fn.attributes["arg_names"]


def test_divisibility_by_16() -> None:
    fn = entry(kdsl.compile_to_ir(K.vector_add, F, F, F, 64, BLOCK=16))
    div = dict(zip(fn.attributes["arg_names"], fn.attributes["divisibility"]))
    assert div == {"x_ptr": 16, "y_ptr": 16, "out_ptr": 16, "n": 16}
    fn = entry(kdsl.compile_to_ir(K.vector_add, F, F[1:], F, 65, BLOCK=16))
    div = dict(zip(fn.attributes["arg_names"], fn.attributes["divisibility"]))
    assert div == {"x_ptr": 16, "y_ptr": 1, "out_ptr": 16, "n": 1}


def test_do_not_specialize() -> None:
    fn = entry(kdsl.compile_to_ir(add_nospec, F, F, F, 1, BLOCK=16))
    div = dict(zip(fn.attributes["arg_names"], fn.attributes["divisibility"]))
    assert div["n"] == 1  # kept as an argument, no divisibility
    fn = entry(kdsl.compile_to_ir(add_nospec, F, F, F, 32, BLOCK=16))
    assert dict(zip(fn.attributes["arg_names"], fn.attributes["divisibility"]))["n"] == 1


def test_do_not_specialize_by_index_and_bad_name() -> None:
    k = kdsl.kernel(do_not_specialize=[1])(store_scalar.fn)
    assert k.do_not_specialize == {"v"}
    with pytest.raises(ValueError, match="not a parameter"):
        kdsl.kernel(do_not_specialize=["nope"])(store_scalar.fn)


def test_do_not_specialize_on_alignment_and_triton_jit_keywords() -> None:
    """``triton.jit``'s keywords: alignment-only opt-out keeps ``== 1`` specialisation; the
    profiler hooks and hints are accepted and kept."""

    def meta(grid: object, kernel: object, args: object) -> dict[str, str]:
        return {"name": "add"}

    k = kdsl.kernel(do_not_specialize_on_alignment=["x_ptr", "n"], launch_metadata=meta, repr=lambda _: "add",
                    noinline=True, version=3)(add_nospec.fn)  # fmt: skip
    assert k.do_not_specialize_on_alignment == {"x_ptr", "n"} and k.launch_metadata is meta and k.noinline
    fn = entry(kdsl.compile_to_ir(k, F, F, F, 32, BLOCK=16))
    div = dict(zip(fn.attributes["arg_names"], fn.attributes["divisibility"]))
    assert div == {"x_ptr": 1, "y_ptr": 16, "out_ptr": 16, "n": 1}
    assert "n" not in arg_types(kdsl.compile_to_ir(k, F, F, F, 1, BLOCK=16))  # still specialised to 1
    out = np.zeros(64, np.float32)
    x = np.arange(64, dtype=np.float32)
    k[(1,)](x, x, out, 16, BLOCK=16)
    np.testing.assert_array_equal(out[:16], 2 * x[:16])


def test_signature_strings() -> None:
    types = arg_types(kdsl.compile_to_ir(K.vector_add, "*fp32", "*f32", "*f16", "i64", BLOCK=16))
    assert types == {
        "x_ptr": PointerType(ScalarType("f32")),
        "y_ptr": PointerType(ScalarType("f32")),
        "out_ptr": PointerType(ScalarType("f16")),
        "n": ScalarType("i64"),
    }


def test_cache_hits_and_keys() -> None:
    k = kdsl.kernel(K.vector_add.fn)
    x = np.arange(64, dtype=np.float32)
    y = x.copy()
    out = np.zeros(64, np.float32)
    k[(1,)](x, y, out, 64, BLOCK=64)
    k[(1,)](x, y, out, 64, BLOCK=64)
    assert len(k.cache) == 1
    k[(1,)](x, y, out, 48, BLOCK=64)  # 48 % 16 == 0 too: same specialisation
    assert len(k.cache) == 1
    k[(1,)](x, y, out, 50, BLOCK=64)  # not divisible: new entry
    assert len(k.cache) == 2
    k[(1,)](x, y, out, 50, BLOCK=32)  # other constexpr
    assert len(k.cache) == 3
    k[(1,)](x, y, out, 50, BLOCK=32, num_warps=8)  # other launch options
    assert len(k.cache) == 4
    np.testing.assert_array_equal(out[:50], 2 * x[:50])


def test_helper_name_mangling() -> None:
    text = kdsl.ir.printer.print_op(kdsl.compile_to_ir(K.call_helper, F, F, BLOCK=4))
    assert "@helper__t4f32__scale_2d0_BIAS_1d0" in text
    assert "@clamp_pos__f32" in text


SCALE = kl.constexpr(2)


@kdsl.kernel
def scaled(out_ptr):
    kl.store(out_ptr, SCALE * 1)


def test_rebinding_a_constexpr_global_recompiles() -> None:
    global SCALE
    out = np.zeros(1, np.int32)
    scaled[(1,)](out)
    assert out[0] == 2
    SCALE = kl.constexpr(5)
    try:
        scaled[(1,)](out)
        assert out[0] == 5
        assert len(scaled.cache) == 2
    finally:
        SCALE = kl.constexpr(2)
