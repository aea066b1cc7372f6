# %% [markdown]
# # 03 — Matrix multiplication
#
# Each program computes one `BLOCK_M x BLOCK_N` tile of `C = A @ B`, walking the shared dimension in
# `BLOCK_K` steps: load a tile of `A` and one of `B`, multiply them with `kl.dot`, add into an fp32
# accumulator held in registers. Pointers to a tile are built by broadcasting row and column offsets
# (`offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak`), so any strided layout works.

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl import ops
from tutorial_utils import as_image, benchmark, pick, show_table

# %% [markdown]
# ## Grouped ordering
#
# Programs run roughly in id order. Row-major order (all of row-block 0, then row-block 1, ...) reloads
# every column of `B` for each row-block. Grouping `GROUP_M` row-blocks together and walking down a column
# of them before moving right means consecutive programs share `B` tiles while they are still in cache.
# The mapping from `pid` to `(pid_m, pid_n)`:

# %%
@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr, GROUP_M: kl.constexpr):
    pid = kl.program_id(axis=0)
    num_pid_m = kl.cdiv(M, BLOCK_M)
    num_pid_n = kl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
    offs_k = kl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = kl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = kl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = kl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    kl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a, b, bm=32, bn=32, bk=32, group_m=4):
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), np.float32)
    grid = (kdsl.cdiv(M, bm) * kdsl.cdiv(N, bn),)
    matmul_kernel[grid](a, b, c, M, N, K, *(s // 4 for s in a.strides), *(s // 4 for s in b.strides),
                        *(s // 4 for s in c.strides), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group_m)
    return c


rng = np.random.default_rng(0)
M, N, K = pick((70, 50, 45), (300, 200, 250))  # not multiples of the blocks: the masks matter
a, b = rng.standard_normal((M, K), dtype=np.float32), rng.standard_normal((K, N), dtype=np.float32)
print("max abs error:", np.abs(matmul(a, b) - a @ b).max())
assert np.allclose(matmul(a, b), a @ b, atol=1e-4)

# %% [markdown]
# Which program computes which tile? With 4 x 4 tiles and `GROUP_M = 2`, the first programs cover a
# 2-row band column by column:

# %%
def tile_order(num_m, num_n, group_m):
    order = np.zeros((num_m, num_n), int)
    for pid in range(num_m * num_n):
        in_group = group_m * num_n
        first = (pid // in_group) * group_m
        size = min(num_m - first, group_m)
        order[first + (pid % in_group) % size, (pid % in_group) // size] = pid
    return order


print("row-major (GROUP_M=1):\n", tile_order(4, 4, 1))
print("grouped (GROUP_M=2):\n", tile_order(4, 4, 2))

# %% [markdown]
# ## The library version: dtypes and fused epilogues
#
# `kdsl.ops.matmul` is the same kernel with compile-time switches: fp16 inputs with fp32 accumulation,
# int8 with int32 accumulation, int8 **weight-only** quantisation (per-column scales applied to the
# accumulator), batched operands (grid axis 1), and an epilogue that adds a bias, applies an activation
# and adds a residual before the single store.

# %%
bias = rng.standard_normal(N, dtype=np.float32)
c = ops.matmul(a, b, bias=bias, activation="gelu_tanh")
print("bias+GELU epilogue error:", np.abs(c - ops.matmul_ref(a, b, bias, "gelu_tanh")).max())
c16 = ops.matmul(a.astype(np.float16), b.astype(np.float16))
print("fp16 in, fp32 out:", c16.dtype, np.abs(c16 - ops.matmul_ref(a.astype(np.float16), b.astype(np.float16))).max())
q, scale = ops.quantize_per_channel(b)
cq = ops.matmul(a, q, scale=scale)
print("int8 weight-only: kernel error", np.abs(cq - ops.matmul_ref(a, q, scale=scale)).max(),
      "| quantisation error", np.abs(cq - a @ b).max())
ai = rng.integers(-128, 128, (M, K)).astype(np.int8)
bi = rng.integers(-128, 128, (K, N)).astype(np.int8)
print("int8 x int8 -> int32 exact:", np.array_equal(ops.matmul(ai, bi), ai.astype(np.int64) @ bi.astype(np.int64)))

# %% [markdown]
# ## Autotuning
#
# The best `BLOCK_M/N/K` and `GROUP_M` depend on the backend and the shape. `kdsl.autotune` is
# Triton's `triton.autotune`: give it a list of `kdsl.Config`s and the arguments whose values make up
# the tuning `key`; the first launch for a new key times every config (`kdsl.testing.do_bench`) and
# keeps the fastest. The grid becomes a function of the chosen meta-parameters, and the launch no
# longer passes them. Applied to the kernel above (the usual spelling is a decorator on top of
# `@kdsl.kernel`):

# %%
tuned_matmul = kdsl.autotune(
    configs=[kdsl.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 32, "GROUP_M": 4})
             for bm, bn in pick([(16, 16), (32, 32)], [(32, 32), (64, 64), (32, 128), (128, 64)])],
    key=["M", "N", "K"],
)(matmul_kernel)


def matmul_tuned(a, b):
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), np.float32)
    grid = lambda meta: (kdsl.cdiv(M, meta["BLOCK_M"]) * kdsl.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    tuned_matmul[grid](a, b, c, M, N, K, *(s // 4 for s in a.strides), *(s // 4 for s in b.strides),
                       *(s // 4 for s in c.strides))
    return c


assert np.allclose(matmul_tuned(a, b), a @ b, atol=1e-4)
print(f"timed on {kdsl.current_backend_name()} for (M, N, K) = {(M, N, K)}:")
for config, ms in tuned_matmul.configs_timings.items():
    print(f"  {config}: {ms:.3f} ms" if isinstance(ms, float) else f"  {config}: {ms}")
print("best:", tuned_matmul.best_config)

# %% [markdown]
# The choice is remembered per key in memory, and on disk per kernel source and device
# (`~/.cache/kdsl/autotune`, docs/AUTOTUNE.md): the next process with the same kernel, shape and
# device launches the best config without timing anything. Without `configs`, kdsl sweeps the
# compiler's own knobs for the backend (vector width, register blocking, work-group size;
# `kdsl.autotune.tunable_space(backend)`), and `python -m kdsl tune` runs such sweeps offline.
#
# ## Benchmark
#
# `2 * M * N * K` flops per product; square sizes.

# %%
sizes = pick([32, 64], [64, 128, 256, 512])


def numpy_case(n):
    x, y = (np.random.default_rng(n).standard_normal((n, n), dtype=np.float32) for _ in range(2))
    return lambda: x @ y


def kdsl_case(n):
    x, y = (kdsl.tensor(np.random.default_rng(n).standard_normal((n, n), dtype=np.float32)) for _ in range(2))
    return lambda: ops.matmul(x, y)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 2 * n**3 / ms / 1e6,
                       xlabel="M = N = K", ylabel="GFLOP/s", title="fp32 matmul")
show_table(sizes, table, "GFLOP/s")
as_image(fig)
