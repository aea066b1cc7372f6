# %% [markdown]
# # 07 — Convolution as an implicit GEMM
#
# A 2-D convolution is a matrix product: rows are output pixels (`M = N * OH * OW`), columns are output
# channels (`OC`), and the reduction runs over `K = C * KH * KW`. *im2col* builds that `M x K` matrix
# explicitly (KH*KW times the input size). An **implicit GEMM** keeps the matmul loop of tutorial 03 but
# computes the addresses of each `A` tile on the fly: the `k` indices decode into `(c, kh, kw)`, the `m`
# indices into `(n, oh, ow)`, and `ih = oh*stride - pad + kh*dilation`. Out-of-image lanes are masked —
# the mask *is* the zero padding.

# %%
import numpy as np

import kdsl
from kdsl import ops
from kdsl.ops import conv
from tutorial_utils import as_image, benchmark, pick, show_table

print(conv.__doc__)

# %% [markdown]
# Because the kernel addresses memory only through strides, NCHW and NHWC are the *same* kernel with
# different stride arguments:

# %%
rng = np.random.default_rng(0)
n, c, h, w, oc = pick((2, 3, 11, 13, 5), (8, 16, 32, 32, 32))
x = rng.standard_normal((n, c, h, w), dtype=np.float32)
wt = rng.standard_normal((oc, c, 3, 3), dtype=np.float32)
bias = rng.standard_normal(oc, dtype=np.float32)
for stride, pad, dil in ((1, 1, 1), (2, 1, 1), (1, 2, 2)):
    want = ops.conv2d_ref(x, wt, bias, stride, pad, dil, activation="relu")
    nchw = ops.conv2d(x, wt, bias, stride, pad, dil, activation="relu")
    nhwc = ops.conv2d(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), np.ascontiguousarray(wt.transpose(2, 3, 1, 0)),
                      bias, stride, pad, dil, layout="NHWC", activation="relu").transpose(0, 3, 1, 2)
    print(f"stride {stride} pad {pad} dilation {dil}: NCHW err {np.abs(nchw - want).max():.1e}, "
          f"NHWC err {np.abs(nhwc - want).max():.1e}, output {nchw.shape}")
    assert np.allclose(nchw, want, atol=1e-3) and np.allclose(nhwc, want, atol=1e-3)

# %% [markdown]
# ## Pooling
#
# Max and average pooling loop over the window with `kl.static_range` (the window is a compile-time
# constant, so the loops unroll) for a block of output elements at a time.

# %%
for mode in ("max", "avg"):
    got, want = ops.pool2d(x, 3, 2, 1, mode=mode), ops.pool2d_ref(x, 3, 2, 1, mode=mode)
    print(mode, "pool max abs error:", np.abs(got - want).max())

# %% [markdown]
# ## A small CNN on kdsl kernels
#
# `kdsl.models.CNN`: conv(+bias+ReLU fused) -> max pool -> conv -> avg pool -> linear, five launches.

# %%
from kdsl.models import CNN, CNNConfig

model = CNN(CNNConfig.small() if pick(True, False) else CNNConfig())
images = model.random_images(4)
print("logits max abs error vs numpy:", np.abs(model.forward(images) - model.forward_numpy(images)).max())

# %% [markdown]
# ## Fewer multiplications: Winograd
#
# For 3x3 kernels with stride 1 and 16+ channels, `conv2d` on the `opencl` and `cpu` backends takes
# Winograd's F(4x4, 3x3) instead (`algorithm="auto"`, `kdsl/ops/winograd.py`): a 4x4 output tile comes
# from a 6x6 input tile with 36 products per channel pair instead of 144. Three small kdsl kernels
# transform the filter (`G g G^T`), the input tiles (`B^T d B`) and the results (`A^T M A`); in between,
# 36 matrix products (`ops.matmul` with a batch of 36) do all the multiplications. The transforms add a
# few roundings, nothing more:

# %%
xs = rng.standard_normal((1, 16, 12, 12), dtype=np.float32)
ws = rng.standard_normal((16, 16, 3, 3), dtype=np.float32)
direct = ops.conv2d(xs, ws, padding=1, algorithm="direct")
wino = ops.conv2d(xs, ws, padding=1, algorithm="winograd")
print("max |winograd - direct| / max |direct|:", float(np.abs(wino - direct).max() / np.abs(direct).max()))

# %% [markdown]
# ## Benchmark
#
# 3x3 convolution, padding 1, `2 * M * OC * K` flops (the direct convolution's count, also for
# Winograd, which does 4x fewer multiplications); the numpy baseline is im2col + `tensordot`.

# %%
from kdsl.models.cnn import _conv3x3_np

ch = pick(4, 32)
sizes = pick([8, 16], [16, 32, 64])


def numpy_case(s):
    a = np.random.default_rng(s).standard_normal((2, ch, s, s), dtype=np.float32)
    k_, b_ = np.ones((ch, ch, 3, 3), np.float32), np.zeros(ch, np.float32)
    return lambda: _conv3x3_np(a, k_, b_)


def kdsl_case(s):
    a = kdsl.tensor(np.random.default_rng(s).standard_normal((2, ch, s, s), dtype=np.float32))
    k_ = kdsl.tensor(np.ones((ch, ch, 3, 3), np.float32))
    return lambda: ops.conv2d(a, k_, padding=1)


fig, table = benchmark(sizes, numpy_case, kdsl_case, metric=lambda s, ms: 2 * 2 * s * s * ch * ch * 9 / ms / 1e6,
                       xlabel="image size", ylabel="GFLOP/s", title=f"conv2d 3x3, {ch} -> {ch} channels")
show_table(sizes, table, "GFLOP/s")
as_image(fig)
