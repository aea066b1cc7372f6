"""Tuples and NamedTuples as kernel arguments (Triton 3.2+), on every backend.

A tuple holding arrays is a structured parameter: its arrays become pointers, its ints follow
the scalar rules (1 specialised), ``None``/``kl.constexpr``/functions stay compile-time, and the
kernel sees the same (Named)tuple. NamedTuples keep their class through calls, returns and
assignments, so fields are read by name.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.jit
def _fill_each(outs, values):
    # one output per tuple element, the count known at compile time
    for i in kl.static_range(len(outs)):
        kl.store(outs[i], values[i] * 2)


@kdsl.jit
def fill_kernel(outs, values, n_extra, EXTRA: kl.constexpr):
    _fill_each(outs, values)
    if EXTRA:
        kl.store(outs[0] + 1, n_extra)


@pytest.mark.parametrize("count", [1, 2, 4])
def test_tuple_of_arrays_indexed_statically(backend: str, count: int) -> None:
    outs = tuple(np.zeros(2, np.float32) for _ in range(count))
    values = tuple(float(i + 3) for i in range(count))
    fill_kernel[(1,)](outs, values, 7, EXTRA=True)
    for i, o in enumerate(outs):
        assert o[0] == 2 * values[i]
    assert outs[0][1] == 7


@kdsl.jit
def nested_kernel(out, pack, scale):
    # pack = (src, (one, None, other, constexpr 5)); read in place, the static parts stay
    # compile-time (an assignment would turn numbers into runtime scalars, as in Triton)
    kl.static_assert(pack[1][1] is None)
    kl.static_assert(pack[1][3] >= 0)
    src, (one, _, other, add) = pack
    offs = kl.arange(0, 8)
    v = kl.load(src + offs) * scale + kl.load(other + offs) * one
    kl.store(out + offs, v + add)


def test_nested_tuple_with_static_parts(backend: str) -> None:
    src = np.arange(8, dtype=np.float32)
    other = np.full(8, 0.5, np.float32)
    out = np.zeros(8, np.float32)
    nested_kernel[(1,)](out, (src, (1, None, other, kl.constexpr(5))), 3.0)
    np.testing.assert_array_equal(out, src * 3 + other + 5)


def test_relaunch_reads_the_new_tuple(backend: str) -> None:
    """The cached launcher picks each leaf out of the tuple given at every launch."""
    for k in range(3):
        src = np.arange(8, dtype=np.float32) + k
        other = np.full(8, float(k), np.float32)
        out = np.zeros(8, np.float32)
        nested_kernel[(1,)](out, (src, (2, None, other, kl.constexpr(5))), 1.0)
        np.testing.assert_array_equal(out, src + 2 * other + 5)


def test_device_arrays_in_a_tuple(backend: str) -> None:
    src = kdsl.tensor(np.arange(8, dtype=np.float32))
    other = kdsl.tensor(np.ones(8, np.float32))
    out = kdsl.zeros((8,), np.float32)
    nested_kernel[(1,)](out, (src, (1, None, other, kl.constexpr(0))), 2.0)
    np.testing.assert_array_equal(out.numpy(), np.arange(8) * 2 + 1)


class View(NamedTuple):
    ptr: Any
    shape: tuple[int, int]
    strides: tuple[int, int]


class Epilogue(NamedTuple):
    fn: Any
    args: tuple[Any, ...]


@kdsl.jit
def _view_of(ptr, shape, strides):
    return View(ptr=ptr, shape=shape, strides=strides)


@kdsl.jit
def _offsets_and_mask(v, BM: kl.constexpr, BN: kl.constexpr):
    rows = kl.arange(0, BM)[:, None]
    cols = kl.arange(0, BN)[None, :]
    return v.ptr + rows * v.strides[0] + cols * v.strides[1], (rows < v.shape[0]) & (cols < v.shape[1])


@kdsl.jit
def _add_scaled(x, bias_ptr, factor):
    return x * factor + kl.load(bias_ptr)


@kdsl.jit
def view_kernel(src, dst, epilogue, BM: kl.constexpr, BN: kl.constexpr):
    s = _view_of(src.ptr, src.shape, src.strides)  # rebuilt in a helper and returned
    d = dst
    sp, sm = _offsets_and_mask(s, BM, BN)
    dp, dm = _offsets_and_mask(d, BM, BN)
    x = kl.load(sp, mask=sm, other=0.0)
    kl.store(dp, epilogue.fn(x, *epilogue.args), mask=dm)


def test_namedtuples_keep_their_fields(backend: str) -> None:
    x = np.random.default_rng(3).standard_normal((20, 12)).astype(np.float32)
    y = np.zeros((9, 7), np.float32)
    bias = np.array([0.25], np.float32)
    src = View(x, x.shape, (x.strides[0] // 4, x.strides[1] // 4))
    dst = View(y, y.shape, (y.strides[0] // 4, 1))
    view_kernel[(1,)](src, dst, Epilogue(_add_scaled, (bias, 3.0)), BM=16, BN=16)
    np.testing.assert_allclose(y, x[:9, :7] * 3.0 + 0.25, rtol=1e-6)


@kdsl.jit
def carry_kernel(out, v, n):
    # a NamedTuple carried through a loop keeps its class
    for _ in range(n):
        v = View(v.ptr + 1, v.shape, v.strides)
    kl.store(out, kl.load(v.ptr))


def test_namedtuple_through_a_loop(backend: str) -> None:
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(1, np.float32)
    carry_kernel[(1,)](out, View(x, (10, 1), (1, 1)), 4)
    assert out[0] == 4


@kdsl.jit
def write_second(pair):
    kl.store(pair[1], kl.load(pair[0]))


def test_read_only_array_in_a_tuple_is_named() -> None:
    src = np.ones(1, np.float32)
    dst = np.zeros(1, np.float32)
    dst.flags.writeable = False
    name = "cpu" if "cpu" in kdsl.available_backends() else "interpreter"
    with kdsl.backend(name), pytest.raises(kdsl.LaunchError, match=r"pair\[1\]"):
        write_second[(1,)]((src, dst))


@kdsl.jit
def no_params():
    x, y = float("-inf"), float("inf")
    kl.device_assert(x < y, "inf ordering")


def test_kernel_without_parameters(backend: str) -> None:
    no_params[(2,)]()
    kdsl.synchronize()
