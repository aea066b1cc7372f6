"""Softmax (one-pass and online), LayerNorm forward/backward and RMSNorm against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from kdsl import ops

SHAPES = [(1, 1), (3, 7), (13, 97), (4, 300)]


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_one_pass(backend: str, shape: tuple[int, int]) -> None:
    x = (np.random.default_rng(0).standard_normal(shape) * 5).astype(np.float32)
    np.testing.assert_allclose(ops.softmax(x), ops.softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_online(backend: str, shape: tuple[int, int]) -> None:
    """Rows longer than the tile take the two-sweep online path (block 32 here)."""
    x = (np.random.default_rng(1).standard_normal(shape) * 5).astype(np.float32)
    np.testing.assert_allclose(ops.softmax(x, max_block=32), ops.softmax_ref(x), rtol=1e-5, atol=1e-7)


def test_softmax_strided_rows_and_few_programs(backend: str) -> None:
    base = np.random.default_rng(2).standard_normal((9, 40)).astype(np.float32)
    x = base[:, :29]  # row stride 40, 29 columns
    np.testing.assert_allclose(ops.softmax(x, max_programs=2), ops.softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("m", "n", "block"), [(1, 1, 16), (5, 13, 16), (7, 101, 32), (3, 64, 1024)])
def test_layer_norm_forward(backend: str, m: int, n: int, block: int) -> None:
    rng = np.random.default_rng(m * n)
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(np.float32)
    w, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    y, mean, rstd = ops.layer_norm(x, w, b, block=block)
    y_ref, mean_ref, rstd_ref = ops.layer_norm_ref(x, w, b)
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-4)


@pytest.mark.parametrize(("m", "n", "groups"), [(1, 1, 4), (7, 13, 3), (29, 67, 4)])
def test_layer_norm_backward(backend: str, m: int, n: int, groups: int) -> None:
    rng = np.random.default_rng(m + n)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    _, mean, rstd = ops.layer_norm(x, w, b)
    dx, dw, db = ops.layer_norm_backward(dy, x, w, mean, rstd, groups=groups)
    dx_ref, dw_ref, db_ref = ops.layer_norm_backward_ref(dy, x, w)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, dw_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(db, db_ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (5, 37), (3, 130)])
def test_rms_norm(backend: str, m: int, n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.random(n, dtype=np.float32)
    np.testing.assert_allclose(ops.rms_norm(x, w, block=64), ops.rms_norm_ref(x, w), rtol=1e-4, atol=1e-5)


def test_row_programs_by_backend(backend: str) -> None:
    """Persistent programs (at most 256) on cpu/opencl/interpreter, one per row on vulkan
    (lavapipe's loop cap and pass budget); an explicit ``max_programs`` wins, capped at the rows."""
    from kdsl.ops._common import row_programs

    x = np.zeros((1000, 4), np.float32)
    assert row_programs(x, 1000, None) == (1000 if backend == "vulkan" else 256)
    assert row_programs(x, 1000, 7) == 7
    assert row_programs(x, 3, 7) == 3
    assert row_programs(x, 0, None) == 1


def test_many_rows_with_default_programs(backend: str) -> None:
    """More rows than 256: every row is normalised, whatever the backend's program count."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 33)).astype(np.float32)
    w, b = rng.random(33, dtype=np.float32), rng.random(33, dtype=np.float32)
    np.testing.assert_allclose(ops.softmax(x), ops.softmax_ref(x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ops.layer_norm(x, w, b)[0], ops.layer_norm_ref(x, w, b)[0], rtol=1e-4, atol=1e-5)
