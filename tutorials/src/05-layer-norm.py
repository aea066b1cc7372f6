# %% [markdown]
# # 05 — Layer normalisation, forward and backward
#
# `y = (x - mean(x)) / sqrt(var(x) + eps) * w + b`, over the last axis. The forward kernel gives each row
# to one program, sweeping the row in `BLOCK_SIZE` chunks (mean, variance, normalise), and saves `mean`
# and `rstd = 1/sqrt(var + eps)` for the backward pass.

# %%
import numpy as np

import kdsl
from kdsl import ops
from kdsl.ops import norms
from tutorial_utils import as_image, benchmark, pick, show_table

# %% [markdown]
# The kernels are in `kdsl/ops/norms.py`; here is the forward one:

# %%
import inspect

print(inspect.getsource(norms.layer_norm_fwd_kernel.fn))

# %%
rng = np.random.default_rng(0)
M, N = pick((7, 101), (512, 1024))
x = (rng.standard_normal((M, N)) * 2 + 0.5).astype(np.float32)
w, b = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
y, mean, rstd = ops.layer_norm(x, w, b, block=32)
y_ref, mean_ref, rstd_ref = ops.layer_norm_ref(x, w, b)
print("forward max abs error:", np.abs(y - y_ref).max())
assert np.allclose(y, y_ref, atol=1e-4)

# %% [markdown]
# ## Backward: `dx` per row, `dw` and `db` across rows
#
# With `xhat = (x - mean) * rstd`: `dx = (w*dy - (xhat * c1 + c2)) * rstd` where `c1 = mean(xhat * w*dy)`
# and `c2 = mean(w*dy)` — row-local, like the forward. But `dw = sum_rows(dy * xhat)` and
# `db = sum_rows(dy)` reduce **across** rows, i.e. across programs.
#
# Triton's tutorial accumulates them into `GROUP_SIZE_M` partial buffers guarded by spin locks
# (`atomic_cas`/`atomic_xchg`). kdsl runs that version too (see `tests/semantic/test_tutorials.py`), but
# the library uses a **two-stage reduction without atomics**, which works on every backend and is
# deterministic: stage 1 gives program `g` the rows `g, g+G, g+2G, ...` and keeps its partial `dw`/`db`
# in registers, storing them once into row `g` of a `(G, N)` buffer; stage 2 sums the `G` rows per column
# block.

# %%
dy = rng.standard_normal((M, N)).astype(np.float32)
dx, dw, db = ops.layer_norm_backward(dy, x, w, mean, rstd, groups=4)
dx_ref, dw_ref, db_ref = ops.layer_norm_backward_ref(dy, x, w)
for name, got, want in (("dx", dx, dx_ref), ("dw", dw, dw_ref), ("db", db, db_ref)):
    print(f"{name} max abs error: {np.abs(got - want).max():.2e}")
    assert np.allclose(got, want, atol=1e-3)

# %% [markdown]
# RMSNorm (`x / sqrt(mean(x^2) + eps) * w`, used by Llama-style models) is the same pattern with one sweep fewer:

# %%
print("rms_norm max abs error:", np.abs(ops.rms_norm(x, w) - ops.rms_norm_ref(x, w)).max())

# %% [markdown]
# ## Benchmark (forward)
#
# 8 bytes per element (read `x`, write `y`).

# %%
rows = pick(32, 512)
sizes = pick([64, 256], [256, 512, 1024, 2048, 4096])


def numpy_case(n):
    a = np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32)
    g, h = np.ones(n, np.float32), np.zeros(n, np.float32)

    def run():
        mu = a.mean(axis=1, keepdims=True)
        return (a - mu) / np.sqrt(((a - mu) ** 2).mean(axis=1, keepdims=True) + np.float32(1e-5)) * g + h

    return run


def kdsl_case(n):
    a = kdsl.tensor(np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32))
    g, h = kdsl.tensor(np.ones(n, np.float32)), kdsl.tensor(np.zeros(n, np.float32))
    return lambda: ops.layer_norm(a, g, h)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 8 * rows * n / ms / 1e6,
                       xlabel="features", ylabel="GB/s", title=f"layer norm forward, {rows} rows")
show_table(sizes, table, "GB/s")
as_image(fig)
