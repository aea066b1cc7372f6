"""Regressions found by the differential tester (tools/difftest.py), minimised.

Each test runs on every backend through the ``backend`` fixture and compares with the IR
semantics stated in ``kdsl/ir/dialects``.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def abs_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.abs(kl.load(x_ptr + offs)).to(kl.int64))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_abs_of_int_min_wraps(backend: str, dtype: type) -> None:
    """math.abs: "integers wrap (abs(INT_MIN) == INT_MIN)" (difftest seed 600176)."""
    info = np.iinfo(dtype)
    x = np.array([info.min, -5, 7, info.max], dtype)
    o = np.zeros(4, np.int64)
    abs_kernel[(1,)](x, o, BLOCK=4)
    np.testing.assert_array_equal(o, [info.min, 5, 7, info.max])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_abs_of_int_min_wraps_in_vector_loops(backend: str, dtype: type) -> None:
    """The same on a tile long enough for the vectoriser (OpenCL's vector ``abs()`` had the
    overflow too: difftest seed 901786, +2**31 instead of -2**31)."""
    info = np.iinfo(dtype)
    x = np.array([info.min, -5, 7, info.max] * 16, dtype)
    o = np.zeros(64, np.int64)
    abs_kernel[(1,)](x, o, BLOCK=64)
    np.testing.assert_array_equal(o, np.array([info.min, 5, 7, info.max] * 16, np.int64))


@kdsl.kernel
def widen_to_float_kernel(x_ptr, out32_ptr, out64_ptr, s_f, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    t = kl.load(x_ptr + offs, mask=m, other=0).to(kl.uint64)
    kl.store(out32_ptr + offs, (s_f + t).to(kl.float64), mask=m)  # u64 -> f32 (promotion)
    kl.store(out64_ptr + offs, t.to(kl.float64), mask=m)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64])
def test_negative_ints_to_uint64_to_float(backend: str, dtype: type) -> None:
    """``int16(-2830).to(uint64)`` is 2**64 - 2830 and converts to float as such (difftest seed
    904502: the cpu backend gave 4.29e9 -- LLVM's x86 lowering of a vectorised
    ``uitofp (sext i16 -> i64)`` dropped the upper 32 bits)."""
    info = np.iinfo(dtype)
    vals = [info.min, -100 if info.min < 0 else 100, 1, info.max, 0, 7] * 8
    x = np.array(vals, dtype)
    n = x.size
    o32, o64 = np.zeros(n), np.zeros(n)
    widen_to_float_kernel[(kdsl.cdiv(n, 16),)](x, o32, o64, 0.25, n, BLOCK=16)
    u = x.astype(np.int64).astype(np.uint64) if info.min < 0 else x.astype(np.uint64)
    np.testing.assert_array_equal(o64, u.astype(np.float64))
    np.testing.assert_array_equal(o32, (np.float32(0.25) + u.astype(np.float32)).astype(np.float64))


@kdsl.kernel
def div_by_folded_zero_kernel(x_ptr, out_ptr, s_f, s_i, s_iter, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    t = kl.load(x_ptr + offs)
    acc = t
    for it in range(0, s_iter):
        acc = acc ^ (t + it)  # t ^ t: 0 once s_iter == 1 is specialised and the loop folded
    kl.store(out_ptr + offs, ((s_f / -2.0) / (acc >> (s_i & 7))).to(kl.float64))


def test_division_by_a_zero_known_at_compile_time(backend: str) -> None:
    """``x / 0.0`` is ``+-inf`` also when the driver can prove the divisor zero (difftest seed
    907950: llvmpipe folded it to 0.0 on vulkan)."""
    x = np.array([19, -(2**63) + 1, 2440347656600454106, 7] * 16, np.int64)
    o = np.zeros(64)
    div_by_folded_zero_kernel[(1,)](x, o, -1.5, 5, 1, BLOCK=64)
    np.testing.assert_array_equal(o, np.full(64, np.inf))
