"""A small CNN classifier (conv -> pool -> conv -> pool -> linear) built from kdsl.ops kernels.

``conv1`` (3x3, padding 1) with bias and ReLU fused into the implicit-GEMM
epilogue, 2x2 max pooling, ``conv2`` likewise, 2x2 average pooling, flatten
(a free reshape of the contiguous NCHW result) and a linear layer with bias:
five launches per forward pass. Weights are deterministic (He initialisation
from a seeded numpy RNG). :meth:`CNN.forward_numpy` is the float32 numpy twin
(im2col convolution with ``sliding_window_view`` and ``tensordot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import kdsl
from kdsl import ops
from kdsl.ops._common import reshape

F32 = np.float32
NDArray = np.ndarray[Any, Any]


@dataclass(frozen=True)
class CNNConfig:
    channels: int = 3
    size: int = 32  # input height = width (a multiple of 4)
    c1: int = 16
    c2: int = 32
    classes: int = 10

    @classmethod
    def small(cls) -> CNNConfig:
        return cls(size=8, c1=4, c2=8, classes=5)


def init_weights(cfg: CNNConfig, seed: int = 0) -> dict[str, NDArray]:
    rng = np.random.default_rng(seed)

    def he(*shape: int, fan_in: int) -> NDArray:
        return np.asarray(rng.standard_normal(shape) * np.sqrt(2.0 / fan_in), dtype=F32)

    flat = cfg.c2 * (cfg.size // 4) ** 2
    return {
        "conv1.w": he(cfg.c1, cfg.channels, 3, 3, fan_in=cfg.channels * 9),
        "conv1.b": (rng.standard_normal(cfg.c1) * 0.1).astype(F32),
        "conv2.w": he(cfg.c2, cfg.c1, 3, 3, fan_in=cfg.c1 * 9),
        "conv2.b": (rng.standard_normal(cfg.c2) * 0.1).astype(F32),
        "fc.w": he(flat, cfg.classes, fan_in=flat),
        "fc.b": (rng.standard_normal(cfg.classes) * 0.1).astype(F32),
    }


class CNN:
    def __init__(self, cfg: CNNConfig, seed: int = 0) -> None:
        self.cfg = cfg
        self.weights = init_weights(cfg, seed)
        self._device: dict[str, dict[str, Any]] = {}

    def random_images(self, batch: int, seed: int = 1) -> NDArray:
        c = self.cfg
        return np.random.default_rng(seed).standard_normal((batch, c.channels, c.size, c.size)).astype(F32)

    def device_weights(self) -> dict[str, Any]:
        name = kdsl.current_backend_name()
        if name not in self._device:
            self._device[name] = {k: kdsl.tensor(v) for k, v in self.weights.items()}
        return self._device[name]

    def forward(self, images: NDArray) -> NDArray:
        """Logits (N, classes) computed with kdsl kernels on the current backend."""
        w = self.device_weights()
        x = ops.conv2d(kdsl.tensor(images), w["conv1.w"], w["conv1.b"], padding=1, activation="relu")
        x = ops.pool2d(x, 2, mode="max")
        x = ops.conv2d(x, w["conv2.w"], w["conv2.b"], padding=1, activation="relu")
        x = ops.pool2d(x, 2, mode="avg")
        x = reshape(x, (x.shape[0], x.size // x.shape[0]))
        return ops.to_numpy(ops.matmul(x, w["fc.w"], w["fc.b"]))

    def forward_numpy(self, images: NDArray) -> NDArray:
        w = self.weights
        x = np.maximum(_conv3x3_np(images, w["conv1.w"], w["conv1.b"]), F32(0))
        x = _pool2_np(x, "max")
        x = np.maximum(_conv3x3_np(x, w["conv2.w"], w["conv2.b"]), F32(0))
        x = _pool2_np(x, "avg")
        return x.reshape(x.shape[0], -1) @ w["fc.w"] + w["fc.b"]


def _conv3x3_np(x: NDArray, w: NDArray, b: NDArray) -> NDArray:
    """3x3 convolution, padding 1, stride 1, NCHW, as im2col + one tensordot."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (N, C, H, W, 3, 3)
    out = np.tensordot(cols, w, axes=([1, 4, 5], [1, 2, 3]))  # (N, H, W, OC)
    return (out.transpose(0, 3, 1, 2) + b[None, :, None, None]).astype(F32)


def _pool2_np(x: NDArray, mode: str) -> NDArray:
    n, c, h, w = x.shape
    blocks = x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2)
    return blocks.max(axis=(3, 5)) if mode == "max" else blocks.mean(axis=(3, 5))  # type: ignore[no-any-return]
