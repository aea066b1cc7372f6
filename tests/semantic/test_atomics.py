"""Atomics: add (counters, tickets, masked histograms, floats), max, min, xchg,
cas (spin lock) and their returned old values.

Triton facts (triton-lang.org/main/python-api/generated/triton.language.atomic_add.html
and atomic_max/min/xchg/cas/and/or/xor): each lane atomically updates ``*ptr``
and returns the value it saw before; lanes whose mask is False do nothing (their
returned value is unspecified and not checked); ``atomic_cas(ptr, cmp, val)``
stores ``val`` only if ``*ptr == cmp`` and returns the old value.
Integer results are exact; float atomic_add rtol 1e-5 (addition order varies).
"""

from __future__ import annotations

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def ticket_kernel(counter_ptr, tickets_ptr):
    pid = kl.program_id(0)
    old = kl.atomic_add(counter_ptr, 1)
    kl.store(tickets_ptr + pid, old)


def test_atomic_add_counter_returns_distinct_tickets(backend: str) -> None:
    n = 64
    counter = np.zeros(1, np.int32)
    tickets = np.full(n, -1, np.int32)
    ticket_kernel[(n,)](counter, tickets)
    assert counter[0] == n
    np.testing.assert_array_equal(np.sort(tickets), np.arange(n))


@kdsl.kernel
def histogram_kernel(x_ptr, bins_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask, other=0)
    kl.atomic_add(bins_ptr + x, 1, mask=mask)


def test_masked_tile_atomic_add_histogram(backend: str) -> None:
    rng = np.random.default_rng(31)
    n = 301
    x = rng.integers(0, 8, n).astype(np.int32)
    bins = np.zeros(8, np.int32)
    histogram_kernel[(kdsl.cdiv(n, 32),)](x, bins, n, BLOCK=32)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=8))


@kdsl.kernel
def float_sum_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.atomic_add(out_ptr, kl.sum(kl.load(x_ptr + offs, mask=mask, other=0.0), axis=0))


def test_float_atomic_add_within_tolerance(backend: str) -> None:
    rng = np.random.default_rng(32)
    x = rng.random(1000).astype(np.float32)
    out = np.zeros(1, np.float32)
    float_sum_kernel[(kdsl.cdiv(1000, 64),)](x, out, 1000, BLOCK=64)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)


@kdsl.kernel
def minmax_kernel(x_ptr, max_ptr, min_ptr, old_ptr, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.atomic_max(max_ptr + kl.arange(0, BLOCK), x)
    old = kl.atomic_min(min_ptr + kl.arange(0, BLOCK), x, mask=x != 0)
    kl.store(old_ptr + offs, old, mask=x != 0)


def test_atomic_max_min_elementwise(backend: str) -> None:
    rng = np.random.default_rng(33)
    progs, block = 6, 16
    x = rng.integers(-1000, 1000, progs * block).astype(np.int32)
    x[x == 0] = 1
    mx = np.full(block, np.iinfo(np.int32).min, np.int32)
    mn = np.full(block, np.iinfo(np.int32).max, np.int32)
    old = np.zeros_like(x)
    minmax_kernel[(progs,)](x, mx, mn, old, BLOCK=block)
    xs = x.reshape(progs, block)
    np.testing.assert_array_equal(mx, xs.max(axis=0))
    np.testing.assert_array_equal(mn, xs.min(axis=0))
    # every returned old value is >= the final minimum and one of {initial} U x column
    olds = old.reshape(progs, block)
    for j in range(block):
        allowed = set(xs[:, j].tolist()) | {np.iinfo(np.int32).max}
        assert set(olds[:, j].tolist()) <= allowed
        assert (olds[:, j] >= mn[j]).all()


@kdsl.kernel
def float_max_kernel(x_ptr, out_ptr):
    pid = kl.program_id(0)
    kl.atomic_max(out_ptr, kl.load(x_ptr + pid))


def test_float_atomic_max_with_negatives(backend: str) -> None:
    x = np.array([-5.0, -1.5, -3.0, -0.25, -7.0], np.float32)
    out = np.full(1, -np.inf, np.float32)
    float_max_kernel[(5,)](x, out)
    assert out[0] == np.float32(-0.25)


@kdsl.kernel
def xchg_kernel(slot_ptr, old_ptr):
    pid = kl.program_id(0)
    old = kl.atomic_xchg(slot_ptr, pid + 1)
    kl.store(old_ptr + pid, old)


def test_atomic_xchg_chain(backend: str) -> None:
    n = 32
    slot = np.zeros(1, np.int32)
    olds = np.full(n, -1, np.int32)
    xchg_kernel[(n,)](slot, olds)
    # the olds plus the final value are exactly {0 (initial), 1..n}: a permutation chain
    np.testing.assert_array_equal(np.sort(np.append(olds, slot[0])), np.arange(n + 1))


@kdsl.kernel
def spin_lock_kernel(lock_ptr, counter_ptr, log_ptr):
    pid = kl.program_id(0)
    while kl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = kl.load(counter_ptr)  # plain, non-atomic read-modify-write inside the lock
    kl.store(log_ptr + pid, c)
    kl.store(counter_ptr, c + 1)
    kl.atomic_xchg(lock_ptr, 0)


def test_atomic_cas_spin_lock(backend: str) -> None:
    n = 24
    lock = np.zeros(1, np.int32)
    counter = np.zeros(1, np.int32)
    log = np.full(n, -1, np.int32)
    spin_lock_kernel[(n,)](lock, counter, log)
    assert counter[0] == n and lock[0] == 0
    np.testing.assert_array_equal(np.sort(log), np.arange(n))


@kdsl.kernel
def cas_kernel(x_ptr, cmp_ptr, val_ptr, old_ptr):
    offs = kl.arange(0, 8)
    old = kl.atomic_cas(x_ptr + offs, kl.load(cmp_ptr + offs), kl.load(val_ptr + offs))
    kl.store(old_ptr + offs, old)


def test_atomic_cas_returns_old_and_swaps_only_on_match(backend: str) -> None:
    x = np.arange(8, dtype=np.int64)
    cmp = np.array([0, 9, 2, 9, 4, 9, 6, 9], np.int64)
    val = np.arange(100, 108, dtype=np.int64)
    old = np.zeros(8, np.int64)
    expect = np.where(x == cmp, val, x)
    cas_kernel[(1,)](x, cmp, val, old)
    np.testing.assert_array_equal(old, np.arange(8))
    np.testing.assert_array_equal(x, expect)


@kdsl.kernel
def bitwise_atomics_kernel(and_ptr, or_ptr, xor_ptr):
    pid = kl.program_id(0)
    bit = 1 << pid
    kl.atomic_or(or_ptr, bit)
    kl.atomic_and(and_ptr, ~bit)
    kl.atomic_xor(xor_ptr, bit | 1)


def test_bitwise_atomics(backend: str) -> None:
    a = np.full(1, -1, np.int32)
    o = np.zeros(1, np.int32)
    x = np.zeros(1, np.int32)
    bitwise_atomics_kernel[(5,)](a, o, x)
    assert o[0] == 0b11111
    assert a[0] == ~0b11111
    ref = 0
    for p in range(5):
        ref ^= (1 << p) | 1
    assert x[0] == ref
