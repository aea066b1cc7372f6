"""Semantics that optimisations (canonicalize, CSE, DCE, inline) must preserve.

These are plain Triton semantics chosen where a plausible but wrong rewrite
would change the answer:
- signed ``x // 2**k`` truncates toward zero (it is not an arithmetic shift)
  and ``x % 2**k`` keeps the dividend's sign (not ``x & (2**k - 1)``)
  (triton-semantics.html "C rounding in integer division");
- IEEE floats: ``x - x`` is NaN for NaN/inf, ``x * 0.0`` is NaN for inf/NaN and
  -0.0 for negative x, ``x + 0.0`` turns -0.0 into +0.0, ``x == x`` is False for
  NaN -- none of these may be folded;
- a load after a store to the same address sees the stored value, two
  atomics on one address both happen, stores / atomics / prints whose results
  are unused are not dead code.
All comparisons are exact (bitwise for floats).
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def pow2_div_kernel(x_ptr, out_ptr, D: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, x // D)
    kl.store(out_ptr + BLOCK + offs, x % D)
    kl.store(out_ptr + 2 * BLOCK + offs, x * D)


@pytest.mark.parametrize("d", [1, 2, 4, 16, -4])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint32], ids=lambda d: np.dtype(d).name)
def test_division_by_constexpr_power_of_two(backend: str, d: int, dtype: type) -> None:
    if d < 0 and np.issubdtype(dtype, np.unsignedinteger):
        pytest.skip("negative divisor with an unsigned tensor is rejected by Triton")
    info = np.iinfo(dtype)
    vals = [v for v in (-17, -16, -15, -9, -8, -7, -1, 0, 1, 7, 8, 9, 15, 16, 17, int(info.min), int(info.max), 5)
            if info.min <= v <= info.max][:16]
    vals += [3] * (16 - len(vals))
    x = np.array(vals, dtype=dtype)
    out = np.zeros(48, dtype)
    pow2_div_kernel[(1,)](x, out, D=d, BLOCK=16)

    def cdiv(a: int, b: int) -> int:
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q

    bits = np.dtype(dtype).itemsize * 8
    wrap = lambda v: np.array([v], dtype=object)[0] % (1 << bits)  # noqa: E731
    q = [cdiv(int(a), d) for a in vals]
    r = [int(a) - d * cdiv(int(a), d) for a in vals]
    m = [int(a) * d for a in vals]
    to = lambda xs: np.array([wrap(v) for v in xs], dtype=np.uint64).astype(np.dtype(f"u{bits // 8}")).view(dtype)  # noqa: E731
    np.testing.assert_array_equal(out[:16], to(q))
    np.testing.assert_array_equal(out[16:32], to(r))
    np.testing.assert_array_equal(out[32:], to(m))


@kdsl.kernel
def float_identities_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + 0 * BLOCK + offs, x - x)
    kl.store(out_ptr + 1 * BLOCK + offs, x * 0.0)
    kl.store(out_ptr + 2 * BLOCK + offs, x + 0.0)
    kl.store(out_ptr + 3 * BLOCK + offs, (x == x).to(kl.float32))
    kl.store(out_ptr + 4 * BLOCK + offs, x * 1.0)
    kl.store(out_ptr + 5 * BLOCK + offs, x / x)
    neg = -x
    kl.store(out_ptr + 6 * BLOCK + offs, -neg)
    kl.store(out_ptr + 7 * BLOCK + offs, (x != x).to(kl.float32))


def test_no_unsafe_float_folding(backend: str) -> None:
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, -2.5, 3.0, 1e-45], dtype=np.float32)
    out = np.zeros(64, np.float32)
    with np.errstate(all="ignore"):
        float_identities_kernel[(1,)](x, out, BLOCK=8)
        want = np.concatenate([x - x, x * np.float32(0.0), x + np.float32(0.0), (x == x).astype(np.float32),
                               x * np.float32(1.0), x / x, x, (x != x).astype(np.float32)])
    # bit-exact (signed zeros matter) except that any NaN matches any NaN: IEEE leaves
    # the sign/payload of a generated NaN unspecified
    same = (out.view(np.uint32) == want.view(np.uint32)) | (np.isnan(out) & np.isnan(want))
    assert same.all(), f"got {out.reshape(8, 8)}\nwant {want.reshape(8, 8)}"


@kdsl.kernel
def int_identities_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + 0 * BLOCK + offs, (x + 1) - 1)
    kl.store(out_ptr + 1 * BLOCK + offs, (x * 2) // 2)
    kl.store(out_ptr + 2 * BLOCK + offs, ((x + 1) > x).to(kl.int8))
    kl.store(out_ptr + 3 * BLOCK + offs, (x << 1) >> 1)


def test_int_identities_respect_wrapping(backend: str) -> None:
    x = np.array([127, -128, 0, 64, -65, 1, -1, 100], np.int8)
    out = np.zeros(32, np.int8)
    int_identities_kernel[(1,)](x, out, BLOCK=8)
    xi = x.astype(np.int64)
    w = lambda v: ((v + 128) % 256 - 128).astype(np.int8)  # noqa: E731
    np.testing.assert_array_equal(out[:8], x)
    np.testing.assert_array_equal(out[8:16], np.array([int(np.fix(v / 2)) for v in w(xi * 2).astype(np.int64)], np.int8))
    np.testing.assert_array_equal(out[16:24], (w(xi + 1).astype(np.int64) > xi).astype(np.int8))
    np.testing.assert_array_equal(out[24:], w(xi << 1).astype(np.int8) >> 1)


@kdsl.kernel
def load_store_load_kernel(p_ptr, out_ptr):
    a = kl.load(p_ptr)
    kl.store(p_ptr, a + 5)
    b = kl.load(p_ptr)  # must observe the store
    kl.store(out_ptr, a)
    kl.store(out_ptr + 1, b)
    kl.atomic_add(p_ptr + 1, 1)
    kl.atomic_add(p_ptr + 1, 1)  # identical atomics are not merged
    kl.store(p_ptr + 2, 7)  # dead-looking: overwritten later only in memory order
    kl.store(p_ptr + 2, kl.load(p_ptr + 2) * 3)


def test_memory_effects_are_not_merged_or_dropped(backend: str) -> None:
    p = np.array([10, 0, 0], np.int32)
    out = np.zeros(2, np.int32)
    load_store_load_kernel[(1,)](p, out)
    np.testing.assert_array_equal(out, [10, 15])
    np.testing.assert_array_equal(p, [15, 2, 21])


@kdsl.kernel
def pure_helper(x):
    return x * 3 + 1


@kdsl.kernel
def inlining_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    a = pure_helper(x)
    b = pure_helper(x + 1)
    c = pure_helper(pure_helper(x))
    kl.store(out_ptr + offs, a)
    kl.store(out_ptr + BLOCK + offs, b)
    kl.store(out_ptr + 2 * BLOCK + offs, c)


def test_inlined_calls_keep_distinct_arguments(backend: str) -> None:
    x = np.arange(8, dtype=np.int32)
    out = np.zeros(24, np.int32)
    inlining_kernel[(1,)](x, out, BLOCK=8)
    f = lambda v: v * 3 + 1  # noqa: E731
    np.testing.assert_array_equal(out.reshape(3, 8), np.stack([f(x), f(x + 1), f(f(x))]))


_ = kdsl
