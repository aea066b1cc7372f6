# %% [markdown]
# # 04 — Low-memory dropout
#
# Dropout zeroes each element with probability `p` and scales the survivors by `1/(1-p)`. The classic
# implementation draws a random mask, stores it (one byte or more per element) and reads it again in the
# backward pass. With a **counter-based** generator (Philox) the mask is a pure function of
# `(seed, element index)`: it can be regenerated whenever needed, so only the seed is kept.

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl import ops
from tutorial_utils import as_image, benchmark, pick, show_table

# %% [markdown]
# ## The kernel
#
# `kl.rand(seed, offsets)` returns a uniform float in `[0, 1)` per offset.

# %%
@kdsl.kernel
def seeded_dropout_kernel(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: kl.constexpr):
    offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    random = kl.rand(seed, offsets)
    x_keep = random > p
    kl.store(output_ptr + offsets, kl.where(x_keep, x / (1 - p), 0.0), mask=mask)


def seeded_dropout(x, p, seed):
    out = np.empty_like(x)
    n = x.size
    seeded_dropout_kernel[(kdsl.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK_SIZE=1024)
    return out


x = np.random.default_rng(0).standard_normal(pick(2000, 1 << 20)).astype(np.float32)
a, b, c = seeded_dropout(x, 0.5, 123), seeded_dropout(x, 0.5, 123), seeded_dropout(x, 0.5, 512)
print("same seed, same mask:", np.array_equal(a, b), "| other seed differs:", not np.array_equal(a, c))
print("fraction kept:", (a != 0).mean())
print(np.stack([x[:8], a[:8]]))

# %% [markdown]
# ## Bit-exact against an independent Philox
#
# `kdsl.ops.dropout.philox_ref` is Philox-4x32-10 written in numpy. The kernel's mask must match it bit
# for bit — on every backend, since each implements the same unsigned 32-bit arithmetic.

# %%
want = ops.dropout_ref(x, 0.5, 123)
print("identical to the numpy Philox:", np.array_equal(a, want))
assert np.array_equal(a, want)

# %% [markdown]
# ## Benchmark
#
# Against numpy's usual approach (draw a mask with `rng.random`, then apply it). 8 bytes moved per element.

# %%
sizes = pick([2**10, 2**12], [2**14, 2**16, 2**18, 2**20])
gen = np.random.default_rng(0)


def numpy_case(n):
    v = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    return lambda: np.where(gen.random(n, dtype=np.float32) > 0.5, v / np.float32(0.5), np.float32(0))


def kdsl_case(n):
    v = kdsl.tensor(np.random.default_rng(n).standard_normal(n).astype(np.float32))
    return lambda: ops.dropout(v, 0.5, seed=7)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 8 * n / ms / 1e6,
                       xlabel="elements", ylabel="GB/s", title="dropout")
show_table(sizes, table, "GB/s")
as_image(fig)
