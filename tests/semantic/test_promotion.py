"""Type promotion between tensors and with Python scalars.

Facts, all from triton-lang.org/main/python-api/triton-semantics.html ("Type
Promotion"):
- kinds bool < integer < floating; a higher kind wins: (int32, float16) -> float16.
- same kind: the wider wins: (float32, float16) -> float32.
- same width, different signedness: unsigned wins: (int32, uint32) -> uint32.
- tensor with a scalar (literal / constexpr) of lower or equal kind: the
  scalar does not participate: (uint8, int) -> uint8, so int8 + 3 stays int8
  and float16 + 2.0 stays float16.
- scalar of a higher kind: the lowest fitting of int32<uint32<int64<uint64 /
  float32<float64 is used for both: (int16, 4.0) -> float32.
- division and modulo: with any float operand both sides become at least
  float32, so float16 / 2.0 is float32.
- ``tl.where`` promotes its last two arguments with the same rules.
Each claim is checked twice: statically (``kl.static_assert`` on the result
dtype) and dynamically (a value that wraps or rounds differently in the wrong
type, stored into a wider array).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl

from ._util import wrap

HYP = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@kdsl.kernel
def int8_plus_literal_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = x + 3
    kl.static_assert(y.dtype == kl.int8, "int8 + 3 must stay int8")
    kl.store(out_ptr + offs, y)  # out is int32: the wrap must already have happened


@HYP
@given(vals=st.lists(st.integers(-128, 127), min_size=8, max_size=8))
def test_int8_plus_python_int_stays_int8(backend: str, vals: list[int]) -> None:
    x = np.array(vals, dtype=np.int8)
    out = np.zeros(8, np.int32)
    int8_plus_literal_kernel[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, [wrap(v + 3, np.int8) for v in vals])


@kdsl.kernel
def uint8_mul_literal_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    y = kl.load(x_ptr + offs) * 2
    kl.static_assert(y.dtype == kl.uint8)
    kl.store(out_ptr + offs, y)


def test_uint8_times_int_stays_uint8(backend: str) -> None:
    x = np.array([0, 1, 127, 128, 200, 255, 3, 100], dtype=np.uint8)
    out = np.zeros(8, np.int32)
    uint8_mul_literal_kernel[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, (x.astype(np.int64) * 2) % 256)


@kdsl.kernel
def int16_plus_float_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    y = kl.load(x_ptr + offs) + 4.0
    kl.static_assert(y.dtype == kl.float32, "int16 + 4.0 must be float32")
    kl.store(out_ptr + offs, y)


@HYP
@given(vals=st.lists(st.integers(-32768, 32767), min_size=8, max_size=8))
def test_int16_plus_python_float_is_float32(backend: str, vals: list[int]) -> None:
    x = np.array(vals, dtype=np.int16)
    out = np.zeros(8, np.float64)
    int16_plus_float_kernel[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, (x.astype(np.float32) + np.float32(4.0)).astype(np.float64))


@kdsl.kernel
def f16_plus_float_kernel(x_ptr, out_ptr, div_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = x + 2.0
    kl.static_assert(y.dtype == kl.float16, "f16 + 2.0 must stay f16")
    kl.store(out_ptr + offs, y)  # out is float32: the f16 rounding must be visible
    q = x / 3.0
    kl.static_assert(q.dtype == kl.float32, "f16 / 3.0 computes in float32")
    kl.store(div_ptr + offs, q)


def test_f16_plus_python_float_stays_f16(backend: str) -> None:
    x = np.array([2048.0, 1.0, 0.1, -3.0, 65500.0, 1000.5, 0.0, 7.0], dtype=np.float16)
    out = np.zeros(8, np.float32)
    div = np.zeros(8, np.float32)
    f16_plus_float_kernel[(1,)](x, out, div, BLOCK=8)
    np.testing.assert_array_equal(out, (x + np.float16(2.0)).astype(np.float32))  # 2048+2 rounds in f16
    np.testing.assert_array_equal(div, x.astype(np.float32) / np.float32(3.0))


@kdsl.kernel
def tensor_tensor_promotion_kernel(i32_ptr, u32_ptr, f16_ptr, f32_ptr, i8_ptr, i64_ptr,
                                   o_uu_ptr, o_if_ptr, o_ff_ptr, o_ii_ptr):
    offs = kl.arange(0, 4)
    i32 = kl.load(i32_ptr + offs)
    u32 = kl.load(u32_ptr + offs)
    f16 = kl.load(f16_ptr + offs)
    f32 = kl.load(f32_ptr + offs)
    i8 = kl.load(i8_ptr + offs)
    i64 = kl.load(i64_ptr + offs)
    uu = i32 + u32
    kl.static_assert(uu.dtype == kl.uint32)
    kl.store(o_uu_ptr + offs, uu)
    if_ = i32 + f16
    kl.static_assert(if_.dtype == kl.float16)
    kl.store(o_if_ptr + offs, if_)
    ff = f16 + f32
    kl.static_assert(ff.dtype == kl.float32)
    kl.store(o_ff_ptr + offs, ff)
    ii = i8 + i64
    kl.static_assert(ii.dtype == kl.int64)
    kl.store(o_ii_ptr + offs, ii)


def test_tensor_tensor_promotion(backend: str) -> None:
    i32 = np.array([-1, 2, 3, 2047], np.int32)
    u32 = np.array([0, 1, 2**32 - 4, 1], np.uint32)
    f16 = np.array([0.5, 1.0, 2.0, 0.5], np.float16)
    f32 = np.array([1e-4, 1.0, 3.0, 0.25], np.float32)
    i8 = np.array([-128, 127, -1, 5], np.int8)
    i64 = np.array([2**40, -(2**40), 1, 0], np.int64)
    o_uu = np.zeros(4, np.uint64)
    o_if = np.zeros(4, np.float32)
    o_ff = np.zeros(4, np.float32)
    o_ii = np.zeros(4, np.int64)
    tensor_tensor_promotion_kernel[(1,)](i32, u32, f16, f32, i8, i64, o_uu, o_if, o_ff, o_ii)
    np.testing.assert_array_equal(o_uu, (i32.astype(np.uint32) + u32).astype(np.uint64))
    np.testing.assert_array_equal(o_if, (i32.astype(np.float16) + f16).astype(np.float32))
    np.testing.assert_array_equal(o_ff, f16.astype(np.float32) + f32)
    np.testing.assert_array_equal(o_ii, i8.astype(np.int64) + i64)


@kdsl.kernel
def where_promotion_kernel(c_ptr, a_ptr, out_ptr):
    offs = kl.arange(0, 4)
    c = kl.load(c_ptr + offs) != 0
    a = kl.load(a_ptr + offs)  # int16
    r = kl.where(c, a, 1.5)
    kl.static_assert(r.dtype == kl.float32)
    kl.store(out_ptr + offs, r)
    s = kl.where(c, a, 7)
    kl.static_assert(s.dtype == kl.int16)
    kl.store(out_ptr + 4 + offs, s)


def test_where_promotes_last_two_arguments(backend: str) -> None:
    c = np.array([1, 0, 1, 0], np.int32)
    a = np.array([-3, 4, 30000, 5], np.int16)
    out = np.zeros(8, np.float32)
    where_promotion_kernel[(1,)](c, a, out)
    np.testing.assert_array_equal(out[:4], [-3.0, 1.5, 30000.0, 1.5])
    np.testing.assert_array_equal(out[4:], [-3.0, 7.0, 30000.0, 7.0])


@kdsl.kernel
def f32_plus_big_literal_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 4)
    y = kl.load(x_ptr + offs) + 1
    kl.static_assert(y.dtype == kl.float32)
    kl.store(out_ptr + offs, y)


def test_float_tensor_plus_int_literal_stays_float(backend: str) -> None:
    x = np.array([16777216.0, 0.5, -1.0, 3.0], np.float32)
    out = np.zeros(4, np.float64)
    f32_plus_big_literal_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, (x + np.float32(1)).astype(np.float64))
