# %% [markdown]
# # 09 — Block pointers, descriptors, heuristics, sorting and microscaling
#
# The tutorials so far built every address by hand: `ptr + offs_m[:, None] * stride_m + ...` and a
# mask for the edges. Triton also offers higher-level ways to say the same thing, and kdsl runs them
# with Triton's semantics on every backend:
#
# - **block pointers** (`kl.make_block_ptr`, `kl.advance`) and **tensor descriptors**
#   (`kl.make_tensor_descriptor`, or a host-side `TensorDescriptor` argument): a tile of a 2-D array
#   named by its shape, strides and offsets; bounds checks come from `boundary_check`;
# - **`@kdsl.heuristics`**: meta-parameters computed from the arguments (`EVEN_K` below);
# - **sorting and selection** (`kl.sort`, `kl.topk`, `kl.gather`, `kl.flip`, `kl.histogram`);
# - **`kl.dot_scaled`**: matrix products of microscaled 4-bit and 8-bit operands.
#
# None of these needs new machinery in the compiler: a block-pointer load *is* a masked load of a
# pointer tile, so the optimiser sees exactly what it sees for hand-written addresses.

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ir.printer import print_op
from kdsl.tools.tensor_descriptor import TensorDescriptor
from tutorial_utils import pick

rng = np.random.default_rng(0)

# %% [markdown]
# ## A matmul with block pointers
#
# Each program owns a `BLOCK_M x BLOCK_N` tile of `C`. The block pointers start at the program's rows
# of `A` and columns of `B` and `kl.advance` moves them along K. `boundary_check=(0, 1)` masks both
# dimensions: rows past `M`, columns past `N` and the ragged last K block read as zero. When `K` is a
# multiple of `BLOCK_K` the K dimension needs no check — `@kdsl.heuristics` computes that flag from
# the arguments at every launch, so one source serves both cases.

# %%
@kdsl.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@kdsl.kernel
def block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                     stride_cm, stride_cn, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr,
                     BLOCK_K: kl.constexpr, EVEN_K: kl.constexpr):
    pid_m = kl.program_id(0)
    pid_n = kl.program_id(1)
    a_blk = kl.make_block_ptr(a_ptr, shape=(M, K), strides=(stride_am, stride_ak),
                              offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K), order=(1, 0))
    b_blk = kl.make_block_ptr(b_ptr, shape=(K, N), strides=(stride_bk, stride_bn),
                              offsets=(0, pid_n * BLOCK_N), block_shape=(BLOCK_K, BLOCK_N), order=(1, 0))
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for _ in range(0, kl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = kl.load(a_blk, boundary_check=(0,))
            b = kl.load(b_blk, boundary_check=(1,))
        else:
            a = kl.load(a_blk, boundary_check=(0, 1), padding_option="zero")
            b = kl.load(b_blk, boundary_check=(0, 1), padding_option="zero")
        acc = kl.dot(a, b, acc)
        a_blk = kl.advance(a_blk, (0, BLOCK_K))
        b_blk = kl.advance(b_blk, (BLOCK_K, 0))
    c_blk = kl.make_block_ptr(c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),
                              offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N),
                              order=(1, 0))
    kl.store(c_blk, acc, boundary_check=(0, 1))


def matmul(a, b, blocks=(32, 32, 32)):
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), np.float32)
    bm, bn, bk = blocks
    sa, sb = [s // 4 for s in a.strides], [s // 4 for s in b.strides]  # element strides of any view
    block_ptr_matmul[(kdsl.cdiv(M, bm), kdsl.cdiv(N, bn))](
        a, b, c, M, N, K, *sa, *sb, N, 1, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return c


for (m, n, k) in [(96, 80, 64), (100, 70, 50)]:  # K = 64: EVEN_K; K = 50: a ragged K block
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    err = np.abs(matmul(a, b) - a @ b).max()
    print(f"{m}x{n}x{k}: max error {err:.1e}")
    assert err < 1e-4

# %% [markdown]
# Strides make views free: `b.T` is the same memory read column-first, and the block pointer simply
# gets its strides.

# %%
bt = rng.standard_normal((80, 64), dtype=np.float32).T  # a (64, 80) view with strides (1, 64)
a = rng.standard_normal((96, 64), dtype=np.float32)
print("transposed view:", np.abs(matmul(a, bt) - a @ bt).max())

# %% [markdown]
# What the frontend made of it: the block-pointer loads are ordinary `tile.load`s of a pointer tile
# with a mask, which is why every later pass (mask elimination, vectorisation, the `dot`
# micro-kernel) treats them like hand-written addressing.

# %%
ir = kdsl.compile_to_ir(block_ptr_matmul.fn, "*fp32", "*fp32", "*fp32", 96, 80, 64, 64, 1, 80, 1, 80, 1,
                        BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, EVEN_K=True, optimize=True)
print("\n".join(line.strip()[:160] for line in print_op(ir).splitlines() if "tile.load" in line))

# %% [markdown]
# ## Tensor descriptors
#
# A descriptor names the whole array once — base, shape, strides and the block shape — and each access
# gives only the offsets. Every dimension is bounds-checked: out-of-range elements load as zero and
# are not stored. `TensorDescriptor` builds one on the host and passes it as a single kernel argument
# (kdsl expands it into the pointer, shape and strides, specialising entries equal to 1 like any int).

# %%
@kdsl.kernel
def scale_rows(x_desc, y_desc, scale, BLOCK_R: kl.constexpr, BLOCK_C: kl.constexpr):
    r0 = kl.program_id(0) * BLOCK_R
    c0 = kl.program_id(1) * BLOCK_C
    tile = x_desc.load([r0, c0])
    y_desc.store([r0, c0], tile * scale)


x = rng.standard_normal((70, 45), dtype=np.float32)
y = np.zeros_like(x)
scale_rows[(kdsl.cdiv(70, 16), kdsl.cdiv(45, 32))](
    TensorDescriptor.from_tensor(x, [16, 32]), TensorDescriptor.from_tensor(y, [16, 32]), 3.0,
    BLOCK_R=16, BLOCK_C=32)
print("descriptor copy exact:", np.array_equal(y, 3 * x))
assert np.array_equal(y, 3 * x)

# %% [markdown]
# ## Sorting and selection
#
# `kl.sort`, `kl.topk` and `kl.flip` are bitonic networks built from reshapes and compare-and-swap
# steps, as in Triton's standard library; `kl.gather` reads a tile at data-dependent positions.
# A classic use: the top-k logits of each row (sampling in a language model), with their indices.
# The indices ride along in the low bits of the sort key, so one `topk` finds both.

# %%
@kdsl.kernel
def row_topk(x_ptr, val_ptr, idx_ptr, N: kl.constexpr, K: kl.constexpr):
    row = kl.program_id(0)
    cols = kl.arange(0, N)
    x = kl.load(x_ptr + row * N + cols)
    top = kl.topk(x, K)  # the K largest, largest first
    # the index of each selected value: the position in x where it occurs (values are distinct here)
    hit = x[None, :] == top[:, None]
    idx = kl.max(kl.where(hit, cols[None, :], -1), axis=1)
    kl.store(val_ptr + row * K + kl.arange(0, K), top)
    kl.store(idx_ptr + row * K + kl.arange(0, K), idx)


rows, n, k = pick(4, 64), 128, 8
logits = rng.standard_normal((rows, n), dtype=np.float32)
vals = np.zeros((rows, k), np.float32)
idx = np.zeros((rows, k), np.int32)
row_topk[(rows,)](logits, vals, idx, N=n, K=k)
want = -np.sort(-logits, axis=1)[:, :k]
print("top-k values exact:", np.array_equal(vals, want),
      "| indices point at them:", np.array_equal(np.take_along_axis(logits, idx, 1), vals))
assert np.array_equal(vals, want)

# %% [markdown]
# `kl.sort` orders floats totally (`-0.0` before `+0.0`, NaNs last), so results are reproducible
# bit for bit on every backend:

# %%
@kdsl.kernel
def sort_kernel(x_ptr, y_ptr, N: kl.constexpr, DESC: kl.constexpr):
    offs = kl.arange(0, N)
    kl.store(y_ptr + offs, kl.sort(kl.load(x_ptr + offs), descending=DESC))


x = np.array([3.0, -0.0, np.nan, 0.0, -np.inf, 2.5, 1e-40, -1.0], np.float32)
y = np.zeros_like(x)
sort_kernel[(1,)](x, y, N=8, DESC=False)
print(y)

# %% [markdown]
# ## Microscaled matrix products (`kl.dot_scaled`)
#
# The OCP MX formats store weights in 4 or 8 bits with one shared power-of-two scale (an e8m0 byte)
# per 32 values. `kl.dot_scaled` takes the raw bytes — two fp4 (e2m1) values per byte — and the scale
# bytes, decodes them exactly to f32 and runs the ordinary `kl.dot`. NVIDIA's nvfp4 differs only in
# its scales: one `float8e4nv` value per 16 fp4 values (the scale tile's shape and dtype say which).
# Below, a weight matrix is quantised to mxfp4 in numpy and multiplied in a kernel.

# %%
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)  # the 8 magnitudes of e2m1


def quantize_mxfp4(w):
    """(K, N) float weights -> (K/2, N) packed e2m1 bytes and (N, K/32) e8m0 scales."""
    kk, nn = w.shape
    groups = w.T.reshape(nn, kk // 32, 32)
    exp = np.ceil(np.log2(np.abs(groups).max(axis=2) / 6.0 + 1e-30)).astype(np.int32)  # max -> <= 6
    scaled = groups / np.exp2(exp)[:, :, None]
    code = np.abs(scaled)[..., None] - E2M1  # nearest magnitude
    mag = np.abs(code).argmin(axis=-1)
    nib = (mag | (np.signbit(scaled) << 3)).astype(np.uint8).reshape(nn, kk).T  # (K, N)
    packed = (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)  # element 2i in the low nibble
    dequant = (np.where(nib & 8, -1, 1) * E2M1[nib & 7]).astype(np.float32) * np.repeat(np.exp2(exp).T, 32, 0)
    # C order: a kernel receives the memory, and numpy may hand back transposed layouts here
    return np.ascontiguousarray(packed), np.ascontiguousarray(exp + 127, dtype=np.uint8), dequant


@kdsl.kernel
def mxfp4_matmul(a_ptr, w_ptr, s_ptr, c_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    a = kl.load(a_ptr + kl.arange(0, M)[:, None] * K + kl.arange(0, K)[None, :]).to(kl.bfloat16)
    w = kl.load(w_ptr + kl.arange(0, K // 2)[:, None] * N + kl.arange(0, N)[None, :])
    s = kl.load(s_ptr + kl.arange(0, N)[:, None] * (K // 32) + kl.arange(0, K // 32)[None, :])
    c = kl.dot_scaled(a, None, "bf16", w, s, "e2m1")
    kl.store(c_ptr + kl.arange(0, M)[:, None] * N + kl.arange(0, N)[None, :], c)


M, N, K = 16, 32, 64
act = (rng.integers(-8, 8, (M, K)) / 8).astype(np.float32)  # exactly representable in bf16
w = rng.standard_normal((K, N)).astype(np.float32)
packed, scales, w_hat = quantize_mxfp4(w)
out = np.zeros((M, N), np.float32)
mxfp4_matmul[(1,)](act, packed, scales, out, M=M, N=N, K=K)
print("kernel vs numpy with the dequantised weights:", np.abs(out - act @ w_hat).max())
print("quantisation error vs the fp32 weights:      ", np.abs(out - act @ w).max())
assert np.allclose(out, act @ w_hat, rtol=1e-5, atol=1e-4)

# %% [markdown]
# ## Benchmark: block pointers cost nothing
#
# The block-pointer matmul from the top of this notebook, with the blocks and `dot` register
# blocking `kdsl.ops.matmul` picks for the backend, against numpy (OpenBLAS). Its loads are the same
# masked pointer-tile loads as the hand-addressed kernel's, so it compiles to the same register-blocked
# micro-kernel.

# %%
from kdsl.ops.matmul import default_blocks, default_options  # noqa: E402
from tutorial_utils import as_image, benchmark, show_table  # noqa: E402

sizes = pick([64, 128], [256, 512, 1024])


def numpy_case(n):
    a, b = (np.random.default_rng(n).standard_normal((n, n), dtype=np.float32) for _ in range(2))
    return lambda: a @ b


def kdsl_case(n):
    backend = kdsl.current_backend_name()
    a, b = (kdsl.tensor(np.random.default_rng(n).standard_normal((n, n), dtype=np.float32)) for _ in range(2))
    c = kdsl.empty((n, n), np.float32)
    bm, bn, bk = default_blocks(n, n, n, backend)
    grid = (kdsl.cdiv(n, bm), kdsl.cdiv(n, bn))
    opts = default_options(backend)
    return lambda: block_ptr_matmul[grid](a, b, c, n, n, n, n, 1, n, 1, n, 1, BLOCK_M=bm, BLOCK_N=bn,
                                          BLOCK_K=bk, **opts)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 2 * n**3 / ms / 1e6,
                       xlabel="n (n x n x n)", ylabel="GFLOP/s", title="block-pointer matmul fp32")
show_table(sizes, table, "GFLOP/s")
as_image(fig)
