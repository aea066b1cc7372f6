"""fp8 element types and float downcast rounding.

Facts (triton-lang.org ``triton.language``; OCP 8-bit floating point spec; Triton's
``semantic.cast``): ``float8e5`` is E5M2 (bias 15, IEEE infinities/NaNs), ``float8e4nv`` E4M3FN
(bias 7, no infinities, ``S.1111.111`` NaN, max 448), ``float8e4b8``/``float8e5b16`` the FNUZ
variants (bias 8/16, no infinities or negative zero, ``0x80`` NaN), ``float8e4b15`` E4M3 with
bias 15. Downcasts round to nearest even unless ``fp_downcast_rounding="rtz"``; fp8 with fp8 of
the same type computes in that type, different fp8 types meet in fp16. Encoding overflow:
infinity for E5M2 (RTNE), saturation for formats without infinities (``cvt.rn.satfinite``).
The reference is :mod:`kdsl.ir.floatcodec` (exact, Fraction-based), itself checked against
torch and ml_dtypes when they are installed.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.ir import floatcodec
from kdsl.ir.types import FLOAT_FORMATS

from ._util import line_of

FILE = Path(__file__).name
FP8 = ["float8e5", "float8e4nv", "float8e4b15", "float8e4b8", "float8e5b16"]


def fmt(name: str):
    return FLOAT_FORMATS[getattr(kl, name).name]


def encode_all(x: np.ndarray, name: str, rtz: bool = False) -> np.ndarray:
    f = fmt(name)
    return np.array([floatcodec.encode(float(v), f, rtz) for v in x.ravel()], dtype=np.uint64)


def decode_all(codes: np.ndarray, name: str) -> np.ndarray:
    f = fmt(name)
    return np.array([floatcodec.decode(int(c), f) for c in codes.ravel()])


def same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


def probe_values(name: str, dtype: type = np.float32) -> np.ndarray:
    """Every fp8 value, the midpoints between neighbours (ties), their neighbours in ``dtype``,
    values past the range, and random values over many binades."""
    f = fmt(name)
    vals = sorted({floatcodec.decode(c, f) for c in range(256)} - {math.nan}, key=float)
    vals = [v for v in vals if not math.isnan(v)]
    mids = [(a + b) / 2 for a, b in itertools.pairwise(vals) if math.isfinite(a) and math.isfinite(b)]
    x = np.array(vals + mids, dtype=dtype)
    near = np.concatenate([np.nextafter(x, np.inf, dtype=dtype), np.nextafter(x, -np.inf, dtype=dtype)])
    rng = np.random.default_rng(7)
    rand = (rng.standard_normal(3000) * 2.0 ** rng.integers(-20, 18, 3000)).astype(dtype)
    big = np.array([1e5, -1e5, 3e38, np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], dtype=dtype)
    return np.concatenate([x, near, rand, big]).astype(dtype)


@kdsl.kernel
def roundtrip(x_ptr, y_ptr, z_ptr, n, RTZ: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    y = x.to(y_ptr.dtype.element_ty, fp_downcast_rounding="rtz" if RTZ else None)
    kl.store(y_ptr + offs, y, mask=m)
    kl.store(z_ptr + offs, kl.load(y_ptr + offs, mask=m).to(z_ptr.dtype.element_ty), mask=m)


def run_roundtrip(x: np.ndarray, name: str, rtz: bool = False) -> tuple[np.ndarray, np.ndarray]:
    codes = np.zeros(x.size, np.uint8)
    back = np.zeros(x.size, x.dtype if x.dtype != np.float16 else np.float32)
    roundtrip[(kdsl.cdiv(x.size, 512),)](x, kdsl.reinterpret(codes, getattr(kl, name)), back, x.size,
                                          RTZ=rtz, BLOCK=512)  # fmt: skip
    return codes, back


@pytest.mark.parametrize("name", FP8)
def test_f32_to_fp8_and_back(backend: str, name: str) -> None:
    x = probe_values(name)
    codes, back = run_roundtrip(x, name)
    want = encode_all(x, name)
    bad = np.nonzero(codes != want)[0]
    assert bad.size == 0, f"{name}: {x[bad[:4]]} -> {codes[bad[:4]]}, want {want[bad[:4]]}"
    assert same(back, decode_all(codes, name))


@pytest.mark.parametrize("name", ["float8e5", "float8e4nv"])
def test_rtz(backend: str, name: str) -> None:
    x = probe_values(name)
    codes, _ = run_roundtrip(x, name, rtz=True)
    assert np.array_equal(codes, encode_all(x, name, rtz=True))


@pytest.mark.parametrize("src", [np.float64, np.float16])
def test_other_sources_round_once(backend: str, src: type) -> None:
    """f64 values just beside a tie must not round twice (through f32)."""
    x = probe_values("float8e4nv", np.float64)
    if src is np.float16:
        x = x[np.abs(x) < 6e4].astype(np.float16)
    x = x.astype(src)
    codes, back = run_roundtrip(x, "float8e4nv")
    assert np.array_equal(codes, encode_all(x.astype(np.float64), "float8e4nv"))
    assert same(back, decode_all(codes, "float8e4nv"))


@kdsl.kernel
def downcast_rtz(x_ptr, y_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    y = kl.load(x_ptr + offs, mask=m).to(y_ptr.dtype.element_ty, fp_downcast_rounding="rtz")
    kl.store(y_ptr + offs, y, mask=m)


@pytest.mark.parametrize(("src", "dst", "bits"), [(np.float32, "float16", np.uint16), (np.float32, "bfloat16", np.uint16),
                                                  (np.float64, "float32", np.uint32), (np.float64, "float16", np.uint16)])
def test_standard_downcast_rtz(backend: str, src: type, dst: str, bits: type) -> None:
    rng = np.random.default_rng(3)
    x = np.concatenate([(rng.standard_normal(4000) * 2.0 ** rng.integers(-30, 30, 4000)),
                        [65519.0, 65520.0, 1e6, -1e6, np.inf, -np.inf, 0.0, -0.0, 2.0**-25, -(2.0**-149)]]).astype(src)
    y = np.zeros(x.size, bits)
    downcast_rtz[(kdsl.cdiv(x.size, 256),)](x, kdsl.reinterpret(y, getattr(kl, dst)), x.size, BLOCK=256)
    name = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}[dst]
    want = np.array([floatcodec.encode(float(v), FLOAT_FORMATS[name], rtz=True) for v in x], dtype=bits)
    assert np.array_equal(y, want)
    if dst == "float16":  # truncation never grows the magnitude
        assert np.all(np.abs(y.view(np.float16).astype(np.float64)) <= np.abs(x.astype(np.float64)))


@kdsl.kernel
def arith(a_ptr, b_ptr, out_ptr, cmp_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    a = kl.load(a_ptr + offs)
    b = kl.load(b_ptr + offs)
    s = a + b
    kl.static_assert(s.dtype == a.dtype)
    kl.store(out_ptr + offs, s)
    kl.store(out_ptr + N + offs, a * b)
    kl.store(out_ptr + 2 * N + offs, a - 0.5)
    kl.store(out_ptr + 3 * N + offs, kl.maximum(a, b))
    kl.store(out_ptr + 4 * N + offs, kl.where(a < b, a, -b))
    kl.store(out_ptr + 5 * N + offs, kl.exp(a.to(kl.float32)).to(a.dtype))
    kl.store(cmp_ptr + offs, (a < b).to(kl.int8))


@pytest.mark.parametrize("name", ["float8e5", "float8e4nv"])
def test_arithmetic_rounds_each_result_to_fp8(backend: str, name: str) -> None:
    n = 64
    rng = np.random.default_rng(1)
    a = encode_all(rng.standard_normal(n) * 4, name).astype(np.uint8)
    b = encode_all(rng.standard_normal(n) * 4, name).astype(np.uint8)
    out = np.zeros(6 * n, np.uint8)
    cmp = np.zeros(n, np.int8)
    dt = getattr(kl, name)
    arith[(1,)](kdsl.reinterpret(a, dt), kdsl.reinterpret(b, dt), kdsl.reinterpret(out, dt), cmp, N=n)
    fa, fb = decode_all(a, name).astype(np.float32), decode_all(b, name).astype(np.float32)
    with np.errstate(all="ignore"):
        want = [fa + fb, fa * fb, fa - np.float32(0.5), np.maximum(fa, fb), np.where(fa < fb, fa, -fb),
                np.exp(fa)]  # fmt: skip
    for k, w in enumerate(want):
        assert np.array_equal(out[k * n:(k + 1) * n], encode_all(np.asarray(w, np.float32), name).astype(np.uint8)), k
    assert np.array_equal(cmp, (fa < fb).astype(np.int8))


@kdsl.kernel
def fp8_dot(a_ptr, b_ptr, c_ptr, s_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    a = kl.load(a_ptr + kl.arange(0, M)[:, None] * K + kl.arange(0, K)[None, :])
    b = kl.load(b_ptr + kl.arange(0, K)[:, None] * N + kl.arange(0, N)[None, :])
    c = kl.dot(a, b)
    kl.store(c_ptr + kl.arange(0, M)[:, None] * N + kl.arange(0, N)[None, :], c)
    kl.store(s_ptr + kl.arange(0, M), kl.max(a, axis=1))
    kl.store(s_ptr + M + kl.arange(0, M), kl.sum(a, axis=1).to(kl.float8e5))


def test_dot_and_reductions(backend: str) -> None:
    m, n, k = 16, 32, 64
    rng = np.random.default_rng(2)
    a = encode_all(rng.standard_normal((m, k)), "float8e5").astype(np.uint8).reshape(m, k)
    b = encode_all(rng.standard_normal((k, n)), "float8e4nv").astype(np.uint8).reshape(k, n)
    c = np.zeros((m, n), np.float32)
    s = np.zeros(2 * m, np.uint8)
    fp8_dot[(1,)](kdsl.reinterpret(a, kl.float8e5), kdsl.reinterpret(b, kl.float8e4nv), c,
                  kdsl.reinterpret(s, kl.float8e5), M=m, N=n, K=k)  # fmt: skip
    fa = decode_all(a, "float8e5").reshape(m, k)
    fb = decode_all(b, "float8e4nv").reshape(k, n)
    np.testing.assert_allclose(c, fa @ fb, rtol=1e-5, atol=1e-5)
    assert np.array_equal(s[:m], encode_all(fa.max(axis=1), "float8e5").astype(np.uint8))
    sums = decode_all(encode_all(fa.sum(axis=1).astype(np.float32), "float8e5"), "float8e5")
    np.testing.assert_allclose(decode_all(s[m:], "float8e5"), sums, rtol=0.26)  # f32 sum, one fp8 rounding


@kdsl.kernel
def dtype_queries(out_ptr):
    e5: kl.constexpr = kl.float8e5
    kl.static_assert(e5.is_fp8() and e5.is_fp8e5() and not e5.is_fp8e4nv())
    kl.static_assert(e5.primitive_bitwidth == 8 and e5.fp_mantissa_width == 2)
    kl.static_assert(kl.float8e4nv.fp_mantissa_width == 3 and not kl.float8e4nv.is_standard_floating())
    kl.static_assert(out_ptr.dtype.element_ty == kl.float8e4nv)
    kl.static_assert((kl.zeros((4,), kl.float8e4b8) + kl.zeros((4,), kl.float8e5b16)).dtype == kl.float16)
    kl.store(out_ptr + kl.arange(0, 4), kl.full((4,), 3.0, kl.float8e4nv))


def test_dtype_queries_and_constants(backend: str) -> None:
    out = np.zeros(4, np.uint8)
    dtype_queries[(1,)](kdsl.reinterpret(out, kl.float8e4nv))
    assert list(out) == [floatcodec.encode(3.0, fmt("float8e4nv"))] * 4


def test_host_fp8_arrays_from_torch_and_ml_dtypes(backend: str) -> None:
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 97, dtype=np.float32)
    for tdt in (torch.float8_e5m2, torch.float8_e4m3fn):
        y = torch.zeros(x.size, dtype=tdt)
        back = np.zeros(x.size, np.float32)
        roundtrip[(1,)](x, y, back, x.size, RTZ=False, BLOCK=128)
        assert np.array_equal(y.view(torch.uint8).numpy(), torch.from_numpy(x).to(tdt).view(torch.uint8).numpy())
        assert np.array_equal(back, y.float().numpy())


@pytest.mark.parametrize("name", ["float8e5", "float8e4nv", "float8e4b8", "float8e5b16"])
def test_reference_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    tdt = {"float8e5": torch.float8_e5m2, "float8e4nv": torch.float8_e4m3fn, "float8e4b8": torch.float8_e4m3fnuz,
           "float8e5b16": torch.float8_e5m2fnuz}[name]  # fmt: skip
    f = fmt(name)
    x = probe_values(name)
    x = x[np.abs(x) <= floatcodec.decode(f.max_code, f)]  # torch gives NaN past the range (no saturation)
    want = torch.from_numpy(x).to(tdt).view(torch.uint8).numpy()
    assert np.array_equal(encode_all(x, name).astype(np.uint8), want)
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(tdt)
    assert same(decode_all(np.arange(256), name), codes.float().numpy())


@kdsl.kernel
def fp8_with_int(a_ptr, b_ptr):
    a = kl.load(a_ptr + kl.arange(0, 4))
    b = kl.load(b_ptr + kl.arange(0, 4))
    kl.store(a_ptr + kl.arange(0, 4), a + b)  # mark: mixed


@kdsl.kernel
def bad_rounding(a_ptr):
    x = kl.load(a_ptr + kl.arange(0, 4))
    kl.store(a_ptr + kl.arange(0, 4), x.to(kl.float64, fp_downcast_rounding="rtz"))  # mark: upcast


def test_errors_name_the_line() -> None:
    a = np.zeros(4, np.uint8)
    with pytest.raises(CompilationError, match="cannot combine fp8e5 and i32") as e:
        fp8_with_int[(1,)](kdsl.reinterpret(a, kl.float8e5), np.zeros(4, np.int32))
    assert f"{FILE}:{line_of(__file__, 'mark: mixed')}" in str(e.value)
    with pytest.raises(CompilationError, match="float downcasts only") as e:
        bad_rounding[(1,)](np.zeros(4, np.float32))
    assert f"{FILE}:{line_of(__file__, 'mark: upcast')}" in str(e.value)
    with pytest.raises(TypeError, match="bytes"):
        kdsl.reinterpret(np.zeros(4, np.float32), kl.float8e5)


def test_ir_keeps_fp8_until_fp8_to_bytes() -> None:
    from kdsl.ir.parser import parse_module
    from kdsl.ir.printer import print_op

    a = np.zeros(4, np.uint8)
    raw = kdsl.compile_to_ir(fp8_with_int, kdsl.reinterpret(a, kl.float8e5), kdsl.reinterpret(a, kl.float8e5))
    text = print_op(raw)
    assert "ptr<fp8e5>" in text and "tile<4xfp8e5>" in text
    assert print_op(parse_module(text)) == text
    opt = print_op(kdsl.compile_to_ir(fp8_with_int, kdsl.reinterpret(a, kl.float8e5), kdsl.reinterpret(a, kl.float8e5),
                                      optimize=True))  # fmt: skip
    assert "ptr<fp8" not in opt and "xfp8" not in opt and "ptr<u8>" in opt


def test_reinterpret_device_arrays_and_read_only_host_arrays(backend: str) -> None:
    x = np.linspace(-3, 3, 100, dtype=np.float32)
    codes = kdsl.zeros((100,), np.uint8)
    back = kdsl.zeros((100,), np.float32)
    dx = kdsl.tensor(x)
    roundtrip[(1,)](dx, kdsl.reinterpret(codes, kl.float8e4nv), back, 100, RTZ=False, BLOCK=128)
    assert np.array_equal(codes.numpy(), encode_all(x, "float8e4nv").astype(np.uint8))
    assert same(back.numpy(), decode_all(codes.numpy(), "float8e4nv"))
    ro = np.zeros(100, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(kdsl.LaunchError, match="read-only"):
        roundtrip[(1,)](x, kdsl.reinterpret(ro, kl.float8e4nv), np.zeros(100, np.float32), 100, RTZ=False, BLOCK=128)


@kdsl.kernel
def sort_and_print(p_ptr, out_ptr, N: kl.constexpr):
    x = kl.load(p_ptr + kl.arange(0, N))
    kl.store(out_ptr + kl.arange(0, N), kl.sort(x))
    kl.store(out_ptr + N + kl.arange(0, N), kl.flip(x, 0))
    kl.device_print("fp8 ", x)


def test_sort_flip_and_print_fp8(backend: str, capfd: pytest.CaptureFixture[str]) -> None:
    vals = np.array([3.0, -1.5, 0.25, 448.0, -0.0, 2.0, -448.0, 1.0], np.float32)
    codes = encode_all(vals, "float8e4nv").astype(np.uint8)
    out = np.zeros(16, np.uint8)
    sort_and_print[(1,)](kdsl.reinterpret(codes, kl.float8e4nv), kdsl.reinterpret(out, kl.float8e4nv), N=8)
    got = decode_all(out[:8], "float8e4nv")
    assert list(got) == sorted(vals.tolist(), key=lambda v: (v, not np.signbit(v)))  # -0 before +0 (totalOrder)
    assert np.array_equal(out[8:], codes[::-1])
    printed = capfd.readouterr().out
    assert "448" in printed and "-1.5" in printed  # values, not bytes


@kdsl.kernel
def fp8_block_ptr(p, out, M, N, BM: kl.constexpr, BN: kl.constexpr):
    bp = kl.make_block_ptr(p, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    x = kl.load(bp, boundary_check=(0, 1), padding_option="nan")
    kl.store(out + kl.arange(0, BM)[:, None] * BN + kl.arange(0, BN)[None, :], x.to(kl.float32))


@kdsl.kernel
def fp8_descriptor(desc, out, BM: kl.constexpr, BN: kl.constexpr):
    x = desc.load([0, 0])
    kl.store(out + kl.arange(0, BM)[:, None] * BN + kl.arange(0, BN)[None, :], x.to(kl.float32))


def test_block_pointers_and_descriptors_over_fp8(backend: str) -> None:
    from kdsl.tools.tensor_descriptor import TensorDescriptor

    codes = (np.arange(12, dtype=np.uint8) + 0x30).reshape(3, 4)
    want = np.full((4, 8), np.nan)
    want[:3, :4] = decode_all(codes, "float8e4nv").reshape(3, 4)
    out = np.zeros((4, 8), np.float32)
    fp8_block_ptr[(1,)](kdsl.reinterpret(codes, kl.float8e4nv), out, 3, 4, BM=4, BN=8)
    assert same(out, want)  # padding "nan" is the fp8 NaN, decoded
    out2 = np.zeros((4, 8), np.float32)
    fp8_descriptor[(1,)](TensorDescriptor.from_tensor(kdsl.reinterpret(codes, kl.float8e4nv), [4, 8]), out2, BM=4, BN=8)
    assert same(out2, np.nan_to_num(want, nan=0.0))  # descriptors pad with zeros


@pytest.mark.parametrize("name", FP8)
def test_reference_matches_brute_force(name: str) -> None:
    """The reference codec against the format's definition, without torch: every code decodes to
    sign * 2**(e - bias) * (1 + m / 2**mbits) (subnormals, specials per format), and encoding picks
    the nearest finite code (ties to the even code), infinity/saturation past the largest one."""
    f = fmt(name)
    table = {}
    for c in range(256):
        s, e, m = c >> 7, (c >> f.mbits) & ((1 << f.ebits) - 1), c & ((1 << f.mbits) - 1)
        v = (m * 2.0 ** (1 - f.bias - f.mbits)) if e == 0 else (1 + m / 2**f.mbits) * 2.0 ** (e - f.bias)
        v = -v if s else v
        special = (f.special == "ieee" and e == (1 << f.ebits) - 1) or (f.special == "fn" and (c & 0x7F) == 0x7F) \
            or (f.special == "fnuz" and c == 0x80)  # fmt: skip
        got = floatcodec.decode(c, f)
        if special:
            assert math.isnan(got) or math.isinf(got)
            continue
        assert got == v and math.copysign(1, got) == math.copysign(1, v), (c, got, v)
        table.setdefault(v, []).append(c)
    finite = sorted(table)
    top = finite[-1]
    for x in probe_values(name, np.float64).tolist():
        if math.isnan(x) or abs(x) > top:
            continue
        best = min(finite, key=lambda v: (abs(v - x), table[v][0] & 1))  # nearest, then the even code
        code = floatcodec.encode(x, f)
        assert floatcodec.decode(code, f) == best, (x, code, best)
