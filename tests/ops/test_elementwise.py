"""Vector add, activations and dropout against numpy on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from kdsl import ops
from kdsl.ops.dropout import philox_ref


@pytest.mark.parametrize("n", [1, 7, 1031, 4096])
def test_add(backend: str, n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    np.testing.assert_array_equal(ops.add(x, y), x + y)


@pytest.mark.parametrize("kind", ops.ACTIVATIONS)
def test_activation(backend: str, kind: str) -> None:
    x = (np.random.default_rng(1).standard_normal(1031) * 4).astype(np.float32)
    np.testing.assert_allclose(ops.activation(x, kind), ops.activation_ref(x, kind), rtol=1e-5, atol=1e-6)


def test_gelu_variants_differ_slightly(backend: str) -> None:
    x = np.linspace(-4, 4, 257, dtype=np.float32)
    exact, tanh = ops.gelu(x), ops.gelu(x, approximate="tanh")
    np.testing.assert_allclose(exact, ops.activation_ref(x, "gelu"), atol=1e-6)
    assert 1e-5 < np.abs(exact - tanh).max() < 1e-2  # the tanh form is an approximation


def test_unknown_activation_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown activation"):
        ops.activation(np.zeros(3, np.float32), "swish2")


def test_philox_reference_known_answer() -> None:
    # Random123's known answer for philox4x32-10 with zero counter and key: first word.
    assert int(philox_ref(0, np.array([0]))[0]) == 0x6627E8D5


@pytest.mark.parametrize("n", [1, 13, 2053])
def test_dropout_bits_match_reference(backend: str, n: int) -> None:
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    out = ops.dropout(x, 0.4, seed=1234)
    np.testing.assert_array_equal(out, ops.dropout_ref(x, 0.4, 1234))
    np.testing.assert_array_equal(out, ops.dropout(x, 0.4, seed=1234))  # same seed, same mask


def test_dropout_statistics(backend: str) -> None:
    x = np.ones(4099, np.float32)
    out = ops.dropout(x, 0.25, seed=7)
    kept = out != 0
    assert 0.70 < kept.mean() < 0.80
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert (ops.dropout(x, 0.25, seed=8) != out).any()
