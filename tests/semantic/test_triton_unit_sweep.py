"""A sweep of Triton's language unit tests other than ``test_core.py``.

Ported from triton-lang/triton ``python/test/unit/language/``: ``test_conversions.py`` (float up-
and downcasts with a rounding mode, checked against Triton's own bit-level emulation written in
the language), ``test_compile_errors.py`` (which user errors are compile errors, and which
programs compile), ``test_standard.py`` cases the other sweeps leave out. Sizes are cut down from
Triton's (it converts 2**24 values 256 times): a pseudo-random sample of every format's codes
keeps the suite fast while still hitting ties, subnormals and the largest finite values.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.language.extra import libdevice
from kdsl.language.extra.libdevice import fast_dividef as my_fast_dividef

from ._util import line_of

# --- test_conversions.py -----------------------------------------------------------------------

BLOCK = 1024
INT_OF_BITS = {8: np.int8, 16: np.int16, 32: np.int32}
# name: (exponent bits, mantissa bits, exponent bias)
FORMATS = {
    "float16": (5, 10, 15), "bfloat16": (8, 7, 127), "float8e5": (5, 2, 15), "float8e4b15": (4, 3, 15),
    "float8e4nv": (4, 3, 7), "float8e4b8": (4, 3, 8), "float8e5b16": (5, 2, 16),
}  # fmt: skip


def bits_of(name: str) -> int:
    return 32 if name == "float32" else 1 + sum(FORMATS[name][:2])


@kdsl.kernel
def type_convert(src, dst, rounding: kl.constexpr, BLOCK_SIZE: kl.constexpr):
    idxs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    x = kl.load(src + idxs)
    y = x.to(dst.dtype.element_ty, fp_downcast_rounding=rounding)
    kl.store(dst + idxs, y)


@kdsl.kernel
def exhaustive_populate(dst, offset, BLOCK_SIZE: kl.constexpr, output_bits: kl.constexpr, max_repr: kl.constexpr):
    idxs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    vals = (idxs + offset).to(kl.uint32)
    multiplier = vals << 1  # a pseudo-random permutation of the codes
    multiplier += 3511
    vals *= multiplier
    if output_bits == 8:
        vals &= 0xFF
        avals = vals & 0x7F
    elif output_bits == 16:
        vals &= 0xFFFF
        avals = vals & 0x7FFF
    else:
        avals = vals & 0x7FFFFFFF
    vals = kl.where(avals <= max_repr, vals, 0)
    if output_bits == 8:
        vals = vals.to(kl.uint8)
    elif output_bits == 16:
        vals = vals.to(kl.uint16)
    vals = vals.to(dst.dtype.element_ty, bitcast=True)
    kl.store(dst + idxs, vals)


@kdsl.kernel
def arbitrary_fp32_downcast(x, rounding: kl.constexpr, exponent_bits: kl.constexpr, mantissa_bits: kl.constexpr,
                            exponent_bias: kl.constexpr):  # fmt: skip
    """Triton's emulation: the value scaled so that f32 addition/truncation does the rounding."""
    kl.static_assert(x.dtype == kl.float32, "input must be float32")
    numbits_dst: kl.constexpr = 1 + exponent_bits + mantissa_bits
    x = x.to(kl.uint32, bitcast=True)
    mantissa = x & 0x7FFFFF
    exponent = ((x >> 23) & 0xFF).to(kl.int32)
    mantissa = kl.where(exponent == 0, mantissa, mantissa + 0x800000).to(kl.int32)
    exponent = kl.where(exponent == 0, exponent, exponent - 1)
    sign = x >> 31
    exponent = exponent + exponent_bias - 127
    adjustment: kl.constexpr = 0.5 ** (23 - mantissa_bits)
    mantissa = mantissa.to(kl.float32) * adjustment
    mantissa = kl.where(exponent > -16, mantissa, 0.0)
    exponent = kl.where(exponent > -16, exponent, 0)
    mantissa = kl.where(exponent > -8, mantissa, mantissa * 0.00390625)
    exponent = kl.where(exponent > -8, exponent, exponent + 8)
    mantissa = kl.where(exponent > -4, mantissa, mantissa * 0.0625)
    exponent = kl.where(exponent > -4, exponent, exponent + 4)
    mantissa = kl.where(exponent > -2, mantissa, mantissa * 0.25)
    exponent = kl.where(exponent > -2, exponent, exponent + 2)
    mantissa = kl.where(exponent > -1, mantissa, mantissa * 0.5)
    exponent = kl.where(exponent > -1, exponent, exponent + 1)
    if rounding == "rtne":
        mantissa += 0x800000  # in [2**23, 2**24] f32 addition rounds to an integer, ties to even
        mantissa -= 0x800000
        mantissa = mantissa.to(kl.int32)
    else:
        mantissa = mantissa.to(kl.int32)
    exponent = exponent.to(kl.uint32)
    y = (sign << (exponent_bits + mantissa_bits)) + (exponent << mantissa_bits) + mantissa
    if numbits_dst == 8:  # noqa: SIM108
        y = y.to(kl.uint8)
    else:
        y = y.to(kl.uint16)
    return y


@kdsl.kernel
def downcast_emulated(src, dst, rounding: kl.constexpr, BLOCK_SIZE: kl.constexpr, exponent_bits: kl.constexpr,
                      mantissa_bits: kl.constexpr, exponent_bias: kl.constexpr):  # fmt: skip
    idxs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    x = kl.load(src + idxs)
    y = arbitrary_fp32_downcast(x, rounding, exponent_bits, mantissa_bits, exponent_bias)
    kl.store(dst + idxs, y.to(dst.dtype.element_ty, bitcast=True))


@kdsl.kernel
def upcast_emulated(src, dst, BLOCK_SIZE: kl.constexpr, exponent_bits: kl.constexpr, mantissa_bits: kl.constexpr,
                    exponent_bias: kl.constexpr):  # fmt: skip
    exponent_compensator: kl.constexpr = 2.0 ** (127 - exponent_bias)
    numbits_src: kl.constexpr = 1 + exponent_bits + mantissa_bits
    idxs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    x = kl.load(src + idxs)
    if numbits_src == 8:  # noqa: SIM108
        x = x.to(kl.uint8, bitcast=True)
    else:
        x = x.to(kl.uint16, bitcast=True)
    x = x.to(kl.uint32)
    mantissa_mask: kl.constexpr = (1 << mantissa_bits) - 1
    exponent_mask: kl.constexpr = (1 << exponent_bits) - 1
    mantissa = x & mantissa_mask
    exponent = (x >> mantissa_bits) & exponent_mask
    sign = x >> (numbits_src - 1)
    y = (sign << 31) | (exponent << 23) | (mantissa << (23 - mantissa_bits))
    y = y.to(kl.float32, bitcast=True)
    y = y * exponent_compensator
    kl.store(dst + idxs, y)


def convert(src: np.ndarray, src_name: str, dst_name: str, rounding: str | None = None) -> np.ndarray:
    dst = np.empty(src.shape, INT_OF_BITS[bits_of(dst_name)])
    type_convert[(src.size // BLOCK,)](kdsl.reinterpret(src, getattr(kl, src_name)),
                                       kdsl.reinterpret(dst, getattr(kl, dst_name)), rounding, BLOCK)  # fmt: skip
    return dst


def populate(name: str, offset: int, numel: int, max_repr: int) -> np.ndarray:
    dst = np.empty(numel, INT_OF_BITS[bits_of(name)])
    exhaustive_populate[(numel // BLOCK,)](kdsl.reinterpret(dst, getattr(kl, name)), offset, BLOCK, bits_of(name),
                                           max_repr)  # fmt: skip
    if name in ("float8e4b8", "float8e5b16"):  # 0x80 is their NaN: not an input of the test
        dst = np.where(dst == -128, 0, dst).astype(dst.dtype)
    return dst


def upcast_by_emulation(src: np.ndarray, name: str) -> np.ndarray:
    dst = np.empty(src.shape, np.float32)
    upcast_emulated[(src.size // BLOCK,)](src, dst, BLOCK, *FORMATS[name])
    return dst


def downcast_by_emulation(src: np.ndarray, name: str, rounding: str) -> np.ndarray:
    dst = np.empty(src.shape, INT_OF_BITS[bits_of(name)])
    downcast_emulated[(src.size // BLOCK,)](src, kdsl.reinterpret(dst, getattr(kl, name)), rounding, BLOCK,
                                            *FORMATS[name])  # fmt: skip
    if name in ("float8e4b8", "float8e5b16"):  # the emulation writes -0 as 0x80
        dst = np.where(dst == -128, 0, dst).astype(dst.dtype)
    return dst


UPCASTS = [
    ("float16", "float32", 0x7BFF), ("bfloat16", "float32", 0x7F7F), ("float8e5", "float16", 0x7B),
    ("float8e5", "bfloat16", 0x7B), ("float8e5", "float32", 0x7B), ("float8e4b15", "float16", 0x7E),
    ("float8e4b15", "float32", 0x7E), ("float8e4nv", "float16", 0x7E), ("float8e4nv", "bfloat16", 0x7E),
    ("float8e4nv", "float32", 0x7E), ("float8e4b8", "float32", 0x7F), ("float8e4b8", "float16", 0x7F),
    ("float8e5b16", "float32", 0x7F), ("float8e5b16", "float16", 0x7F),
]  # fmt: skip


@pytest.mark.parametrize(("src_name", "dst_name", "max_repr"), UPCASTS)
def test_typeconvert_upcast(backend: str, src_name: str, dst_name: str, max_repr: int) -> None:
    """Every finite code of the source, converted up, equals its bit-level emulation (exact)."""
    src = populate(src_name, 0, 65536 if bits_of(src_name) == 16 else 4096, max_repr)
    up = convert(src, src_name, dst_name)
    as_f32 = convert(up, dst_name, "float32").view(np.float32)
    want = upcast_by_emulation(src, src_name)
    bad = np.nonzero(as_f32.view(np.int32) != want.view(np.int32))[0]
    assert bad.size == 0, f"codes {src[bad[:4]]}: got {as_f32[bad[:4]]}, want {want[bad[:4]]}"


DOWNCASTS = [
    ("float32", "float16", "rtne", 0x477FE000), ("float32", "float16", "rtz", 0x477FE000),
    ("float32", "bfloat16", "rtne", 0x7F7F0000), ("float32", "bfloat16", "rtz", 0x7F7F0000),
    ("float32", "float8e5", "rtne", 0x47600000), ("float32", "float8e5", "rtz", 0x47600000),
    ("float32", "float8e4nv", "rtne", 0x43E00000), ("float32", "float8e4b8", "rtne", 0x43700000),
    ("float32", "float8e5b16", "rtne", 0x47600000), ("bfloat16", "float8e5", "rtne", 0x4760),
    ("bfloat16", "float8e4nv", "rtne", 0x43E0), ("float16", "float8e5", "rtne", 0x7B00),
    ("float16", "float8e4nv", "rtne", 0x5F00), ("bfloat16", "float8e5b16", "rtne", 0x4760),
    ("bfloat16", "float8e4b8", "rtne", 0x4370), ("float16", "float8e5b16", "rtne", 0x7B00),
    ("float16", "float8e4b8", "rtne", 0x5B80),
]  # fmt: skip


@pytest.mark.parametrize(("src_name", "dst_name", "rounding", "max_repr"), DOWNCASTS)
def test_typeconvert_downcast(backend: str, src_name: str, dst_name: str, rounding: str, max_repr: int) -> None:
    """A downcast with a rounding mode equals Triton's emulation written with f32 arithmetic."""
    numel = 65536 if bits_of(src_name) == 16 else 16384
    offsets = [0] if bits_of(src_name) == 16 else [0, 77 << 24, 201 << 24]
    for offset in offsets:
        src = populate(src_name, offset, numel, max_repr)
        got = convert(src, src_name, dst_name, rounding)
        src32 = convert(src, src_name, "float32").view(np.float32)
        want = downcast_by_emulation(src32, dst_name, rounding)
        got_f, want_f = upcast_by_emulation(got, dst_name), upcast_by_emulation(want, dst_name)
        bad = np.nonzero(got_f.view(np.int32) != want_f.view(np.int32))[0]
        assert bad.size == 0, f"{src32[bad[:4]]}: got {got_f[bad[:4]]}, want {want_f[bad[:4]]}"


# --- test_compile_errors.py --------------------------------------------------------------------


def compile_error(k: kdsl.KernelFunction, *args: object, **meta: object) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        kdsl.compile_to_ir(k, *args, **meta)
    return info.value


def assert_at(err: CompilationError, marker: str, *needles: str) -> None:
    """The error names this file and the marked line, and says what is wrong."""
    text = str(err)
    assert f"{__file__}:{line_of(__file__, marker)}:" in text, text
    for needle in needles:
        assert needle in text, text


@kdsl.kernel
def err_undefined():
    a += 1  # noqa  # err-undefined


@kdsl.kernel
def err_binary_operator():
    0 + "a"  # noqa: B018  # err-binop


@kdsl.kernel
def err_static_assert():
    kl.static_assert(isinstance(0, kl.tensor))  # err-static-assert


@kdsl.kernel
def err_float_shift():
    1.0 << 1  # noqa: B018  # err-float-shift


@kdsl.kernel
def nested_call():
    xyz  # noqa  # err-nested-inner


@kdsl.kernel
def err_in_nested_call():
    nested_call()


@kdsl.kernel
def err_in_builtin():
    kl.expand_dims(None, -1)  # err-builtin


def test_err_messages_point_at_the_user_line() -> None:
    assert_at(compile_error(err_undefined), "err-undefined", "is not defined")
    assert_at(compile_error(err_binary_operator), "err-binop")
    assert_at(compile_error(err_static_assert), "err-static-assert", "static_assert")
    assert_at(compile_error(err_float_shift), "err-float-shift")
    assert_at(compile_error(err_in_nested_call), "err-nested-inner", "xyz")
    assert_at(compile_error(err_in_builtin), "err-builtin")


@kdsl.kernel
def two_returns():
    return kl.arange(0, 4)
    return kl.arange(0, 8)


@kdsl.kernel
def uses_first_return(out):
    a = two_returns()
    kl.store(out + kl.arange(0, 4), a + kl.arange(0, 4))  # only the first return's shape works


@kdsl.kernel
def returns_branched_on_constexpr(N: kl.constexpr):
    if N == 0:
        return kl.arange(0, 4)
    else:
        return kl.arange(0, 8)


@kdsl.kernel
def branched_constexpr(out, N: kl.constexpr, M: kl.constexpr):
    a = returns_branched_on_constexpr(N)
    kl.store(out + kl.arange(0, M), a + kl.arange(0, M))


@kdsl.kernel
def returns_branched_on_runtime(N: int):
    if N == 0:  # err-runtime-returns
        return kl.arange(0, 4)
    else:
        return kl.arange(0, 8)


@kdsl.kernel
def branched_runtime(N: int):
    returns_branched_on_runtime(N)


def test_returns(backend: str) -> None:
    out = np.zeros(8, np.int32)
    uses_first_return[(1,)](out)
    assert np.array_equal(out[:4], 2 * np.arange(4))
    for n, m in ((0, 4), (1, 8)):
        out = np.zeros(8, np.int32)
        branched_constexpr[(1,)](out, n, m)
        assert np.array_equal(out[:m], 2 * np.arange(m))
    # returns of different shapes under a runtime condition cannot be merged
    assert_at(compile_error(branched_runtime, 3), "err-runtime-returns", "return")


@kdsl.kernel
def err_arange_not_pow2():
    kl.arange(2, 7)  # err-arange-pow2


def test_power_of_two_arange() -> None:
    assert_at(compile_error(err_arange_not_pow2), "err-arange-pow2", "arange's range must be a power of 2")


GLOBAL = 42
CONSTEXPR_ANNOTATED_GLOBAL: kl.constexpr = 8
CONSTEXPR_GLOBAL = kl.constexpr(4)
TYPE_ALIAS = kl.pointer_type(kl.int32)


@kdsl.kernel
def err_global():
    a = GLOBAL  # noqa  # err-global


@kdsl.kernel
def reads_constexpr_globals(out, a=GLOBAL, B: kl.constexpr = ""):
    kl.static_assert(kl.pointer_type(kl.int32) == TYPE_ALIAS)
    kl.static_assert(B == "")
    offs = kl.arange(0, CONSTEXPR_ANNOTATED_GLOBAL)  # the annotated global sizes a tile
    kl.store(out + offs, offs * CONSTEXPR_GLOBAL + a)


def test_global_access(backend: str) -> None:
    assert_at(compile_error(err_global), "err-global", "GLOBAL")
    out = np.zeros(8, np.int32)
    reads_constexpr_globals[(1,)](out)
    assert np.array_equal(out, np.arange(8) * 4 + 42)


@kdsl.kernel
def where_uint_condition(out):
    a = kl.full((64,), 0, kl.uint32)
    b = kl.full((64,), 1, kl.float32)
    c = kl.full((64,), 2, kl.float32)
    kl.store(out + kl.arange(0, 64), kl.where(a, b, c))


def test_where_warning(backend: str) -> None:
    """A non-boolean condition still works (``!= 0``) but Triton warns that it is deprecated."""
    out = np.zeros(64, np.float32)
    with pytest.warns(UserWarning, match="non-boolean condition"):
        where_uint_condition[(1,)](out)
    assert np.all(out == 2.0)


@kdsl.kernel
def fp8_full(dtype: kl.constexpr):
    _ = kl.full((256,), 0.0, dtype)


@pytest.mark.parametrize("dtype", ["float8e5", "float8e5b16", "float8e4nv", "float8e4b8", "float8e4b15"])
def test_fp8_support(dtype: str) -> None:
    """Every fp8 type is supported, as on Triton's interpreter (no architecture to refuse it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kdsl.compile_to_ir(fp8_full, dtype=getattr(kl, dtype))


@kdsl.kernel
def imprecise_acc_over_k():
    SIZE: kl.constexpr = 64
    a = kl.full((SIZE, SIZE), 0.0, kl.float8e5)
    b = kl.full((SIZE, SIZE), 0.0, kl.float8e5)
    kl.dot(a, b, max_num_imprecise_acc=128)  # err-imprecise


def test_max_num_imprecise_acc_limit() -> None:
    assert_at(compile_error(imprecise_acc_over_k), "err-imprecise", "max_num_imprecise_acc (128) must be <= K (64)")


# --- test_tuple.py -----------------------------------------------------------------------------


@kdsl.kernel
def _tuple_increment(values):
    return kl.tuple([v + 1 for v in values])


@kdsl.kernel
def _tuple_index_func(Ptrs, values):
    for i in kl.static_range(len(values)):
        kl.store(Ptrs[i], values[i])


@kdsl.kernel
def _tuple_index(_0, Ptrs, _1: kl.constexpr, values, _2, _3: kl.constexpr, _4):
    values = _tuple_increment(values)
    _tuple_index_func(Ptrs, values)


@pytest.mark.parametrize("size", [0, 1, 3])
def test_tuple_index(backend: str, size: int) -> None:
    vals = tuple(i + 1 for i in range(size))
    rets = tuple(np.zeros(1, np.float32) for _ in vals)
    _tuple_index[(1,)](0, rets, 0, vals, 0, 0, 0)
    assert vals == tuple(int(x[0]) - 1 for x in rets)


@kdsl.kernel
def _tuple_assign(XPtrs, YPtrs, values):
    X0, X1 = XPtrs
    x0, x1, _ = values
    kl.store(X0, x0)
    kl.store(X1, x1)
    Y0, Y1, Y2 = YPtrs
    Y = Y0, Y1, Y2
    y = x0, 10, x1
    kl.store(Y[0], y[0])
    kl.store(Y[1], y[1])
    kl.store(Y[2], y[2])


def test_tuple_assign(backend: str) -> None:
    x = tuple(np.zeros(1, np.float32) for _ in range(2))
    y = tuple(np.zeros(1, np.float32) for _ in range(3))
    _tuple_assign[(1,)](x, y, (2.0, 3.0, None))
    assert [float(v[0]) for v in x + y] == [2.0, 3.0, 2.0, 10.0, 3.0]


@kdsl.kernel
def _tuple_fn0(Ptr, cst2: kl.constexpr, tuple1):
    kl.static_assert(tuple1[1] is None)
    kl.store(Ptr + 5, cst2)
    kl.store(Ptr + 6, tuple1[0])
    kl.store(Ptr + 7, kl.load(tuple1[2][0]))
    kl.store(Ptr + 8, tuple1[2][1][0])
    kl.store(Ptr + 9, kl.load(tuple1[2][1][2]))


@kdsl.kernel
def _tuple_serialize(Ptr, N1, tuple1, cst1: kl.constexpr, val1, tuple2):
    kl.static_assert(N1 is None)
    kl.static_assert(tuple1[1][1] is None)
    kl.static_assert(tuple1[1][3] == 4)
    kl.store(Ptr + 0, kl.load(tuple1[0]))
    kl.store(Ptr + 1, tuple1[1][0])
    kl.store(Ptr + 2, kl.load(tuple1[1][2]))
    kl.store(Ptr + 3, cst1 + val1)
    kl.store(Ptr + 4, kl.load(tuple2[0]))
    _tuple_fn0(Ptr, 15, (-1, None, tuple1))


def test_tuple_serialize(backend: str) -> None:
    x0, x1, y0 = (np.array([v], np.int32) for v in (8, 12, 10))
    z = np.zeros(10, np.int32)
    _tuple_serialize[(1,)](z, None, (x0, (1, None, x1, kl.constexpr(4))), 20, 1, (y0,))
    assert z.tolist() == [8, 1, 12, 21, 10, 15, -1, 8, 1, 12]


class Function(NamedTuple):
    fn: kl.constexpr
    captured: tuple[Any, ...]


class TensorView(NamedTuple):
    ptr: Any
    shape: tuple[int, ...]
    stride: tuple[int, ...]


@kdsl.kernel
def _namedtuple_create_func0(shape, ptr, stride):
    return TensorView(shape=shape, ptr=ptr, stride=stride)


@kdsl.kernel
def _namedtuple_create_func1(shape, ptr, stride):
    tensor = TensorView(shape=shape, ptr=ptr, stride=stride)
    return tensor


@kdsl.kernel
def _namedtuple_mask_func(Tensor, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr):
    offs_m = kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    return (offs_m[:, None] < Tensor.shape[0]) & (offs_n[None, :] < Tensor.shape[1])


@kdsl.kernel
def _namedtuple_kernel(closure, _X, Y, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr):
    offs_m = kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    X = _namedtuple_create_func0(_X.shape, _X.ptr, _X.stride)
    Y = _namedtuple_create_func1(Y.shape, Y.ptr, Y.stride)
    Xs = X.ptr + offs_m[:, None] * X.stride[0] + offs_n[None, :] * X.stride[1]
    Ys = Y.ptr + offs_m[:, None] * Y.stride[0] + offs_n[None, :] * Y.stride[1]
    x = kl.load(Xs, mask=_namedtuple_mask_func(X, BLOCK_M, BLOCK_N), other=0)
    y = closure.fn(x, *closure.captured)
    kl.store(Ys, y, mask=_namedtuple_mask_func(Y, BLOCK_M, BLOCK_N))


@kdsl.kernel
def _mul_by_loaded(x, a):
    return x * kl.load(a)


def test_namedtuple(backend: str) -> None:
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros((16, 16), np.float32)
    a = np.array([5.2], np.float32)
    tx = TensorView(x, x.shape, tuple(s // 4 for s in x.strides))
    ty = TensorView(y, y.shape, tuple(s // 4 for s in y.strides))
    _namedtuple_kernel[(1,)](Function(_mul_by_loaded, (a,)), tx, ty, 64, 64)
    assert np.array_equal(y, x[:16, :16] * a[0])


@kdsl.kernel
def _tuple_eq_add(ret_ptrs):
    kl.store(ret_ptrs + 0, (1, 2) == (1, 2))
    kl.store(ret_ptrs + 1, (1, 2) == (1, 1))
    kl.store(ret_ptrs + 2, kl.tuple((1, 2)) == (1, 2))
    kl.store(ret_ptrs + 3, kl.tuple((1, 2)) == (1, 3))
    tuple0 = (0, 1) + (2, 3)  # noqa: RUF005
    for i in kl.static_range(4):
        kl.store(ret_ptrs + 4 + i, tuple0[i])
    tuple1 = kl.tuple((4, 5)) + (6, 7)  # noqa: RUF005
    for i in kl.static_range(4):
        kl.store(ret_ptrs + 8 + i, tuple1[i])


def test_tuple_eq_and_add(backend: str) -> None:
    rets = np.zeros(12, np.int32)
    _tuple_eq_add[(1,)](rets)
    assert rets.tolist() == [1, 0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7]


@kdsl.kernel
def m_to_the_n(X, shape: kl.constexpr, strides, m_n):
    Xs = X + kl.arange(0, shape[0])[:, None] * strides[0] + kl.arange(0, shape[1])[None, :] * strides[1]
    data = kl.load(Xs)
    for i in kl.range(0, m_n[1]):  # noqa: B007
        data = m_n[0] * data
    kl.store(Xs, data)


def test_passing_tuple_with_constexpr(backend: str) -> None:
    x = np.arange(64, dtype=np.int64).reshape(8, 8)
    want = 8 * x
    m_to_the_n[(1,)](x, x.shape, (8, 1), (2, 3))
    assert np.array_equal(x, want)


@kdsl.kernel
def set_tuple_value_at_idx():
    t = kl.tuple([5, 6, 7])
    t[0] = 0  # err-tuple-setitem


def test_modifying_tuples() -> None:
    assert_at(compile_error(set_tuple_value_at_idx), "err-tuple-setitem")


@kdsl.kernel
def tuple_logic_kernel():
    kl.static_assert(((3, 4) or (5, 6)) == (3, 4))  # noqa: SIM222
    kl.static_assert(((3, 4) and (5, 6)) == (5, 6))
    kl.static_assert(((3, 4) and ()) == ())  # noqa: SIM223
    kl.static_assert((() or (5, 6)) == (5, 6))  # noqa: SIM222
    kl.static_assert(((1, 2) and (3, 4) and (5, 6)) == (5, 6))
    kl.static_assert(((1, 2) or (3, 4) or (5, 6)) == (1, 2))  # noqa: SIM222
    kl.static_assert((() and kl.program_id(0)) == ())  # noqa: SIM223  (short-circuit over a dynamic value)


@kdsl.kernel
def tuples_fn(a, b):
    return a + b, a - b, a * b


@kdsl.kernel
def tuples_with_fn(X, Y, A, B, C):
    x = kl.load(X)
    y = kl.load(Y)
    a, b, c = tuples_fn(x, y)
    kl.store(A, a)
    kl.store(B, b)
    kl.store(C, c)
    p, n = float("-inf"), float("inf")  # noqa: F841


def test_tuple_logic_and_returns(backend: str) -> None:
    kdsl.compile_to_ir(tuple_logic_kernel)
    x, y = np.array([1.3], np.float32), np.array([1.9], np.float32)
    out = [np.zeros(1, np.float32) for _ in range(3)]
    tuples_with_fn[(1,)](x, y, *out)
    assert [o[0] for o in out] == [(x + y)[0], (x - y)[0], (x * y)[0]]


# --- test_random.py ----------------------------------------------------------------------------

# (key A, key B, round A, round B): Philox-4x32 for 32-bit offsets, Philox-4x64 for 64-bit ones
PHILOX = {32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
          64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157)}  # fmt: skip


def philox_word0(seed: int, offset: int, bits: int) -> int:
    """The first output word, written from Triton's reference (``CustomPhilox4x``) in Python ints:
    the seed is cut into ``bits``-wide pieces (key = first two, counter = (offset, 0, rest))."""
    key_a, key_b, round_a, round_b = PHILOX[bits]
    mask = (1 << bits) - 1
    pieces = [(seed >> (bits * i)) & mask for i in range(4)]
    k0, k1 = pieces[0], pieces[1]
    c = [offset & mask, 0, pieces[2], pieces[3]]
    for _ in range(10):
        p0, p1 = round_a * c[0], round_b * c[2]
        c = [(p1 >> bits) ^ c[1] ^ k0, p1 & mask, (p0 >> bits) ^ c[3] ^ k1, p0 & mask]
        k0, k1 = (k0 + key_a) & mask, (k1 + key_b) & mask
    return c[0]


RAND_BLOCK = kl.constexpr(128)


@kdsl.kernel
def randint_kernel(X, N, seed):
    pid = kl.program_id(0).to(X.dtype.element_ty)
    offset = pid * RAND_BLOCK + kl.arange(0, RAND_BLOCK)
    kl.store(X + offset, kl.randint(seed, offset), mask=offset < N)


@kdsl.kernel
def randint_const_kernel(X, N, seed: kl.constexpr):
    pid = kl.program_id(0).to(X.dtype.element_ty)
    offset = pid * RAND_BLOCK + kl.arange(0, RAND_BLOCK)
    kl.store(X + offset, kl.randint(seed, offset), mask=offset < N)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("const_seed", [False, True])
def test_randint(backend: str, dtype: type, const_seed: bool) -> None:
    """``randint`` words against Triton's reference; 64-bit offsets select Philox-4x64 keyed (seed, 0)."""
    bits = np.dtype(dtype).itemsize * 8
    for size, seed in (((10,), 0), ((4, 53), 0xFFFFFFFF), ((400,), 0x0000000FCAFEB0BA), ((200,), 54)):
        x = np.zeros(size, dtype)
        grid = (kdsl.cdiv(x.size, 128),)
        if const_seed:
            randint_const_kernel[grid](x, x.size, seed=seed)
        else:
            randint_kernel[grid](x, x.size, seed)
        got = x.ravel().astype(np.uint32 if bits == 32 else np.uint64).tolist()
        assert got == [philox_word0(seed, i, bits) for i in range(x.size)], (size, seed)


@kdsl.kernel
def rand_kernel(X, N, seed, dtype: kl.constexpr):
    pid = kl.program_id(0).to(dtype)
    offset = pid * RAND_BLOCK + kl.arange(0, RAND_BLOCK)
    kl.store(X + offset, kl.rand(seed, offset), mask=offset < N)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_rand_range(backend: str, dtype: str) -> None:
    x = np.zeros(20000, np.float32)
    rand_kernel[(kdsl.cdiv(x.size, 128),)](x, x.size, 42, dtype=getattr(kl, dtype))
    assert np.all((x >= 0) & (x < 1))
    hist = np.histogram(x, bins=10, range=(0.0, 1.0))[0]
    assert np.all(np.abs(hist - x.size / 10) < 0.05 * x.size / 10)


@kdsl.kernel
def uniform_limits_kernel(input, output, n: kl.constexpr):
    idx = kl.arange(0, n)
    kl.store(output + idx, kl.random.uint_to_uniform_float(kl.load(input + idx)))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_rand_limits(backend: str, dtype: type) -> None:
    """``rand`` never gives 1.0: the extremes of the word both map just below it."""
    info = np.iinfo(dtype)
    out = np.zeros(2, np.float32)
    uniform_limits_kernel[(1,)](np.array([info.min, info.max], dtype), out, 2)
    assert out[0] == out[1]
    assert 1.0 - np.finfo(np.float32).eps <= out[0] < 1.0


@kdsl.kernel
def rand_seed_kernel(X, seed):
    offset = kl.arange(0, 1)
    kl.store(X + offset, kl.rand(seed, offset))


def test_seed_is_int() -> None:
    x = np.zeros(1, np.float32)
    with pytest.raises(CompilationError):
        kdsl.compile_to_ir(rand_seed_kernel, x, np.zeros(1, np.int32))
    with pytest.raises(CompilationError):
        kdsl.compile_to_ir(rand_seed_kernel, x, 2.3)


# --- test_block_pointer.py ---------------------------------------------------------------------


@kdsl.kernel
def block_copy_kernel(a_ptr, b_ptr, N, BLOCK_SIZE: kl.constexpr, PADDING_OPTION: kl.constexpr,
                      TEST_LOWER_BOUND: kl.constexpr, TEST_UPPER_BOUND: kl.constexpr):  # fmt: skip
    pid = kl.program_id(0)
    offset = pid * BLOCK_SIZE
    if TEST_LOWER_BOUND:
        offset = -N
    elif TEST_UPPER_BOUND:
        offset = N
    # only half of the data is in the source's shape: the rest is padding
    a_block_ptr = kl.make_block_ptr(base=a_ptr, shape=(N // 2,), strides=(1,), offsets=(offset,),
                                    block_shape=(BLOCK_SIZE,), order=(0,))  # fmt: skip
    b_block_ptr = kl.make_block_ptr(base=b_ptr, shape=(N,), strides=(1,), offsets=(offset,),
                                    block_shape=(BLOCK_SIZE,), order=(0,))  # fmt: skip
    if PADDING_OPTION is None:
        a = kl.load(a_block_ptr, boundary_check=(0,))
    else:
        a = kl.load(a_block_ptr, boundary_check=(0,), padding_option=PADDING_OPTION)
    kl.store(b_block_ptr, a, boundary_check=(0,))


@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float16])
@pytest.mark.parametrize("padding", [None, "zero", "nan"])
@pytest.mark.parametrize("bound", [None, "lower", "upper"])
def test_block_copy(backend: str, dtype: type, padding: str | None, bound: str | None) -> None:
    floats = np.issubdtype(dtype, np.floating)
    if padding == "nan" and not floats:
        pytest.skip("padding with NaN is for floating-point types (Triton skips it too)")
    n = 256
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(n) if floats else rng.integers(0, 2, n)).astype(dtype)
    b = np.zeros(n, dtype)
    block_copy_kernel[(kdsl.cdiv(n, 64),)](a_ptr=a, b_ptr=b, N=n, BLOCK_SIZE=64, PADDING_OPTION=padding,
                                          TEST_LOWER_BOUND=bound == "lower", TEST_UPPER_BOUND=bound == "upper")  # fmt: skip
    if bound is not None:
        assert np.all(b == 0)
        return
    assert np.array_equal(a[: n // 2], b[: n // 2])
    if padding == "zero":
        assert np.all(b[n // 2 :] == 0)
    elif padding == "nan":
        assert np.all(np.isnan(b[n // 2 :]))


@kdsl.kernel
def matmul_no_scf_with_advance_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                                      stride_cm, stride_cn, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr,
                                      BLOCK_K: kl.constexpr):  # fmt: skip
    offs_m = kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    a_block_ptr = kl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(0, 0),
                                    block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))  # fmt: skip
    b_block_ptr = kl.make_block_ptr(base=b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, 0),
                                    block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))  # fmt: skip
    a_block_ptr = kl.advance(a_block_ptr, (BLOCK_M, -BLOCK_K))  # negative offsets, then back
    a_block_ptr = kl.advance(a_block_ptr, (-BLOCK_M, BLOCK_K))
    a = kl.load(a_block_ptr, boundary_check=(1,), padding_option="zero")
    b = kl.load(b_block_ptr, boundary_check=(0,), padding_option="zero")
    c = kl.dot(a, b)
    kl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn, c)


@pytest.mark.parametrize("k", [16, 32])
def test_block_ptr_matmul_no_scf(backend: str, k: int) -> None:
    m = n = 32
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    matmul_no_scf_with_advance_kernel[(1,)](a, b, c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=m, BLOCK_N=n, BLOCK_K=k)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-4)


@kdsl.kernel
def block_copy_3d_kernel(src_ptr, dst_ptr, dim0, dim1, dim2, stride0, stride1, stride2, BLOCK0: kl.constexpr,
                         BLOCK1: kl.constexpr, BLOCK2: kl.constexpr):  # fmt: skip
    src_block_ptr = kl.make_block_ptr(base=src_ptr, shape=(dim0, dim1, dim2), strides=(stride0, stride1, stride2),
                                      offsets=(dim0 - 1, 0, dim2 - 2), block_shape=(BLOCK0, BLOCK1, BLOCK2),
                                      order=(2, 1, 0))  # fmt: skip
    dst_block_ptr = kl.make_block_ptr(base=dst_ptr, shape=(dim0, dim1, dim2), strides=(stride0, stride1, stride2),
                                      offsets=(dim0 - 1, 0, dim2 - 2), block_shape=(BLOCK0, BLOCK1, BLOCK2),
                                      order=(2, 1, 0))  # fmt: skip
    values = kl.load(src_block_ptr, boundary_check=(0, 2), padding_option="zero")
    kl.store(dst_block_ptr, values, boundary_check=(0, 2))


@kdsl.kernel
def block_ptr_dtype_kernel(src_ptr, dst_ptr, N, BLOCK_SIZE: kl.constexpr):
    block_ptr = kl.make_block_ptr(base=src_ptr, shape=(N,), strides=(1,), offsets=(0,), block_shape=(BLOCK_SIZE,),
                                  order=(0,))  # fmt: skip
    kl.static_assert(block_ptr.dtype.element_ty == kl.block_type(src_ptr.dtype.element_ty, [BLOCK_SIZE]))
    values = kl.load(block_ptr, boundary_check=(0,), padding_option="zero").to(block_ptr.dtype.element_ty)
    kl.store(dst_ptr + kl.arange(0, BLOCK_SIZE), values)


def test_block_ptr_rank_3_and_element_ty(backend: str) -> None:
    src = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    dst = np.zeros_like(src)
    block_copy_3d_kernel[(1,)](src, dst, 3, 4, 5, 20, 5, 1, BLOCK0=2, BLOCK1=4, BLOCK2=4)
    want = np.zeros_like(src)
    want[2:3, 0:4, 3:5] = src[2:3, 0:4, 3:5]
    assert np.array_equal(dst, want)
    s16 = np.arange(16, dtype=np.float16)
    d16 = np.zeros_like(s16)
    block_ptr_dtype_kernel[(1,)](s16, d16, 16, BLOCK_SIZE=16)
    assert np.array_equal(d16, s16)


# --- test_annotations.py -----------------------------------------------------------------------


def annotated_function(return_type: object = None, **arg_types: object) -> Any:
    """Sets ``__annotations__`` like Triton's test helper (strings, as ``from __future__ import
    annotations`` leaves them)."""

    def decorator(func: Any) -> Any:
        func.__annotations__ = {**arg_types, "return": return_type}
        return func

    return decorator


@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_int_annotation(backend: str, signed: bool, width: int) -> None:
    """An integer annotation types the runtime parameter: arithmetic wraps at that width."""
    name = f"{'' if signed else 'u'}int{width}"

    @kdsl.kernel
    @annotated_function(X=np.ndarray, v=f"kl.{name}")
    def _kernel(X, v):
        kl.store(X, v * 100)
        kl.store(X + 1, (v - 4).to(kl.float32))

    x = np.zeros(2, np.float64)
    _kernel[(1,)](x, 3)
    dt = np.dtype(name)
    assert x[0] == np.array(300).astype(dt).astype(np.float64)
    assert x[1] == np.float32(np.array(-1).astype(dt))


@kdsl.kernel
def _unknown_annotations(X: np.ndarray, N: int, BLOCK_SIZE: kl.constexpr):
    kl.store(X, N + BLOCK_SIZE)


def test_unknown_annotation(backend: str) -> None:
    x = np.zeros(1, np.float32)
    _unknown_annotations[(1,)](x, 1, 32)
    assert x[0] == 33


# --- test_standard.py --------------------------------------------------------------------------


@kdsl.kernel
def flip_inf_kernel(out_ptr, x_ptr, N: kl.constexpr):
    pid = kl.program_id(0)
    x = kl.load(x_ptr + pid * N + kl.arange(0, N))
    shape: kl.constexpr = (N // 2, 2)
    y = kl.flip(x.reshape(shape), dim=1).reshape(x.shape)
    kl.store(out_ptr + pid * N + kl.arange(0, N), y)


def test_flip_inf(backend: str) -> None:
    """Triton issue 5439: flipping pairs must move an infinity, not turn its neighbour into NaN."""
    x = np.arange(16, dtype=np.float32)[None, :].copy()
    x[:, -1] = np.inf
    out = np.zeros_like(x)
    flip_inf_kernel[(1,)](out, x, 16)
    assert np.array_equal(out, x.reshape(-1, 8, 2)[:, :, ::-1].reshape(-1, 16))


@kdsl.kernel
def swizzle2d_kernel(output, size_i, size_j, size_g):
    for i in kl.range(0, size_i, 1):
        for j in kl.range(0, size_j, 1):
            new_i, new_j = kl.swizzle2d(i, j, size_i, size_j, size_g)
            kl.store(output + new_i * size_j + new_j, i * size_j + j)


@kdsl.kernel
def ravel_kernel(out_ptr):
    a = kl.reshape(kl.arange(0, 256), (32, 8))
    kl.store(out_ptr + kl.arange(0, 256), kl.ravel(a))


def test_swizzle2d_runtime_sizes_and_ravel(backend: str) -> None:
    out = np.zeros((5, 7), np.float32)
    swizzle2d_kernel[(1,)](out, 5, 7, 3)
    want = [[0, 3, 6, 9, 12, 15, 18], [1, 4, 7, 10, 13, 16, 19], [2, 5, 8, 11, 14, 17, 20],
            [21, 23, 25, 27, 29, 31, 33], [22, 24, 26, 28, 30, 32, 34]]  # fmt: skip
    assert np.array_equal(out, np.array(want, np.float32))
    r = np.zeros(256, np.int32)
    ravel_kernel[(1,)](r)
    assert np.array_equal(r, np.arange(256))


@kdsl.kernel
def max_min_kernel(x_ptr, y_ptr, mx_ptr, mn_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    kl.store(mx_ptr + offs, kl.maximum(x, y))
    kl.store(mn_ptr + offs, kl.minimum(x, y))


@pytest.mark.parametrize(
    "dtype", [np.int8, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16, np.float64]
)
def test_maximum_minimum(backend: str, dtype: type) -> None:
    """Signedness decides the order (uint64 above 2**63 is large), as numpy's maximum/minimum."""
    rng = np.random.default_rng(11)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        x, y = (rng.integers(info.min, info.max, 128, dtype=dtype, endpoint=True) for _ in range(2))
    else:
        x, y = (rng.standard_normal(128).astype(dtype) for _ in range(2))
    mx, mn = np.zeros_like(x), np.zeros_like(x)
    max_min_kernel[(1,)](x, y, mx, mn, 128)
    assert np.array_equal(mx, np.maximum(x, y))
    assert np.array_equal(mn, np.minimum(x, y))


# --- test_libdevice.py -------------------------------------------------------------------------


@kdsl.kernel
def libdevice_by_name(in_p, out_p, fn: kl.constexpr, SIZE: kl.constexpr):
    off = kl.arange(0, SIZE)
    kl.store(out_p + off, getattr(libdevice, fn)(kl.load(in_p + off)))


@kdsl.kernel
def renamed_import(in_ptr, out_ptr, BLOCK_SIZE: kl.constexpr):
    offsets = kl.arange(0, BLOCK_SIZE)
    data = kl.load(in_ptr + offsets)
    kl.store(out_ptr + offsets, my_fast_dividef(data, 2.0))


def test_libdevice_getattr_and_rename(backend: str) -> None:
    """A libdevice function picked by a constexpr name, and one imported under another name."""
    x = np.linspace(-3.0, 3.0, 128, dtype=np.float32)
    y = np.zeros_like(x)
    libdevice_by_name[(1,)](x, y, fn="cyl_bessel_i0", SIZE=128)
    np.testing.assert_allclose(y, np.i0(x.astype(np.float64)), rtol=1e-5)
    renamed_import[(1,)](x, y, 128)
    np.testing.assert_allclose(y, x / 2, rtol=1e-6)


# --- test_tensor_descriptor.py -----------------------------------------------------------------


@kdsl.kernel
def descriptor_load_kernel(out_ptr, a_ptr, M, N, M_BLOCK: kl.constexpr, N_BLOCK: kl.constexpr):
    desc = kl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[M_BLOCK, N_BLOCK])
    assert desc.shape[0] == M
    assert desc.shape[1] == N
    assert desc.strides[0] == N
    assert desc.strides[1] == 1
    assert desc.block_shape == [M_BLOCK, N_BLOCK]
    block = desc.load([M_BLOCK, 2 * N_BLOCK])
    idx = kl.arange(0, M_BLOCK)[:, None] * N_BLOCK + kl.arange(0, N_BLOCK)[None, :]
    kl.store(out_ptr + idx, block)


@pytest.mark.parametrize(("m_block", "n_block"), [(2, 16), (8, 32), (1, 256)])
def test_tensor_descriptor_load(backend: str, m_block: int, n_block: int) -> None:
    m, n = m_block * 3, n_block * 4
    inp = np.random.default_rng(2).standard_normal((m, n)).astype(np.float16)
    out = np.zeros((m_block, n_block), np.float16)
    descriptor_load_kernel[(1,)](out, inp, m, n, m_block, n_block)
    assert np.array_equal(out, inp[m_block : 2 * m_block, 2 * n_block : 3 * n_block])


@kdsl.kernel
def descriptor_nd_kernel(out_ptr, a_ptr, shape, strides, BLOCK_SHAPE, STORE: kl.constexpr):
    desc = kl.make_tensor_descriptor(out_ptr if STORE else a_ptr, shape=shape, strides=strides, block_shape=BLOCK_SHAPE)
    ndim: kl.constexpr = len(BLOCK_SHAPE)
    offs = (0,) * ndim
    idx = kl.full(BLOCK_SHAPE, 0, kl.int32)
    stride = 1
    for k in kl.static_range(ndim - 1, -1, -1):
        arange = kl.arange(0, BLOCK_SHAPE[k])
        for _ in kl.static_range(k):
            arange = kl.expand_dims(arange, 0)
        for _ in kl.static_range(k + 1, ndim):
            arange = kl.expand_dims(arange, -1)
        idx += arange * stride
        stride *= BLOCK_SHAPE[k]
    if STORE:
        desc.store(offs, kl.load(a_ptr + idx))
    else:
        kl.store(out_ptr + idx, desc.load(offs))


@pytest.mark.parametrize("ndim", [1, 2, 3, 5])
def test_tensor_descriptor_load_store_nd(backend: str, ndim: int) -> None:
    """A block larger than the tensor in every dimension: loads pad with zeros, stores are cut."""
    inner = 16
    block = (2, 2, 4, 8, inner)[-ndim:]
    cbs = tuple(kl.constexpr(v) for v in block)
    rng = np.random.default_rng(ndim)
    alloc = rng.standard_normal((1, 1, 3, 7, inner)[-ndim:]).astype(np.float32)
    inp = alloc[..., : inner - 3]  # a strided view: the descriptor's shape and strides say so
    out = np.full(block, -1.0, np.float32)
    strides = tuple(s // 4 for s in inp.strides)
    descriptor_nd_kernel[(1,)](out, inp, inp.shape, strides, cbs, STORE=False)
    idx = tuple(slice(None, s) for s in inp.shape)
    assert np.array_equal(out[idx], inp)
    out[idx] = 0
    assert np.all(out == 0)
    src = rng.standard_normal(block).astype(np.float32)
    out = np.full(block, -1.0, np.float32)
    shape = (1, 1, 3, 7, inner)[-ndim:]
    descriptor_nd_kernel[(1,)](out, src, shape, tuple(s // 4 for s in out.strides), cbs, STORE=True)
    idx = tuple(slice(None, s) for s in shape)
    assert np.array_equal(out[idx], src[idx])
    out[idx] = -1
    assert np.all(out == -1)


@kdsl.kernel
def device_desc_load(in_ptr, out_ptr, IM, IN, YM, YN, M_BLOCK: kl.constexpr, N_BLOCK: kl.constexpr,
                     padding: kl.constexpr):  # fmt: skip
    x_desc = kl.make_tensor_descriptor(in_ptr, shape=[IM, IN], strides=[IN, 1], block_shape=[M_BLOCK, N_BLOCK],
                                       padding_option=padding)  # fmt: skip
    moffset = kl.program_id(0) * M_BLOCK
    noffset = kl.program_id(1) * N_BLOCK
    value = x_desc.load([moffset, noffset])
    offs_m = moffset + kl.arange(0, M_BLOCK)
    offs_n = noffset + kl.arange(0, N_BLOCK)
    kl.store(out_ptr + offs_m[:, None] * YN + offs_n[None, :], value)


@kdsl.kernel
def host_desc_load(in_desc, out_ptr, YM, YN, M_BLOCK: kl.constexpr, N_BLOCK: kl.constexpr):
    moffset = kl.program_id(0) * M_BLOCK
    noffset = kl.program_id(1) * N_BLOCK
    value = in_desc.load([moffset, noffset])
    offs_m = moffset + kl.arange(0, M_BLOCK)
    offs_n = noffset + kl.arange(0, N_BLOCK)
    kl.store(out_ptr + offs_m[:, None] * YN + offs_n[None, :], value)


def test_tensor_descriptor_padding(backend: str) -> None:
    """``padding_option="nan"`` on device- and host-made descriptors: NaN outside the tensor."""
    from kdsl.tools.tensor_descriptor import TensorDescriptor

    im = in_ = 48
    om = on = 64
    blk = 32
    inp = np.arange(im * in_, dtype=np.float32).reshape(im, in_)
    want = np.full((om, on), np.nan, np.float32)
    want[:im, :in_] = inp
    grid = (om // blk, on // blk)
    out = np.zeros((om, on), np.float32)
    device_desc_load[grid](inp, out, im, in_, om, on, blk, blk, padding="nan")
    np.testing.assert_array_equal(out, want)
    out = np.zeros((om, on), np.float32)
    desc = TensorDescriptor(inp, inp.shape, tuple(s // 4 for s in inp.strides), [blk, blk], padding="nan")
    host_desc_load[grid](desc, out, om, on, blk, blk)
    np.testing.assert_array_equal(out, want)
