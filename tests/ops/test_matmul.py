"""Matmul variants against numpy: dtypes, epilogues, grouped ordering, batching."""

from __future__ import annotations

import numpy as np
import pytest

from kdsl import ops

SIZES = [(1, 1, 1), (37, 19, 53), (64, 48, 32)]


def _close(got: np.ndarray, want: np.ndarray, k: int, rel: float = 1e-6) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-4, atol=rel * 8 * k + 1e-6)


@pytest.mark.parametrize(("m", "n", "k"), SIZES)
def test_matmul_fp32(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m)
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    _close(ops.matmul(a, b), ops.matmul_ref(a, b), k)


@pytest.mark.parametrize(("m", "n", "k"), SIZES)
def test_matmul_fp16_inputs_fp32_accumulation(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + 1)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    c = ops.matmul(a, b)
    assert c.dtype == np.float32
    _close(c, ops.matmul_ref(a, b), k)  # exact products, fp32 sums: far below fp16 rounding


@pytest.mark.parametrize(("m", "n", "k"), SIZES)
def test_matmul_int8_int32_accumulation(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + 2)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = ops.matmul(a, b)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, ops.matmul_ref(a, b))


@pytest.mark.parametrize(("m", "n", "k"), [(256, 256, 256), (300, 272, 200), (129, 33, 384)])
def test_matmul_int8_micro_kernel_blocks(backend: str, m: int, n: int, k: int) -> None:
    """Sizes that take the int8 micro-kernels (VNNI ``vpdpbusd`` where the CPU has it): several K
    blocks, masked row/column/K edges, and the extreme bytes -128 and 127 (the VNNI kernel adds 128
    to ``b`` and takes ``128 * rowsum(a)`` back: both ends of the range must come out exact)."""
    rng = np.random.default_rng(m + n + k)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    a[0, :], a[1, :], b[:, 0], b[:, 1] = -128, 127, -128, 127
    np.testing.assert_array_equal(ops.matmul(a, b), ops.matmul_ref(a, b))


@pytest.mark.parametrize(("m", "n", "k"), SIZES)
def test_matmul_int8_weight_only(backend: str, m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + 3)
    a, w = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    q, scale = ops.quantize_per_channel(w)
    bias = rng.standard_normal(n, dtype=np.float32)
    _close(ops.matmul(a, q, bias=bias, scale=scale), ops.matmul_ref(a, q, bias, scale=scale), k)
    # and the quantised product is near the float one (quantisation error, not kernel error)
    err = np.abs(ops.matmul(a, q, scale=scale) - a @ w).max()
    assert err < 0.02 * np.sqrt(k) * np.abs(w).max()


@pytest.mark.parametrize("activation", ["", "relu", "gelu", "gelu_tanh", "silu", "leaky_relu"])
def test_matmul_fused_epilogue(backend: str, activation: str) -> None:
    rng = np.random.default_rng(4)
    m, n, k = 23, 41, 29
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    bias, res = rng.standard_normal(n, dtype=np.float32), rng.standard_normal((m, n), dtype=np.float32)
    got = ops.matmul(a, b, bias=bias, activation=activation, residual=res)
    _close(got, ops.matmul_ref(a, b, bias, activation, res), k)


@pytest.mark.parametrize("group_m", [1, 2, 3, 8])
def test_matmul_grouped_ordering_covers_every_tile(backend: str, group_m: int) -> None:
    rng = np.random.default_rng(5)
    m, n, k = 83, 70, 17  # 6 x 5 tiles of 16: groups that do not divide the tile rows
    a, b = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32)
    _close(ops.matmul(a, b, blocks=(16, 16, 16), group_m=group_m), ops.matmul_ref(a, b), k)


@pytest.mark.parametrize("shared_b", [False, True])
def test_batched_matmul(backend: str, shared_b: bool) -> None:
    rng = np.random.default_rng(6)
    nb, m, n, k = 3, 13, 11, 7
    a = rng.standard_normal((nb, m, k), dtype=np.float32)
    b = rng.standard_normal((k, n) if shared_b else (nb, k, n), dtype=np.float32)
    c = ops.matmul(a, b)
    assert c.shape == (nb, m, n)
    _close(c, ops.matmul_ref(a, b), k)


def test_transposed_operand_by_strides(backend: str) -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((19, 33), dtype=np.float32)
    w = rng.standard_normal((21, 33), dtype=np.float32)  # (N, K): read as K x N through strides
    _close(ops.matmul(a, w.T), a.astype(np.float64) @ w.T.astype(np.float64), 33)


def test_matmul_shape_mismatch() -> None:
    with pytest.raises(ValueError, match="inner dimensions"):
        ops.matmul(np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32))


@pytest.mark.parametrize("units", [1, 2, 3, 8])
@pytest.mark.parametrize("size", [(16, 16), (100, 7), (384, 384), (1152, 1152), (2048, 2048), (8, 4096), (4096, 24)])
def test_output_tile_is_a_bounded_power_of_two(size: tuple[int, int], units: int) -> None:
    from kdsl.ops.matmul import _output_tile

    bm, bn = _output_tile(*size, 256, 256, units)
    for b, extent in ((bm, size[0]), (bn, size[1])):
        assert 16 <= b <= 256 and b & (b - 1) == 0
        assert b < 2 * max(extent, 16)  # never a tile of mostly padding along one side


def test_output_tile_avoids_padding_and_keeps_big_tiles_where_they_fit() -> None:
    """384 as 256-tiles would pad to 512 (56 % useful work); 2048 keeps the largest tile, which
    copies each operand least often."""
    from kdsl.ops.matmul import _output_tile

    assert 256 not in _output_tile(384, 384, 256, 256, 2)
    assert _output_tile(2048, 2048, 256, 256, 2) == (256, 256)
    assert _output_tile(1024, 1024, 256, 256, 2) == (256, 256)
