"""End-to-end: kernels compiled by the frontend and run on the interpreter, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kdsl

from . import fe_kernels as K


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 700), block=st.sampled_from([16, 64, 256]))
def test_vector_add(n: int, block: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    K.vector_add[(kdsl.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (7, 13), (4, 64), (3, 100)])
def test_softmax(rows: int, cols: int) -> None:
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    K.softmax[(rows,)](out, x, cols, cols, cols, BLOCK=kdsl.next_power_of_2(cols))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("m", "n", "k"), [(16, 16, 16), (33, 20, 40), (5, 7, 3)])
def test_matmul_dot_loop(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m * n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    grid = (kdsl.cdiv(m, 16), kdsl.cdiv(n, 16))
    K.matmul[grid](a, b, c, m, n, k, k, 1, n, 1, n, 1, BM=16, BN=16, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [0, 1, 5, 37])
def test_loop_carried_sum_and_count(n: int) -> None:
    x = np.arange(max(n, 1), dtype=np.float32)[:n] if n else np.zeros(1, np.float32)
    out = np.zeros(2, np.float32)
    K.loop_sum[(1,)](x, out, n, BLOCK=8)
    assert out[0] == pytest.approx(float(x[:n].sum()))
    assert out[1] == -(-n // 8)


@pytest.mark.parametrize("flag", [-3, 0, 1, 7])
def test_if_else_results(flag: int) -> None:
    x = np.array([2.5], np.float32)
    out = np.zeros(1, np.float32)
    K.if_else[(1,)](x, out, flag)
    assert out[0] == (2.5 * 2 + 1 if flag > 0 else 2.5 - 1 + 2)


@pytest.mark.parametrize("n", [0, 1, 10])
def test_while(n: int) -> None:
    out = np.zeros(1, np.int32)
    K.while_loop[(1,)](out, n)
    assert out[0] == sum(range(n))


def test_early_return() -> None:
    x = np.arange(32, dtype=np.float32)
    out = np.full(32, -1.0, np.float32)
    K.early_return[(32,)](x, out, 20)
    np.testing.assert_array_equal(out[:20], x[:20] + 1)
    np.testing.assert_array_equal(out[20:], -1.0)


def test_helper_calls() -> None:
    x = np.array([-1.5, 2.0, 3.0, 4.0], np.float32)
    out = np.zeros(5, np.float32)
    K.call_helper[(1,)](x, out, BLOCK=4)
    np.testing.assert_allclose(out[:4], (x * 2 + 1) + (x - 2) + (x * 3 + 0.5))
    assert out[4] == 0.0


def test_static_unroll() -> None:
    x = np.array([1.5], np.float32)
    out = np.zeros(1, np.float32)
    K.static_unroll[(1,)](x, out, N=5)
    assert out[0] == 1.5 * 120
