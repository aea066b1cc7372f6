# %% [markdown]
# # 01 — Vector addition
#
# The "hello world" of kdsl, as Triton's first tutorial: a kernel is a Python function decorated with
# `@kdsl.kernel`, written against `kdsl.language` (`kl`, Triton's `tl`). It runs once per **program**;
# a launch `kernel[grid](...)` starts `grid` programs, and each one works on a whole **block** of
# elements at once (`kl.arange` makes a tile of indices, not a loop).

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from tutorial_utils import as_image, benchmark, pick, show_table

print("backends available here:", kdsl.available_backends())

# %% [markdown]
# ## The kernel
#
# Program `pid` handles elements `pid*BLOCK_SIZE ... pid*BLOCK_SIZE + BLOCK_SIZE - 1`. The last block
# may run past the end of the arrays, so loads and stores take a **mask**: lanes where it is false are
# not read or written. `BLOCK_SIZE` is a `kl.constexpr`: a compile-time constant, so each value compiles
# its own specialisation (cached after the first call).

# %%
@kdsl.kernel
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    kl.store(output_ptr + offsets, x + y, mask=mask)


def add(x, y):
    out = np.empty_like(x)
    n = out.size
    grid = lambda meta: (kdsl.cdiv(n, meta["BLOCK_SIZE"]),)  # the grid may depend on the meta-parameters
    add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out

# %% [markdown]
# ## Check against numpy
#
# Addition is exact, so the results must be *identical*, including for a size that is not a multiple of
# the block (the masked tail).

# %%
rng = np.random.default_rng(0)
size = pick(3001, 98432)
x, y = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
out = add(x, y)
assert np.array_equal(out, x + y)
print("max abs difference:", np.abs(out - (x + y)).max())

# %% [markdown]
# The same kernel lives in the library as `kdsl.ops.add`, which also accepts device arrays
# (`kdsl.tensor(x)`): then the data stays on the device between launches.

# %%
from kdsl import ops

dx, dy = kdsl.tensor(x), kdsl.tensor(y)
dout = ops.add(dx, dy)
print(type(dout).__name__, np.array_equal(dout.numpy(), x + y))

# %% [markdown]
# ## Benchmark
#
# Vector addition moves 12 bytes per element and does one flop: it is memory bound, so we report GB/s.
# The interpreter is a numpy reference implementation, not a fast path: expect it below numpy.
# Compiled backends (OpenCL, Vulkan, LLVM CPU), when present, appear as extra lines.

# %%
sizes = pick([2**10, 2**12], [2**12, 2**14, 2**16, 2**18, 2**20])


def inputs(n):
    r = np.random.default_rng(n)
    return r.random(n, dtype=np.float32), r.random(n, dtype=np.float32)


def numpy_case(n):
    a, b = inputs(n)
    return lambda: a + b


def kdsl_case(n):
    a, b = (kdsl.tensor(t) for t in inputs(n))
    return lambda: ops.add(a, b)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: 12 * n / ms / 1e6,
                       xlabel="elements", ylabel="GB/s", title="vector add")
show_table(sizes, table, "GB/s")
as_image(fig)
