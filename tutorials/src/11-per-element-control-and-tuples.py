# %% [markdown]
# # 11 — Per-element control flow, tuple arguments and `warmup`
#
# Three pieces of newer Triton (3.2–3.5) that kdsl runs on every backend:
#
# - **`kl.map_elementwise(fn, *args)`** runs a scalar function on every element, with real
#   per-element `if`/`while`/`return`. `kl.where` would compute both sides for every element.
# - **Tuple and `NamedTuple` arguments** let one kernel take a variable number of arrays, or a
#   small "tensor view" record (pointer, shape, strides), as one argument.
# - **`kernel.warmup(...)`** compiles without running. It reports what the compiler produced
#   and lets you read the generated code.

# %%
from typing import Any, NamedTuple

import numpy as np

import kdsl
import kdsl.language as kl
from tutorial_utils import as_image, benchmark, pick, show_table

rng = np.random.default_rng(0)

# %% [markdown]
# ## Per-element control flow
#
# The scalar function below counts the Collatz steps of its argument: a `while` loop whose trip
# count differs from element to element, with an `if` inside. `kl.map_elementwise` applies it to
# a whole tile.
#
# kdsl compiles the function once over the whole tile, treating each element as a *lane*:
# - a per-element `if` runs both branches, each masked to the lanes that take it;
# - a per-element loop runs while any lane is still looping, and lanes that are done keep their
#   values;
# - loads and stores inside only happen for the lanes that reach them.
#
# This is what a GPU does with a warp, and it needs nothing new below the frontend.

# %%
@kdsl.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@kdsl.kernel
def collatz_kernel(x_ptr, out_ptr, size, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < size
    x = kl.load(x_ptr + offs, mask=mask, other=1)
    kl.store(out_ptr + offs, kl.map_elementwise(collatz_steps, x), mask=mask)


def collatz_ref(v: int) -> int:
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


x = np.arange(1, pick(257, 4097), dtype=np.int64)
out = np.zeros_like(x)
collatz_kernel[(kdsl.cdiv(x.size, 256),)](x, out, x.size, BLOCK=256)
assert list(out) == [collatz_ref(int(v)) for v in x]
print("longest chain below", x.size + 1, "starts at", int(x[out.argmax()]), "with", int(out.max()), "steps")

# %% [markdown]
# ## Tuples of arrays
#
# A tuple argument may hold arrays. Each element is specialised like a separate argument: an
# array becomes a pointer, an int a runtime scalar (1 is compile-time, as usual), and `None` or a
# `kl.constexpr` stays compile-time. The kernel indexes the tuple with compile-time indices, so
# one source serves any number of inputs.

# %%
@kdsl.kernel
def weighted_sum(inputs, weights, out_ptr, size, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < size
    acc = kl.zeros((BLOCK,), dtype=kl.float32)
    for i in kl.static_range(len(inputs)):
        acc += kl.load(inputs[i] + offs, mask=mask) * weights[i]
    kl.store(out_ptr + offs, acc, mask=mask)


arrays = tuple(rng.standard_normal(1000).astype(np.float32) for _ in range(3))
weights = (0.5, 2.0, -1.0)
out = np.zeros(1000, np.float32)
weighted_sum[(kdsl.cdiv(1000, 256),)](arrays, weights, out, 1000, BLOCK=256)
np.testing.assert_allclose(out, sum(w * a for w, a in zip(weights, arrays)), rtol=1e-6)

# %% [markdown]
# A `typing.NamedTuple` keeps its field names inside the kernel, through calls, returns and
# loops. A small view record is enough to write a strided 2-D copy once for any layout.

# %%
class View(NamedTuple):
    ptr: Any
    rows: int
    cols: int
    row_stride: int
    col_stride: int


@kdsl.jit
def tile_of(v, BM: kl.constexpr, BN: kl.constexpr):
    r = kl.program_id(0) * BM + kl.arange(0, BM)[:, None]
    c = kl.program_id(1) * BN + kl.arange(0, BN)[None, :]
    return v.ptr + r * v.row_stride + c * v.col_stride, (r < v.rows) & (c < v.cols)


@kdsl.kernel
def copy_2d(src, dst, BM: kl.constexpr, BN: kl.constexpr):
    sp, sm = tile_of(src, BM, BN)
    dp, dm = tile_of(dst, BM, BN)
    kl.store(dp, kl.load(sp, mask=sm), mask=dm)


def view(a: np.ndarray) -> View:
    return View(a, a.shape[0], a.shape[1], a.strides[0] // a.itemsize, a.strides[1] // a.itemsize)


a = rng.standard_normal((70, 50)).astype(np.float32)
b = np.zeros((50, 70), np.float32).T  # a transposed (column-major) destination
copy_2d[(kdsl.cdiv(70, 32), kdsl.cdiv(50, 32))](view(a), view(b), BM=32, BN=32)
np.testing.assert_array_equal(b, a)

# %% [markdown]
# ## `warmup`: compile now, look at the result
#
# `kernel.warmup(*args, grid=..., **meta)` compiles the specialisation these arguments select and
# returns it without running anything. It gives Triton's compiled-kernel view:
# - `asm["ttir"]` and `asm["ttgir"]`: the tile IR before and after the optimiser;
# - `asm["wi.mlir"]`: the work-item IR;
# - the backend's own code: OpenCL C, LLVM IR or SPIR-V;
# - `metadata.shared`: the `__local` bytes.
#
# The result launches like the kernel.

# %%
warmed = weighted_sum.warmup(arrays, weights, out, 1000, BLOCK=256, grid=(1,))
print(sorted(warmed.asm))
print("\n".join(warmed.asm["ttgir"].splitlines()[:12]))
warmed[(kdsl.cdiv(1000, 256),)](arrays, weights, out, 1000, BLOCK=256)

# %% [markdown]
# ## Benchmark: SELU through `map_elementwise` against numpy
#
# SELU's scalar form branches per element (`x` when positive, `alpha * (exp(x) - 1)` otherwise).
# Through `map_elementwise` the branch becomes a masked select inside one fused loop, so the kernel
# reads and writes each element once; numpy needs a temporary per operation.

# %%
ALPHA_F, SCALE_F = 1.6732632423543772, 1.0507009873554805
ALPHA, SCALE = kl.constexpr(ALPHA_F), kl.constexpr(SCALE_F)  # globals a kernel reads are constexprs (as in Triton)


@kdsl.jit
def selu_scalar(x):
    if x > 0:
        return SCALE * x
    return SCALE * ALPHA * (kl.exp(x) - 1.0)


@kdsl.kernel
def selu_kernel(x_ptr, out_ptr, size, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < size
    kl.store(out_ptr + offs, kl.map_elementwise(selu_scalar, kl.load(x_ptr + offs, mask=mask)), mask=mask)


sizes = pick([1 << 12, 1 << 14], [1 << 16, 1 << 18, 1 << 20, 1 << 22])


def numpy_case(n):
    xs = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    return lambda: SCALE_F * np.where(xs > 0, xs, ALPHA_F * np.expm1(xs))


def kdsl_case(n):
    xs = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    ys = np.empty_like(xs)
    selu_kernel[(kdsl.cdiv(n, 1024),)](xs, ys, n, BLOCK=1024)
    np.testing.assert_allclose(ys, SCALE_F * np.where(xs > 0, xs, ALPHA_F * np.expm1(xs)), rtol=2e-5, atol=1e-6)
    return lambda: selu_kernel[(kdsl.cdiv(n, 1024),)](xs, ys, n, BLOCK=1024)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 8 * n / ms / 1e6, xlabel="elements",
                       ylabel="GB/s", title="SELU: map_elementwise (kdsl) vs numpy")
show_table(sizes, table, "GB/s")
as_image(fig)
