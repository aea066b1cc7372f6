"""Smaller Triton rules that are easy to get subtly wrong.

Facts and sources:
- Triton's semantic layer (python/triton/language/semantic.py, facts only):
  a negative Python scalar with an unsigned tensor is an error; a Python int
  scalar out of range of the tensor's integer type is an error; ``//`` needs
  integers (float // float is an error); ``load`` with ``other`` but no
  ``mask`` is an error; ``store`` converts the value to the pointee type;
  ``where`` converts its condition to bool (non-zero is True); builtin
  ``min``/``max`` on tensors are ``minimum``/``maximum``.
- triton.language.sum.html (main): float inputs sum in at least float32
  (f16 -> f32; older Triton sources kept f16 -- the docs are the reference
  here); integers narrower than 32 bits sum as int32 / uint32 by signedness
  (standard.py ``_pick_sum_dtype``); ``max``/``min`` of types narrower than 32
  bits reduce in int32 / float32 (standard.py ``max``);
  triton.language.cumsum.html: integer types narrower than 32 bits are upcast.
- triton.language.static_range.html: bounds must be compile-time constants.
- A grid with zero programs runs nothing.
Results exact unless noted.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError


@kdsl.kernel
def scalar_op_kernel(x_ptr, out_ptr, CASE: kl.constexpr):
    offs = kl.arange(0, 4)
    x = kl.load(x_ptr + offs)
    if CASE == "unsigned_minus_scalar":
        y = x + -1
    elif CASE == "int8_out_of_range":
        y = x + 300
    elif CASE == "float_floordiv":
        y = x // x
    elif CASE == "other_without_mask":
        y = kl.load(x_ptr + offs, other=0)
    else:
        y = x
    kl.store(out_ptr + offs, y)


@pytest.mark.parametrize(
    ("case", "dtype"),
    [("unsigned_minus_scalar", np.uint32), ("int8_out_of_range", np.int8), ("float_floordiv", np.float32),
     ("other_without_mask", np.float32)],
)
def test_rejected_operations(backend: str, case: str, dtype: type) -> None:
    x = np.ones(4, dtype)
    with pytest.raises(CompilationError):
        scalar_op_kernel[(1,)](x, np.zeros(4, dtype), CASE=case)


@kdsl.kernel
def store_converts_kernel(x_ptr, i_ptr, h_ptr, b_ptr, f_ptr):
    offs = kl.arange(0, 4)
    x = kl.load(x_ptr + offs)  # float32
    kl.store(i_ptr + offs, x)  # -> int32, truncating toward zero
    kl.store(h_ptr + offs, x)  # -> float16, rounding to nearest
    kl.store(b_ptr + offs, x)  # -> bool, != 0
    kl.store(f_ptr + offs, 1.5)  # a scalar stored through a tile of pointers


def test_store_converts_to_pointee_type(backend: str) -> None:
    x = np.array([3.7, -3.7, 0.0, 1000.1], np.float32)
    i = np.zeros(4, np.int32)
    h = np.zeros(4, np.float16)
    b = np.zeros(4, np.bool_)
    f = np.zeros(4, np.float64)
    store_converts_kernel[(1,)](x, i, h, b, f)
    np.testing.assert_array_equal(i, [3, -3, 0, 1000])
    np.testing.assert_array_equal(h, x.astype(np.float16))
    np.testing.assert_array_equal(b, [True, True, False, True])
    np.testing.assert_array_equal(f, [1.5] * 4)


@kdsl.kernel
def where_int_cond_kernel(c_ptr, out_ptr):
    offs = kl.arange(0, 4)
    c = kl.load(c_ptr + offs)
    kl.store(out_ptr + offs, kl.where(c, 10, 20))


def test_where_with_integer_condition(backend: str) -> None:
    c = np.array([0, 1, -5, 256], np.int32)
    out = np.zeros(4, np.int32)
    where_int_cond_kernel[(1,)](c, out)
    np.testing.assert_array_equal(out, [20, 10, 10, 10])


@kdsl.kernel
def builtin_minmax_kernel(x_ptr, y_ptr, out_ptr, A: kl.constexpr, B: kl.constexpr):
    offs = kl.arange(0, 4)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    kl.store(out_ptr + offs, min(x, y))
    kl.store(out_ptr + 4 + offs, max(x, y))
    kl.static_assert(min(A, B) == 2)
    kl.store(out_ptr + 8 + offs, x * 0 + max(A, B))


def test_builtin_min_max(backend: str) -> None:
    x = np.array([1, 5, -3, 0], np.int32)
    y = np.array([2, 4, -7, 0], np.int32)
    out = np.zeros(12, np.int32)
    builtin_minmax_kernel[(1,)](x, y, out, A=2, B=9)
    np.testing.assert_array_equal(out, np.concatenate([np.minimum(x, y), np.maximum(x, y), [9] * 4]))


@kdsl.kernel
def sum_f16_kernel(h_ptr, s_ptr):
    s = kl.sum(kl.load(h_ptr + kl.arange(0, 8)), axis=0)
    kl.static_assert(s.dtype == kl.float32, "sum of float16 accumulates in float32")
    kl.store(s_ptr, s)


def test_sum_of_float16_is_float32(backend: str) -> None:
    h = np.full(8, 2048.0, np.float16)
    h[0] = 1.0  # 1 + 7*2048 is exact in f32 but not in f16
    s = np.zeros(1, np.float32)
    sum_f16_kernel[(1,)](h, s)
    assert s[0] == 1.0 + 7 * 2048.0


@kdsl.kernel
def int8_reductions_kernel(i8_ptr, m_ptr, c_ptr):
    offs = kl.arange(0, 8)
    i8 = kl.load(i8_ptr + offs)
    m = kl.max(i8, axis=0)
    kl.static_assert(m.dtype == kl.int32, "max of a type narrower than 32 bits is computed in int32")
    kl.store(m_ptr, m)
    c = kl.cumsum(i8, axis=0)
    kl.static_assert(c.dtype == kl.int32, "cumsum of int8 is upcast")
    kl.store(c_ptr + offs, c)


def test_int8_max_and_cumsum_upcast(backend: str) -> None:
    i8 = np.full(8, 100, np.int8)
    m = np.zeros(1, np.int32)
    c = np.zeros(8, np.int32)
    int8_reductions_kernel[(1,)](i8, m, c)
    assert m[0] == 100
    np.testing.assert_array_equal(c, np.cumsum(np.full(8, 100)))


@kdsl.kernel
def sum_uint8_kernel(x_ptr, out_ptr):
    s = kl.sum(kl.load(x_ptr + kl.arange(0, 8)), axis=0)
    kl.static_assert(s.dtype == kl.uint32, "sum of uint8 is uint32")
    kl.store(out_ptr, s)


def test_sum_of_uint8_is_uint32(backend: str) -> None:
    x = np.full(8, 250, np.uint8)
    out = np.zeros(1, np.uint32)
    sum_uint8_kernel[(1,)](x, out)
    assert out[0] == 2000


@kdsl.kernel
def static_range_runtime_bound_kernel(out_ptr, n):
    acc = 0
    for i in kl.static_range(n):
        acc += i
    kl.store(out_ptr, acc)


def test_static_range_needs_constexpr_bounds(backend: str) -> None:
    with pytest.raises(CompilationError):
        static_range_runtime_bound_kernel[(1,)](np.zeros(1, np.int32), 4)


@kdsl.kernel
def fill_kernel(out_ptr):
    kl.store(out_ptr + kl.program_id(0), 1)


def test_empty_grid_runs_nothing(backend: str) -> None:
    out = np.zeros(4, np.int32)
    fill_kernel[(0,)](out)
    fill_kernel[(4, 0)](out)
    np.testing.assert_array_equal(out, 0)
    fill_kernel[(4,)](out)
    np.testing.assert_array_equal(out, 1)


@kdsl.kernel
def cdiv_kernel(out_ptr, a, b, C: kl.constexpr):
    kl.store(out_ptr, kl.cdiv(a, b))
    kl.store(out_ptr + 1, kl.cdiv(C, 4))


def test_in_kernel_cdiv(backend: str) -> None:
    out = np.zeros(2, np.int32)
    cdiv_kernel[(1,)](out, 17, 4, C=9)
    np.testing.assert_array_equal(out, [5, 3])


@kdsl.kernel
def mixed_compare_kernel(i_ptr, f_ptr, out_ptr):
    offs = kl.arange(0, 4)
    i = kl.load(i_ptr + offs)
    f = kl.load(f_ptr + offs)
    kl.store(out_ptr + offs, i < f)  # int32 promoted to float32
    kl.store(out_ptr + 4 + offs, i == 16777217)  # stays an int32 comparison


def test_mixed_type_comparison_promotes(backend: str) -> None:
    i = np.array([1, 2, 16777217, -3], np.int32)
    f = np.array([1.5, 2.0, 16777216.0, -2.5], np.float32)
    out = np.zeros(8, np.bool_)
    mixed_compare_kernel[(1,)](i, f, out)
    np.testing.assert_array_equal(out[:4], i.astype(np.float32) < f)
    np.testing.assert_array_equal(out[4:], i == 16777217)


_ = kdsl
