"""Low-memory dropout (Triton tutorial 04): the mask is regenerated, never stored.

The keep/drop decision of element ``i`` is ``rand(seed, i) > p``: a counter-based
Philox generator keyed by ``seed`` and indexed by the element's offset. Forward
and backward passes only need to share the seed (one integer), not an
``n``-element mask. :func:`philox_ref` is an independent numpy Philox-4x32-10
used as the reference, so the test checks bits, not statistics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, empty, launch

_M32 = np.uint64(0xFFFFFFFF)
_ROUND_A, _ROUND_B = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_KEY_A, _KEY_B = 0x9E3779B9, 0xBB67AE85


@kdsl.kernel
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: kl.constexpr):  # type: ignore[no-untyped-def]
    offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    random = kl.rand(seed, offsets)  # uniform [0, 1), a pure function of (seed, offset)
    x_keep = random > p
    output = kl.where(x_keep, x / (1 - p), 0.0)
    kl.store(output_ptr + offsets, output, mask=mask)


def dropout(x: Array, p: float, seed: int, block: int = 1024) -> Array:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    out = empty(tuple(x.shape), x.dtype, x)
    n = out.size
    launch(seeded_dropout_kernel, (kdsl.cdiv(n, block),), x, out, n, p, seed, BLOCK_SIZE=block)
    return out


# --- numpy reference --------------------------------------------------------------


def philox_ref(seed: int, offsets: np.ndarray[Any, Any], rounds: int = 10) -> np.ndarray[Any, Any]:
    """First output word of Philox-4x32 for counters (offset, 0, 0, 0), key = seed's halves."""
    seed &= (1 << 64) - 1
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    c0 = offsets.astype(np.int64).astype(np.uint64) & _M32
    c1, c2, c3 = np.zeros_like(c0), np.zeros_like(c0), np.zeros_like(c0)
    for _ in range(rounds):
        hi_lo_b = _ROUND_B * c2  # 32x32 -> 64-bit product: exact in uint64
        hi_lo_a = _ROUND_A * c0
        c0, c2 = (hi_lo_b >> np.uint64(32)) ^ c1 ^ np.uint64(k0), (hi_lo_a >> np.uint64(32)) ^ c3 ^ np.uint64(k1)
        c1, c3 = hi_lo_b & _M32, hi_lo_a & _M32
        k0, k1 = (k0 + _KEY_A) & 0xFFFFFFFF, (k1 + _KEY_B) & 0xFFFFFFFF
    return c0.astype(np.uint32)


def uniform_ref(bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Triton's word -> [0, 1) map: as int32, negatives folded (-x - 1), times 2**-31."""
    x = bits.view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x).astype(np.int32)
    return np.asarray(x.astype(np.float32) * np.float32(4.6566127342e-10))


def dropout_ref(x: np.ndarray[Any, Any], p: float, seed: int) -> np.ndarray[Any, Any]:
    keep = uniform_ref(philox_ref(seed, np.arange(x.size))).reshape(x.shape) > np.float32(p)
    scale = x / (np.float32(1) - np.float32(p))
    return np.where(keep, scale, np.float32(0)).astype(x.dtype)
