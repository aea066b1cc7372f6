# %% [markdown]
# # 06 — Fused attention (flash attention, forward)
#
# `attention(Q, K, V) = softmax(Q K^T / sqrt(d)) V`. Computed naively, the `S x S` score matrix is written
# to memory, read back for the softmax, written again and read for the product with `V`. Flash attention
# never materialises it: a program owns `BLOCK_M` query rows and streams over keys in `BLOCK_N` blocks,
# using the **online softmax** of tutorial 02 — a running row max `m`, a running normaliser `l` and an
# output accumulator, all rescaled by `exp(m_old - m_new)` when the max grows.

# %%
import numpy as np

import kdsl
from kdsl import ops
from kdsl.ops import attention as attention_module
from tutorial_utils import as_image, benchmark, pick, show_table

print(attention_module.__doc__)

# %% [markdown]
# The kernel is `kdsl.ops.attention.attention_fwd_kernel`. Its inner loop, per key block:
#
# ```python
# qk = kl.dot(q, kt) * qk_scale                       # scores, scale includes log2(e)
# qk = kl.where(valid, qk, -float("inf"))              # padding keys and (causal) future keys
# m_new = kl.maximum(m_i, kl.max(qk, axis=1))
# p = kl.exp2(qk - m_new[:, None])
# alpha = kl.exp2(m_i - m_new)                         # rescale what was accumulated so far
# l_i = l_i * alpha + kl.sum(p, axis=1)
# acc = acc * alpha[:, None] + kl.dot(p, v)
# m_i = m_new
# ```
#
# Causal attention also stops the key loop at the diagonal block, skipping half the work.

# %%
rng = np.random.default_rng(0)
B, H, S, D = pick((1, 2, 37, 16), (2, 4, 256, 64))
q, k, v = (rng.standard_normal((B, H, S, D), dtype=np.float32) for _ in range(3))
for causal in (False, True):
    err = np.abs(ops.attention(q, k, v, causal=causal) - ops.attention_ref(q, k, v, causal=causal)).max()
    print(f"causal={causal}: max abs error {err:.2e}")
    assert err < 1e-4

# %% [markdown]
# ## Rotary position embeddings
#
# RoPE rotates each pair `(x[i], x[i + D/2])` of a query/key head by an angle `pos * base^(-2i/D)`; the
# dot product of two rotated vectors then depends only on their relative position. `kdsl.ops.rope`
# computes the angles in the kernel (no cos/sin tables in memory):

# %%
x = rng.standard_normal((B, S, H, D), dtype=np.float32)
print("rope max abs error:", np.abs(ops.rope(x) - ops.rope_ref(x)).max())
qr, kr = ops.rope(x), ops.rope(x, pos_offset=5)  # shifting every position by 5 ...
dots = (qr[0, :, 0] * qr[0, :, 0]).sum(-1), (kr[0, :, 0] * kr[0, :, 0]).sum(-1)
print("... keeps norms:", np.allclose(*dots, rtol=1e-4))

# %% [markdown]
# ## Benchmark
#
# `4 * S^2 * D` flops per (batch, head) without masking (two matmuls); causal, sequence length varies.

# %%
bh, d = pick(2, 8), pick(16, 64)
sizes = pick([16, 32], [64, 128, 256, 512])


def numpy_case(n):
    a, b_, c = (np.random.default_rng(n).standard_normal((1, bh, n, d), dtype=np.float32) for _ in range(3))
    mask = np.tril(np.ones((n, n), bool))

    def run():
        s = a @ b_.transpose(0, 1, 3, 2) / np.float32(np.sqrt(d))
        s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ c

    return run


def kdsl_case(n):
    a, b_, c = (kdsl.tensor(np.random.default_rng(n).standard_normal((1, bh, n, d), dtype=np.float32)) for _ in range(3))
    return lambda: ops.attention(a, b_, c, causal=True)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 2 * bh * n * n * d / ms / 1e6,
                       xlabel="sequence length", ylabel="GFLOP/s", title=f"causal attention, {bh} heads, d={d}")
show_table(sizes, table, "GFLOP/s")
as_image(fig)
