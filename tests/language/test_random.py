"""kl.random against an independent pure-Python Philox4x32-10 reference, bit-exact."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

M32 = 0xFFFFFFFF


def philox_ref(seed: int, counter: tuple[int, int, int, int], rounds: int = 10) -> tuple[int, int, int, int]:
    """Philox4x32 (Salmon et al.) with Triton's key split: k0 = low word, k1 = high word of the uint64 seed."""
    s = seed & 0xFFFFFFFFFFFFFFFF
    k0, k1 = s & M32, s >> 32
    c0, c1, c2, c3 = counter
    for _ in range(rounds):
        pa = 0xD2511F53 * c0
        pb = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((pb >> 32) ^ c1 ^ k0) & M32, pb & M32, ((pa >> 32) ^ c3 ^ k1) & M32, pa & M32
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def uniform_ref(word: int) -> np.float32:
    x = word - (1 << 32) if word >= 1 << 31 else word
    x = -x - 1 if x < 0 else x
    return np.float32(x) * np.float32(4.6566127342e-10)


@kdsl.kernel
def randint4x_kernel(out_ptr, seed, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    a, b, c, d = kl.randint4x(seed, offs)
    kl.store(out_ptr + offs, a)
    kl.store(out_ptr + BLOCK + offs, b)
    kl.store(out_ptr + 2 * BLOCK + offs, c)
    kl.store(out_ptr + 3 * BLOCK + offs, d)


@kdsl.kernel
def rand_kernel(u_ptr, n_ptr, seed, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK) + 1000
    kl.store(u_ptr + offs - 1000, kl.rand(seed, offs))
    kl.store(n_ptr + offs - 1000, kl.randn(seed, offs))


@pytest.mark.parametrize("seed", [0, 1, 123456789, -5, 2**40 + 7])
def test_randint4x_matches_reference(seed: int) -> None:
    n = 16
    out = np.zeros(4 * n, np.uint32)
    randint4x_kernel[(1,)](out, seed, BLOCK=n)
    want = np.array([philox_ref(seed, (i, 0, 0, 0)) for i in range(n)], np.uint32).T.reshape(-1)
    np.testing.assert_array_equal(out, want)


def test_rand_and_randn_follow_triton_conversions() -> None:
    n, seed = 64, 42
    u = np.zeros(n, np.float32)
    g = np.zeros(n, np.float32)
    rand_kernel[(1,)](u, g, seed, BLOCK=n)
    words = [philox_ref(seed, (1000 + i, 0, 0, 0)) for i in range(n)]
    want_u = np.array([uniform_ref(w[0]) for w in words], np.float32)
    np.testing.assert_array_equal(u, want_u)
    assert (u >= 0).all() and (u < 1).all()
    u1 = np.maximum(np.float32(1e-7), want_u)
    u2 = np.array([uniform_ref(w[1]) for w in words], np.float32)
    want_n = np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(6.283185307179586) * u2)
    np.testing.assert_allclose(g, want_n, rtol=1e-5, atol=1e-5)
