"""3x3 stride-1 convolution by Winograd's minimal filtering, F(4x4, 3x3) (Lavin & Gray, 2015).

Why: a direct convolution spends 9 multiply-adds per output, input channel and output
channel, so it cannot beat the FMA peak; F(4x4, 3x3) computes a 4x4 output tile from a 6x6
input tile with 36 products per channel pair instead of 144 (4x fewer), the rest being
additions in small transforms. It is how oneDNN (behind torch's CPU ``conv2d``) reaches
more "GFLOP/s" than the machine's FMA peak on ResNet's 3x3 layers.

Three steps, each a kdsl kernel, plus one batched matmul:

1. filter transform ``U[xi, nu] = (G g G^T)[xi, nu]`` for every (input, output) channel pair,
   stored as 36 ``C x OC`` matrices;
2. input transform ``V[xi, nu] = (B^T d B)[xi, nu]`` of every 6x6 input tile ``d`` (tiles 4
   apart), stored as 36 ``T x C`` matrices (``T`` = tiles over the batch). It reads x in place
   when its channels are contiguous (NHWC), else an NHWC copy; the padding is masked loads,
   one mask per pixel for a whole vector of channels (the vectoriser's *guards*);
3. ``M[xi, nu] = V[xi, nu] @ U[xi, nu]``: :func:`kdsl.ops.matmul` with a batch of 36, the
   register-blocked micro-kernel doing all the multiplications;
4. output transform ``Y = A^T M A`` per tile, then bias and activation, stored through the
   output's strides (NCHW or NHWC); the ragged edge tiles are masked.

Accuracy: the transforms use the points 0, +-1, +-2 (the largest factors are 8 in ``A^T``
and 5 in ``B^T``), so results carry a few more rounding errors than the direct sum: about
1e-6 relative to the largest output for unit-scale data in fp32 (measured in
``tests/ops/test_winograd.py``), well inside the usual fp32 conv tolerance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, backend_of, empty, launch, pow2
from kdsl.ops.elementwise import activate
from kdsl.ops.matmul import MMA_BACKENDS, default_blocks, matmul

TILE = 4  # output tile edge (F(4x4, 3x3)): input tiles are TILE + 2 = 6 wide


@kdsl.kernel
def _bt6(d0, d1, d2, d3, d4, d5):  # type: ignore[no-untyped-def]
    """``B^T d`` for one 6-vector (interpolation points 0, 1, -1, 2, -2, infinity)."""
    return (
        4.0 * d0 - 5.0 * d2 + d4,
        d3 + d4 - 4.0 * (d1 + d2),
        d4 - d3 + 4.0 * (d1 - d2),
        d4 - d2 + 2.0 * (d3 - d1),
        d4 - d2 + 2.0 * (d1 - d3),
        4.0 * d1 - 5.0 * d3 + d5,
    )


@kdsl.kernel
def _g3(g0, g1, g2):  # type: ignore[no-untyped-def]
    """``G g`` for one 3-vector of filter taps."""
    return (
        0.25 * g0,
        (g0 + g1 + g2) * (-1.0 / 6.0),
        (g0 - g1 + g2) * (-1.0 / 6.0),
        g0 * (1.0 / 24.0) + g1 * (1.0 / 12.0) + g2 * (1.0 / 6.0),
        g0 * (1.0 / 24.0) - g1 * (1.0 / 12.0) + g2 * (1.0 / 6.0),
        g2,
    )


@kdsl.kernel
def _at6(m0, m1, m2, m3, m4, m5):  # type: ignore[no-untyped-def]
    """``A^T m`` for one 6-vector: the 4 outputs."""
    return (
        m0 + m1 + m2 + m3 + m4,
        m1 - m2 + 2.0 * (m3 - m4),
        m1 + m2 + 4.0 * (m3 + m4),
        m1 - m2 + 8.0 * (m3 - m4) + m5,
    )


@kdsl.kernel
def winograd_filter_kernel(  # type: ignore[no-untyped-def]
    Wt, U, C, OC, s_oc, s_c, s_kh, s_kw, BLOCK_C: kl.constexpr, BLOCK_N: kl.constexpr,
):  # fmt: skip
    # U[(xi * 6 + nu), c, oc] = (G g G^T)[xi, nu] for the 3x3 filter g of (oc, c); any layout.
    offs_c = kl.program_id(0) * BLOCK_C + kl.arange(0, BLOCK_C)
    offs_n = kl.program_id(1) * BLOCK_N + kl.arange(0, BLOCK_N)
    ok = (offs_c[:, None] < C) & (offs_n[None, :] < OC)
    base = Wt + offs_c[:, None] * s_c + offs_n[None, :] * s_oc
    rows = (
        _g3(kl.load(base, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + s_kw, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + 2 * s_kw, mask=ok, other=0.0).to(kl.float32)),
        _g3(kl.load(base + s_kh, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + s_kh + s_kw, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + s_kh + 2 * s_kw, mask=ok, other=0.0).to(kl.float32)),
        _g3(kl.load(base + 2 * s_kh, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + 2 * s_kh + s_kw, mask=ok, other=0.0).to(kl.float32),
            kl.load(base + 2 * s_kh + 2 * s_kw, mask=ok, other=0.0).to(kl.float32)),
    )  # fmt: skip  -- rows[kh][nu] = (g G^T)[kh, nu]
    out = U + offs_c[:, None] * OC + offs_n[None, :]
    for nu in kl.static_range(6):  # type: ignore[attr-defined]
        col = _g3(rows[0][nu], rows[1][nu], rows[2][nu])
        for xi in kl.static_range(6):  # type: ignore[attr-defined]
            kl.store(out + (xi * 6 + nu) * (C * OC), col[xi], mask=ok)


@kdsl.kernel
def _load6(p, step, ok):  # type: ignore[no-untyped-def]
    """``p[0], p[step], ..., p[5 * step]`` as f32 (6 pixels of an input row, a row of M)."""
    return (
        kl.load(p, mask=ok, other=0.0).to(kl.float32),
        kl.load(p + step, mask=ok, other=0.0).to(kl.float32),
        kl.load(p + 2 * step, mask=ok, other=0.0).to(kl.float32),
        kl.load(p + 3 * step, mask=ok, other=0.0).to(kl.float32),
        kl.load(p + 4 * step, mask=ok, other=0.0).to(kl.float32),
        kl.load(p + 5 * step, mask=ok, other=0.0).to(kl.float32),
    )


@kdsl.kernel
def _tile_block(  # type: ignore[no-untyped-def]
    TH, TW, CH, BLOCK_T: kl.constexpr, BLOCK_C: kl.constexpr, EVEN_T: kl.constexpr, EVEN_C: kl.constexpr,
):  # fmt: skip
    """A program's share of the transforms: ``BLOCK_T`` tiles of one tile row ``row = n * TH + th``
    times ``BLOCK_C`` of ``CH`` channels, so every address is affine in (tile, channel); ``EVEN_*``:
    the blocks divide ``TW`` / ``CH``, so there is no mask and the accesses are vectors along the
    channels. Returns ``(row, n, 4 * th, tiles, channels, mask)``."""
    row = kl.program_id(1)
    offs_t = kl.program_id(0) * BLOCK_T + kl.arange(0, BLOCK_T)
    offs_c = kl.program_id(2) * BLOCK_C + kl.arange(0, BLOCK_C)
    ok = ((offs_t[:, None] < TW) | EVEN_T) & ((offs_c[None, :] < CH) | EVEN_C)
    return row, row // TH, (row % TH) * 4, offs_t, offs_c, ok


@kdsl.kernel
def _image_row6(p, iw0, W, sxw, ok):  # type: ignore[no-untyped-def]
    """The 6 pixels ``iw0 + 0..5`` of an input row (``p`` at pixel ``iw0``, channels along the last
    axis) as f32, zero outside ``[0, W)``: the padding, read in place instead of from a padded copy.
    Each mask is the same on every channel of a tile, so the loads stay whole channel vectors."""
    return (
        kl.load(p, mask=ok & (iw0 >= 0)[:, None] & (iw0 < W)[:, None], other=0.0).to(kl.float32),
        kl.load(p + sxw, mask=ok & (iw0 >= -1)[:, None] & (iw0 < W - 1)[:, None], other=0.0).to(kl.float32),
        kl.load(p + 2 * sxw, mask=ok & (iw0 >= -2)[:, None] & (iw0 < W - 2)[:, None], other=0.0).to(kl.float32),
        kl.load(p + 3 * sxw, mask=ok & (iw0 >= -3)[:, None] & (iw0 < W - 3)[:, None], other=0.0).to(kl.float32),
        kl.load(p + 4 * sxw, mask=ok & (iw0 >= -4)[:, None] & (iw0 < W - 4)[:, None], other=0.0).to(kl.float32),
        kl.load(p + 5 * sxw, mask=ok & (iw0 >= -5)[:, None] & (iw0 < W - 5)[:, None], other=0.0).to(kl.float32),
    )


@kdsl.kernel
def winograd_input_kernel(  # type: ignore[no-untyped-def]
    X, V, C, H, W, sxn, sxh, sxw, pad_h, pad_w, TH, TW, T,
    BLOCK_T: kl.constexpr, BLOCK_C: kl.constexpr, EVEN_T: kl.constexpr, EVEN_C: kl.constexpr,
):  # fmt: skip
    # V[(xi * 6 + nu), t, c] = (B^T d B)[xi, nu], d the 6x6 tile t = (n, th, tw) of the input
    # padded by (pad_h, pad_w): rows 4 th - pad_h + 0..5, columns 4 tw - pad_w + 0..5 of X (element
    # strides sxn, sxh, sxw; channels contiguous), zero outside the image.
    row, n, h0, offs_t, offs_c, ok = _tile_block(TH, TW, C, BLOCK_T, BLOCK_C, EVEN_T, EVEN_C)
    ih0 = h0 - pad_h
    iw0 = offs_t * 4 - pad_w
    p = X + n * sxn + ih0 * sxh + iw0[:, None] * sxw + offs_c[None, :]
    d = (
        _image_row6(p, iw0, W, sxw, ok & (ih0 >= 0) & (ih0 < H)),
        _image_row6(p + sxh, iw0, W, sxw, ok & (ih0 >= -1) & (ih0 < H - 1)),
        _image_row6(p + 2 * sxh, iw0, W, sxw, ok & (ih0 >= -2) & (ih0 < H - 2)),
        _image_row6(p + 3 * sxh, iw0, W, sxw, ok & (ih0 >= -3) & (ih0 < H - 3)),
        _image_row6(p + 4 * sxh, iw0, W, sxw, ok & (ih0 >= -4) & (ih0 < H - 4)),
        _image_row6(p + 5 * sxh, iw0, W, sxw, ok & (ih0 >= -5) & (ih0 < H - 5)),
    )
    cols = (
        _bt6(d[0][0], d[1][0], d[2][0], d[3][0], d[4][0], d[5][0]),
        _bt6(d[0][1], d[1][1], d[2][1], d[3][1], d[4][1], d[5][1]),
        _bt6(d[0][2], d[1][2], d[2][2], d[3][2], d[4][2], d[5][2]),
        _bt6(d[0][3], d[1][3], d[2][3], d[3][3], d[4][3], d[5][3]),
        _bt6(d[0][4], d[1][4], d[2][4], d[3][4], d[4][4], d[5][4]),
        _bt6(d[0][5], d[1][5], d[2][5], d[3][5], d[4][5], d[5][5]),
    )  # cols[nu][xi] = (B^T d)[xi, nu]
    out = V + (row * TW + offs_t[:, None]) * C + offs_c[None, :]
    for xi in kl.static_range(6):  # type: ignore[attr-defined]
        e = _bt6(cols[0][xi], cols[1][xi], cols[2][xi], cols[3][xi], cols[4][xi], cols[5][xi])
        for nu in kl.static_range(6):  # type: ignore[attr-defined]
            kl.store(out + (xi * 6 + nu) * (T * C), e[nu], mask=ok)


@kdsl.kernel
def winograd_output_kernel(  # type: ignore[no-untyped-def]
    M, Bias, Y, OC, OH, OW, TH, TW, T, syn, syc, syh, syw,
    BLOCK_T: kl.constexpr, BLOCK_N: kl.constexpr, EVEN_T: kl.constexpr, EVEN_N: kl.constexpr,
    EVEN_HW: kl.constexpr, HAS_BIAS: kl.constexpr, ACTIVATION: kl.constexpr,
):  # fmt: skip
    # Y[n, oc, 4 th + i, 4 tw + j] = (A^T M A)[i, j] (+ bias, activation) for tile t = (n, th, tw)
    # (EVEN_HW: 4 divides OH and OW, so no tile is ragged and the stores need no mask).
    row, n, oh0, offs_t, offs_n, ok = _tile_block(TH, TW, OC, BLOCK_T, BLOCK_N, EVEN_T, EVEN_N)
    p = M + (row * TW + offs_t[:, None]) * OC + offs_n[None, :]
    stride = T * OC
    m0 = _load6(p, stride, ok)  # M[0, 0..5]
    m1 = _load6(p + 6 * stride, stride, ok)  # M[1, 0..5]
    m2 = _load6(p + 12 * stride, stride, ok)  # M[2, 0..5]
    m3 = _load6(p + 18 * stride, stride, ok)  # M[3, 0..5]
    m4 = _load6(p + 24 * stride, stride, ok)  # M[4, 0..5]
    m5 = _load6(p + 30 * stride, stride, ok)  # M[5, 0..5]
    rows = (
        _at6(m0[0], m0[1], m0[2], m0[3], m0[4], m0[5]),
        _at6(m1[0], m1[1], m1[2], m1[3], m1[4], m1[5]),
        _at6(m2[0], m2[1], m2[2], m2[3], m2[4], m2[5]),
        _at6(m3[0], m3[1], m3[2], m3[3], m3[4], m3[5]),
        _at6(m4[0], m4[1], m4[2], m4[3], m4[4], m4[5]),
        _at6(m5[0], m5[1], m5[2], m5[3], m5[4], m5[5]),
    )  # rows[xi][j] = (M A)[xi, j]
    if HAS_BIAS:
        bias = kl.load(Bias + offs_n, mask=offs_n < OC, other=0.0).to(kl.float32)
    ow0 = offs_t * 4
    base = Y + n * syn + oh0 * syh + ow0[:, None] * syw + offs_n[None, :] * syc
    for j in kl.static_range(4):  # type: ignore[attr-defined]
        col = _at6(rows[0][j], rows[1][j], rows[2][j], rows[3][j], rows[4][j], rows[5][j])
        for i in kl.static_range(4):  # type: ignore[attr-defined]
            y = col[i]
            if HAS_BIAS:
                y = y + bias[None, :]
            y = activate(y, ACTIVATION)
            inside = ok & (((ow0 + j < OW)[:, None] & (oh0 + i < OH)) | EVEN_HW)
            kl.store(base + i * syh + j * syw, y.to(Y.dtype.element_ty), mask=inside)


def conv3x3_winograd(
    x: Array, sx: tuple[int, int, int, int], pad: tuple[int, int], weight: Array,
    weight_strides: tuple[int, int, int, int], bias: Array | None, y: Array,
    shape: tuple[int, int, int, int, int], sy: tuple[int, int, int, int], activation: str,
) -> Array:  # fmt: skip
    """``y = act(conv3x3(x) + bias)`` with stride 1. ``x`` has element strides ``sx`` in
    ``(n, c, h, w)`` order and is padded by ``pad``; ``weight`` is 3x3 with element strides
    ``(oc, c, kh, kw)``; ``shape = (N, C, OC, OH, OW)``; ``sy`` the output's ``(n, c, h, w)``
    element strides."""
    from kdsl.ops.conv import padded_nhwc, transpose_planes  # conv.py imports this module

    nb, c, oc, oh, ow = shape
    th, tw = kdsl.cdiv(oh, TILE), kdsl.cdiv(ow, TILE)
    t = nb * th * tw
    h, w = oh + 2 - 2 * pad[0], ow + 2 - 2 * pad[1]
    if sx[1] != 1:  # channels not contiguous (NCHW): an NHWC copy, so channel vectors are whole
        x = padded_nhwc(x, sx, (nb, c, h, w), (0, 0), (h, w), np.float32)
        sx = (h * w * c, 1, w * c, c)
    bc, bn = _divisor_block(c), _divisor_block(oc)
    bt = tw & -tw if tw & -tw <= 16 else 16  # the largest power of two <= 16 dividing tw: no tile mask
    u = empty((36, c, oc), np.float32, x)
    launch(winograd_filter_kernel, (kdsl.cdiv(c, bc), kdsl.cdiv(oc, bn)), weight, u, c, oc, *weight_strides,
           BLOCK_C=bc, BLOCK_N=bn)  # fmt: skip
    v = empty((36, t, c), np.float32, x)
    launch(winograd_input_kernel, (kdsl.cdiv(tw, bt), nb * th, kdsl.cdiv(c, bc)), x, v, c, h, w, sx[0], sx[2], sx[3],
           pad[0], pad[1], th, tw, t, BLOCK_T=bt, BLOCK_C=bc, EVEN_T=tw % bt == 0, EVEN_C=c % bc == 0)  # fmt: skip
    m = matmul(v, u, blocks=_gemm_blocks(t, c, oc, x))
    # A contiguous NCHW output is written NHWC first and transposed: the transform's own stores
    # into NCHW are single floats (4 pixels apart, channel planes apart), the transpose moves
    # whole vectors both ways.
    planes = sy == (oc * oh * ow, oh * ow, ow, 1) and oc >= 16 and oh * ow >= 16
    out, so = (empty((nb, oh, ow, oc), np.float32, x), (oh * ow * oc, 1, ow * oc, oc)) if planes else (y, sy)
    launch(winograd_output_kernel, (kdsl.cdiv(tw, bt), nb * th, kdsl.cdiv(oc, bn)), m,
           bias if bias is not None else y, out, oc, oh, ow, th, tw, t, *so, BLOCK_T=bt, BLOCK_N=bn,
           EVEN_T=tw % bt == 0, EVEN_N=oc % bn == 0, EVEN_HW=oh % TILE == 0 and ow % TILE == 0,
           HAS_BIAS=bias is not None, ACTIVATION=activation)  # fmt: skip
    if planes:  # y[n, c, p] = out[n, p, c]: the planes copy with the roles of pixels and channels swapped
        transpose_planes(out, y, nb, oh * ow, oc)
    return y


def _gemm_blocks(t: int, c: int, oc: int, like: Array) -> tuple[int, int, int] | None:
    """Blocks of the 36 ``t x c @ c x oc`` products on the micro-kernel backends: the matmul's
    defaults but ``BLOCK_M``, the largest power of two (32-256) padding ``t`` by at most 3 % --
    the default 256 computes 12.5 % padding rows at ``t`` = 1568 (batch 8 of 56 x 56)."""
    backend = backend_of(like)
    if backend not in MMA_BACKENDS:
        return None
    _, bn, bk = default_blocks(t, oc, c, backend)
    bm = next(b for b in (256, 128, 64, 32) if kdsl.cdiv(t, b) * b <= t * 1.03 or b == 32)
    return bm, bn, bk


def _divisor_block(n: int, hi: int = 64) -> int:
    """The largest power of two <= ``hi`` dividing ``n`` when that is 16 or more (blocks that tile
    ``n`` exactly need no masks, so they vectorise), else ``n`` rounded up to a power of two
    (capped at ``hi``; masked)."""
    b = hi
    while b >= 16:
        if n % b == 0:
            return b
        b //= 2
    return pow2(n, lo=1, hi=hi)


def winograd_applies(
    kh: int, kw: int, stride: tuple[int, int], dilation: tuple[int, int], c: int, oc: int, out: tuple[int, int, int],
) -> bool:  # fmt: skip
    """Whether :func:`kdsl.ops.conv2d` may take the Winograd path: 3x3, stride 1, no dilation,
    channels enough for the 36 matmuls to be worth their transforms (16+), and transformed arrays
    (36 x tiles x channels, ``out = (N, OH, OW)``) whose element offsets fit the kernels' int32
    index arithmetic."""
    nb, oh, ow = out
    tiles = nb * -(-oh // TILE) * -(-ow // TILE)
    small = 36 * tiles * max(c, oc) < 2**31
    return (kh, kw) == (3, 3) and stride == (1, 1) and dilation == (1, 1) and min(c, oc) >= 16 and small


__all__: list[Any] = ["conv3x3_winograd", "winograd_applies"]
