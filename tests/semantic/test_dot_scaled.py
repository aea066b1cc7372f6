"""``kl.dot_scaled``: OCP microscaling (MX) operands, decoded exactly, through ``kl.dot``.

Facts (triton-lang.org ``triton.language.dot_scaled``; OCP MX v1.0): formats e2m1 (fp4, two
per uint8, first element in the low nibble, packed along K by default), e4m3 (E4M3FN: bias 7,
no infinities, S.1111.111 is NaN), e5m2 (bias 15, IEEE infinities and NaNs), bf16, fp16;
scales are e8m0 bytes (2**(s - 127), 255 = NaN) or float tiles (nvfp4: e4m3), one per G
elements of K: ``lhs_scale`` is (M, K/G), ``rhs_scale`` (N, K/G). G is 16 or 32 and comes from
the shapes (Triton's ``DotScaledOp`` verifier: ``K // scale.shape[-1]``, the same for both
scales). The references below decode with Python's float arithmetic from the format
definitions, independently of kdsl.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ._util import line_of

FILE = Path(__file__).name


def minifloat(byte: int, ebits: int, mbits: int, bias: int, fmt: str) -> float:
    """The value of one minifloat from its definition (sign, biased exponent, mantissa)."""
    sign = -1.0 if byte >> (ebits + mbits) & 1 else 1.0
    e = byte >> mbits & ((1 << ebits) - 1)
    m = byte & ((1 << mbits) - 1)
    top = (1 << ebits) - 1
    if fmt == "e5m2" and e == top:
        return sign * math.inf if m == 0 else math.nan
    if fmt == "e4m3" and e == top and m == (1 << mbits) - 1:
        return math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mbits)
    return sign * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


SPEC = {"e2m1": (2, 1, 1), "e4m3": (4, 3, 7), "e5m2": (5, 2, 15)}


def decode(bytes_: np.ndarray, fmt: str) -> np.ndarray:
    table = np.array([minifloat(b, *SPEC[fmt], fmt) for b in range(16 if fmt == "e2m1" else 256)])
    return table[bytes_]


@kdsl.kernel
def scaled_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr,
                  M: kl.constexpr, N: kl.constexpr, K: kl.constexpr, KA: kl.constexpr, KB: kl.constexpr,
                  FA: kl.constexpr, FB: kl.constexpr, SCALED: kl.constexpr):  # fmt: skip
    # a: (M, KA) bytes or halves, b: (KB, N); KA/KB are K or K/2 (fp4 packed along K)
    rows = kl.program_id(0) * M + kl.arange(0, M)
    a = kl.load(a_ptr + rows[:, None] * KA + kl.arange(0, KA)[None, :])
    b = kl.load(b_ptr + kl.arange(0, KB)[:, None] * N + kl.arange(0, N)[None, :])
    if FA == "bf16":  # bf16 operands arrive as their uint16 bits (numpy has no bfloat16)
        a = a.to(kl.bfloat16, bitcast=True)
    if FB == "bf16":
        b = b.to(kl.bfloat16, bitcast=True)
    if SCALED:
        sa = kl.load(sa_ptr + rows[:, None] * (K // 32) + kl.arange(0, K // 32)[None, :])
        sb = kl.load(sb_ptr + kl.arange(0, N)[:, None] * (K // 32) + kl.arange(0, K // 32)[None, :])
        c = kl.dot_scaled(a, sa, FA, b, sb, FB)
    else:
        c = kl.dot_scaled(a, None, FA, b, None, FB)
    kl.store(c_ptr + rows[:, None] * N + kl.arange(0, N)[None, :], c)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """bf16 values (exactly representable ones) as their uint16 bit patterns."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_every_fp8_value_decodes_exactly(backend: str, fmt: str) -> None:
    # row i holds byte i at column i % 32, zeros (+0.0) elsewhere; times a bf16 identity
    a = np.zeros((256, 32), np.uint8)
    a[np.arange(256), np.arange(256) % 32] = np.arange(256)
    b = np.eye(32, dtype=np.float16)
    c = np.zeros((256, 32), np.float32)
    scaled_kernel[(4,)](a, a, b, a, c, M=64, N=32, K=32, KA=32, KB=32, FA=fmt, FB="fp16", SCALED=False)
    got = c[np.arange(256), np.arange(256) % 32]
    np.testing.assert_array_equal(got, decode(np.arange(256), fmt).astype(np.float32))


def test_every_fp4_pair_decodes_exactly(backend: str) -> None:
    # byte i at packed column i % 16: elements 2 * (i % 16) (low nibble) and 2 * (i % 16) + 1
    a = np.zeros((256, 16), np.uint8)
    a[np.arange(256), np.arange(256) % 16] = np.arange(256)
    b = np.eye(32, dtype=np.float16)
    c = np.zeros((256, 32), np.float32)
    scaled_kernel[(8,)](a, a, b, a, c, M=32, N=32, K=32, KA=16, KB=32, FA="e2m1", FB="fp16", SCALED=False)
    col = 2 * (np.arange(256) % 16)
    np.testing.assert_array_equal(c[np.arange(256), col], decode(np.arange(256) & 15, "e2m1"))
    np.testing.assert_array_equal(c[np.arange(256), col + 1], decode(np.arange(256) >> 4, "e2m1"))


def test_e8m0_scales(backend: str) -> None:
    # ones (fp16) scaled by 2**(s - 127) per row, times the identity: every output is the scale
    s = np.arange(1, 257) % 256  # 1..255 and 0; 255 is NaN; 0 is 2**-127 (subnormal: left out below)
    a = np.ones((256, 32), np.float16)
    b = np.eye(32, dtype=np.float16)
    sa = s.astype(np.uint8).reshape(256, 1)
    sb = np.full((32, 1), 127, np.uint8)  # 2**0
    c = np.zeros((256, 32), np.float32)
    scaled_kernel[(4,)](a, sa, b, sb, c, M=64, N=32, K=32, KA=32, KB=32, FA="fp16", FB="fp16", SCALED=True)
    normal = (s >= 1) & (s <= 254)
    want = np.ldexp(np.float32(1), s[normal] - 127).astype(np.float32)
    np.testing.assert_array_equal(c[normal], np.broadcast_to(want[:, None], (normal.sum(), 32)))
    assert np.isnan(c[s == 255]).all()


CASES = [("e2m1", "e2m1"), ("e4m3", "e5m2"), ("e5m2", "bf16"), ("fp16", "e4m3")]


def operand(rng: np.random.Generator, fmt: str, shape: tuple[int, int], pack_axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(kernel argument, its float64 values) for a random operand of ``fmt`` without NaN/inf."""
    if fmt in ("bf16", "fp16"):
        v = rng.integers(-8, 9, shape) / 4.0
        return (bf16_bits(v) if fmt == "bf16" else v.astype(np.float16)), v
    if fmt == "e2m1":
        nib = rng.integers(0, 16, shape)
        lo, hi = (nib[0::2], nib[1::2]) if pack_axis == 0 else (nib[:, 0::2], nib[:, 1::2])
        return (lo | hi << 4).astype(np.uint8), decode(nib, fmt)
    byte = rng.integers(0, 256, shape)
    vals = decode(byte, fmt)
    byte = np.where(np.isfinite(vals), byte, 0)  # no NaN / inf in a product test
    return byte.astype(np.uint8), decode(byte, fmt)


@pytest.mark.parametrize(("fa", "fb"), CASES)
def test_scaled_products(backend: str, fa: str, fb: str) -> None:
    rng = np.random.default_rng(7)
    m, n, k = 16, 16, 64
    a, av = operand(rng, fa, (m, k), pack_axis=1)
    b, bv = operand(rng, fb, (k, n), pack_axis=0)
    sa = rng.integers(120, 135, (m, k // 32)).astype(np.uint8)
    sb = rng.integers(120, 135, (n, k // 32)).astype(np.uint8)
    c = np.zeros((m, n), np.float32)
    scaled_kernel[(1,)](a, sa, b, sb, c, M=m, N=n, K=k, KA=a.shape[1], KB=b.shape[0], FA=fa, FB=fb, SCALED=True)
    ascale = np.repeat(np.ldexp(1.0, sa.astype(int) - 127), 32, axis=1)
    bscale = np.repeat(np.ldexp(1.0, sb.astype(int) - 127), 32, axis=1).T
    want = (av * ascale) @ (bv * bscale)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@kdsl.kernel
def fp4_m_packed_kernel(a_ptr, b_ptr, c_ptr):
    # lhs packed along M (lhs_k_pack=False): (8, 32) bytes hold a (16, 32) operand
    a = kl.load(a_ptr + kl.arange(0, 8)[:, None] * 32 + kl.arange(0, 32)[None, :])
    b = kl.load(b_ptr + kl.arange(0, 32)[:, None] * 16 + kl.arange(0, 16)[None, :])
    c = kl.dot_scaled(a, None, "e2m1", b, None, "fp16", lhs_k_pack=False)
    kl.store(c_ptr + kl.arange(0, 16)[:, None] * 16 + kl.arange(0, 16)[None, :], c)


def test_fp4_packed_along_m(backend: str) -> None:
    rng = np.random.default_rng(3)
    a, av = operand(rng, "e2m1", (16, 32), pack_axis=0)
    b = (rng.integers(-4, 5, (32, 16)) / 2.0).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    fp4_m_packed_kernel[(1,)](a, b, c)
    np.testing.assert_allclose(c, av @ b.astype(np.float64), rtol=1e-6)


@kdsl.kernel
def grouped_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr,
                   M: kl.constexpr, N: kl.constexpr, KA: kl.constexpr, KB: kl.constexpr, SA: kl.constexpr,
                   SB: kl.constexpr, FA: kl.constexpr, FB: kl.constexpr, E4M3_SCALES: kl.constexpr):  # fmt: skip
    # scales: (M, SA) and (N, SB) bytes, e4m3 (nvfp4) or e8m0; SB == 0: no rhs scale
    rows = kl.program_id(0) * M + kl.arange(0, M)
    a = kl.load(a_ptr + rows[:, None] * KA + kl.arange(0, KA)[None, :])
    b = kl.load(b_ptr + kl.arange(0, KB)[:, None] * N + kl.arange(0, N)[None, :])
    sa = kl.load(sa_ptr + rows[:, None] * SA + kl.arange(0, SA)[None, :])
    if E4M3_SCALES:
        sa = sa.to(kl.float8e4nv, bitcast=True)
    if SB:
        sb = kl.load(sb_ptr + kl.arange(0, N)[:, None] * SB + kl.arange(0, SB)[None, :])
        if E4M3_SCALES:
            sb = sb.to(kl.float8e4nv, bitcast=True)
        c = kl.dot_scaled(a, sa, FA, b, sb, FB)
    else:
        c = kl.dot_scaled(a, sa, FA, b, None, FB)
    kl.store(c_ptr + rows[:, None] * N + kl.arange(0, N)[None, :], c)


def test_every_e4m3_scale_value(backend: str) -> None:
    # nvfp4's scales: ones (K = 16) scaled by e4m3 byte i in row i, times the identity; one
    # scale per row of 16 elements is group size 16; 0x7f and 0xff are NaN
    a = np.ones((256, 16), np.float16)
    sa = np.arange(256, dtype=np.uint8).reshape(256, 1)
    b = np.eye(16, dtype=np.float16)
    c = np.zeros((256, 16), np.float32)
    grouped_kernel[(4,)](a, sa, b, sa, c, M=64, N=16, KA=16, KB=16, SA=1, SB=0, FA="fp16", FB="fp16",
                         E4M3_SCALES=True)  # fmt: skip
    want = decode(np.arange(256), "e4m3").astype(np.float32)
    np.testing.assert_array_equal(c, np.broadcast_to(want[:, None], (256, 16)))
    assert np.isnan(c[[0x7F, 0xFF]]).all() and not np.isnan(np.delete(c, [0x7F, 0xFF], axis=0)).any()


def e4m3_scales(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Random finite e4m3 scale bytes of both signs around 1 (subnormals included), and their values."""
    byte = rng.integers(0, 256, shape)
    byte = np.where((byte & 0x7F) == 0x7F, 0x38, byte)  # no NaN
    return byte.astype(np.uint8), decode(byte, "e4m3")


@pytest.mark.parametrize(("fa", "fb", "group", "kind"), [
    ("e2m1", "e2m1", 16, "e4m3"),  # nvfp4
    ("e4m3", "e2m1", 16, "e4m3"),
    ("e2m1", "e2m1", 16, "e8m0"),  # group 16 with e8m0 bytes: only the shape decides
    ("e4m3", "e5m2", 32, "e4m3"),  # float scales at group 32
])  # fmt: skip
def test_grouped_products(backend: str, fa: str, fb: str, group: int, kind: str) -> None:
    rng = np.random.default_rng(11)
    m, n, k = 16, 16, 64
    a, av = operand(rng, fa, (m, k), pack_axis=1)
    b, bv = operand(rng, fb, (k, n), pack_axis=0)
    if kind == "e4m3":
        (sa, sav), (sb, sbv) = e4m3_scales(rng, (m, k // group)), e4m3_scales(rng, (n, k // group))
    else:
        sa, sb = (rng.integers(120, 135, (r, k // group)).astype(np.uint8) for r in (m, n))
        sav, sbv = np.ldexp(1.0, sa.astype(int) - 127), np.ldexp(1.0, sb.astype(int) - 127)
    c = np.zeros((m, n), np.float32)
    grouped_kernel[(1,)](a, sa, b, sb, c, M=m, N=n, KA=a.shape[1], KB=b.shape[0], SA=k // group, SB=k // group,
                         FA=fa, FB=fb, E4M3_SCALES=kind == "e4m3")  # fmt: skip
    want = (av * np.repeat(sav, group, axis=1)) @ (bv * np.repeat(sbv, group, axis=1).T)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@kdsl.kernel
def bad_format_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 16)[:, None] * 32 + kl.arange(0, 32)[None, :])
    c = kl.dot_scaled(a, None, "e3m4", a, None, "e4m3")  # MARK: bad-format
    kl.store(c_ptr + kl.arange(0, 16)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def bad_scale_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    s = kl.load(a_ptr + kl.arange(0, 16)[:, None] * 2 + kl.arange(0, 2)[None, :])  # 16 rows, not 32
    c = kl.dot_scaled(a, s, "e4m3", a, None, "e4m3")  # MARK: bad-scale
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def float_bytes_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    c = kl.dot_scaled(a, None, "e5m2", a, None, "e5m2")  # MARK: float-bytes
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def group8_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    s = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 4 + kl.arange(0, 4)[None, :])  # 8 elements per scale
    c = kl.dot_scaled(a, s, "e4m3", a, None, "e4m3")  # MARK: group-8
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def mixed_groups_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    s16 = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 2 + kl.arange(0, 2)[None, :]).to(kl.float8e4nv, bitcast=True)
    s32 = kl.load(a_ptr + kl.arange(0, 32)[:, None] + kl.arange(0, 1)[None, :])
    c = kl.dot_scaled(a, s16, "e4m3", a, s32, "e4m3")  # MARK: mixed-groups
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def int_scale_kernel(a_ptr, s_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    s = kl.load(s_ptr + kl.arange(0, 32)[:, None] * 2 + kl.arange(0, 2)[None, :])
    c = kl.dot_scaled(a, s, "e4m3", a, None, "e4m3")  # MARK: int-scale
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@kdsl.kernel
def rank3_scale_kernel(a_ptr, c_ptr):
    a = kl.load(a_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :])
    s = kl.load(a_ptr + kl.arange(0, 64)).reshape(32, 1, 2)
    c = kl.dot_scaled(a, s, "e4m3", a, None, "e4m3")  # MARK: rank3-scale
    kl.store(c_ptr + kl.arange(0, 32)[:, None] * 32 + kl.arange(0, 32)[None, :], c)


@pytest.mark.parametrize(
    ("kernel", "dtype", "marker", "words"),
    [
        (bad_format_kernel, np.uint8, "bad-format", "unknown lhs_format 'e3m4'"),
        (bad_scale_kernel, np.uint8, "bad-scale", "lhs_scale must have shape (32, 2)"),
        (float_bytes_kernel, np.float32, "float-bytes", "needs its bytes as a uint8 tile"),
        (group8_kernel, np.uint8, "group-8", "K // 4 = 8 elements per scale (K = 32); the group size must be 16 or 32"),
        (mixed_groups_kernel, np.uint8, "mixed-groups", "same group size, got 16 (lhs_scale) and 32 (rhs_scale)"),
        (rank3_scale_kernel, np.uint8, "rank3-scale", "lhs_scale must be a 2-D tile, got shape (32, 1, 2)"),
    ],
)
def test_errors_name_the_line(kernel: kdsl.KernelFunction, dtype: type, marker: str, words: str) -> None:
    with kdsl.backend("interpreter"), pytest.raises(CompilationError) as info:
        kernel[(1,)](np.zeros(1024, dtype), np.zeros(1024, np.float32))
    text = str(info.value)
    assert words in text
    assert f"{FILE}:{line_of(__file__, 'MARK: ' + marker)}" in text


def test_int_scale_error_names_the_line() -> None:
    # a 32-bit integer tile is neither e8m0 bytes nor a float scale
    with kdsl.backend("interpreter"), pytest.raises(CompilationError) as info:
        int_scale_kernel[(1,)](np.zeros(1024, np.uint8), np.zeros(64, np.int32), np.zeros(1024, np.float32))
    text = str(info.value)
    words, marker = "lhs_scale must hold e8m0 scales as uint8, or float scales", "int-scale"
    assert words in text
    assert f"{FILE}:{line_of(__file__, 'MARK: ' + marker)}" in text
