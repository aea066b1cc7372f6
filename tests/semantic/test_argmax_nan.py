"""argmax/argmin (and max/min with ``return_indices``) over NaN, on every backend.

kdsl's definition (``kl.argmax`` docstring, docs/RELIABILITY.md): NaN ranks above
every number for argmax and below every number for argmin, so a slice holding
NaN gives the index of its first NaN -- numpy's ``np.argmax``/``np.argmin``,
which are the references here. Equal values (``-0.0``/``+0.0``, two NaNs) go to
the lowest index, with ``tie_break_left`` True or False.

Triton's combine (``python/triton/language/standard.py``, ``_argmax_combine``:
``gt = value1 > value2 or tie``; ``where(gt, value1, value2)``) takes the right
operand whenever a NaN is compared, so its answer depends on the reduction
order; difftest found the interpreter and the devices disagreeing on it (seeds
500097 and 500114). The combine kdsl emits is a strict total order on (value,
index), so every reduction order gives the same answer: these tests use tiles
large enough that device backends split them over lanes and work-items.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl

NAN, INF = float("nan"), float("inf")
N = 32  # row length of the 2-D cases
FLOATS = (np.float16, np.float32, np.float64)


@kdsl.kernel
def arg2d_kernel(
    x_ptr,
    out_ptr,
    val_ptr,
    OP: kl.constexpr,
    AXIS: kl.constexpr,
    KEEP: kl.constexpr,
    TIE: kl.constexpr,
    M: kl.constexpr,
    N: kl.constexpr,
):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    x = kl.load(x_ptr + rm[:, None] * N + rn[None, :])
    v = x
    if OP == "argmax":
        r = kl.argmax(x, axis=AXIS, tie_break_left=TIE, keep_dims=KEEP)
    elif OP == "argmin":
        r = kl.argmin(x, axis=AXIS, tie_break_left=TIE, keep_dims=KEEP)
    elif OP == "method_argmax":
        r = x.argmax(AXIS, tie_break_left=TIE, keep_dims=KEEP)
    elif OP == "max_idx":
        v, r = kl.max(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=TIE, keep_dims=KEEP)
    elif OP == "min_idx":
        v, r = kl.min(x, axis=AXIS, return_indices=True, return_indices_tie_break_left=TIE, keep_dims=KEEP)
    else:
        kl.static_assert(False, "unknown op")
    if AXIS == 0:
        offs = kl.arange(0, 1)[:, None] * N + rn[None, :] if KEEP else rn
    elif AXIS == 1:
        offs = rm[:, None] + kl.arange(0, 1)[None, :] if KEEP else rm
    else:
        offs = kl.arange(0, 1)[:, None] + kl.arange(0, 1)[None, :] if KEEP else 0
    kl.store(out_ptr + offs, r)
    if OP == "max_idx" or OP == "min_idx":
        kl.store(val_ptr + offs, v)


@kdsl.kernel
def arg1d_kernel(x_ptr, out_ptr, OP: kl.constexpr, N: kl.constexpr):
    """One row per program, reduced as a 1-D tile (the whole row in one tile)."""
    row = kl.program_id(0)
    x = kl.load(x_ptr + row * N + kl.arange(0, N))
    if OP == "argmax":
        kl.store(out_ptr + row, kl.argmax(x, 0))
    else:
        kl.store(out_ptr + row, kl.argmin(x, 0))


def nan_rows(n: int, dtype: type) -> np.ndarray:
    """Rows of length ``n`` with NaN at various places, all-NaN rows, NaN with
    ties, NaN next to +-inf, signed zeros, and rows without NaN (16 rows)."""
    rng = np.random.default_rng(n)
    x = rng.integers(-20, 20, (16, n)).astype(np.float64)
    x[0, 0] = NAN  # first element
    x[1, n // 2] = NAN  # middle
    x[2, n - 1] = NAN  # last
    x[3, [n // 4, 3 * n // 4]] = NAN  # two NaNs: the first one wins
    x[4, :] = NAN  # all NaN: index 0
    x[5, :] = 7.0  # ties everywhere, then NaN in the middle
    x[5, n // 2 + 1] = NAN
    x[6, [1, 5]] = 50.0  # tied maxima before a NaN
    x[6, [2, 6]] = -50.0  # tied minima before a NaN
    x[6, n - 2] = NAN
    x[7, n - 3] = NAN  # NaN after the maxima/minima
    x[7, [0, 2]] = 60.0
    x[7, [1, 3]] = -60.0
    x[8, 3] = INF  # +inf before NaN
    x[8, 9] = NAN
    x[9, 4] = -INF  # -inf before NaN, +inf after
    x[9, 6] = NAN
    x[9, 8] = INF
    x[10, :] = 0.0  # signed zeros tie: lowest index
    x[10, ::2] = -0.0
    x[11, :] = -0.0
    x[11, 5:] = 0.0
    x[12, ::3] = NAN  # every third element
    x[13, 1:] = NAN  # all NaN but the first
    x[14, :-1] = NAN  # all NaN but the last
    # row 15: plain integers-valued floats (no NaN), with whatever ties the draw gave
    return x.astype(dtype)


def _reference(op: str, x: np.ndarray, axis: int | None, keep: bool) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) from numpy: the first NaN wins, ties go to the lowest index."""
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis
    fn = np.argmax if op in ("argmax", "method_argmax", "max_idx") else np.argmin
    idx = fn(flat, axis=ax)
    vals = np.take_along_axis(flat, np.expand_dims(idx, ax), ax).squeeze(ax)
    return np.asarray(idx, np.int32).reshape(-1), np.asarray(vals).reshape(-1)


def _run2d(op: str, x: np.ndarray, axis: int | None, keep: bool, tie: bool = True) -> tuple[np.ndarray, np.ndarray]:
    m, n = x.shape
    size = {0: n, 1: m, None: 1}[axis]
    out = np.full(size, -1, np.int32)
    vals = np.zeros(size, x.dtype)
    arg2d_kernel[(1,)](x, out, vals, OP=op, AXIS=axis, KEEP=keep, TIE=tie, M=m, N=n)
    return out, vals


def _check(op: str, x: np.ndarray, axis: int | None, keep: bool, tie: bool = True) -> None:
    got, got_vals = _run2d(op, x, axis, keep, tie)
    want, want_vals = _reference(op, x, axis, keep)
    np.testing.assert_array_equal(got, want, err_msg=f"{op} axis={axis} keep={keep} tie_break_left={tie}")
    if op in ("max_idx", "min_idx"):
        np.testing.assert_array_equal(got_vals, want_vals)  # NaN equals NaN here


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["argmax", "argmin", "max_idx", "min_idx"])
def test_rows_with_nan_axis1(backend: str, op: str, dtype: type) -> None:
    x = nan_rows(N, dtype)
    _check(op, x, 1, False)
    got, _ = _run2d(op, x, 1, False)
    assert got[0] == 0 and got[1] == N // 2 and got[2] == N - 1 and got[3] == N // 4 and got[4] == 0


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_columns_with_nan_axis0(backend: str, op: str, dtype: type, keep: bool) -> None:
    x = np.ascontiguousarray(nan_rows(N, dtype).T)  # (N, 16): each case is a column
    _check(op, x, 0, keep)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("op", ["argmax", "argmin", "max_idx"])
def test_axis_none_and_keep_dims(backend: str, op: str, keep: bool) -> None:
    x = nan_rows(N, np.float32)
    _check(op, x, 1, keep)
    for r in (4, 9, 15):  # all NaN; -inf, NaN, +inf; no NaN
        _check(op, np.ascontiguousarray(np.repeat(x[r : r + 1], 16, 0)), None, keep)
    _check(op, x, None, keep)  # the first NaN of the flattened tile: row 0, element 0


@pytest.mark.parametrize("op", ["argmax", "argmin", "method_argmax"])
def test_tie_break_left_false_gives_the_same_answer(backend: str, op: str) -> None:
    x = nan_rows(N, np.float32)
    _check(op, x, 1, False, tie=False)
    _check(op, np.ascontiguousarray(x.T), 0, True, tie=False)


@pytest.mark.parametrize("n", [16, 256])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_one_dimensional_tiles(backend: str, op: str, n: int) -> None:
    x = nan_rows(n, np.float32)
    out = np.full(16, -1, np.int32)
    arg1d_kernel[(16,)](x, out, OP=op, N=n)
    fn = np.argmax if op == "argmax" else np.argmin
    np.testing.assert_array_equal(out, fn(x, axis=1).astype(np.int32))


_SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.0, 2.0, -3.5]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.sampled_from(_SPECIALS), min_size=4 * 16, max_size=4 * 16),
    axis=st.sampled_from([0, 1, None]),
    op=st.sampled_from(["argmax", "argmin"]),
)
def test_property_matches_numpy(backend: str, values: list[float], axis: int | None, op: str) -> None:
    """Random 4x16 tiles drawn from NaN, +-inf, signed zeros and repeated numbers
    (so NaNs and ties are frequent): the answer is numpy's for every axis."""
    x = np.array(values, np.float32).reshape(4, 16)
    _check(op, x, axis, False)
