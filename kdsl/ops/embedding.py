"""Token + position embedding lookup (a transformer's first layer), as one gather kernel.

Each program gathers ``BLOCK_T`` token rows: ``out[t] = wte[ids[t]] + wpe[t % T]``.
The sum is fused so the embeddings are read once and written once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, empty, launch, pow2


@kdsl.kernel
def embedding_kernel(  # type: ignore[no-untyped-def]
    Ids, Wte, Wpe, Out, n_tokens, SEQ, D, BLOCK_T: kl.constexpr, BLOCK_D: kl.constexpr
):
    t = kl.program_id(0) * BLOCK_T + kl.arange(0, BLOCK_T)
    d = kl.arange(0, BLOCK_D)
    t_ok = t < n_tokens
    mask = t_ok[:, None] & (d[None, :] < D)
    ids = kl.load(Ids + t, mask=t_ok, other=0)
    tok = kl.load(Wte + ids[:, None] * D + d[None, :], mask=mask, other=0.0)
    pos = kl.load(Wpe + (t % SEQ)[:, None] * D + d[None, :], mask=mask, other=0.0)
    kl.store(Out + t[:, None] * D + d[None, :], tok + pos, mask=mask)


def embedding(ids: Array, wte: Array, wpe: Array, block_t: int = 8) -> Array:
    """(B, T) int32 token ids -> (B*T, D) embeddings: ``wte[ids] + wpe[position]``."""
    nb, seq = int(ids.shape[0]), int(ids.shape[1])
    d = int(wte.shape[1])
    if seq > wpe.shape[0]:
        raise ValueError(f"sequence length {seq} exceeds the {wpe.shape[0]} position embeddings")
    out = empty((nb * seq, d), wte.dtype, wte)
    n = nb * seq
    if n:
        launch(embedding_kernel, (kdsl.cdiv(n, block_t),), ids, wte, wpe, out, n, seq, d,
               BLOCK_T=block_t, BLOCK_D=pow2(d))  # fmt: skip
    return out


def embedding_ref(
    ids: np.ndarray[Any, Any], wte: np.ndarray[Any, Any], wpe: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    seq = ids.shape[1]
    return (wte[ids] + wpe[None, :seq]).reshape(-1, wte.shape[1])  # type: ignore[no-any-return]
