"""Creation ops and casts: arange, full, zeros, zeros_like, ``.to`` / ``kl.cast``.

Triton facts used (triton-lang.org/main/python-api/):
- generated/triton.language.arange.html: ``arange(start, end)`` is [start, end)
  as int32; ``end - start`` must be a power of two (else a compile error).
- generated/triton.language.full.html / zeros.html / zeros_like.html.
- generated/triton.language.cast.html: ``bitcast=True`` reinterprets bits.
- triton-semantics.html ("Out-of-range float-to-integer casts"): float->int
  truncates toward zero when in range (out-of-range is undefined: not tested).
- Integer casts sign-extend by the *source* signedness, truncate to narrower
  types (two's complement), int->bool is ``!= 0``, bool->int is 0/1.
All results are compared exactly (casts are exact or correctly rounded).
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError


@kdsl.kernel
def arange_kernel(out_ptr, START: kl.constexpr, END: kl.constexpr):
    r = kl.arange(START, END)
    kl.static_assert(r.dtype == kl.int32)
    kl.store(out_ptr + kl.arange(0, END - START), r)


@pytest.mark.parametrize(("start", "end"), [(0, 16), (4, 20), (0, 1), (-8, 8)])
def test_arange(backend: str, start: int, end: int) -> None:
    out = np.zeros(end - start, dtype=np.int32)
    arange_kernel[(1,)](out, START=start, END=end)
    np.testing.assert_array_equal(out, np.arange(start, end, dtype=np.int32))


def test_arange_non_power_of_two_is_compile_error(backend: str) -> None:
    out = np.zeros(16, dtype=np.int32)
    with pytest.raises(CompilationError):
        arange_kernel[(1,)](out, START=0, END=10)


@kdsl.kernel
def full_kernel(i16_ptr, f32_ptr, f32_2d_ptr, zeros_ptr, zl_ptr, x_ptr):
    offs = kl.arange(0, 16)
    a = kl.full((16,), 7, kl.int16)
    kl.static_assert(a.dtype == kl.int16)
    kl.store(i16_ptr + offs, a)
    b = kl.full([16], 2.5, dtype=kl.float32)
    kl.store(f32_ptr + offs, b)
    c = kl.full((4, 8), -1.25, kl.float32)
    kl.store(f32_2d_ptr + kl.arange(0, 4)[:, None] * 8 + kl.arange(0, 8)[None, :], c)
    z = kl.zeros([16], dtype=kl.float32)
    kl.store(zeros_ptr + offs, z + 1.0)
    x = kl.load(x_ptr + offs)
    zl = kl.zeros_like(x)
    kl.static_assert(zl.dtype == kl.int64)
    kl.store(zl_ptr + offs, zl + x * 0 + 3)


def test_full_zeros_zeros_like(backend: str) -> None:
    i16 = np.zeros(16, np.int16)
    f32 = np.zeros(16, np.float32)
    f32_2d = np.zeros((4, 8), np.float32)
    zeros = np.zeros(16, np.float32)
    zl = np.zeros(16, np.int64)
    x = np.arange(16, dtype=np.int64) - 5
    full_kernel[(1,)](i16, f32, f32_2d, zeros, zl, x)
    np.testing.assert_array_equal(i16, np.full(16, 7, np.int16))
    np.testing.assert_array_equal(f32, np.full(16, 2.5, np.float32))
    np.testing.assert_array_equal(f32_2d, np.full((4, 8), -1.25, np.float32))
    np.testing.assert_array_equal(zeros, np.ones(16, np.float32))
    np.testing.assert_array_equal(zl, np.full(16, 3, np.int64))


@kdsl.kernel
def convert_kernel(x_ptr, out_ptr, n, DST: kl.constexpr, BITCAST: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    y = x.to(DST, bitcast=BITCAST)
    kl.static_assert(y.dtype == DST)
    kl.store(out_ptr + offs, y, mask=mask)


@kdsl.kernel
def cast_fn_kernel(x_ptr, out_ptr, n, DST: kl.constexpr, BITCAST: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    kl.store(out_ptr + offs, kl.cast(x, DST, bitcast=BITCAST), mask=mask)


def _convert(kernel, x: np.ndarray, out_dtype: type, dst, bitcast: bool = False) -> np.ndarray:
    out = np.zeros(x.shape, dtype=out_dtype)
    kernel[(1,)](x, out, x.size, DST=dst, BITCAST=bitcast, BLOCK=32)
    return out


SPECIAL_F32 = np.array(
    [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e-45, 3.4028235e38, 123.456], dtype=np.float32
)


@pytest.mark.parametrize("kernel", [convert_kernel, cast_fn_kernel], ids=["to", "cast"])
def test_bitcast_f32_i32_roundtrip(backend: str, kernel) -> None:
    bits = _convert(kernel, SPECIAL_F32, np.int32, kl.int32, bitcast=True)
    np.testing.assert_array_equal(bits, SPECIAL_F32.view(np.int32))
    raw = np.array([0x7FC00001, -1, 0x3F800000, np.iinfo(np.int32).min, 1, 0x7F800000], dtype=np.int32)
    back = _convert(kernel, raw, np.float32, kl.float32, bitcast=True)
    np.testing.assert_array_equal(back.view(np.int32), raw)  # NaN payloads survive


def test_bitcast_u32_and_f16_i16(backend: str) -> None:
    x = np.array([1.0, -2.0, 65504.0, np.inf], dtype=np.float16)
    bits = _convert(convert_kernel, x, np.int16, kl.int16, bitcast=True)
    np.testing.assert_array_equal(bits, x.view(np.int16))
    f = np.array([1.0, -1.0, np.nan], dtype=np.float32)
    u = _convert(convert_kernel, f, np.uint32, kl.uint32, bitcast=True)
    np.testing.assert_array_equal(u, f.view(np.uint32))


def test_float_to_int_truncates_toward_zero(backend: str) -> None:
    x = np.array([-2.7, -2.5, -0.5, -0.0, 0.5, 2.5, 2.7, 100.9, -100.9, 127.99, -128.0], dtype=np.float32)
    want = np.trunc(x).astype(np.int32)
    np.testing.assert_array_equal(_convert(convert_kernel, x, np.int32, kl.int32), want)
    np.testing.assert_array_equal(_convert(convert_kernel, x, np.int8, kl.int8), want.astype(np.int8))
    pos = np.array([0.9, 1.5, 254.99, 200.0], dtype=np.float32)
    np.testing.assert_array_equal(_convert(convert_kernel, pos, np.uint8, kl.uint8), np.array([0, 1, 254, 200], np.uint8))
    d = np.array([-3.99, 2**40 + 0.5, -(2**40) - 0.5], dtype=np.float64)
    np.testing.assert_array_equal(
        _convert(convert_kernel, d, np.int64, kl.int64), np.array([-3, 2**40, -(2**40)], np.int64)
    )


def test_int_to_int_wraps_and_extends_by_source_signedness(backend: str) -> None:
    i32 = np.array([300, -1, 128, 255, -129, 127, -128, 2**31 - 1], dtype=np.int32)
    np.testing.assert_array_equal(_convert(convert_kernel, i32, np.int8, kl.int8), i32.astype(np.int8))
    np.testing.assert_array_equal(_convert(convert_kernel, i32, np.uint8, kl.uint8), i32.astype(np.uint8))
    i8 = np.array([-1, -128, 127, 0, 5], dtype=np.int8)
    np.testing.assert_array_equal(_convert(convert_kernel, i8, np.int32, kl.int32), i8.astype(np.int32))
    # signed source sign-extends even into an unsigned destination
    np.testing.assert_array_equal(
        _convert(convert_kernel, i8, np.uint32, kl.uint32),
        np.array([0xFFFFFFFF, 0xFFFFFF80, 127, 0, 5], np.uint32),
    )
    u8 = np.array([255, 128, 0, 7], dtype=np.uint8)
    np.testing.assert_array_equal(_convert(convert_kernel, u8, np.int16, kl.int16), np.array([255, 128, 0, 7], np.int16))
    np.testing.assert_array_equal(_convert(convert_kernel, u8, np.int8, kl.int8), np.array([-1, -128, 0, 7], np.int8))
    i64 = np.array([2**32 + 5, -(2**32) - 1, 2**40 + 2**31], dtype=np.int64)
    np.testing.assert_array_equal(_convert(convert_kernel, i64, np.int32, kl.int32), np.array([5, -1, -(2**31)], np.int32))
    u32 = np.array([0xFFFFFFFF, 0x80000000], dtype=np.uint32)
    np.testing.assert_array_equal(_convert(convert_kernel, u32, np.int64, kl.int64), np.array([0xFFFFFFFF, 0x80000000], np.int64))


def test_int_float_conversions_round_to_nearest(backend: str) -> None:
    i32 = np.array([16777217, 16777219, -16777217, 2**31 - 1, 3], dtype=np.int32)
    np.testing.assert_array_equal(_convert(convert_kernel, i32, np.float32, kl.float32), i32.astype(np.float32))
    u32 = np.array([0xFFFFFFFF, 0x80000001, 1], dtype=np.uint32)
    np.testing.assert_array_equal(_convert(convert_kernel, u32, np.float32, kl.float32), u32.astype(np.float32))
    f64 = np.array([0.1, 1 / 3, 1e39, -1e-50, 2.0**-149], dtype=np.float64)
    np.testing.assert_array_equal(_convert(convert_kernel, f64, np.float32, kl.float32), f64.astype(np.float32))
    f32 = np.array([0.1, 65519.0, 65520.0, 1e-8, -3.14159], dtype=np.float32)
    np.testing.assert_array_equal(_convert(convert_kernel, f32, np.float16, kl.float16), f32.astype(np.float16))
    f16 = np.array([0.1, 65504.0, -6e-8], dtype=np.float16)
    np.testing.assert_array_equal(_convert(convert_kernel, f16, np.float64, kl.float64), f16.astype(np.float64))


def test_bool_conversions(backend: str) -> None:
    f = np.array([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, 1e-45], dtype=np.float32)
    np.testing.assert_array_equal(
        _convert(convert_kernel, f, np.bool_, kl.int1), np.array([False, False, True, True, True, True, True])
    )
    i = np.array([0, 1, -1, 256, -256], dtype=np.int32)
    np.testing.assert_array_equal(_convert(convert_kernel, i, np.bool_, kl.int1), i != 0)
    b = np.array([True, False, True], dtype=np.bool_)
    np.testing.assert_array_equal(_convert(convert_kernel, b, np.float32, kl.float32), np.array([1.0, 0.0, 1.0], np.float32))
    np.testing.assert_array_equal(_convert(convert_kernel, b, np.int32, kl.int32), np.array([1, 0, 1], np.int32))
    # bool -> signed int is 0/1, not 0/-1
    np.testing.assert_array_equal(_convert(convert_kernel, b, np.int8, kl.int8), np.array([1, 0, 1], np.int8))


@kdsl.kernel
def compare_to_int_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 8)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, (x > 0).to(kl.int32) + (x < 0).to(kl.int32) * 10)


def test_comparison_result_converts_to_zero_one(backend: str) -> None:
    x = np.array([-3, -1, 0, 1, 2, 0, -5, 9], dtype=np.float32)
    out = np.zeros(8, np.int32)
    compare_to_int_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, (x > 0).astype(np.int32) + (x < 0).astype(np.int32) * 10)
