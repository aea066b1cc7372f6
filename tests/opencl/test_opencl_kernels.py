"""Kernels on PoCL against the interpreter (and numpy), with one and several work-items per group."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import DeviceAssertionError

from . import ocl_kernels as K

NT = [1, 4]


@pytest.mark.parametrize("nt", NT)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint64])
def test_masked_add_dtypes(both, nt: int, dtype: type) -> None:
    n = 100
    rng = np.random.default_rng(0)
    x = (rng.random(n) * 100).astype(dtype)
    y = (rng.random(n) * 100).astype(dtype)
    out = np.full(n + 5, 7, dtype)  # the tail must stay untouched (masked lanes)
    (_, _, got) = both(K.add_kernel, (4,), x, y, out, n, BLOCK=32, num_threads=nt)
    np.testing.assert_array_equal(got[:n], (x + y).astype(dtype))
    assert (got[n:] == 7).all()


@pytest.mark.parametrize("nt", NT)
def test_integer_division_and_shift_edges(both, nt: int) -> None:
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.array([7, -7, 7, -7, lo, lo, 5, 0, hi, 1, -1, 3], np.int32)
    b = np.array([2, 2, -2, -2, -1, 0, 0, 0, 31, 32, 40, -1], np.int32)
    outs = [np.zeros(a.size, np.int32) for _ in range(4)]
    q, r, _, _ = both(K.intops_kernel, (1,), a, b, *outs, a.size, BLOCK=16, num_threads=nt)[2:]
    assert q[:4].tolist() == [3, -3, -3, 3] and r[:4].tolist() == [1, -1, 1, -1]
    assert q[4] == lo and r[4] == 0 and q[5] == 0 and r[5] == 0


@pytest.mark.parametrize("nt", NT)
def test_softmax(both, nt: int) -> None:
    x = np.random.default_rng(1).standard_normal((6, 100)).astype(np.float32)
    out = np.zeros_like(x)
    (got, _) = both(K.softmax_kernel, (6,), out, x, 100, 100, BLOCK=128, num_threads=nt, exact=False)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("nt", "dt", "acc"), [(1, np.float32, kl.float32), (4, np.float32, kl.float32),
                                                (1, np.float16, kl.float32), (2, np.int8, kl.int32)])
def test_matmul(both, nt: int, dt: type, acc: object) -> None:
    rng = np.random.default_rng(2)
    M, N, Kd = 20, 24, 40
    a = (rng.standard_normal((M, Kd)) * 4).astype(dt)
    b = (rng.standard_normal((Kd, N)) * 4).astype(dt)
    c = np.zeros((M, N), np.float32 if acc is kl.float32 else np.int32)
    got = both(K.matmul_kernel, (2, 2), a, b, c, M, N, Kd, BM=16, BN=16, BK=16, ACC=acc,
               num_threads=nt, exact=dt is np.int8, atol=1e-3)[2]
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want.astype(c.dtype), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("nt", "axis"), [(1, 0), (1, 1), (4, 0), (8, 1)])
def test_reductions_and_scans(both, nt: int, axis: int) -> None:
    x = np.random.default_rng(3).integers(-5, 5, (8, 16)).astype(np.int32)  # many argmax ties
    n = 16 if axis == 0 else 8
    outs = [np.zeros(n, np.int32) for _ in range(3)] + [np.zeros_like(x), np.zeros_like(x)]
    sums, _maxs, am, cs, rcs = both(K.reduce_kernel, (1,), x, *outs, R=8, C=16, AXIS=axis, num_threads=nt)[1:]
    np.testing.assert_array_equal(sums, x.sum(axis=axis))
    np.testing.assert_array_equal(am, x.argmax(axis=axis))  # numpy: first index of the maximum
    np.testing.assert_array_equal(cs, np.cumsum(x, axis=axis))
    np.testing.assert_array_equal(rcs, np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis))


@pytest.mark.parametrize("nt", [1, 4])
def test_trans_join_split(both, nt: int) -> None:
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    t, j, s = both(K.shapes_kernel, (1,), x, np.zeros(32, np.float32), np.zeros(64, np.float32),
                   np.zeros(32, np.float32), R=4, C=8, num_threads=nt)[1:]
    np.testing.assert_array_equal(t.reshape(8, 4), x.T)
    np.testing.assert_array_equal(j.reshape(4, 8, 2), np.stack([x, 2 * x], axis=-1))
    np.testing.assert_array_equal(s.reshape(4, 8), 3 * x)


@pytest.mark.parametrize("nt", NT)
def test_atomics_counter_float_add_and_lock(nt: int) -> None:
    progs, block = 16, 8
    vals = np.arange(progs * block, dtype=np.float32) % 7
    counter = np.zeros(1, np.int32)
    fsum = np.zeros(4, np.float32)
    lock = np.zeros(1, np.int32)
    total = np.zeros(1, np.float32)
    with kdsl.backend("opencl"):
        K.atomics_kernel[(progs,)](counter, fsum, lock, total, vals, BLOCK=block, num_threads=nt)
    assert counter[0] == progs and lock[0] == 0
    np.testing.assert_array_equal(fsum, vals.reshape(-1, 4).sum(axis=0))  # small integers: exact in any order
    assert total[0] == vals.sum()


@pytest.mark.parametrize("nt", NT)
def test_while_if_and_loop_carried_tiles(both, nt: int) -> None:
    x = np.random.default_rng(4).standard_normal(5 * 16).astype(np.float32)
    both(K.loops_kernel, (1,), x, np.zeros(16, np.float32), 5, BLOCK=16, num_threads=nt)


@pytest.mark.parametrize("nt", NT)
def test_aliased_in_place_arguments(both, nt: int) -> None:
    y = np.arange(40, dtype=np.float32)
    # out overlaps a later part of y: every load must happen before any store
    z = y.copy()
    with kdsl.backend("opencl"):
        K.add_kernel[(1,)](z[:16], z[4:20], z[8:24], 16, BLOCK=16, num_threads=nt)
    want = y.copy()
    want[8:24] = y[:16] + y[4:20]
    np.testing.assert_array_equal(z, want)


def test_device_assert_raises_with_location() -> None:
    x = np.array([1, 2, -3, 4], np.int32)
    with kdsl.backend("opencl"), pytest.raises(DeviceAssertionError) as info:
        K.assert_kernel[(1,)](x, 4, BLOCK=4)
    assert "values must be positive" in str(info.value)
    assert info.value.loc.file.endswith("ocl_kernels.py")
    with kdsl.backend("opencl"):
        K.assert_kernel[(1,)](x, 2, BLOCK=4)  # the failing lane is masked off: no error
