"""A small GPT-2-style decoder whose forward pass is built only from kdsl.ops kernels.

Architecture (pre-LayerNorm, as GPT-2): token + position embeddings; ``n_layer``
blocks of ``x += attn(ln1(x))`` and ``x += mlp(ln2(x))`` with causal multi-head
attention and a GELU (tanh) MLP; a final LayerNorm and a linear head to the
vocabulary. Weights are random but deterministic (numpy RNG with a seed), so a
run needs no download and is reproducible.

Fusion, kernel by kernel: the embedding gather adds the position embedding;
each projection is one matmul with bias (and GELU, or the residual add) in its
epilogue; attention is a single flash-attention kernel reading q/k/v in their
``(B, T, H*D)`` layout. A block is 7 launches: 2 LayerNorms, 3 q/k/v
projections, attention, output projection (+residual), MLP up (+GELU), MLP
down (+residual) -- 9 with the norms counted separately.

:meth:`GPT.forward_numpy` is the same model in plain float32 numpy: the
reference the demo and the tests compare against.
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
class GPTConfig:
    vocab: int = 128
    n_ctx: int = 32
    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    eps: float = 1e-5

    @classmethod
    def small(cls) -> GPTConfig:
        return cls(vocab=48, n_ctx=8, d_model=32, n_head=2, n_layer=1)


def init_weights(cfg: GPTConfig, seed: int = 0) -> dict[str, NDArray]:
    """GPT-2-like initialisation: N(0, 0.02) matrices, unit LayerNorm gains, small biases."""
    rng = np.random.default_rng(seed)
    d, f = cfg.d_model, 4 * cfg.d_model

    def normal(*shape: int, std: float = 0.02) -> NDArray:
        return (rng.standard_normal(shape) * std).astype(F32)

    w: dict[str, NDArray] = {"wte": normal(cfg.vocab, d, std=0.5), "wpe": normal(cfg.n_ctx, d, std=0.1)}
    for i in range(cfg.n_layer):
        p = f"h{i}."
        for name in ("ln1", "ln2"):
            w[p + name + ".w"] = (1.0 + normal(d, std=0.1)).astype(F32)
            w[p + name + ".b"] = normal(d, std=0.1)
        for name, (k, n) in {"q": (d, d), "k": (d, d), "v": (d, d), "o": (d, d), "fc": (d, f), "proj": (f, d)}.items():
            w[p + name + ".w"] = normal(k, n, std=0.2 / np.sqrt(k) * 5)
            w[p + name + ".b"] = normal(n)
    w["lnf.w"] = (1.0 + normal(d, std=0.1)).astype(F32)
    w["lnf.b"] = normal(d, std=0.1)
    w["head.w"] = normal(d, cfg.vocab, std=1.0 / np.sqrt(d))
    return w


class GPT:
    """The model: config + weights; forward with kdsl kernels or with numpy."""

    def __init__(self, cfg: GPTConfig, seed: int = 0) -> None:
        self.cfg = cfg
        self.weights = init_weights(cfg, seed)
        self._device: dict[str, dict[str, Any]] = {}  # backend -> weights as device arrays

    def random_tokens(self, batch: int, seq: int | None = None, seed: int = 1) -> NDArray:
        seq = self.cfg.n_ctx if seq is None else seq
        return np.random.default_rng(seed).integers(0, self.cfg.vocab, (batch, seq)).astype(np.int32)

    def device_weights(self) -> dict[str, Any]:
        """The weights uploaded once to the current backend's device."""
        name = kdsl.current_backend_name()
        if name not in self._device:
            self._device[name] = {k: kdsl.tensor(v) for k, v in self.weights.items()}
        return self._device[name]

    # --- kdsl ---------------------------------------------------------------------
    def forward(self, ids: NDArray) -> NDArray:
        """Logits (B, T, vocab) computed with kdsl kernels on the current backend."""
        cfg, w = self.cfg, self.device_weights()
        nb, t = ids.shape
        d = cfg.d_model
        x = ops.embedding(kdsl.tensor(ids), w["wte"], w["wpe"])  # (B*T, D)
        for i in range(cfg.n_layer):
            p = f"h{i}."
            h, _, _ = ops.layer_norm(x, w[p + "ln1.w"], w[p + "ln1.b"], cfg.eps)
            q, k, v = (reshape(ops.matmul(h, w[p + n + ".w"], w[p + n + ".b"]), (nb, t, d)) for n in "qkv")
            a = ops.attention(q, k, v, causal=True, layout="bsd", heads=cfg.n_head)
            x = ops.matmul(reshape(a, (nb * t, d)), w[p + "o.w"], w[p + "o.b"], residual=x)
            h, _, _ = ops.layer_norm(x, w[p + "ln2.w"], w[p + "ln2.b"], cfg.eps)
            f = ops.matmul(h, w[p + "fc.w"], w[p + "fc.b"], activation="gelu_tanh")
            x = ops.matmul(f, w[p + "proj.w"], w[p + "proj.b"], residual=x)
        h, _, _ = ops.layer_norm(x, w["lnf.w"], w["lnf.b"], cfg.eps)
        logits = ops.matmul(h, w["head.w"])
        return ops.to_numpy(logits).reshape(nb, t, cfg.vocab)

    # --- numpy ----------------------------------------------------------------------
    def forward_numpy(self, ids: NDArray) -> NDArray:
        """The same model in float32 numpy."""
        cfg, w = self.cfg, self.weights
        nb, t = ids.shape
        d, nh = cfg.d_model, cfg.n_head
        hd = d // nh
        x = (w["wte"][ids] + w["wpe"][None, :t]).reshape(nb * t, d)
        causal = np.tril(np.ones((t, t), bool))
        for i in range(cfg.n_layer):
            p = f"h{i}."
            h = _layer_norm_np(x, w[p + "ln1.w"], w[p + "ln1.b"], cfg.eps)
            q, k, v = (
                (h @ w[p + n + ".w"] + w[p + n + ".b"]).reshape(nb, t, nh, hd).transpose(0, 2, 1, 3) for n in "qkv"
            )
            s = q @ k.transpose(0, 1, 3, 2) * F32(1.0 / np.sqrt(hd))
            s = np.where(causal, s, F32(-np.inf))
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            a = (e / e.sum(axis=-1, keepdims=True)) @ v
            x = x + a.transpose(0, 2, 1, 3).reshape(nb * t, d) @ w[p + "o.w"] + w[p + "o.b"]
            h = _layer_norm_np(x, w[p + "ln2.w"], w[p + "ln2.b"], cfg.eps)
            x = x + _gelu_tanh_np(h @ w[p + "fc.w"] + w[p + "fc.b"]) @ w[p + "proj.w"] + w[p + "proj.b"]
        h = _layer_norm_np(x, w["lnf.w"], w["lnf.b"], cfg.eps)
        return (h @ w["head.w"]).reshape(nb, t, cfg.vocab)


def _layer_norm_np(x: NDArray, w: NDArray, b: NDArray, eps: float) -> NDArray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + F32(eps)) * w + b  # type: ignore[no-any-return]


def _gelu_tanh_np(x: NDArray) -> NDArray:
    return F32(0.5) * x * (F32(1.0) + np.tanh(F32(np.sqrt(2.0 / np.pi)) * (x + F32(0.044715) * x**3)))  # type: ignore[no-any-return]
