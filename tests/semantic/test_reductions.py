"""Reductions and scans: sum max min argmax argmin (axis / keep_dims / axis=None),
tie breaking, generic ``kl.reduce`` with tuple combine functions, cumsum,
cumprod and ``associative_scan`` (incl. reverse).

Triton facts (triton-lang.org/main/python-api/generated/):
- triton.language.sum.html: axis=None reduces all dims; keep_dims keeps size-1
  dims; without dtype, integer and bool inputs are summed as int32 (and floats
  in at least float32).
- triton.language.argmax.html / argmin.html: ``tie_break_left=True`` returns the
  left-most index of equal extremes; max/min accept ``return_indices=True``.
- triton.language.reduce.html: ``combine_fn`` is a jitted function combining two
  groups of scalars; input may be a tuple of tensors.
- triton.language.cumsum.html / cumprod.html / associative_scan.html: inclusive
  scans along an axis; ``reverse=True`` scans from the end.
Integer results are exact; float sums/scans use rtol 1e-5 (the summation order
is unspecified), Welford mean/variance rtol 1e-4.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

M, N = 8, 16


@kdsl.kernel
def reduce2d_kernel(x_ptr, out_ptr, OP: kl.constexpr, AXIS: kl.constexpr, KEEP: kl.constexpr,
                    M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    x = kl.load(x_ptr + rm[:, None] * N + rn[None, :])
    if OP == "sum":
        r = kl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        r = kl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        r = kl.min(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        r = kl.argmax(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmin":
        r = kl.argmin(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "method_sum":
        r = x.sum(axis=AXIS, keep_dims=KEEP)
    else:
        kl.static_assert(False, "unknown op")
    if AXIS == 0:
        if KEEP:
            kl.store(out_ptr + kl.arange(0, 1)[:, None] * N + rn[None, :], r)
        else:
            kl.store(out_ptr + rn, r)
    elif AXIS == 1:
        if KEEP:
            kl.store(out_ptr + rm[:, None] + kl.arange(0, 1)[None, :], r)
        else:
            kl.store(out_ptr + rm, r)
    else:
        if KEEP:
            kl.store(out_ptr + kl.arange(0, 1)[:, None] + kl.arange(0, 1)[None, :], r)
        else:
            kl.store(out_ptr, r)


def _np_reduce(op: str, x: np.ndarray, axis: int | None) -> np.ndarray:
    fn = {"sum": np.sum, "method_sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}[op]
    if op.startswith("arg") and axis is None:
        return np.asarray(fn(x.reshape(-1)))
    return np.asarray(fn(x, axis=axis))


def _run_reduce(op: str, x: np.ndarray, axis: int | None, keep: bool, out_dtype: type) -> np.ndarray:
    size = {0: N, 1: M, None: 1}[axis]
    out = np.zeros(size, out_dtype)
    reduce2d_kernel[(1,)](x, out, OP=op, AXIS=axis, KEEP=keep, M=M, N=N)
    return out


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin", "method_sum"])
def test_int_reductions(backend: str, op: str, axis: int | None, keep: bool) -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(-50, 50, (M, N)).astype(np.int32)
    out_dtype = np.int32
    got = _run_reduce(op, x, axis, keep, out_dtype)
    np.testing.assert_array_equal(got, _np_reduce(op, x, axis).reshape(-1))


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin"])
def test_float_reductions(backend: str, op: str, axis: int | None) -> None:
    rng = np.random.default_rng(12)
    x = rng.standard_normal((M, N)).astype(np.float32)
    out_dtype = np.int32 if op.startswith("arg") else np.float32
    got = _run_reduce(op, x, axis, False, out_dtype)
    want = _np_reduce(op, x, axis).reshape(-1)
    if op == "sum":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_argmax_argmin_ties_pick_first_index(backend: str) -> None:
    x = np.zeros((M, N), np.float32)
    x[0, [3, 7, 12]] = 5.0  # three equal maxima in row 0
    x[1, :] = 1.0  # every element ties
    x[2, [0, 15]] = -4.0  # two equal minima
    amax = _run_reduce("argmax", x, 1, False, np.int32)
    amin = _run_reduce("argmin", x, 1, False, np.int32)
    assert amax[0] == 3 and amax[1] == 0
    assert amin[2] == 0 and amin[1] == 0
    np.testing.assert_array_equal(amax, np.argmax(x, axis=1))
    np.testing.assert_array_equal(amin, np.argmin(x, axis=1))
    col = _run_reduce("argmax", np.repeat(np.arange(N, dtype=np.float32)[None, :] * 0 + 2, M, 0), 0, False, np.int32)
    np.testing.assert_array_equal(col, np.zeros(N))


@kdsl.kernel
def sum_int8_kernel(x_ptr, out_ptr, N: kl.constexpr):
    s = kl.sum(kl.load(x_ptr + kl.arange(0, N)), axis=0)
    kl.static_assert(s.dtype == kl.int32, "sum of int8 is int32")
    kl.store(out_ptr, s)


def test_sum_of_small_ints_accumulates_in_int32(backend: str) -> None:
    x = np.full(16, 100, np.int8)
    out = np.zeros(1, np.int32)
    sum_int8_kernel[(1,)](x, out, N=16)
    assert out[0] == 1600


@kdsl.kernel
def max_with_indices_kernel(x_ptr, v_ptr, i_ptr, N: kl.constexpr):
    v, i = kl.max(kl.load(x_ptr + kl.arange(0, N)), axis=0, return_indices=True)
    kl.store(v_ptr, v)
    kl.store(i_ptr, i)
    w, j = kl.min(kl.load(x_ptr + kl.arange(0, N)), axis=0, return_indices=True)
    kl.store(v_ptr + 1, w)
    kl.store(i_ptr + 1, j)


def test_max_min_return_indices(backend: str) -> None:
    x = np.array([3, 9, 1, 9, -4, 0, -4, 2], np.float32)
    v = np.zeros(2, np.float32)
    i = np.zeros(2, np.int32)
    max_with_indices_kernel[(1,)](x, v, i, N=8)
    np.testing.assert_array_equal(v, [9, -4])
    np.testing.assert_array_equal(i, [1, 4])


@kdsl.kernel
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    n = n_a + n_b
    w_b = kl.where(n == 0, 0.0, n_b / n)
    delta = mean_b - mean_a
    mean = mean_a + delta * w_b
    m2 = m2_a + m2_b + delta * delta * n_a * w_b
    return mean, m2, n


@kdsl.kernel
def welford_kernel(x_ptr, mean_ptr, var_ptr, M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    x = kl.load(x_ptr + rm[:, None] * N + rn[None, :])
    mean, m2, count = kl.reduce((x, kl.zeros_like(x), kl.full(x.shape, 1.0, kl.float32)), 1, welford_combine)
    kl.store(mean_ptr + rm, mean)
    kl.store(var_ptr + rm, m2 / count)


def test_generic_reduce_tuple_welford(backend: str) -> None:
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((M, N)) * 3 + 10).astype(np.float32)
    mean = np.zeros(M, np.float32)
    var = np.zeros(M, np.float32)
    welford_kernel[(1,)](x, mean, var, M=M, N=N)
    np.testing.assert_allclose(mean, x.astype(np.float64).mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(var, x.astype(np.float64).var(axis=1), rtol=1e-4)


@kdsl.kernel
def max_combine(a, b):
    return kl.maximum(a, b)


@kdsl.kernel
def reduce_custom_kernel(x_ptr, out_ptr, N: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, N))
    kl.store(out_ptr, kl.reduce(x, 0, max_combine))
    kl.store(out_ptr + 1, x.reduce(0, max_combine))


def test_generic_reduce_single_and_method(backend: str) -> None:
    x = np.array([4, -2, 17, 3, 17, 0, 5, 1], np.int32)
    out = np.zeros(2, np.int32)
    reduce_custom_kernel[(1,)](x, out, N=8)
    np.testing.assert_array_equal(out, [17, 17])


@kdsl.kernel
def scan_kernel(x_ptr, out_ptr, OP: kl.constexpr, AXIS: kl.constexpr, REV: kl.constexpr,
                M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    offs = rm[:, None] * N + rn[None, :]
    x = kl.load(x_ptr + offs)
    if OP == "cumsum":
        r = kl.cumsum(x, axis=AXIS, reverse=REV)
    elif OP == "cumprod":
        r = kl.cumprod(x, axis=AXIS, reverse=REV)
    elif OP == "scan_max":
        r = kl.associative_scan(x, AXIS, max_combine, reverse=REV)
    else:
        r = x.cumsum(AXIS, reverse=REV)
    kl.store(out_ptr + offs, r)


def _np_scan(op: str, x: np.ndarray, axis: int, rev: bool) -> np.ndarray:
    fn = {"cumsum": np.cumsum, "method": np.cumsum, "cumprod": np.cumprod, "scan_max": np.maximum.accumulate}[op]
    if rev:
        return np.flip(fn(np.flip(x, axis), axis=axis), axis)
    return fn(x, axis=axis)


@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "scan_max", "method"])
def test_int_scans(backend: str, op: str, axis: int, rev: bool) -> None:
    rng = np.random.default_rng(14)
    x = rng.integers(-3, 4, (M, N)).astype(np.int32)
    out = np.zeros_like(x)
    scan_kernel[(1,)](x, out, OP=op, AXIS=axis, REV=rev, M=M, N=N)
    np.testing.assert_array_equal(out, _np_scan(op, x, axis, rev).astype(np.int32))


@pytest.mark.parametrize("rev", [False, True])
def test_float_cumsum(backend: str, rev: bool) -> None:
    rng = np.random.default_rng(15)
    x = rng.standard_normal((M, N)).astype(np.float32)
    out = np.zeros_like(x)
    scan_kernel[(1,)](x, out, OP="cumsum", AXIS=1, REV=rev, M=M, N=N)
    np.testing.assert_allclose(out, _np_scan("cumsum", x.astype(np.float64), 1, rev), rtol=1e-5, atol=1e-5)


@kdsl.kernel
def pair_combine(v_a, i_a, v_b, i_b):
    take_b = v_b > v_a
    return kl.where(take_b, v_b, v_a), kl.where(take_b, i_b, i_a)


@kdsl.kernel
def tuple_scan_kernel(x_ptr, v_ptr, i_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    x = kl.load(x_ptr + offs)
    v, i = kl.associative_scan((x, offs), 0, pair_combine)
    kl.store(v_ptr + offs, v)
    kl.store(i_ptr + offs, i)


def test_tuple_associative_scan_running_argmax(backend: str) -> None:
    x = np.array([1, 5, 2, 5, 7, 0, 7, 3, 9, 1, 1, 2, 10, 4, 4, 0], np.int32)
    v = np.zeros(16, np.int32)
    i = np.zeros(16, np.int32)
    tuple_scan_kernel[(1,)](x, v, i, N=16)
    np.testing.assert_array_equal(v, np.maximum.accumulate(x))
    want_i = [int(np.argmax(x[: k + 1])) for k in range(16)]
    np.testing.assert_array_equal(i, want_i)


@kdsl.kernel
def _first_max_kernel(x_ptr, out_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    x = kl.load(x_ptr + offs)
    v, i = kl.reduce((x, offs), 0, pair_combine)
    kl.store(out_ptr, v)
    kl.store(out_ptr + 1, i)
    kl.store(out_ptr + 2, kl.sum(x, axis=0))


@pytest.mark.parametrize("threads", [1, 4, 64])
def test_scalar_reduction_over_a_work_group(backend: str, threads: int) -> None:
    """With several work-items a reduction to a scalar folds contiguous segments, then the partials
    in order: ties still resolve to the lowest index, sums are exact on integers."""
    x = np.random.default_rng(threads).integers(0, 50, 1024).astype(np.int32)
    x[[100, 700, 900]] = 99  # three maxima: the first must win
    out = np.zeros(3, np.int32)
    _first_max_kernel[(1,)](x, out, N=1024, num_threads=threads)
    assert list(out) == [99, 100, int(x.sum())]
