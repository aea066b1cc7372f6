"""2-D convolution as an implicit GEMM, and max/avg pooling.

Convolution is a matrix product in disguise: output pixels are the rows
(``M = N*OH*OW``), output channels the columns (``OC``), and the reduction runs
over ``K = C*KH*KW``. The *implicit* GEMM never materialises the ``M x K``
im2col matrix. Weights are (OC, C, KH, KW) for NCHW and (KH, KW, C, OC) for
NHWC; bias and activation are fused into the epilogue.

Without dilation (``conv2d_nhwc_kernel``): x is first copied into a zero-padded
NHWC array (skipped for contiguous NHWC input without padding) and the weight
into a contiguous (KH, KW, C, OC) one. In NHWC one kernel row ``(kw, c)`` of the
input is a single contiguous run of ``KW*C`` floats, so a program -- ``BLOCK_M``
pixels of one output row times ``BLOCK_N`` channels -- reduces over ``KH`` such
runs in ``BLOCK_K`` steps whose A and B tiles are plain 2-D block copies (affine
pointers, no padding masks, no index decoding), feeding the register-blocked
dot. The output is written through strides (NCHW or NHWC).

3x3 kernels with stride 1 and 16+ channels take Winograd's F(4x4, 3x3) instead on the
backends whose dots are register-blocked micro-kernels (:mod:`kdsl.ops.winograd`: 4x fewer
multiplications; ``algorithm=`` chooses explicitly).

With dilation (``conv2d_kernel``): each ``BLOCK_K`` step decodes its ``k``
indices into ``(c, kh, kw)``, computes the input coordinates and gathers the
tile with a mask that doubles as zero padding; any layout, through strides.

Pooling reads each window with ``static_range`` loops (the window size is a
compile-time constant, so the loops unroll) over a block of output elements.
Average pooling divides by the number of in-bounds elements (PyTorch's
``count_include_pad=False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, backend_of, empty, launch, pow2, strides
from kdsl.ops.elementwise import activate, activation_ref
from kdsl.ops.matmul import MMA_BACKENDS
from kdsl.ops.winograd import conv3x3_winograd, winograd_applies


@kdsl.kernel
def conv2d_kernel(  # type: ignore[no-untyped-def]
    X, Wt, Bias, Y,
    N, C, H, W, OC, OH, OW,
    stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
    sxn, sxc, sxh, sxw, swo, swc, swh, sww, syn, syc, syh, syw,
    KH: kl.constexpr, KW: kl.constexpr,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr,
    HAS_BIAS: kl.constexpr, ACTIVATION: kl.constexpr,
):  # fmt: skip
    offs_m = kl.program_id(0) * BLOCK_M + kl.arange(0, BLOCK_M)  # output pixels (n, oh, ow)
    offs_n = kl.program_id(1) * BLOCK_N + kl.arange(0, BLOCK_N)  # output channels
    n = offs_m // (OH * OW)
    oh = (offs_m % (OH * OW)) // OW
    ow = offs_m % OW
    mask_m = offs_m < N * OH * OW
    mask_n = offs_n < OC
    k_total = C * KH * KW
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for k0 in range(0, k_total, BLOCK_K):
        offs_k = k0 + kl.arange(0, BLOCK_K)
        k_ok = offs_k < k_total
        c = offs_k // (KH * KW)
        kh = (offs_k % (KH * KW)) // KW
        kw = offs_k % KW
        ih = oh[:, None] * stride_h - pad_h + kh[None, :] * dil_h
        iw = ow[:, None] * stride_w - pad_w + kw[None, :] * dil_w
        in_bounds = (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)  # outside = zero padding
        a_mask = mask_m[:, None] & k_ok[None, :] & in_bounds
        a_ptrs = X + n[:, None] * sxn + c[None, :] * sxc + ih * sxh + iw * sxw
        a = kl.load(a_ptrs, mask=a_mask, other=0.0)
        b_ptrs = Wt + offs_n[None, :] * swo + c[:, None] * swc + kh[:, None] * swh + kw[:, None] * sww
        b = kl.load(b_ptrs, mask=k_ok[:, None] & mask_n[None, :], other=0.0)
        acc = kl.dot(a, b, acc)
    if HAS_BIAS:
        acc = acc + kl.load(Bias + offs_n, mask=mask_n, other=0.0).to(kl.float32)[None, :]
    acc = activate(acc, ACTIVATION)
    y_ptrs = Y + (n * syn + oh * syh + ow * syw)[:, None] + offs_n[None, :] * syc
    kl.store(y_ptrs, acc.to(Y.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@kdsl.kernel
def pad_nhwc_kernel(  # type: ignore[no-untyped-def]
    X, Xp, C, H, W, HP, WP, pad_h, pad_w, sxn, sxc, sxh, sxw,
    BLOCK_W: kl.constexpr, BLOCK_C: kl.constexpr,
):  # fmt: skip
    # One padded row Xp[n, hp, :, :] (NHWC, zero border) from X in any layout (strides).
    row = kl.program_id(1)  # n * HP + hp
    n = row // HP
    ih = row % HP - pad_h
    offs_w = kl.program_id(0) * BLOCK_W + kl.arange(0, BLOCK_W)
    offs_c = kl.arange(0, BLOCK_C)
    iw = offs_w - pad_w
    for c0 in range(0, C, BLOCK_C):
        cc = c0 + offs_c
        ok = (iw[:, None] >= 0) & (iw[:, None] < W) & (ih >= 0) & (ih < H) & (cc[None, :] < C)
        x = kl.load(X + n * sxn + ih * sxh + iw[:, None] * sxw + cc[None, :] * sxc, mask=ok, other=0.0)
        kl.store(Xp + (row * WP + offs_w[:, None]) * C + cc[None, :], x,
                 mask=(offs_w[:, None] < WP) & (cc[None, :] < C))  # fmt: skip


@kdsl.kernel
def planes_to_nhwc_kernel(  # type: ignore[no-untyped-def]
    X, Xp, C, P, sxn, sxc, BLOCK_P: kl.constexpr, BLOCK_C: kl.constexpr, EVEN: kl.constexpr,
):  # fmt: skip
    # Xp[n, p, c] = X[n, c, p] for images whose planes of P = H * W pixels are contiguous (NCHW):
    # a (channels, pixels) tile read along the planes, transposed in registers, stored along the
    # channels -- whole vectors both ways (EVEN: the blocks divide P and C, no mask splits one).
    n = kl.program_id(1)
    offs_p = kl.program_id(0) * BLOCK_P + kl.arange(0, BLOCK_P)
    offs_c = kl.program_id(2) * BLOCK_C + kl.arange(0, BLOCK_C)
    ok = ((offs_c[:, None] < C) & (offs_p[None, :] < P)) | EVEN
    x = kl.load(X + n * sxn + offs_c[:, None] * sxc + offs_p[None, :], mask=ok)
    kl.store(Xp + (n * P + offs_p[:, None]) * C + offs_c[None, :], kl.trans(x).to(Xp.dtype.element_ty),
             mask=kl.trans(ok))  # fmt: skip


@kdsl.kernel
def conv2d_nhwc_kernel(  # type: ignore[no-untyped-def]
    Xp, Wt, Bias, Y,
    C, HP, WP, OC, OH, OW, stride_h, stride_w,
    syn, syc, syh, syw,
    KH: kl.constexpr, KW: kl.constexpr,
    BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr,
    HAS_BIAS: kl.constexpr, ACTIVATION: kl.constexpr,
):  # fmt: skip
    # Output tile: BLOCK_M pixels of one output row (n, oh) x BLOCK_N output channels.
    row = kl.program_id(1)  # n * OH + oh
    n = row // OH
    oh = row % OH
    ow0 = kl.program_id(0) * BLOCK_M
    offs_m = kl.arange(0, BLOCK_M)
    offs_n = kl.program_id(2) * BLOCK_N + kl.arange(0, BLOCK_N)
    offs_k = kl.arange(0, BLOCK_K)
    m_ok = offs_m < OW - ow0
    n_ok = offs_n < OC
    kwc = KW * C  # one kernel row: (kw, c) is contiguous in the padded NHWC input and in Wt
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for kh in range(0, KH):
        # Input pixel (oh*sh + kh, (ow0 + m)*sw + kw): the row of A is contiguous over (kw, c).
        x_row = Xp + ((n * HP + oh * stride_h + kh) * WP + ow0 * stride_w) * C
        w_row = Wt + kh * kwc * OC
        for j0 in range(0, kwc, BLOCK_K):
            k_ok = offs_k < kwc - j0
            a = kl.load(x_row + offs_m[:, None] * (stride_w * C) + j0 + offs_k[None, :],
                        mask=m_ok[:, None] & k_ok[None, :], other=0.0)  # fmt: skip
            b = kl.load(w_row + (j0 + offs_k[:, None]) * OC + offs_n[None, :], mask=k_ok[:, None] & n_ok[None, :],
                        other=0.0)  # fmt: skip
            acc = kl.dot(a, b, acc)
    if HAS_BIAS:
        acc = acc + kl.load(Bias + offs_n, mask=n_ok, other=0.0).to(kl.float32)[None, :]
    acc = activate(acc, ACTIVATION)
    y_ptrs = Y + n * syn + oh * syh + (ow0 + offs_m[:, None]) * syw + offs_n[None, :] * syc
    kl.store(y_ptrs, acc.to(Y.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@kdsl.kernel
def pool2d_kernel(  # type: ignore[no-untyped-def]
    X, Y, total, C, H, W, OH, OW, stride_h, stride_w, pad_h, pad_w,
    sxn, sxc, sxh, sxw, syn, syc, syh, syw,
    KH: kl.constexpr, KW: kl.constexpr, MODE: kl.constexpr, BLOCK: kl.constexpr,
):  # fmt: skip
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)  # flat (n, c, oh, ow) output index
    mask = offs < total
    ow = offs % OW
    oh = (offs // OW) % OH
    c = (offs // (OW * OH)) % C
    n = offs // (OW * OH * C)
    base = X + n * sxn + c * sxc
    acc = kl.full([BLOCK], -float("inf") if MODE == "max" else 0.0, dtype=kl.float32)
    count = kl.zeros([BLOCK], dtype=kl.float32)
    for kh in kl.static_range(KH):  # type: ignore[attr-defined]
        for kw in kl.static_range(KW):  # type: ignore[attr-defined]
            ih = oh * stride_h - pad_h + kh
            iw = ow * stride_w - pad_w + kw
            ok = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x = kl.load(base + ih * sxh + iw * sxw, mask=ok, other=-float("inf")).to(kl.float32)
            if MODE == "max":
                acc = kl.maximum(acc, x)
            else:
                acc += kl.where(ok, x, 0.0)
                count += ok.to(kl.float32)
    if MODE == "avg":
        acc = acc / kl.maximum(count, 1.0)
    kl.store(Y + n * syn + c * syc + oh * syh + ow * syw, acc.to(Y.dtype.element_ty), mask=mask)


# --- wrappers -----------------------------------------------------------------------


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def _out_size(size: int, k: int, stride: int, pad: int, dil: int = 1) -> int:
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def _nchw(a: Array, layout: str) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """(N, C, H, W) sizes and element strides of a 4-D array in ``layout``."""
    s = strides(a)
    if layout == "NCHW":
        return (a.shape[0], a.shape[1], a.shape[2], a.shape[3]), (s[0], s[1], s[2], s[3])
    if layout == "NHWC":
        return (a.shape[0], a.shape[3], a.shape[1], a.shape[2]), (s[0], s[3], s[1], s[2])
    raise ValueError(f"unknown layout {layout!r} (use 'NCHW' or 'NHWC')")


def conv2d(
    x: Array,
    weight: Array,
    bias: Array | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    layout: str = "NCHW",
    activation: str = "",
    blocks: tuple[int, int, int] | None = None,
    algorithm: str = "auto",
) -> Array:
    """2-D convolution; NCHW: x (N,C,H,W), weight (OC,C,KH,KW); NHWC: x (N,H,W,C), weight (KH,KW,C,OC).

    ``algorithm``: ``"direct"`` (implicit GEMM), ``"winograd"`` (F(4x4, 3x3),
    :mod:`kdsl.ops.winograd`: 3x3 kernels with stride 1 and no dilation only) or
    ``"auto"``: Winograd where it applies on the backends whose dots are register-blocked
    micro-kernels (``opencl``, ``cpu``), direct elsewhere."""
    if algorithm not in ("auto", "direct", "winograd"):
        raise ValueError(f"conv2d algorithm must be 'auto', 'direct' or 'winograd', got {algorithm!r}")
    (nb, c, h, w), sx = _nchw(x, layout)
    sw_ = strides(weight)
    if layout == "NCHW":
        oc, wc, kh, kw = weight.shape
        sw = (sw_[0], sw_[1], sw_[2], sw_[3])
    else:
        kh, kw, wc, oc = weight.shape
        sw = (sw_[3], sw_[2], sw_[0], sw_[1])
    if wc != c:
        raise ValueError(f"conv2d: input has {c} channels, weight expects {wc}")
    (sh, sw_s), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    oh, ow = _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw_s, pw, dw)
    y = empty((nb, oc, oh, ow) if layout == "NCHW" else (nb, oh, ow, oc), x.dtype, x)
    m = nb * oh * ow
    if m <= 0 or oc == 0:
        return y
    _, sy = _nchw(y, layout)
    fits = winograd_applies(kh, kw, (sh, sw_s), (dh, dw), c, oc, (nb, oh, ow))
    if algorithm == "winograd" and not fits:
        raise ValueError("conv2d algorithm 'winograd' needs a 3x3 kernel, stride 1, no dilation, 16+ channels "
                         "and transformed arrays of fewer than 2**31 elements")  # fmt: skip
    if algorithm == "winograd" or (algorithm == "auto" and fits and backend_of(x) in MMA_BACKENDS):
        return conv3x3_winograd(x, sx, (ph, pw), weight, sw, bias, y, (nb, c, oc, oh, ow), sy, activation)
    if (dh, dw) != (1, 1):
        bm, bn, bk = blocks or (pow2(m, lo=16, hi=64), pow2(oc, lo=16, hi=64), pow2(c * kh * kw, lo=16, hi=32))
        grid = (kdsl.cdiv(m, bm), kdsl.cdiv(oc, bn))
        launch(conv2d_kernel, grid, x, weight, bias if bias is not None else y, y,
               nb, c, h, w, oc, oh, ow, sh, sw_s, ph, pw, dh, dw, *sx, *sw, *sy,
               KH=kh, KW=kw, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
               HAS_BIAS=bias is not None, ACTIVATION=activation)  # fmt: skip
        return y
    # Implicit GEMM over a zero-padded NHWC copy of x: a kernel row (kw, c) is then one contiguous
    # run of memory, so every A tile is a plain 2-D block copy (no gathers, no padding masks).
    hp, wp = h + 2 * ph, w + 2 * pw
    nhwc = (h * w * c, w * c, c, 1)
    if layout == "NHWC" and (ph, pw) == (0, 0) and (sx[0], sx[2], sx[3], sx[1]) == nhwc:
        xp = x
    else:
        xp = padded_nhwc(x, sx, (nb, c, h, w), (ph, pw), (hp, wp), x.dtype)
    wt = _weight_khwc(weight, layout, (oc, c, kh, kw), sw)
    bm, bn, bk = blocks or default_blocks(ow, oc, kw * c, x)
    grid3 = (kdsl.cdiv(ow, bm), nb * oh, kdsl.cdiv(oc, bn))
    launch(conv2d_nhwc_kernel, grid3, xp, wt, bias if bias is not None else y, y,
           c, hp, wp, oc, oh, ow, sh, sw_s, *sy,
           KH=kh, KW=kw, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
           HAS_BIAS=bias is not None, ACTIVATION=activation)  # fmt: skip
    return y


def padded_nhwc(
    x: Array, sx: tuple[int, int, int, int], size: tuple[int, int, int, int], pad: tuple[int, int],
    out: tuple[int, int], dtype: Any,
) -> Array:  # fmt: skip
    """A contiguous ``(N, HP, WP, C)`` copy of ``x`` (``size = (N, C, H, W)``, element strides ``sx``
    in that order, any layout) with ``pad`` zero rows/columns before it and zeros up to
    ``out = (HP, WP)`` after it (:func:`pad_nhwc_kernel`; unpadded contiguous planes, NCHW:
    :func:`planes_to_nhwc_kernel`, a transpose moving whole vectors)."""
    nb, c, h, w = size
    hp, wp = out
    xp = empty((nb, hp, wp, c), dtype, x)
    if (hp, wp) == (h, w) and pad == (0, 0) and sx[2:] == (w, 1) and h * w >= 16 and c >= 16:
        transpose_planes(x, xp, nb, c, h * w, sx[:2])
        return xp
    launch(pad_nhwc_kernel, (kdsl.cdiv(wp, 16), nb * hp), x, xp, c, h, w, hp, wp, pad[0], pad[1], *sx,
           BLOCK_W=16, BLOCK_C=pow2(c, lo=16, hi=64))  # fmt: skip
    return xp


def transpose_planes(x: Array, y: Array, nb: int, rows: int, cols: int, sx: tuple[int, int] | None = None) -> None:
    """``y[n, j, i] = x[n, i, j]`` for ``rows x cols`` matrices (``x``'s element strides ``sx`` for
    ``n`` and ``i``, its ``j`` contiguous; ``y`` contiguous): NCHW planes to NHWC pixels, or back
    (:func:`planes_to_nhwc_kernel`, whole vectors both ways)."""
    sn, si = sx or (rows * cols, cols)
    bp, bc = (64 if cols % 64 == 0 else 16), pow2(rows, lo=16, hi=64)
    launch(planes_to_nhwc_kernel, (kdsl.cdiv(cols, bp), nb, kdsl.cdiv(rows, bc)), x, y, rows, cols, sn, si,
           BLOCK_P=bp, BLOCK_C=bc, EVEN=cols % bp == 0 and rows % bc == 0)  # fmt: skip


def _weight_khwc(weight: Array, layout: str, dims: tuple[int, int, int, int], sw: tuple[int, ...]) -> Array:
    """The weight as a contiguous (KH, KW, C, OC) array (NHWC weights usually are already)."""
    oc, c, kh, kw = dims
    if layout == "NHWC" and tuple(strides(weight)) == (kw * c * oc, c * oc, oc, 1):
        return weight
    wt = empty((kh, kw, c, oc), weight.dtype, weight)
    # pad_nhwc_kernel's (n, c, h, w) -> (n, h, w, c) copy, read with (kh, oc, kw, c) as (n, c, h, w).
    launch(pad_nhwc_kernel, (kdsl.cdiv(c, 16), kh * kw), weight, wt, oc, kw, c, kw, c, 0, 0,
           sw[2], sw[0], sw[3], sw[1], BLOCK_W=16, BLOCK_C=pow2(oc, lo=16, hi=64))  # fmt: skip
    return wt


# Largest (BLOCK_M, BLOCK_N, BLOCK_K) per backend. On opencl/cpu the dot is a register-blocked
# micro-kernel: 64 output pixels x 64 channels with K blocks of 64 (one third of a 3x3x64 kernel row).
_MAX_BLOCKS = {"opencl": (64, 64, 64), "cpu": (64, 64, 64)}
_DEFAULT_MAX_BLOCKS = (32, 32, 32)


def default_blocks(ow: int, oc: int, kwc: int, like: Array) -> tuple[int, int, int]:
    """``(BLOCK_M, BLOCK_N, BLOCK_K)`` for output rows of ``ow`` pixels, ``oc`` channels, kernel rows of ``kwc``."""
    hm, hn, hk = _MAX_BLOCKS.get(backend_of(like), _DEFAULT_MAX_BLOCKS)
    return pow2(ow, lo=16, hi=hm), pow2(oc, lo=16, hi=hn), pow2(kwc, lo=16, hi=hk)


def pool2d(
    x: Array,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    mode: str = "max",
    layout: str = "NCHW",
    block: int = 256,
) -> Array:
    """Max or average pooling (``mode``) with PyTorch's output-size rule (floor)."""
    if mode not in ("max", "avg"):
        raise ValueError(f"pool2d mode must be 'max' or 'avg', got {mode!r}")
    (nb, c, h, w), sx = _nchw(x, layout)
    (kh, kw) = _pair(kernel_size)
    (sh, sw), (ph, pw) = _pair(stride if stride is not None else kernel_size), _pair(padding)
    oh, ow = _out_size(h, kh, sh, ph), _out_size(w, kw, sw, pw)
    y = empty((nb, c, oh, ow) if layout == "NCHW" else (nb, oh, ow, c), x.dtype, x)
    total = nb * c * oh * ow
    if total <= 0:
        return y
    _, sy = _nchw(y, layout)
    launch(pool2d_kernel, (kdsl.cdiv(total, block),), x, y, total, c, h, w, oh, ow, sh, sw, ph, pw, *sx, *sy,
           KH=kh, KW=kw, MODE=mode, BLOCK=block)  # fmt: skip
    return y


# --- numpy references (NCHW, float64) ----------------------------------------------


def conv2d_ref(
    x: np.ndarray[Any, Any],
    weight: np.ndarray[Any, Any],
    bias: np.ndarray[Any, Any] | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    activation: str = "",
) -> np.ndarray[Any, Any]:
    """Direct convolution, NCHW input, (OC, C, KH, KW) weight."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    nb, _, h, w = x.shape
    oc, _, kh, kw = weight.shape
    oh, ow = _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw, pw, dw)
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out = np.zeros((nb, oc, max(oh, 0), max(ow, 0)))
    w64 = np.asarray(weight, np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
            out += np.einsum("nchw,oc->nohw", patch, w64[:, :, i, j])
    if bias is not None:
        out += np.asarray(bias, np.float64)[None, :, None, None]
    return activation_ref(out, activation)


def pool2d_ref(
    x: np.ndarray[Any, Any],
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    mode: str = "max",
) -> np.ndarray[Any, Any]:
    (kh, kw), (ph, pw) = _pair(kernel_size), _pair(padding)
    (sh, sw) = _pair(stride if stride is not None else kernel_size)
    h, w = x.shape[2:]
    oh, ow = _out_size(h, kh, sh, ph), _out_size(w, kw, sw, pw)
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=fill)
    ones = np.pad(np.ones((h, w)), ((ph, ph), (pw, pw)))
    windows = [(xp[:, :, i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw],
                ones[i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw])
               for i in range(kh) for j in range(kw)]  # fmt: skip
    if mode == "max":
        return np.max([p for p, _ in windows], axis=0)  # type: ignore[no-any-return]
    total = np.sum([p for p, _ in windows], axis=0)
    count = np.sum([o for _, o in windows], axis=0)
    return total / np.maximum(count, 1.0)  # type: ignore[no-any-return]
