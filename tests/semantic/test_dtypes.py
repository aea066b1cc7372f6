"""Every element type round-trips through load/store unchanged (bit-exact),
including extremes, NaN payloads, infinities, signed zeros and subnormals.

Triton facts: triton-lang.org/main/python-api/triton.language.html "Types"
lists int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32
float64 (numpy bool arrays carry int1). A load followed by a store of the same
type is the identity on bits.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

from ._util import INT_DTYPES, extremes


@kdsl.kernel
def roundtrip_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def scalar_roundtrip_kernel(x_ptr, out_ptr, n):
    for i in range(n):
        kl.store(out_ptr + i, kl.load(x_ptr + i))


def _float_specials(dtype: type) -> np.ndarray:
    info = np.finfo(dtype)
    vals = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny,
                     info.tiny / 4, info.eps, 1 / 3], dtype=dtype)
    bits = vals.view(f"u{np.dtype(dtype).itemsize}")
    bits[6] |= 1  # a NaN with a payload
    return vals


def _cases() -> list[tuple[str, np.ndarray]]:
    cases = [(np.dtype(d).name, np.array(extremes(d), dtype=d)) for d in INT_DTYPES]
    cases += [(np.dtype(d).name, _float_specials(d)) for d in (np.float16, np.float32, np.float64)]
    cases.append(("bool", np.array([True, False, False, True, True], dtype=np.bool_)))
    return cases


@pytest.mark.parametrize(("name", "values"), _cases(), ids=[c[0] for c in _cases()])
def test_tile_roundtrip_bit_exact(backend: str, name: str, values: np.ndarray) -> None:
    out = np.zeros_like(values)
    roundtrip_kernel[(kdsl.cdiv(values.size, 8),)](values, out, values.size, BLOCK=8)
    np.testing.assert_array_equal(out.view(np.uint8), values.view(np.uint8))


@pytest.mark.parametrize(("name", "values"), _cases(), ids=[c[0] for c in _cases()])
def test_scalar_roundtrip_bit_exact(backend: str, name: str, values: np.ndarray) -> None:
    out = np.zeros_like(values)
    scalar_roundtrip_kernel[(1,)](values, out, values.size)
    np.testing.assert_array_equal(out.view(np.uint8), values.view(np.uint8))


@kdsl.kernel
def dtype_of_pointer_kernel(x_ptr, out_ptr, EXPECT: kl.constexpr):
    kl.static_assert(x_ptr.dtype.element_ty == EXPECT)
    kl.store(out_ptr, kl.load(x_ptr))


@pytest.mark.parametrize(
    ("np_dtype", "kl_dtype"),
    [(np.int8, kl.int8), (np.int16, kl.int16), (np.int32, kl.int32), (np.int64, kl.int64),
     (np.uint8, kl.uint8), (np.uint16, kl.uint16), (np.uint32, kl.uint32), (np.uint64, kl.uint64),
     (np.float16, kl.float16), (np.float32, kl.float32), (np.float64, kl.float64), (np.bool_, kl.int1)],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_numpy_dtype_maps_to_pointer_type(backend: str, np_dtype: type, kl_dtype) -> None:
    x = np.ones(1, np_dtype)
    out = np.zeros(1, np_dtype)
    dtype_of_pointer_kernel[(1,)](x, out, EXPECT=kl_dtype)
    assert out[0] == x[0]


@kdsl.kernel
def bf16_bits_kernel(bits_ptr, f32_ptr, same_ptr, rounded_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    b = kl.load(bits_ptr + offs).to(kl.bfloat16, bitcast=True)
    kl.store(same_ptr + offs, b.to(kl.int16, bitcast=True))  # a bitcast round trip is the identity
    r = kl.load(f32_ptr + offs).to(kl.bfloat16)  # f32 -> bf16: ties to even, NaNs quieted
    kl.store(rounded_ptr + offs, r.to(kl.int16, bitcast=True))


def test_bf16_bits_and_nan_rounding(backend: str) -> None:
    # bf16 has no numpy type: its bit patterns travel as int16. NaN payloads (signalling, negative)
    # survive a bitcast; rounding an f32 NaN keeps its sign and top payload bits and sets the quiet bit.
    bits = np.array([0x7FC1, 0x7F81, 0xFFC3, 0x0001, 0x8001, 0x3F80, 0x7F80, 0xFF80], np.uint16).view(np.int16)
    f32 = np.array([0x7F810001, 0xFFA00000, 0x7FC00000, 0x3F808000, 0x3F818000, 0x00000001, 0x7F7FFFFF,
                    0x80008000], np.uint32).view(np.float32)  # fmt: skip
    want = np.array([0x7FC1, 0xFFE0, 0x7FC0, 0x3F80, 0x3F82, 0x0000, 0x7F80, 0x8000], np.uint16)
    same, rounded = np.zeros(8, np.int16), np.zeros(8, np.int16)
    bf16_bits_kernel[(1,)](bits, f32, same, rounded, BLOCK=8)
    np.testing.assert_array_equal(same.view(np.uint16), bits.view(np.uint16))
    np.testing.assert_array_equal(rounded.view(np.uint16), want)
