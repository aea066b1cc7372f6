"""Memory: load/store with masks and ``other``, pointer arithmetic, scalar access,
strided 2-D tiles, and out-of-bounds detection on the interpreter.

Triton facts (triton-lang.org/main/python-api/generated/triton.language.load.html,
...store.html): masked-off lanes of a load do not touch memory and yield
``other``; masked-off lanes of a store write nothing; ``other`` is converted to
the pointee type; a pointer plus an integer (either order) advances by
elements. An unmasked access outside the array is undefined on devices; kdsl's
interpreter must report it (``kdsl.errors.OutOfBoundsError``), other backends
are only checked for masked correctness. Comparisons are exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.errors import KernelRuntimeError, OutOfBoundsError


@kdsl.kernel
def masked_copy_kernel(x_ptr, out_ptr, n, OTHER: kl.constexpr, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask, other=OTHER)
    kl.store(out_ptr + offs, x, mask=mask)


@kdsl.kernel
def masked_other_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n, other=-1)
    kl.store(out_ptr + offs, x)  # whole tile: masked lanes carry `other`


def test_masked_tail_leaves_memory_untouched(backend: str) -> None:
    n = 37
    x = np.arange(n, dtype=np.float32) + 0.5
    out = np.full(n, 99.0, np.float32)
    masked_copy_kernel[(kdsl.cdiv(n, 16),)](x, out, n, OTHER=0.0, BLOCK=16)
    np.testing.assert_array_equal(out, x)
    out2 = np.full(64, 7.0, np.float32)
    masked_copy_kernel[(4,)](x, out2, n, OTHER=0.0, BLOCK=16)
    np.testing.assert_array_equal(out2[:n], x)
    np.testing.assert_array_equal(out2[n:], 7.0)  # store mask wrote nothing there


@pytest.mark.parametrize(("dtype", "other"), [(np.float32, -1.0), (np.int32, -1), (np.float64, -1.0)])
def test_other_fills_masked_lanes(backend: str, dtype: type, other: float) -> None:
    n = 5
    x = np.arange(1, n + 1).astype(dtype)
    out = np.zeros(16, dtype)
    masked_other_kernel[(1,)](x, out, n, BLOCK=16)
    np.testing.assert_array_equal(out, np.concatenate([x, np.full(16 - n, other, dtype)]))


@kdsl.kernel
def other_inf_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    kl.store(out_ptr, kl.max(x, axis=0))


def test_other_minus_inf_for_max(backend: str) -> None:
    x = np.array([-5.0, -3.0, -9.0], dtype=np.float32)
    out = np.zeros(1, np.float32)
    other_inf_kernel[(1,)](x, out, 3, BLOCK=16)
    assert out[0] == -3.0


@kdsl.kernel
def mask_from_array_kernel(x_ptr, m_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    m = kl.load(m_ptr + offs) != 0
    x = kl.load(x_ptr + offs, mask=m, other=123)
    kl.store(out_ptr + offs, x * 2, mask=m)


def _run_mask_pattern(mask: np.ndarray) -> None:
    x = np.arange(16, dtype=np.int32) - 8
    out = np.full(16, -7, np.int32)
    mask_from_array_kernel[(1,)](x, mask.astype(np.int32), out, BLOCK=16)
    np.testing.assert_array_equal(out, np.where(mask, x * 2, -7))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mask_bits=st.lists(st.booleans(), min_size=16, max_size=16))
def test_arbitrary_mask_pattern(backend: str, mask_bits: list[bool]) -> None:
    _run_mask_pattern(np.array(mask_bits))


@kdsl.kernel
def ptr_arith_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 8)
    a = kl.load(offs + x_ptr)  # offset + pointer
    kl.store(out_ptr + offs, a)
    p = x_ptr + 3  # scalar pointer
    v = kl.load(p)
    kl.store(out_ptr + 8, v)
    q = p + 2
    kl.store(out_ptr + 9, kl.load(q - 4))  # pointer minus offset: x[1]
    kl.store(9 + out_ptr + 1, v * 10)  # scalar store through offset + pointer
    ptrs = x_ptr + offs
    ptrs += 8
    kl.store(out_ptr + 11 + offs, kl.load(ptrs))


def test_pointer_arithmetic_scalar_and_tile(backend: str) -> None:
    x = np.arange(16, dtype=np.int64) * 3 + 1
    out = np.zeros(19, np.int64)
    ptr_arith_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out[:8], x[:8])
    assert out[8] == x[3]
    assert out[9] == x[1]
    assert out[10] == x[3] * 10
    np.testing.assert_array_equal(out[11:19], x[8:16])


@kdsl.kernel
def scalar_rw_kernel(x_ptr, out_ptr, idx):
    v = kl.load(x_ptr + idx)
    kl.store(out_ptr + idx, v + 1.5)
    kl.store(out_ptr, v)


def test_scalar_load_store_runtime_index(backend: str) -> None:
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    scalar_rw_kernel[(1,)](x, out, 6)
    assert out[0] == 6.0 and out[6] == 7.5
    assert np.count_nonzero(out) == 2


@kdsl.kernel
def strided_transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on,
                             BM: kl.constexpr, BN: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = kl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask, other=0)
    kl.store(out_ptr + rn[None, :] * stride_om + rm[:, None] * stride_on, tile, mask=mask)


def test_strided_2d_access_with_masks(backend: str) -> None:
    m, n = 19, 27
    big = np.arange(40 * 64, dtype=np.float32).reshape(40, 64)
    x = big[3:3 + m, 5:5 + n]  # a strided view: pass its base array and strides
    out = np.zeros((n, m), np.float32)
    base = big.reshape(-1)[3 * 64 + 5:]
    strided_transpose_kernel[(kdsl.cdiv(m, 8), kdsl.cdiv(n, 16))](
        base, out, m, n, 64, 1, m, 1, BM=8, BN=16
    )
    np.testing.assert_array_equal(out, x.T)


@kdsl.kernel
def unmasked_read_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs))


@kdsl.kernel
def unmasked_write_kernel(out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, offs)


@kdsl.kernel
def negative_offset_kernel(x_ptr, out_ptr):
    kl.store(out_ptr, kl.load(x_ptr - 1))


def test_out_of_bounds_unmasked_access_reported(backend: str) -> None:
    """The interpreter checks every access; device backends give the same guarantee in
    sanitiser mode (docs/RELIABILITY.md section 6), which also masks the failing lanes off,
    so nothing outside the arrays is read or written."""
    if backend != "interpreter":
        kdsl.set_sanitize(True)
    try:
        x = np.arange(10, dtype=np.float32)
        big = np.zeros(16, np.float32)
        with pytest.raises(OutOfBoundsError, match="argument 'x_ptr'"):
            unmasked_read_kernel[(1,)](x, big, BLOCK=16)
        guarded = np.full(16, -7, np.int32)  # the kernel sees only its first 10 elements
        small = guarded[:10]
        with pytest.raises(OutOfBoundsError, match="argument 'out_ptr'"):
            unmasked_write_kernel[(1,)](small, BLOCK=16)
        np.testing.assert_array_equal(guarded[10:], -7)  # nothing written past the array
        with pytest.raises(KernelRuntimeError):
            negative_offset_kernel[(1,)](x, big)
    finally:
        kdsl.set_sanitize(None)


def test_in_bounds_masked_never_reports(backend: str) -> None:
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    masked_copy_kernel[(1,)](x, out, 10, OTHER=0.0, BLOCK=16)
    np.testing.assert_array_equal(out, x)


@kdsl.kernel
def axpy_inplace_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    y = kl.load(y_ptr + offs, mask=mask)
    kl.store(out_ptr + offs, a * x + y, mask=mask)


def test_aliased_pointer_arguments(backend: str) -> None:
    # The same array may be passed for several pointer parameters (in-place ops).
    x = np.arange(10, dtype=np.float32)
    want = 2 * x + x
    axpy_inplace_kernel[(1,)](x, x, x, 2.0, 10, BLOCK=16)
    np.testing.assert_array_equal(x, want)
    y = np.arange(20, dtype=np.float32)
    view = y[5:15]  # overlapping views of one buffer
    want2 = 3 * y[:10] + y[5:15]
    axpy_inplace_kernel[(1,)](y[:10], view, y[10:20], 3.0, 10, BLOCK=16)
    np.testing.assert_array_equal(y[10:20], want2)
