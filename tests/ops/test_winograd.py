"""Winograd F(4x4, 3x3) convolution (``kdsl/ops/winograd.py``) against the float64 reference on
every backend: ragged tiles, channel counts that no block divides, padding 0-2, both layouts,
strided views, fp16, bias and activations; when ``conv2d`` picks it; bad requests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
from kdsl import ops

# (batch, channels, height, width, output channels, padding)
CASES = [
    (1, 16, 8, 8, 16, 1),  # whole tiles
    (2, 20, 9, 13, 24, 1),  # ragged tiles on both edges, channels no block divides
    (1, 17, 6, 5, 33, 0),  # no padding: 4x3 output
    (1, 16, 1, 1, 16, 1),  # one pixel
    (1, 32, 5, 7, 16, 2),  # padding 2
    (1, 64, 12, 16, 64, 1),  # several tiles per program, every block exact
]


def _conv(x: np.ndarray, wt: np.ndarray, b: Any, pad: int, layout: str, act: str, **kw: Any) -> np.ndarray:
    if layout == "NCHW":
        return np.asarray(ops.conv2d(x, wt, b, 1, pad, activation=act, **kw))
    xh, wh = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(wt.transpose(2, 3, 1, 0))
    return np.asarray(ops.conv2d(xh, wh, b, 1, pad, layout="NHWC", activation=act, **kw)).transpose(0, 3, 1, 2)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", CASES)
def test_winograd_matches_reference(backend: str, case: tuple[int, ...], layout: str) -> None:
    n, c, h, w, oc, pad = case
    rng = np.random.default_rng(n * c * h * w * oc + pad)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((oc, c, 3, 3), dtype=np.float32)
    b = rng.standard_normal(oc, dtype=np.float32) if c % 2 == 0 else None
    act = "relu" if layout == "NHWC" else ""
    want = ops.conv2d_ref(x, wt, b, 1, pad, activation=act)
    got = _conv(x, wt, b, pad, layout, act, algorithm="winograd")
    assert got.shape == want.shape
    # the transforms' extra roundings: ~1e-6 of the largest output (module docstring)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * float(np.abs(want).max()))


def test_winograd_strided_views_and_fp16(backend: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 7, 9), dtype=np.float32)
    wt = rng.standard_normal((24, 16, 3, 3), dtype=np.float32)
    want = ops.conv2d_ref(x, wt, padding=1)
    got = ops.conv2d(x.transpose(0, 2, 3, 1), wt.transpose(2, 3, 1, 0), padding=1, layout="NHWC",
                     algorithm="winograd")  # fmt: skip
    np.testing.assert_allclose(np.asarray(got).transpose(0, 3, 1, 2), want, atol=2e-5 * float(np.abs(want).max()))
    x16, w16 = x.astype(np.float16), wt.astype(np.float16)
    got16 = np.asarray(ops.conv2d(x16, w16, padding=1, algorithm="winograd"))
    assert got16.dtype == np.float16
    want16 = ops.conv2d_ref(x16.astype(np.float32), w16.astype(np.float32), padding=1)
    np.testing.assert_allclose(got16.astype(np.float32), want16, atol=2e-3 * float(np.abs(want16).max()))


def test_auto_picks_winograd_where_dots_are_micro_kernels(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    conv = importlib.import_module("kdsl.ops.conv")
    calls: list[int] = []
    real = conv.conv3x3_winograd

    def spy(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(conv, "conv3x3_winograd", spy)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 16, 6, 6), dtype=np.float32)
    wt = rng.standard_normal((16, 16, 3, 3), dtype=np.float32)
    got = ops.conv2d(x, wt, padding=1)
    np.testing.assert_allclose(got, ops.conv2d_ref(x, wt, padding=1), atol=1e-4 * float(np.abs(got).max()))
    assert bool(calls) == (backend in ("opencl", "cpu"))
    calls.clear()
    ops.conv2d(x, wt, padding=1, algorithm="direct")
    ops.conv2d(x, wt, padding=1, stride=2)  # stride 2: never Winograd
    ops.conv2d(x[:, :8], wt[:, :8], padding=1)  # 8 channels: direct
    assert not calls


def test_bad_algorithm_requests() -> None:
    x = np.zeros((1, 16, 6, 6), np.float32)
    wt = np.zeros((16, 16, 3, 3), np.float32)
    with pytest.raises(ValueError, match="algorithm must be"):
        ops.conv2d(x, wt, algorithm="fft")
    with pytest.raises(ValueError, match="stride 1"):
        ops.conv2d(x, wt, stride=2, algorithm="winograd")
    with pytest.raises(ValueError, match="stride 1"):
        ops.conv2d(x, wt, dilation=2, algorithm="winograd")
    with pytest.raises(ValueError, match="3x3"):
        ops.conv2d(x, np.zeros((16, 16, 5, 5), np.float32), algorithm="winograd")


def test_winograd_only_where_int32_offsets_suffice() -> None:
    from kdsl.ops.winograd import winograd_applies

    assert winograd_applies(3, 3, (1, 1), (1, 1), 64, 64, (8, 56, 56))
    # 36 x (512 * 56 * 56 / 16 tiles) x 1024 channels > 2**31: direct convolution
    assert not winograd_applies(3, 3, (1, 1), (1, 1), 1024, 64, (512, 56, 56))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(1, 2), c=st.integers(16, 24), h=st.integers(1, 11), w=st.integers(1, 11),
    oc=st.sampled_from([16, 19, 32]), pad=st.integers(0, 2), seed=st.integers(0, 2**16),
)  # fmt: skip
def test_winograd_random_shapes(n: int, c: int, h: int, w: int, oc: int, pad: int, seed: int) -> None:
    """Random shapes on the cpu backend (each shape compiles anew: kept to the fastest compiler)."""
    if "cpu" not in kdsl.available_backends():
        pytest.skip("cpu backend unavailable")
    if h + 2 * pad < 3 or w + 2 * pad < 3:
        return  # no output pixel
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((oc, c, 3, 3), dtype=np.float32)
    with kdsl.backend("cpu"):
        got = np.asarray(ops.conv2d(x, wt, padding=pad, algorithm="winograd"))
    want = ops.conv2d_ref(x, wt, padding=pad)
    np.testing.assert_allclose(got, want, atol=2e-5 * float(np.abs(want).max()))
