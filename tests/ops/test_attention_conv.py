"""Flash attention, RoPE, convolution and pooling against numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kdsl import ops

ATT_SHAPES = [(1, 1, 1, 1), (2, 3, 37, 20), (1, 2, 64, 16), (1, 1, 200, 32)]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", ATT_SHAPES)
def test_attention_bhsd(backend: str, shape: tuple[int, int, int, int], causal: bool) -> None:
    rng = np.random.default_rng(sum(shape))
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    want = ops.attention_ref(q, k, v, causal)
    np.testing.assert_allclose(ops.attention(q, k, v, causal), want, rtol=1e-4, atol=1e-5)


def test_attention_cross_lengths_and_scale(backend: str) -> None:
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, 2, 5, 8), dtype=np.float32)
    k, v = (rng.standard_normal((1, 2, 41, 8), dtype=np.float32) for _ in range(2))
    got = ops.attention(q, k, v, sm_scale=0.3, blocks=(16, 16))
    np.testing.assert_allclose(got, ops.attention_ref(q, k, v, sm_scale=0.3), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("sq", "sk", "blocks"), [(33, 33, (16, 16)), (70, 70, (32, 16)), (9, 50, (16, 32))])
def test_attention_ragged_blocks(backend: str, sq: int, sk: int, blocks: tuple[int, int], causal: bool) -> None:
    """Sequence lengths that are not multiples of the blocks: the masked tail and diagonal blocks."""
    rng = np.random.default_rng(sq * 100 + sk)
    q = rng.standard_normal((1, 2, sq, 16), dtype=np.float32)
    k, v = (rng.standard_normal((1, 2, sk, 16), dtype=np.float32) for _ in range(2))
    want = ops.attention_ref(q, k, v, causal)
    np.testing.assert_allclose(ops.attention(q, k, v, causal, blocks=blocks), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_growing_scores_rescale(backend: str, causal: bool) -> None:
    """Scores that grow along the keys, so later blocks exceed the running reference by far (2**40
    and more): the lazy rescale path must raise it; exp2 of the raw scores would overflow."""
    rng = np.random.default_rng(5)
    s, d = 96, 16
    q = rng.standard_normal((1, 1, s, d), dtype=np.float32) * 4
    k = rng.standard_normal((1, 1, s, d), dtype=np.float32) * np.linspace(0.1, 6.0, s, dtype=np.float32)[:, None]
    v = rng.standard_normal((1, 1, s, d), dtype=np.float32)
    want = ops.attention_ref(q, k, v, causal)
    got = ops.attention(q, k, v, causal, blocks=(16, 16))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_attention_transformer_layout(backend: str) -> None:
    """(B, S, H*D) projections are read in place through strides."""
    rng = np.random.default_rng(2)
    nb, s, h, d = 2, 19, 3, 8
    q, k, v = (rng.standard_normal((nb, s, h * d), dtype=np.float32) for _ in range(3))
    got = ops.attention(q, k, v, causal=True, layout="bsd", heads=h)

    def split(t: np.ndarray) -> np.ndarray:
        return t.reshape(nb, s, h, d).transpose(0, 2, 1, 3)

    want = ops.attention_ref(split(q), split(k), split(v), causal=True).transpose(0, 2, 1, 3).reshape(nb, s, h * d)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("shape", "offset"), [((1, 1, 1, 2), 0), ((2, 7, 3, 10), 5), ((1, 33, 2, 64), 0)])
def test_rope(backend: str, shape: tuple[int, int, int, int], offset: int) -> None:
    x = np.random.default_rng(3).standard_normal(shape, dtype=np.float32)
    np.testing.assert_allclose(ops.rope(x, pos_offset=offset), ops.rope_ref(x, pos_offset=offset), atol=2e-5)


CONV_CASES = [  # (n, c, h, w, oc, k, stride, pad, dilation)
    (1, 1, 1, 1, 1, 1, 1, 0, 1),
    (2, 3, 11, 13, 5, 3, 1, 1, 1),
    (1, 4, 17, 9, 7, 3, 2, 2, 2),  # dilation: the gathered implicit GEMM
    (1, 2, 8, 8, 3, 5, 3, 0, 1),
    (1, 5, 4, 70, 9, 3, 1, 1, 1),  # output rows wider than a pixel block
    (2, 8, 10, 10, 20, 3, 2, 1, 1),  # stride 2 with padding
    (1, 3, 6, 7, 4, 1, 1, 0, 1),  # 1x1
    (1, 70, 5, 6, 3, 3, 1, 0, 1),  # kernel rows (kw, c) longer than a K block, no padding
    (1, 6, 7, 5, 80, 3, 1, (2, 0), 1),  # more channels than a channel block, padding on H only
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(backend: str, case: tuple[Any, ...], layout: str) -> None:
    n, c, h, w, oc, k, stride, pad, dil = case
    rng = np.random.default_rng(n * c * h * w * oc)
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    wt = rng.standard_normal((oc, c, k, k), dtype=np.float32)
    b = rng.standard_normal(oc, dtype=np.float32)
    want = ops.conv2d_ref(x, wt, b, stride, pad, dil, activation="relu")
    if layout == "NCHW":
        got = ops.conv2d(x, wt, b, stride, pad, dil, activation="relu")
    else:
        xh, wh = np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(wt.transpose(2, 3, 1, 0))
        got = ops.conv2d(xh, wh, b, stride, pad, dil, layout="NHWC", activation="relu").transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_conv2d_strided_views(backend: str) -> None:
    """NHWC input given as a transposed view of NCHW data and a non-contiguous weight: copied by strides."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 5, 9, 8), dtype=np.float32)
    wt = rng.standard_normal((7, 5, 3, 3), dtype=np.float32)
    want = ops.conv2d_ref(x, wt, padding=1)
    got = ops.conv2d(x.transpose(0, 2, 3, 1), wt.transpose(2, 3, 1, 0), padding=1, layout="NHWC")
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), want, rtol=1e-4, atol=1e-4)
    got0 = ops.conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), wt.transpose(2, 3, 1, 0), layout="NHWC")
    np.testing.assert_allclose(got0.transpose(0, 3, 1, 2), ops.conv2d_ref(x, wt), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("mode", ["max", "avg"])
@pytest.mark.parametrize(("size", "k", "stride", "pad"), [(1, 1, 1, 0), (7, 3, 2, 1), (10, 2, 2, 0)])
def test_pool2d(backend: str, mode: str, layout: str, size: int, k: int, stride: int, pad: int) -> None:
    x = np.random.default_rng(size).standard_normal((2, 3, size, size + 2), dtype=np.float32)
    want = ops.pool2d_ref(x, k, stride, pad, mode)
    if layout == "NCHW":
        got = ops.pool2d(x, k, stride, pad, mode)
    else:
        xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
        got = ops.pool2d(xh, k, stride, pad, mode, layout="NHWC").transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_embedding(backend: str) -> None:
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 50, (2, 7)).astype(np.int32)
    wte, wpe = rng.standard_normal((50, 12), dtype=np.float32), rng.standard_normal((9, 12), dtype=np.float32)
    np.testing.assert_array_equal(ops.embedding(ids, wte, wpe), ops.embedding_ref(ids, wte, wpe))
