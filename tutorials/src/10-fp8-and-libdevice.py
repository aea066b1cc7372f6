# %% [markdown]
# # 10 — fp8 tensors, rounding modes and `libdevice`
#
# Triton kernels in the wild store activations and weights in 8-bit floats, pick rounding modes
# when they narrow a value, and call the device math library through
# `triton.language.extra.libdevice`. kdsl runs all of it on every backend:
#
# - **fp8 element types** — `kl.float8e5` (E5M2), `kl.float8e4nv` (E4M3FN), and the
#   `float8e4b15`/`float8e4b8`/`float8e5b16` variants. They load, store, convert and feed `kl.dot`.
#   No CPU or lavapipe instruction computes in fp8, and neither does a GPU's ALU: every operation on
#   an fp8 value decodes it exactly to f32 first and rounds its result back, as Triton specifies.
#   kdsl writes those conversions with integer operations, so every backend gives the same bits.
# - **`fp_downcast_rounding`** — `"rtne"` (default) or `"rtz"` for any float narrowing.
# - **`libdevice`** — `from kdsl.language.extra import libdevice`, as tutorial 07 of Triton writes it.
#
# numpy has no fp8 dtype, so fp8 data lives in `uint8` arrays and reaches a kernel through
# `kdsl.reinterpret(array, kl.float8e4nv)` (Triton's `triton.reinterpret`); torch `float8_*`
# tensors and ml_dtypes arrays are accepted directly.

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.language.extra import libdevice
from tutorial_utils import as_image, benchmark, pick, show_table

rng = np.random.default_rng(0)

# %% [markdown]
# ## Quantising to fp8
#
# One kernel rounds f32 values to an fp8 type and reads them back. The element type of the output
# pointer decides the format: the same source serves E5M2 and E4M3.

# %%
@kdsl.kernel
def quantize(x_ptr, q_ptr, back_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    kl.store(q_ptr + offs, x.to(q_ptr.dtype.element_ty), mask=mask)
    kl.store(back_ptr + offs, kl.load(q_ptr + offs, mask=mask).to(kl.float32), mask=mask)


x = rng.standard_normal(4096).astype(np.float32)
for fmt in (kl.float8e5, kl.float8e4nv):
    q = np.zeros(x.size, np.uint8)
    back = np.zeros_like(x)
    quantize[(kdsl.cdiv(x.size, 1024),)](x, kdsl.reinterpret(q, fmt), back, x.size, BLOCK=1024)
    normal = np.abs(x) >= 2.0**-6  # both formats' normal range (smaller values lose bits, then flush to 0)
    rel = np.abs(back - x)[normal] / np.abs(x)[normal]
    print(f"{fmt}: {len(np.unique(q))} distinct codes, median relative error {np.median(rel):.3%}, "
          f"max {rel.max():.3%}")

# %% [markdown]
# E4M3 keeps one more mantissa bit (relative error up to 1/16) and E5M2 one more exponent bit (range
# to 57344). Values past the largest finite E4M3 (448) saturate — that format has no infinity —
# while E5M2 overflows to infinity, as the hardware conversions Triton emits do.

# %%
edge = np.array([448.0, 460.0, 1e6, -1e6, np.inf, np.nan], np.float32)
for fmt in (kl.float8e4nv, kl.float8e5):
    q = np.zeros(edge.size, np.uint8)
    back = np.zeros_like(edge)
    quantize[(1,)](edge, kdsl.reinterpret(q, fmt), back, edge.size, BLOCK=8)
    print(fmt, back)

# %% [markdown]
# ## An fp8-weight matrix-vector product
#
# Weights quantised once to E4M3 with one f32 scale per output row take a quarter of the memory of
# f32 weights. The kernel loads the bytes as `float8e4nv`, computes in f32 and applies the scale.

# %%
@kdsl.kernel
def fp8_gemv(w_ptr, scale_ptr, x_ptr, y_ptr, N, K, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr):
    rows = kl.program_id(0) * BLOCK_N + kl.arange(0, BLOCK_N)
    acc = kl.zeros((BLOCK_N,), dtype=kl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + kl.arange(0, BLOCK_K)
        w = kl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=(rows[:, None] < N) & (cols[None, :] < K),
                    other=0.0)
        x = kl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += kl.sum(w.to(kl.float32) * x[None, :], axis=1)
    kl.store(y_ptr + rows, acc * kl.load(scale_ptr + rows, mask=rows < N), mask=rows < N)


def quantize_rows(w):
    """Per-row scale so the row's largest |w| maps to 448, then E4M3 bytes (with the kernel above)."""
    scale = np.abs(w).max(axis=1) / 448.0
    q = np.zeros(w.shape, np.uint8)
    scaled = (w / scale[:, None]).astype(np.float32)
    quantize[(kdsl.cdiv(w.size, 1024),)](scaled, kdsl.reinterpret(q, kl.float8e4nv), np.zeros_like(scaled),
                                         w.size, BLOCK=1024)
    return q, scale.astype(np.float32)


n = pick(64, 1024)
w = rng.standard_normal((n, n)).astype(np.float32)
xv = rng.standard_normal(n).astype(np.float32)
wq, ws = quantize_rows(w)
y = np.zeros(n, np.float32)
fp8_gemv[(kdsl.cdiv(n, 32),)](kdsl.reinterpret(wq, kl.float8e4nv), ws, xv, y, n, n, BLOCK_N=32, BLOCK_K=64)
exact = w @ xv
print("relative error of the fp8 GEMV:", np.linalg.norm(y - exact) / np.linalg.norm(exact))

# %% [markdown]
# ## Rounding modes
#
# `x.to(kl.float16, fp_downcast_rounding="rtz")` truncates instead of rounding to nearest: the
# result never grows in magnitude (65520 rounds to infinity but truncates to 65504). Triton offers it
# for every float downcast; here f32 -> f16.

# %%
@kdsl.kernel
def to_half(x_ptr, rn_ptr, rz_ptr, N: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, N))
    kl.store(rn_ptr + kl.arange(0, N), x.to(kl.float16))
    kl.store(rz_ptr + kl.arange(0, N), x.to(kl.float16, fp_downcast_rounding="rtz"))


vals = np.array([1.0 + 2.0**-11, 1.0 + 3 * 2.0**-12, -(1.0 + 3 * 2.0**-12), 65520.0], np.float32)
rn, rz = np.zeros(4, np.float16), np.zeros(4, np.float16)
to_half[(1,)](vals, rn, rz, N=4)
for v, a, b in zip(vals, rn, rz):
    print(f"{float(v)!r}: rtne {float(a)!r}, rtz {float(b)!r}")

# %% [markdown]
# ## `libdevice`
#
# Triton's tutorial 07 computes `asin` through libdevice; the kernel runs unchanged with
# `kdsl.jit` for `triton.jit` and `kl` for `tl`. kdsl writes each libdevice function once on kl
# operations (range reduction, polynomials, exact error terms), so the interpreter, the CPU, PoCL and
# lavapipe all have every libdevice function kdsl provides (the few it lacks are listed in
# `kdsl/language/extra/libdevice.py`).

# %%
@kdsl.jit
def asin_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    x = libdevice.asin(x)
    kl.store(y_ptr + offsets, x, mask=mask)


xs = rng.uniform(-1, 1, 98432).astype(np.float32)
ys = np.empty_like(xs)
asin_kernel[(kdsl.cdiv(xs.size, 1024),)](xs, ys, xs.size, BLOCK_SIZE=1024)
ref = np.arcsin(xs.astype(np.float64))
print("max error:", (np.abs(ys - ref) / np.spacing(np.abs(ref).astype(np.float32))).max(), "ulp")

# %% [markdown]
# ## Benchmark: fp8 weights against f32 numpy
#
# The fp8 GEMV reads a quarter of the bytes of numpy's f32 `W @ x`, but decodes every weight with a
# few integer operations first; which side wins depends on whether the machine is bound by memory or
# by arithmetic at that size.

# %%
sizes = pick([64, 128], [512, 1024, 2048, 4096])


def numpy_case(n):
    wn = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    x = np.ones(n, np.float32)
    return lambda: wn @ x


def kdsl_case(n):
    wn = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    q, s = quantize_rows(wn)
    qa = kdsl.reinterpret(q, kl.float8e4nv)
    x = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    return lambda: fp8_gemv[(kdsl.cdiv(n, 32),)](qa, s, x, out, n, n, BLOCK_N=32, BLOCK_K=64)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda n, ms: n * n / ms / 1e6, xlabel="n (n x n)",
                       ylabel="G weights/s", title="GEMV: fp8 weights (kdsl) vs f32 (numpy)")
show_table(sizes, table, "G weights/s")
as_image(fig)
