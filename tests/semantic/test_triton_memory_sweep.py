"""Triton's memory semantics, case by case, ported from Triton's unit tests and docs.

Triton facts (python/triton/language/semantic.py ``_load_legacy``/``_store_legacy``/``atom_red_*``,
python/test/unit/language/test_core.py ``test_atomic_rmw``, ``test_tensor_atomic_rmw``,
``test_tensor_atomic_add_non_exclusive_offset``, ``test_tensor_atomic_add_access_patterns``,
``test_tensor_atomic_cas``, ``test_store_constant``, ``test_masked_load``):

- a load's ``mask`` and ``other`` broadcast *with* the pointer (the pointer may grow to their
  shape); a store's value and mask broadcast to the pointer's shape, which may not change;
- ``other`` is converted to the pointee type, whatever its own type;
- a pointer to ``int1`` (a bool array) is read and written as bytes;
- an unsigned offset narrower than 64 bits is zero-extended, a signed one sign-extended;
- every lane of an atomic applies, also when several lanes of one tile share an address, and each
  returns the value it saw; ``atomic_add`` takes f16/bf16/f32/f64/i32/u32/i64/u64, ``max``/``min``
  i32/u32/i64/u64/f32/f64, ``cas`` 16/32/64-bit elements; ``sem`` and ``scope`` never change a
  single-threaded result.

Exact comparisons except float sums (rtol as in Triton's tests).
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ._util import line_of

# --- load / store ---------------------------------------------------------------------------


@kdsl.kernel
def other_cast_kernel(x_ptr, out_ptr, n, OTHER: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=offs < n, other=OTHER))


@pytest.mark.parametrize(("dtype", "other", "want"), [(np.int32, 2.75, 2), (np.float16, 7, 7.0), (np.uint8, True, 1)])
def test_other_of_another_type_is_converted(backend: str, dtype: type, other: object, want: object) -> None:
    x = (np.arange(8) + 10).astype(dtype)
    out = np.zeros(8, dtype)
    other_cast_kernel[(1,)](x, out, 5, OTHER=other, BLOCK=8)
    np.testing.assert_array_equal(out, np.concatenate([x[:5], np.full(3, want, dtype)]))


@kdsl.kernel
def pointer_grows_kernel(x_ptr, out_ptr, M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)[:, None]
    rn = kl.arange(0, N)[None, :]
    row = kl.load(x_ptr + rn, mask=(rm + rn) % 2 == 0, other=-1.0)  # a [1, N] pointer, an [M, N] mask
    kl.store(out_ptr + rm * N + rn, row)


def test_load_pointer_broadcasts_to_the_mask_shape(backend: str) -> None:
    x = np.arange(8, dtype=np.float32) + 1
    out = np.zeros((4, 8), np.float32)
    pointer_grows_kernel[(1,)](x, out, M=4, N=8)
    rm, rn = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(out, np.where((rm + rn) % 2 == 0, x[rn], -1.0))


@kdsl.kernel
def bool_copy_kernel(x_ptr, out_ptr, cnt_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    b = kl.load(x_ptr + offs, mask=offs < n, other=True)
    kl.store(out_ptr + offs, ~b, mask=offs < n)
    kl.store(cnt_ptr, kl.sum(b.to(kl.int32), axis=0))


def test_bool_arrays_are_bytes(backend: str) -> None:
    x = np.array([True, False, False, True, True, False, True], np.bool_)
    out = np.zeros(7, np.bool_)
    cnt = np.zeros(1, np.int32)
    bool_copy_kernel[(1,)](x, out, cnt, 7, BLOCK=8)
    np.testing.assert_array_equal(out, ~x)
    assert cnt[0] == x.sum() + 1  # the masked-off lane reads other=True


@kdsl.kernel
def store_constant_kernel(out_ptr, n, FIELD: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    if FIELD == "value":
        kl.store(out_ptr + offs, kl.full([BLOCK], 1, dtype=kl.int32), mask=offs < n)
    else:
        kl.store(out_ptr + offs, offs < n, mask=False)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, np.uint64])
@pytest.mark.parametrize("field", ["value", "mask"])
def test_store_constant(backend: str, dtype: type, field: str) -> None:
    out = np.zeros(32, dtype)
    store_constant_kernel[(1,)](out, 32, FIELD=field, BLOCK=32)
    np.testing.assert_array_equal(out, np.ones(32, dtype) if field == "value" else np.zeros(32, dtype))


@kdsl.kernel
def offsets_kernel(x_ptr, out_ptr, u8_ptr, i8_ptr, base):
    offs = kl.arange(0, 8)
    p = x_ptr + base
    kl.store(out_ptr + offs, kl.load(p + kl.load(u8_ptr + offs)))  # u8 offsets >= 128 zero-extended
    kl.store(out_ptr + 8 + offs, kl.load(p + kl.load(i8_ptr + offs)))  # i8 offsets sign-extended
    big = offs.to(kl.int64) * 3 + base
    kl.store(out_ptr + 16 + offs, kl.load(x_ptr + big))  # int64 offsets
    kl.store(out_ptr + 24 + offs, kl.load(x_ptr + base + 7 - offs))  # reversed: negative steps


def test_offset_signedness_and_width(backend: str) -> None:
    x = np.arange(512, dtype=np.int32) * 7
    base = 200
    u8 = np.array([0, 1, 127, 128, 200, 255, 3, 250], np.uint8)
    i8 = np.array([0, -1, 127, -128, -100, 5, -3, 50], np.int8)
    out = np.zeros(32, np.int32)
    offsets_kernel[(1,)](x, out, u8, i8, base)
    np.testing.assert_array_equal(out[:8], x[base + u8.astype(np.int64)])
    np.testing.assert_array_equal(out[8:16], x[base + i8.astype(np.int64)])
    np.testing.assert_array_equal(out[16:24], x[np.arange(8) * 3 + base])
    np.testing.assert_array_equal(out[24:], x[base + 7 - np.arange(8)])


@kdsl.kernel
def tiny_tiles_kernel(x_ptr, out_ptr):
    one = kl.arange(0, 1)
    v = kl.load(x_ptr + 2 + one)  # a 1-element tile
    kl.store(out_ptr + one, v * 2)
    s = kl.load(x_ptr + 3, mask=True, other=0)  # scalar pointer, scalar mask
    kl.store(out_ptr + 1, s, mask=s > 0)
    t = kl.load(x_ptr + 4, mask=False, other=-9)
    kl.store(out_ptr + 2, t)
    r = kl.sum(kl.load(x_ptr + kl.arange(0, 4)), axis=0)  # a 0-d result stored through a scalar
    kl.store(out_ptr + 3, r)


def test_one_element_and_scalar_accesses(backend: str) -> None:
    x = np.array([1, 2, 3, 4, 5], np.int32)
    out = np.zeros(4, np.int32)
    tiny_tiles_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, [6, 4, -9, 10])


@kdsl.kernel
def hints_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.max_contiguous(kl.multiple_of(kl.arange(0, BLOCK), 16), 16)
    a = kl.load(x_ptr + offs, cache_modifier=".ca", eviction_policy="evict_last", volatile=True)
    b = kl.load(x_ptr + offs, mask=offs < 3, other=1, cache_modifier=".cg", eviction_policy="evict_first")
    c = kl.load(x_ptr + offs, cache_modifier=".cv")
    kl.store(out_ptr + offs, a + b, cache_modifier=".wb")
    kl.store(out_ptr + BLOCK + offs, c, cache_modifier=".cs", eviction_policy="evict_last")
    kl.store(out_ptr + 2 * BLOCK + offs, c + 1, cache_modifier=".wt")
    kl.store(out_ptr + 3 * BLOCK + offs, c + 2, cache_modifier=".cg")


def test_cache_and_eviction_hints_change_nothing(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(64, np.float32)
    hints_kernel[(1,)](x, out, BLOCK=16)
    np.testing.assert_array_equal(out, np.concatenate([x + np.where(np.arange(16) < 3, x, 1), x, x + 1, x + 2]))


# --- pointers ---------------------------------------------------------------------------


@kdsl.kernel
def pointer_ops_kernel(x_ptr, y_ptr, out_ptr, flags_ptr, which):
    offs = kl.arange(0, 8)
    p = kl.where(offs % 2 == 0, x_ptr + offs, y_ptr + offs)  # a select of pointers
    kl.store(out_ptr + offs, kl.load(p))
    bits = (x_ptr + offs).to(kl.pointer_type(kl.int32))  # reinterpret f32 as i32
    kl.store(out_ptr + 8 + offs, kl.load(bits).to(kl.float32, bitcast=True) + 1)
    q = kl.cast(y_ptr, kl.pointer_type(kl.uint32), bitcast=True)
    kl.store(out_ptr + 16, kl.load(q + 2).to(kl.float32, bitcast=True))
    s = x_ptr if which == 0 else y_ptr  # a pointer chosen at run time
    kl.store(out_ptr + 17, kl.load(s + 5))
    a = x_ptr + offs
    b = x_ptr + 7 - offs
    f = (a < b).to(kl.int32) + 2 * (a <= b).to(kl.int32) + 4 * (a == b).to(kl.int32)
    f += 8 * (a != b).to(kl.int32) + 16 * (a > b).to(kl.int32) + 32 * (a >= b).to(kl.int32)
    kl.store(flags_ptr + offs, f)
    kl.store(flags_ptr + 8, x_ptr.to(kl.int1).to(kl.int32))  # a non-null pointer is true


def test_pointer_select_cast_compare(backend: str) -> None:
    x = np.arange(8, dtype=np.float32) + 0.5
    y = -np.arange(8, dtype=np.float32)
    out = np.zeros(18, np.float32)
    flags = np.zeros(9, np.int32)
    pointer_ops_kernel[(1,)](x, y, out, flags, 1)
    np.testing.assert_array_equal(out[:8], np.where(np.arange(8) % 2 == 0, x, y))
    np.testing.assert_array_equal(out[8:16], x + 1)
    assert out[16] == y[2] and out[17] == y[5]
    a, b = np.arange(8), 7 - np.arange(8)
    want = (a < b) + 2 * (a <= b) + 4 * (a == b) + 8 * (a != b) + 16 * (a > b) + 32 * (a >= b)
    np.testing.assert_array_equal(flags[:8], want)
    assert flags[8] == 1


@kdsl.kernel
def element_ty_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    v = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, v.to(out_ptr.dtype.element_ty))
    kl.static_assert(x_ptr.dtype.element_ty == kl.float32)


def test_pointer_dtype_element_ty(backend: str) -> None:
    x = np.arange(8, dtype=np.float32) * 1.5
    out = np.zeros(8, np.int16)
    element_ty_kernel[(1,)](x, out, BLOCK=8)
    np.testing.assert_array_equal(out, x.astype(np.int16))


# --- atomics --------------------------------------------------------------------------------

ATOMIC_CASES = [
    ("add", np.float16), ("add", np.float32), ("add", np.float64), ("add", np.int32), ("add", np.uint32),
    ("add", np.int64), ("add", np.uint64), ("max", np.int32), ("max", np.uint32), ("max", np.int64),
    ("max", np.uint64), ("max", np.float32), ("max", np.float64), ("min", np.int32), ("min", np.uint32),
    ("min", np.int64), ("min", np.uint64), ("min", np.float32), ("min", np.float64),
]


@kdsl.kernel
def atomic_rmw_kernel(x_ptr, z_ptr, OP: kl.constexpr, SEM: kl.constexpr):
    x = kl.load(x_ptr + kl.program_id(0))
    if OP == "add":
        old = kl.atomic_add(z_ptr, x, sem=SEM)
    elif OP == "max":
        old = kl.atomic_max(z_ptr, x, sem=SEM)
    else:
        old = kl.atomic_min(z_ptr, x, sem=SEM)
    kl.static_assert(old.dtype == x.dtype)


@pytest.mark.parametrize(("op", "dtype"), ATOMIC_CASES)
@pytest.mark.parametrize("mode", ["min_neg", "max_pos"])
def test_atomic_rmw_scalar_per_program(backend: str, op: str, dtype: type, mode: str) -> None:
    """Triton's test_atomic_rmw: five programs, one scalar atomic each."""
    x = np.array([2**i for i in range(5)], dtype)
    if np.issubdtype(dtype, np.signedinteger) or np.issubdtype(dtype, np.floating):
        x[1::2] = -x[1::2]
    if mode == "min_neg" and not np.issubdtype(dtype, np.unsignedinteger):
        x[2] = -np.max(np.abs(x)) - 1
    if mode == "max_pos":
        x[3] = np.max(x) + 1
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    neutral = {"add": 0, "max": -np.inf if np.issubdtype(dtype, np.floating) else info.min,
               "min": np.inf if np.issubdtype(dtype, np.floating) else info.max}[op]
    z = np.array([neutral], dtype)
    atomic_rmw_kernel[(5,)](x, z, OP=op, SEM="relaxed" if mode == "max_pos" else "acq_rel")
    want = {"add": np.sum, "max": np.max, "min": np.min}[op](x).astype(dtype)
    assert z[0] == want


@kdsl.kernel
def atomic_add_tile_kernel(z_ptr, x_ptr, old_ptr, AXIS: kl.constexpr, S0: kl.constexpr, S1: kl.constexpr):
    off0 = kl.arange(0, S0)
    off1 = kl.arange(0, S1)
    x = kl.load(x_ptr + off0[:, None] * S1 + off1[None, :])
    z = kl.sum(x, axis=AXIS)
    if AXIS == 1:
        old = kl.atomic_add(z_ptr + off0, z)
        kl.store(old_ptr + off0, old)
    else:
        old = kl.atomic_add(z_ptr + off1, z)
        kl.store(old_ptr + off1, old)


@pytest.mark.parametrize("dtype", [np.float32, np.uint64, np.int64, np.float64])
@pytest.mark.parametrize("axis", [0, 1])
def test_tensor_atomic_add_returns_old(backend: str, dtype: type, axis: int) -> None:
    rng = np.random.default_rng(17)
    x = rng.integers(0, 50, (8, 4)).astype(dtype)
    z = rng.integers(0, 50, 4 if axis == 0 else 8).astype(dtype)
    old = np.zeros_like(z)
    want = z + x.sum(axis=axis).astype(dtype)
    zc = z.copy()
    atomic_add_tile_kernel[(1,)](zc, x, old, AXIS=axis, S0=8, S1=4)
    np.testing.assert_allclose(zc, want, rtol=1e-6)
    np.testing.assert_array_equal(old, z)


@kdsl.kernel
def non_exclusive_kernel(x_ptr, val_ptr, NUM: kl.constexpr):
    off = kl.arange(0, NUM)
    offset = off[:, None] * NUM + off[None, :]
    kl.atomic_add(x_ptr + offset // 2, kl.load(val_ptr + offset))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_atomic_add_duplicate_addresses_in_one_tile(backend: str, dtype: type) -> None:
    size = 8
    rng = np.random.default_rng(5)
    val = rng.integers(-8, 8, size * size).astype(dtype)  # small integers: exact in f16 too
    x = np.zeros(size * size // 2, dtype)
    non_exclusive_kernel[(1,)](x, val, NUM=size)
    np.testing.assert_array_equal(x, val[0::2] + val[1::2])


@kdsl.kernel
def access_patterns_kernel(in_ptr, idx_ptr, out_ptr, shape0, shape1, mask_step, XBLOCK: kl.constexpr):
    xoffset = kl.program_id(0) * XBLOCK
    x_idx = xoffset + kl.arange(0, XBLOCK)[:]
    mask = x_idx < shape0 * shape1
    mask = mask and (x_idx % mask_step != 0)
    idx_base = shape1 * (x_idx // shape1)
    idx_offset = kl.load(idx_ptr + x_idx, mask)
    in_elem = kl.load(in_ptr + x_idx, mask)
    kl.atomic_add(out_ptr + (idx_offset + idx_base), in_elem, mask, sem="relaxed")


@pytest.mark.parametrize("mask_step", [1, 3])
def test_atomic_add_access_patterns(backend: str, mask_step: int) -> None:
    rng = np.random.default_rng(11)
    s0, s1 = 5, 5
    idx = rng.integers(0, s1, (s0, s1)).astype(np.int64)
    val = rng.integers(-20, 20, (s0, s1)).astype(np.float32)
    dst = rng.integers(-20, 20, (s0, s1)).astype(np.float32)
    ref = dst.copy()
    for cnt, (i, j) in enumerate(np.ndindex(s0, s1)):
        if cnt % mask_step != 0:
            ref[i, idx[i, j]] += val[i, j]
    access_patterns_kernel[(1,)](val, idx, dst, s0, s1, mask_step, XBLOCK=64)
    np.testing.assert_array_equal(dst, ref)


@kdsl.kernel
def same_address_old_kernel(ctr_ptr, old_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    old = kl.atomic_add(ctr_ptr + offs * 0, 1)  # every lane hits one counter
    kl.store(old_ptr + offs, old)
    x = kl.atomic_xchg(ctr_ptr + 1 + offs * 0, offs + 1)
    kl.store(old_ptr + BLOCK + offs, x)


def test_every_lane_of_a_tile_sees_its_own_old_value(backend: str) -> None:
    ctr = np.zeros(2, np.int32)
    old = np.full(32, -1, np.int32)
    same_address_old_kernel[(1,)](ctr, old, BLOCK=16)
    assert ctr[0] == 16
    np.testing.assert_array_equal(np.sort(old[:16]), np.arange(16))
    np.testing.assert_array_equal(np.sort(np.append(old[16:], ctr[1])), np.arange(17))


@kdsl.kernel
def bitwise_tile_kernel(p_ptr, v_ptr, old_ptr, OP: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    v = kl.load(v_ptr + offs)
    ptr = p_ptr + offs % 4  # four lanes per address
    if OP == "and":
        old = kl.atomic_and(ptr, v, mask=offs != 5, scope="cta")
    elif OP == "or":
        old = kl.atomic_or(ptr, v, mask=offs != 5, scope="sys")
    else:
        old = kl.atomic_xor(ptr, v, mask=offs != 5, scope="gpu")
    kl.store(old_ptr + offs, old, mask=offs != 5)


@pytest.mark.parametrize("op", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_bitwise_atomics_tile_with_shared_addresses(backend: str, op: str, dtype: type) -> None:
    rng = np.random.default_rng(3)
    bits = np.iinfo(dtype).bits
    v = np.array([int(rng.integers(0, 2**62)) >> (64 - bits) | (1 << (i % bits)) for i in range(16)],
                 dtype=np.uint64).astype(dtype)
    p = np.array([-1, 0, 0x5A5A5A5A, 123], np.int64).astype(dtype)
    old = np.zeros(16, dtype)
    start = p.copy()
    bitwise_tile_kernel[(1,)](p, v, old, OP=op, BLOCK=16)
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    for a in range(4):
        lanes = [i for i in range(a, 16, 4) if i != 5]
        assert p[a] == fn.reduce(np.append(v[lanes], start[a]))
        # the olds of one address are the prefixes of some order of its lanes
        assert start[a] in old[lanes]


@kdsl.kernel
def cas_tile_kernel(x_ptr, BLOCK: kl.constexpr, SEM: kl.constexpr):
    offsets = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    t1 = kl.full((BLOCK,), 0, dtype=x_ptr.dtype.element_ty)
    t2 = kl.full((BLOCK,), 2, dtype=x_ptr.dtype.element_ty)
    kl.atomic_cas(x_ptr + offsets, t1, t2, sem=SEM)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint32, np.float32])
def test_tensor_atomic_cas(backend: str, dtype: type) -> None:
    x = np.array([0, 1, 0, 1, 0, 1, 0, 1]).astype(dtype)
    cas_tile_kernel[(2,)](x, BLOCK=4, SEM="acquire")
    np.testing.assert_array_equal(x, np.array([2, 1, 2, 1, 2, 1, 2, 1]).astype(dtype))


@kdsl.kernel
def cas_same_address_kernel(x_ptr, old_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    old = kl.atomic_cas(x_ptr + offs * 0, kl.zeros((BLOCK,), kl.int32), offs + 1)
    kl.store(old_ptr + offs, old)


def test_atomic_cas_lanes_sharing_an_address(backend: str) -> None:
    """Exactly one lane finds the initial 0 and swaps; every other lane sees the winner's value."""
    x = np.zeros(1, np.int32)
    old = np.full(16, -1, np.int32)
    cas_same_address_kernel[(1,)](x, old, BLOCK=16)
    winner = int(x[0])
    assert 1 <= winner <= 16 and old[winner - 1] == 0
    assert np.count_nonzero(old == 0) == 1 and np.all(old[old != 0] == winner)


@kdsl.kernel
def serialized_add_kernel(data_ptr, lock_ptr, SEM: kl.constexpr):
    ptrs = data_ptr + kl.arange(0, 16)
    while kl.atomic_cas(lock_ptr, 0, 1, SEM) == 1:
        pass
    kl.store(ptrs, kl.load(ptrs) + 1.0)
    kl.debug_barrier()
    kl.atomic_xchg(lock_ptr, 0)


def test_atomic_cas_positional_sem_lock(backend: str) -> None:
    lock = np.zeros(1, np.int32)
    data = np.zeros(16, np.float32)
    serialized_add_kernel[(40,)](data, lock, SEM="acq_rel")
    np.testing.assert_array_equal(data, np.full(16, 40.0, np.float32))


@kdsl.kernel
def xchg_float_kernel(x_ptr, old_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    old = kl.atomic_xchg(x_ptr + offs, offs.to(kl.float64) * 0.5, mask=offs < 5)
    kl.store(old_ptr + offs, old, mask=offs < 5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint64])
def test_atomic_xchg_tile(backend: str, dtype: type) -> None:
    x = (np.arange(8) + 10).astype(dtype)
    old = np.zeros(8, dtype)
    xchg_float_kernel[(1,)](x, old, BLOCK=8)
    want = np.where(np.arange(8) < 5, (np.arange(8) * 0.5).astype(dtype), x)
    np.testing.assert_array_equal(old[:5], (np.arange(5) + 10).astype(dtype))
    np.testing.assert_array_equal(x, want)


@kdsl.kernel
def atomic_min_block_kernel(x_ptr, S0: kl.constexpr, S1: kl.constexpr):
    off0 = kl.arange(0, S0)
    off1 = kl.arange(0, S1)
    offs = off0[:, None] * S1 + off1[None, :]
    kl.atomic_min(x_ptr + offs, offs.to(kl.float32))


def test_tensor_atomic_min_2d(backend: str) -> None:
    x = np.ones((8, 8), np.float32)
    atomic_min_block_kernel[(2,)](x, S0=8, S1=8)
    np.testing.assert_array_equal(x, np.minimum(np.arange(64).reshape(8, 8), 1).astype(np.float32))


@kdsl.kernel
def signed_zero_kernel(x_ptr):
    kl.atomic_max(x_ptr, 0.0)
    kl.atomic_min(x_ptr + 1, -0.0)
    kl.atomic_max(x_ptr + 2, -0.0)
    kl.atomic_min(x_ptr + 3, 0.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_atomic_max_min_order_signed_zeros(backend: str, dtype: type) -> None:
    """Triton's float atomic_max/min split on the sign bit (signed max on non-negative values,
    unsigned min on negative ones), so -0.0 counts as below +0.0."""
    x = np.array([-0.0, 0.0, 0.0, -0.0], dtype)
    signed_zero_kernel[(1,)](x)
    np.testing.assert_array_equal(np.signbit(x), [False, True, False, True])


@kdsl.kernel
def wide_offsets_kernel(x_ptr, u_ptr, out_ptr):
    offs = kl.arange(0, 4)
    big = kl.full((), 1 << 33, kl.int64)
    kl.store(out_ptr + offs, kl.load(x_ptr + big + offs - big))  # 64-bit pointer arithmetic
    u = kl.load(u_ptr)  # a uint32 >= 2**31 is zero-extended, not sign-extended
    kl.store(out_ptr + 4 + offs, kl.load((x_ptr + u) - u + offs))


def test_pointer_arithmetic_is_64_bit(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    wide_offsets_kernel[(1,)](x, np.array([3_000_000_000], np.uint32), out)
    np.testing.assert_array_equal(out, np.tile(x[:4], 2))


# --- histogram, gather ------------------------------------------------------------------------


@kdsl.kernel
def histogram_mask_kernel(x_ptr, z_ptr, n, M: kl.constexpr, N: kl.constexpr):
    offs = kl.arange(0, M)
    x = kl.load(x_ptr + offs)
    z = kl.histogram(x, N, mask=offs < n)
    kl.store(z_ptr + kl.arange(0, N), z)


def test_histogram_with_mask(backend: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(0, 16, 64).astype(np.int32)
    z = np.zeros(16, np.int32)
    histogram_mask_kernel[(1,)](x, z, 50, M=64, N=16)
    np.testing.assert_array_equal(z, np.bincount(x[:50], minlength=16))


@kdsl.kernel
def gather_2d_kernel(src_ptr, idx_ptr, out_ptr, AXIS: kl.constexpr, SM: kl.constexpr, SN: kl.constexpr,
                     IM: kl.constexpr, IN: kl.constexpr):
    src = kl.load(src_ptr + kl.arange(0, SM)[:, None] * SN + kl.arange(0, SN)[None, :])
    idx = kl.load(idx_ptr + kl.arange(0, IM)[:, None] * IN + kl.arange(0, IN)[None, :])
    kl.store(out_ptr + kl.arange(0, IM)[:, None] * IN + kl.arange(0, IN)[None, :], kl.gather(src, idx, AXIS))


@pytest.mark.parametrize(("axis", "src_shape", "idx_shape"), [(0, (4, 8), (16, 8)), (1, (4, 8), (4, 2))])
def test_gather_2d(backend: str, axis: int, src_shape: tuple[int, int], idx_shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(4)
    src = rng.standard_normal(src_shape).astype(np.float32)
    idx = rng.integers(0, src_shape[axis], idx_shape).astype(np.int32)
    out = np.zeros(idx_shape, np.float32)
    gather_2d_kernel[(1,)](src, idx, out, AXIS=axis, SM=src_shape[0], SN=src_shape[1], IM=idx_shape[0],
                           IN=idx_shape[1])
    np.testing.assert_array_equal(out, np.take_along_axis(src, idx.astype(np.int64), axis))


@kdsl.kernel
def bf16_atomics_kernel(bits_ptr, val_ptr, old_ptr, cas_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    p = bits_ptr.to(kl.pointer_type(kl.bfloat16))  # a uint16 array seen as bfloat16
    v = kl.load(val_ptr + offs).to(kl.bfloat16)
    old = kl.atomic_add(p + offs % 4, v, mask=offs != 3)
    kl.store(old_ptr + offs, old.to(kl.float32), mask=offs != 3)
    c = cas_ptr.to(kl.pointer_type(kl.bfloat16))
    kl.atomic_cas(c + offs, kl.full((BLOCK,), 1.0, kl.bfloat16), kl.full((BLOCK,), -2.5, kl.bfloat16))


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact for these values


def test_bf16_atomic_add_and_cas_through_a_cast_pointer(backend: str) -> None:
    start = np.array([1.0, -3.0, 256.0, 0.5], np.float32)
    bits = _bf16_bits(start)
    val = np.arange(8, dtype=np.float32) - 4  # small integers: every partial sum is exact in bf16
    old = np.zeros(8, np.float32)
    cas = _bf16_bits(np.array([1.0, 0.0, 1.0, 2.0, 1.0, 1.0, -1.0, 1.0], np.float32))
    bf16_atomics_kernel[(1,)](bits, val, old, cas, BLOCK=8)
    want = start + np.array([sum(val[i] for i in range(8) if i % 4 == a and i != 3) for a in range(4)])
    np.testing.assert_array_equal(bits, _bf16_bits(want))
    for a in range(3):
        assert start[a] in old[a:8:4]
    np.testing.assert_array_equal(cas, _bf16_bits(np.array([-2.5, 0.0, -2.5, 2.0, -2.5, -2.5, -1.0, -2.5])))


@kdsl.kernel
def f16_cas_kernel(x_ptr, old_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    old = kl.atomic_cas(x_ptr + offs, kl.full((BLOCK,), 1.5, kl.float16), (offs + 10).to(kl.float16))
    kl.store(old_ptr + offs, old)


def test_f16_atomic_cas_neighbours_untouched(backend: str) -> None:
    x = np.array([1.5, 2.0, 1.5, 1.5, -1.5, 0.0, 1.5, 3.0], np.float16)
    old = np.zeros(8, np.float16)
    start = x.copy()
    f16_cas_kernel[(1,)](x, old, BLOCK=8)
    np.testing.assert_array_equal(old, start)
    np.testing.assert_array_equal(x, np.where(start == 1.5, np.arange(8) + 10, start).astype(np.float16))


# --- tensor descriptor reductions ------------------------------------------------------------


@kdsl.kernel
def descriptor_atomic_kernel(x_ptr, M, N, OP: kl.constexpr, BM: kl.constexpr, BN: kl.constexpr):
    desc = kl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    om = kl.program_id(0) * (BM // 2) - 2  # overlapping blocks that straddle every edge
    on = kl.program_id(1) * (BN // 2) - 2
    v = (kl.arange(0, BM)[:, None] * BN + kl.arange(0, BN)[None, :]).to(desc.dtype)
    if OP == "add":
        desc.atomic_add([om, on], v)
    elif OP == "max":
        desc.atomic_max([om, on], v)
    elif OP == "min":
        desc.atomic_min([om, on], v)
    elif OP == "and":
        desc.atomic_and([om, on], v)
    elif OP == "or":
        desc.atomic_or([om, on], v)
    else:
        desc.atomic_xor([om, on], v)


@pytest.mark.parametrize(("op", "dtype"), [("add", np.int32), ("add", np.float32), ("max", np.uint32),
                                           ("min", np.int64), ("and", np.int32), ("or", np.uint64),
                                           ("xor", np.int64)])
def test_tensor_descriptor_atomics(backend: str, op: str, dtype: type) -> None:
    M, N, BM, BN, grid = 7, 9, 4, 8, (4, 3)
    start = ((np.arange(M * N) * 37) % 50).astype(dtype).reshape(M, N)
    ref = start.copy()
    fn = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}[op]
    for pm in range(grid[0]):
        for pn in range(grid[1]):
            for i in range(BM):
                for j in range(BN):
                    r, c = pm * (BM // 2) - 2 + i, pn * (BN // 2) - 2 + j
                    if 0 <= r < M and 0 <= c < N:
                        ref[r, c] = fn(ref[r, c], dtype(i * BN + j))
    x = start.copy()
    descriptor_atomic_kernel[grid](x, M, N, OP=op, BM=BM, BN=BN)
    np.testing.assert_array_equal(x, ref)


# --- pointers to pointers -----------------------------------------------------------------------


@kdsl.kernel
def pointer_table_kernel(x_ptr, y_ptr, table_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    slots = table_ptr.to(kl.pointer_type(kl.pointer_type(kl.float32)))  # an int64 array of addresses
    kl.store(slots + offs, kl.where(offs % 2 == 0, x_ptr, y_ptr) + offs // 2)  # a tile of pointers stored
    kl.debug_barrier()
    ptrs = kl.load(slots + offs)  # ... and loaded back
    kl.store(out_ptr + offs, kl.load(ptrs))
    first = kl.load(slots + 1)  # a scalar pointer from memory
    kl.store(out_ptr + BLOCK, kl.load(first + 1))


def test_pointers_stored_and_loaded_through_a_pointer_to_pointers(backend: str) -> None:
    x = np.arange(8, dtype=np.float32) + 1
    y = -np.arange(8, dtype=np.float32)
    table = np.zeros(8, np.int64)
    out = np.zeros(9, np.float32)
    pointer_table_kernel[(1,)](x, y, table, out, BLOCK=8)
    i = np.arange(8)
    np.testing.assert_array_equal(out[:8], np.where(i % 2 == 0, x[i // 2], y[i // 2]))
    assert out[8] == y[1]


# --- errors at the user's line ------------------------------------------------------------------


@kdsl.kernel
def atomic_on_pointer_table_kernel(table_ptr):
    slots = table_ptr.to(kl.pointer_type(kl.pointer_type(kl.float32)))
    kl.atomic_xchg(slots, table_ptr.to(kl.pointer_type(kl.float32)))  # MARK: atomic-ptr-ptr


@kdsl.kernel
def scalar_pointer_tile_mask_kernel(x_ptr):
    kl.load(x_ptr, mask=kl.arange(0, 4) < 2)  # MARK: scalar-ptr-tile-mask


@kdsl.kernel
def store_grows_pointer_kernel(x_ptr):
    kl.store(x_ptr + kl.arange(0, 4)[None, :], kl.zeros((2, 4), kl.float32))  # MARK: store-grows


@kdsl.kernel
def pointer_difference_kernel(x_ptr, out_ptr):
    kl.store(out_ptr, (x_ptr + 3) - x_ptr)  # MARK: ptr-minus-ptr


@kdsl.kernel
def half_atomic_max_kernel(x_ptr):
    kl.atomic_max(x_ptr, 1.0)  # MARK: f16-max


ERRORS = [
    (atomic_on_pointer_table_kernel, np.int64, "atomic-ptr-ptr", "does not support pointers to pointers"),
    (scalar_pointer_tile_mask_kernel, np.float32, "scalar-ptr-tile-mask", "mask cannot be a tile"),
    (store_grows_pointer_kernel, np.float32, "store-grows", "cannot be broadcast to the pointer shape (1, 4)"),
    (pointer_difference_kernel, np.float32, "ptr-minus-ptr", "invalid operands of type ptr<f32> and ptr<f32>"),
    (half_atomic_max_kernel, np.float16, "f16-max", "atomic_max does not support f16"),
]


@pytest.mark.parametrize(("kernel", "dtype", "marker", "message"), ERRORS, ids=[e[2] for e in ERRORS])
def test_errors_name_the_line(kernel: object, dtype: type, marker: str, message: str) -> None:
    x = np.zeros(4, dtype)
    args = (x, x) if kernel is pointer_difference_kernel else (x,)
    with kdsl.backend("interpreter"), pytest.raises(CompilationError) as info:
        kernel[(1,)](*args)  # type: ignore[index]
    assert message in str(info.value)
    assert info.value.loc.line == line_of(__file__, f"MARK: {marker}")
