"""Specialisation must never change results: integer arguments equal to 1 or
divisible by 16 (which Triton specialises on) give the same answers as the same
kernel with specialisation turned off (``do_not_specialize``).

Triton facts (triton-lang.org/main/python-api/generated/triton.jit.html):
``jit(do_not_specialize=[...])`` names parameters that must not be specialised;
by default integer arguments equal to 1 and multiples of 16 are specialised.
Results are compared exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def spec_kernel(x_ptr, out_ptr, n, stride, scale, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs * stride, mask=mask, other=0)
    kl.store(out_ptr + offs, x * scale + n // 16 + stride, mask=mask)


@kdsl.kernel(do_not_specialize=["n", "stride", "scale"])
def nospec_kernel(x_ptr, out_ptr, n, stride, scale, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs * stride, mask=mask, other=0)
    kl.store(out_ptr + offs, x * scale + n // 16 + stride, mask=mask)


@pytest.mark.parametrize(
    ("n", "stride", "scale"),
    [(1, 1, 1), (16, 1, 16), (32, 2, 1), (17, 3, 5), (64, 16, 32), (1, 16, 0), (48, 1, -16)],
)
def test_specialised_equals_unspecialised(backend: str, n: int, stride: int, scale: int) -> None:
    x = np.arange(64 * 16, dtype=np.int64) - 100
    a = np.full(64, -1, np.int64)
    b = np.full(64, -1, np.int64)
    grid = (kdsl.cdiv(n, 16),)
    spec_kernel[grid](x, a, n, stride, scale, BLOCK=16)
    nospec_kernel[grid](x, b, n, stride, scale, BLOCK=16)
    want = np.full(64, -1, np.int64)
    want[:n] = x[: n * stride : stride][:n] * scale + n // 16 + stride
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, want)


def test_repeated_launches_switch_specialisations(backend: str) -> None:
    x = np.arange(256, dtype=np.int64)
    for n in (1, 16, 5, 1, 32, 7, 16):
        a = np.zeros(64, np.int64)
        spec_kernel[(kdsl.cdiv(n, 16),)](x, a, n, 1, 2, BLOCK=16)
        want = np.zeros(64, np.int64)
        want[:n] = x[:n] * 2 + n // 16 + 1
        np.testing.assert_array_equal(a, want)


@kdsl.kernel
def aligned_ptr_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs) + 1)


def test_misaligned_pointer_views(backend: str) -> None:
    base = np.arange(40, dtype=np.float32)
    for start in (0, 1, 3, 4, 16):
        out = np.zeros(16, np.float32)
        aligned_ptr_kernel[(1,)](base[start:start + 16], out, BLOCK=16)
        np.testing.assert_array_equal(out, base[start:start + 16] + 1)
