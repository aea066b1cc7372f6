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
