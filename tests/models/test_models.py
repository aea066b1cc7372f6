"""The end-to-end models: kdsl forward passes against their numpy twins, on every backend."""

from __future__ import annotations

import numpy as np

from kdsl import ops
from kdsl.models import CNN, GPT, CNNConfig, GPTConfig
from kdsl.models.gpt import init_weights


def test_gpt_matches_numpy(backend: str) -> None:
    model = GPT(GPTConfig.small(), seed=3)
    ids = model.random_tokens(2, seq=7)  # shorter than the context, not a power of two
    with ops.profile() as prof:
        got = model.forward(ids)
    want = model.forward_numpy(ids)
    assert got.shape == (2, 7, model.cfg.vocab)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # attention: K transposed once then the blocked kernel (cpu/opencl), or the gathering kernel
    attention = {"transpose_keys_kernel", "attention_fwd_kernel"} <= set(prof.stats) or (
        "attention_fwd_gather_kernel" in prof.stats
    )
    assert attention
    base = {"embedding_kernel", "layer_norm_fwd_kernel", "matmul_kernel"}
    assert (
        base
        <= set(prof.stats)
        <= base | {"transpose_keys_kernel", "attention_fwd_kernel", "attention_fwd_gather_kernel"}
    )
    assert prof.stats["matmul_kernel"].calls == 6 * model.cfg.n_layer + 1


def test_gpt_is_causal(backend: str) -> None:
    """Changing a later token must not change the logits of earlier positions."""
    model = GPT(GPTConfig.small(), seed=4)
    ids = model.random_tokens(1)
    changed = ids.copy()
    changed[0, -1] = (changed[0, -1] + 1) % model.cfg.vocab
    a, b = model.forward(ids), model.forward(changed)
    np.testing.assert_array_equal(a[:, :-1], b[:, :-1])
    assert not np.array_equal(a[:, -1], b[:, -1])


def test_weights_are_deterministic() -> None:
    cfg = GPTConfig.small()
    w1, w2, w3 = init_weights(cfg, 0), init_weights(cfg, 0), init_weights(cfg, 1)
    assert all(np.array_equal(w1[k], w2[k]) for k in w1)
    assert not np.array_equal(w1["wte"], w3["wte"])


def test_cnn_matches_numpy(backend: str) -> None:
    model = CNN(CNNConfig.small(), seed=5)
    images = model.random_images(3)
    got = model.forward(images)
    assert got.shape == (3, model.cfg.classes)
    np.testing.assert_allclose(got, model.forward_numpy(images), rtol=1e-4, atol=1e-4)


def test_cnn_numpy_twin_matches_reference_ops() -> None:
    """The numpy twin itself agrees with the float64 reference ops (so it is a fair reference)."""
    model = CNN(CNNConfig.small(), seed=6)
    x = model.random_images(2)
    w = model.weights
    h = ops.pool2d_ref(ops.conv2d_ref(x, w["conv1.w"], w["conv1.b"], padding=1, activation="relu"), 2, mode="max")
    h = ops.pool2d_ref(ops.conv2d_ref(h, w["conv2.w"], w["conv2.b"], padding=1, activation="relu"), 2, mode="avg")
    want = h.reshape(2, -1) @ w["fc.w"] + w["fc.b"]
    np.testing.assert_allclose(model.forward_numpy(x), want, rtol=1e-4, atol=1e-4)
