"""Triton's ``tl.dtype`` query methods on kdsl dtypes (kernels branch on them at compile time).

Facts (triton/language/core.py ``dtype``, facts only): ``is_int()`` covers every integer type,
``int1`` included; ``is_bool()`` is ``int1``; ``is_floating()`` the float types;
``is_standard_floating()`` fp16/bf16/fp32/fp64; ``get_int_max_value``/``get_int_min_value``;
``fp_mantissa_width``; a block (tile) type answers ``is_block()``.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir import types as t


@pytest.mark.parametrize(
    ("dt", "is_int", "is_float", "lo", "hi"),
    [(kl.int1, True, False, 0, 1), (kl.int8, True, False, -128, 127), (kl.uint16, True, False, 0, 65535),
     (kl.int64, True, False, -(2**63), 2**63 - 1), (kl.float16, False, True, None, None),
     (kl.bfloat16, False, True, None, None), (kl.float64, False, True, None, None)],
)  # fmt: skip
def test_predicates(dt: t.ScalarType, is_int: bool, is_float: bool, lo: int | None, hi: int | None) -> None:
    assert dt.is_int() is is_int and dt.is_floating() is is_float and dt.is_standard_floating() is is_float
    assert dt.is_bool() is (dt == kl.int1) and not dt.is_fp8() and not dt.is_fp8e5() and not dt.is_block()
    if lo is not None:
        assert (dt.get_int_min_value(), dt.get_int_max_value()) == (lo, hi)
    else:
        with pytest.raises(TypeError):
            dt.get_int_max_value()
    assert [kl.float16.fp_mantissa_width, kl.bfloat16.fp_mantissa_width, kl.float32.fp_mantissa_width] == [10, 7, 23]
    assert kl.int32.is_int32() and kl.uint8.is_uint8() and not kl.int32.is_int64()


@kdsl.kernel
def dtype_branch_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 8)
    x = kl.load(x_ptr + offs)
    if x.dtype.is_int():  # noqa: SIM108 -- a compile-time branch, as kernels write it
        y = x.to(kl.float32) + x.dtype.get_int_max_value()
    else:
        y = x.to(kl.float32) * 2
    if x.type.is_block():
        y = y + 0.5
    kl.store(out_ptr + offs, y)


def test_kernels_branch_on_dtype_methods(backend: str) -> None:
    out = np.zeros(8, np.float32)
    dtype_branch_kernel[(1,)](np.arange(8, dtype=np.int8), out)
    np.testing.assert_array_equal(out, np.arange(8) + 127.5)
    dtype_branch_kernel[(1,)](np.arange(8, dtype=np.float32), out)
    np.testing.assert_array_equal(out, np.arange(8) * 2 + 0.5)


def test_is_int_reads_as_property_and_method() -> None:
    # Triton calls it; older kdsl code read it as a property: both must give the right answer
    assert kl.int8.is_int() and kl.int8.is_int and not kl.float32.is_int() and not kl.float32.is_int
    assert kl.int1.is_bool() and kl.int1.is_bool and not kl.int8.is_bool
