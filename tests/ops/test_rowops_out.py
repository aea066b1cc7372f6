"""``out=`` of softmax and LayerNorm (issue #7: a reused output saves a fresh array's page faults),
with numpy arguments and device arrays, whole-row and long-row paths, and the argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
from kdsl import ops


@pytest.mark.parametrize(("shape", "max_block"), [((5, 37), 4096), ((3, 300), 64)])
def test_softmax_out(backend: str, shape: tuple[int, int], max_block: int) -> None:
    x = (np.random.default_rng(0).standard_normal(shape) * 4).astype(np.float32)
    y = np.full(shape, np.nan, np.float32)
    assert ops.softmax(x, max_block=max_block, out=y) is y
    np.testing.assert_allclose(y, ops.softmax_ref(x), rtol=1e-5, atol=1e-7)
    dx, dy = kdsl.tensor(x, backend=backend), kdsl.zeros(shape, np.float32, backend=backend)
    assert ops.softmax(dx, max_block=max_block, out=dy) is dy
    np.testing.assert_allclose(dy.numpy(), ops.softmax_ref(x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("shape", "block"), [((4, 45), 4096), ((3, 130), 32)])
def test_layer_norm_out(backend: str, shape: tuple[int, int], block: int) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    w, b = rng.random(shape[1], dtype=np.float32), rng.random(shape[1], dtype=np.float32)
    y = np.full(shape, np.nan, np.float32)
    got, mean, rstd = ops.layer_norm(x, w, b, block=block, out=y)
    assert got is y
    want, mean_ref, rstd_ref = ops.layer_norm_ref(x, w, b)
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-4)


def test_out_is_checked() -> None:
    x = np.ones((3, 8), np.float32)
    with pytest.raises(ValueError, match="out must have shape"):
        ops.softmax(x, out=np.empty((3, 7), np.float32))
    with pytest.raises(ValueError, match="out must have shape"):
        ops.layer_norm(x, np.ones(8, np.float32), np.zeros(8, np.float32), out=np.empty((3, 8), np.float64))
