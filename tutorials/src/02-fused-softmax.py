# %% [markdown]
# # 02 — Fused softmax
#
# `softmax(x)_i = exp(x_i - max(x)) / sum_j exp(x_j - max(x))`, row by row. Written in numpy it reads
# and writes the matrix several times (max, subtract, exp, sum, divide). A **fused** kernel loads a row
# once into registers, does every step there and stores the result once: for a memory-bound operation
# that is the whole speed-up.

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl import ops
from tutorial_utils import as_image, benchmark, pick, show_table

# %% [markdown]
# ## One pass when the row fits in a tile
#
# `BLOCK_SIZE` is the next power of two above the row length; the padding lanes load `-inf`, which
# leaves the max unchanged and contributes `exp(-inf) = 0` to the sum. The kernel is *persistent*:
# fewer programs than rows, each striding over rows with `kl.range(start, n_rows, step)`.

# %%
@kdsl.kernel
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: kl.constexpr):
    for row_idx in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        col_offsets = kl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = kl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - kl.max(row, axis=0)
        numerator = kl.exp(row_minus_max)
        out = numerator / kl.sum(numerator, axis=0)
        kl.store(output_ptr + row_idx * output_row_stride + col_offsets, out, mask=mask)


def softmax(x, programs=64):
    n_rows, n_cols = x.shape
    y = np.empty_like(x)
    softmax_kernel[(min(programs, n_rows),)](y, x, x.strides[0] // 4, y.strides[0] // 4, n_rows, n_cols,
                                             BLOCK_SIZE=kdsl.next_power_of_2(n_cols))
    return y


def softmax_np(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


x = (np.random.default_rng(0).standard_normal((pick(17, 1823), pick(97, 781))) * 4).astype(np.float32)
print("max abs error:", np.abs(softmax(x) - softmax_np(x)).max())
assert np.allclose(softmax(x), softmax_np(x), atol=1e-6)

# %% [markdown]
# ## Sizing the persistent grid as Triton's tutorial does
#
# Triton's tutorial compiles the kernel ahead of time with `warmup`, then takes as many programs as fit
# on the device: `NUM_SM * min(NUM_REGS // (n_regs * WARP_SIZE * num_warps), SIZE_SMEM // size_smem)`.
# The same code runs here unchanged. `kdsl.runtime.driver.active` describes the current backend's device.
# `metadata.shared` is one program's working memory: `__local` buffers plus private tile arrays (here
# the row). On a CPU device both live in the cache, so there `max_shared_mem` reports the larger of
# the driver's `__local` limit and the cache. `kdsl/runtime/driver.py` explains the figures.

# %%
from kdsl.runtime import driver

props = driver.active.utils.get_device_properties(0)
y = np.empty_like(x)
warm = softmax_kernel.warmup(y, x, x.strides[0] // 4, y.strides[0] // 4, *x.shape,
                             BLOCK_SIZE=kdsl.next_power_of_2(x.shape[1]), num_warps=8, grid=(1,))
occupancy = min(props["max_num_regs"] // (warm.n_regs * props["warpSize"] * 8),
                props["max_shared_mem"] // warm.metadata.shared)
num_programs = min(props["multiprocessor_count"] * occupancy, x.shape[0])
print(f"n_regs={warm.n_regs} shared={warm.metadata.shared} B -> {num_programs} programs")
warm[(num_programs,)](y, x, x.strides[0] // 4, y.strides[0] // 4, *x.shape, BLOCK_SIZE=kdsl.next_power_of_2(x.shape[1]))
assert np.allclose(y, softmax_np(x), atol=1e-6)

# %% [markdown]
# ## Streaming stores for outputs larger than the cache
#
# On a CPU, a plain store to a cache line that is not cached first *reads* the line. For an output
# much larger than the last-level cache that doubles the output's memory traffic, and nothing keeps
# the data for a later reader anyway. So when a launch passes an array at least the size of the
# last-level cache, and the kernel only writes it, kdsl's CPU targets (`cpu`, OpenCL CPU devices)
# write it with streaming (non-temporal) stores. The kernel above did not ask for it; Triton's
# `eviction_policy="evict_first"` asks for it at any size, `"evict_last"` keeps plain stores, and the
# launch option `lower.stream_stores=0` turns the automatic choice off. The size is part of the
# specialisation, like divisibility by 16: a large and a small output compile separately. `warmup`
# only compiles, so the large array below is never touched (`KDSL_LARGE_BYTES` sets the threshold).

# %%
from kdsl.runtime import streaming

print(f"arrays of {streaming.LARGE_BYTES / 2**20:.0f} MiB or more count as large here")
for out in (np.empty((4, 1024), np.float32), np.empty((streaming.LARGE_BYTES // 4096, 1024), np.float32)):
    w = softmax_kernel.warmup(out, np.empty_like(out), 1024, 1024, out.shape[0], 1024, BLOCK_SIZE=1024, grid=(1,))
    stores = "streaming" if "nontemporal" in w.asm.get("wi.mlir", "") else "plain"
    print(f"{out.nbytes / 2**20:7.2f} MiB output on {kdsl.current_backend_name()}: {stores} stores")

# %% [markdown]
# ## Online softmax for rows longer than a tile
#
# When a row does not fit, `kdsl.ops.softmax` switches to the *online* algorithm: one sweep over column
# blocks keeps a running max `m` and a running sum `s`; when a block raises the max, the old sum is
# rescaled by `exp(m_old - m_new)`. A second sweep writes `exp(x - m) / s`. The same trick is the heart
# of flash attention (tutorial 06). Here we force it with a small `max_block`:

# %%
long_rows = np.random.default_rng(1).standard_normal((5, pick(300, 10000))).astype(np.float32)
y = ops.softmax(long_rows, max_block=64)
print("online softmax max abs error:", np.abs(y - ops.softmax_ref(long_rows)).max())
assert np.allclose(y, ops.softmax_ref(long_rows), atol=1e-6)

# %% [markdown]
# ## Benchmark
#
# Bytes moved: one read and one write of the matrix (8 bytes per element).

# %%
rows = pick(64, 1024)
sizes = pick([64, 256], [128, 256, 512, 1024, 2048])


def numpy_case(n):
    a = np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32)
    return lambda: softmax_np(a)


def kdsl_case(n):
    a = kdsl.tensor(np.random.default_rng(n).standard_normal((rows, n)).astype(np.float32))
    return lambda: ops.softmax(a)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 8 * rows * n / ms / 1e6,
                       xlabel="columns", ylabel="GB/s", title=f"softmax, {rows} rows")
show_table(sizes, table, "GB/s")
as_image(fig)
