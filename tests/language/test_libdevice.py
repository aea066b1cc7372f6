"""``kdsl.language.extra.libdevice`` (Triton's ``triton.language.extra.libdevice``) against numpy.

Every function runs on every backend for f32 and f64 inputs spanning many binades plus the
special values (+-0, +-inf, NaN, domain edges); results must be within the stated number of ulp
of numpy's (float64 for f32 inputs, so the reference is correctly rounded there; numpy's own
f64 functions for f64 inputs) and agree on NaN, infinities and signed zeros. Predicates return
int32. Tutorial 07's ``asin`` kernel is run as written there.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.language.extra import libdevice
from kdsl.language.extra.cuda import libdevice as cuda_libdevice


def _inputs(dtype: type, lo: float, hi: float, n: int = 2000, log: bool = False) -> np.ndarray:
    rng = np.random.default_rng(11)
    if log:
        mag = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
        x = mag * rng.choice([-1.0, 1.0], n)
    else:
        x = rng.uniform(lo, hi, n)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 2.0, 3.0]
    return np.concatenate([x, special]).astype(dtype)


WIDE = (1e-20, 1e20)  # log-uniform magnitudes, both signs


def _erfinv_ref(x: float) -> float:
    """erfinv from the standard normal's inverse CDF (``statistics``, double precision)."""
    from statistics import NormalDist

    if math.isnan(x) or abs(x) > 1:
        return math.nan
    if abs(x) == 1:
        return math.copysign(math.inf, x)
    if abs(x) < 1e-3:  # the series: (x + 1) / 2 would lose x
        return math.sqrt(math.pi) / 2 * (x + math.pi / 12 * x**3 + 7 * math.pi**2 / 480 * x**5)
    return NormalDist().inv_cdf((x + 1) / 2) / math.sqrt(2)
# name -> (numpy reference, input range, log-spaced, ulp bound)
UNARY: dict[str, tuple[Callable[[Any], Any], tuple[float, float], bool, float]] = {
    "asin": (np.arcsin, (-1.0, 1.0), False, 4),
    "acos": (np.arccos, (-1.0, 1.0), False, 4),
    "atan": (np.arctan, WIDE, True, 4),
    "sinh": (np.sinh, (-90.0, 90.0), False, 4),
    "cosh": (np.cosh, (-90.0, 90.0), False, 4),
    "tan": (np.tan, (-10.0, 10.0), False, 4),
    "asinh": (np.arcsinh, WIDE, True, 4),
    "acosh": (np.arccosh, (1.0, 1e20), True, 4),
    "atanh": (np.arctanh, (-1.0, 1.0), False, 4),
    "expm1": (np.expm1, (-80.0, 80.0), False, 4),
    "log1p": (np.log1p, (-0.999, 1e20), False, 4),
    "exp10": (lambda x: np.power(10.0, x), (-37.0, 38.0), False, 4),
    "log10": (np.log10, (1e-30, 1e30), True, 4),
    "cbrt": (np.cbrt, WIDE, True, 2),
    "erfc": (lambda x: np.vectorize(math.erfc)(x), (-4.0, 10.0), False, 6),
    "erfinv": (lambda x: np.vectorize(_erfinv_ref)(x), (-1.0, 1.0), False, 8),
    "trunc": (np.trunc, (-1e6, 1e6), False, 0),
    "round": (lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x), (-1e6, 1e6), False, 0),
    "rint": (np.rint, (-1e6, 1e6), False, 0),
    "floor": (np.floor, (-1e6, 1e6), False, 0),
    "ceil": (np.ceil, (-1e6, 1e6), False, 0),
    "fabs": (np.abs, WIDE, True, 0),
    "saturatef": (lambda x: np.where(x > 0, np.minimum(x, 1.0), 0.0), (-2.0, 2.0), False, 0),
}
BINARY: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
    "atan2": (np.arctan2, 4),
    "hypot": (np.hypot, 2),
    "copysign": (np.copysign, 0),
    "fmod": (np.fmod, 0),
    "fmin": (np.fmin, 0),
    "fmax": (np.fmax, 0),
    "nextafter": (np.nextafter, 0),
    "pow": (np.power, 4),
}


@kdsl.kernel
def unary_kernel(x_ptr, y_ptr, n, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(y_ptr + offs, FN(kl.load(x_ptr + offs, mask=m)), mask=m)


@kdsl.kernel
def binary_kernel(x_ptr, y_ptr, z_ptr, n, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(z_ptr + offs, FN(kl.load(x_ptr + offs, mask=m), kl.load(y_ptr + offs, mask=m)), mask=m)


def _ulp_check(got: np.ndarray, want: np.ndarray, dtype: type, bound: float, what: str, backend: str) -> None:
    with np.errstate(over="ignore"):
        want_t = want.astype(dtype)
    nan = np.isnan(want_t)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN mismatch at {np.nonzero(np.isnan(got) != nan)[0][:5]}"
    inf = np.isinf(want_t)
    assert np.array_equal(got[inf], want_t[inf]), f"{what}: infinities differ"
    fin = ~nan & ~inf
    if backend == "vulkan" and bound > 0:  # GLSL.std.450's f32 exp/log precision (module docstring)
        np.testing.assert_allclose(got[fin], want[fin], rtol=3e-5, atol=1e-6, err_msg=what)
        return
    err = np.abs(got[fin].astype(np.float64) - want[fin]) / np.spacing(np.abs(want_t[fin]))
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err.max() <= bound, f"{what}: {err.max():.2f} ulp at x index {worst}"
    zero = fin & (want_t == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want_t[zero])), f"{what}: sign of zero"


UNARY_CASES = [(n, d) for n in sorted(UNARY) for d in (np.float32, np.float64)
               if not (n == "erfinv" and d == np.float64)]  # f64 erfinv: test_libdevice_special.py (mpmath reference)


@pytest.mark.parametrize(("name", "dtype"), UNARY_CASES, ids=[f"{n}-{d.__name__}" for n, d in UNARY_CASES])
def test_unary(backend: str, name: str, dtype: type) -> None:
    ref, (lo, hi), log, bound = UNARY[name]
    x = _inputs(dtype, lo, hi, log=log)
    y = np.empty_like(x)
    unary_kernel[(kdsl.cdiv(x.size, 512),)](x, y, x.size, FN=getattr(libdevice, name), BLOCK=512)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)) if dtype == np.float32 else ref(x)
    _ulp_check(y, np.asarray(want, np.float64), dtype, bound if dtype == np.float32 else bound * 2, name, backend)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(backend: str, name: str, dtype: type) -> None:
    ref, bound = BINARY[name]
    x = _inputs(dtype, 1e-10, 1e10, log=True)
    y = np.roll(_inputs(dtype, 1e-10, 1e10, log=True)[::-1], 7)
    if name == "pow":
        x, y = np.abs(x), np.clip(y, -30, 30)
    z = np.empty_like(x)
    # small programs: vulkan's exact fmod loops per element, and lavapipe cuts a program's loops at 65535
    binary_kernel[(kdsl.cdiv(x.size, 32),)](x, y, z, x.size, FN=getattr(libdevice, name), BLOCK=32)
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64), y.astype(np.float64)) if dtype == np.float32 else ref(x, y)
    if name == "nextafter" and dtype == np.float32:
        want = np.nextafter(x, y)
    _ulp_check(z, np.asarray(want, np.float64), dtype, bound if dtype == np.float32 else bound * 2, name, backend)


@kdsl.kernel
def predicates(x_ptr, out_ptr, N: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, N))
    r = kl.arange(0, N)
    kl.store(out_ptr + r, libdevice.isnan(x))
    kl.store(out_ptr + N + r, libdevice.isinf(x))
    kl.store(out_ptr + 2 * N + r, libdevice.isfinited(x))
    kl.store(out_ptr + 3 * N + r, libdevice.signbit(x))
    kl.store(out_ptr + 4 * N + r, libdevice.llrint(x * 1000.0).to(kl.int32))


def test_predicates(backend: str) -> None:
    x = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, -np.nan], np.float32)
    out = np.zeros(5 * 8, np.int32)
    predicates[(1,)](x, out, N=8)
    assert list(out[:8]) == [0, 0, 0, 0, 0, 0, 1, 1]
    assert list(out[8:16]) == [0, 0, 0, 0, 1, 1, 0, 0]
    assert list(out[16:24]) == [1, 1, 1, 1, 0, 0, 0, 0]
    assert list(out[24:32]) == list(np.signbit(x).astype(np.int32))
    assert list(out[32:38]) == [0, 0, 1500, -2500, *out[36:38]]


@kdsl.kernel
def bits_kernel(x_ptr, out_ptr, N: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, N))
    r = kl.arange(0, N)
    kl.store(out_ptr + r, libdevice.popc(x).to(x.dtype))
    kl.store(out_ptr + N + r, libdevice.clz(x).to(x.dtype))
    kl.store(out_ptr + 2 * N + r, libdevice.ffs(x).to(x.dtype))
    kl.store(out_ptr + 3 * N + r, libdevice.brev(x))
    kl.store(out_ptr + 4 * N + r, libdevice.mulhi(x, x * 3 + 1))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_integer_bit_functions(backend: str, dtype: type) -> None:
    w = np.dtype(dtype).itemsize * 8
    rng = np.random.default_rng(4)
    info = np.iinfo(dtype)
    x = np.concatenate([rng.integers(info.min, info.max, 60, dtype=dtype, endpoint=True),
                        np.array([0, 1, info.max, info.min], dtype=dtype)])  # fmt: skip
    n = x.size
    out = np.zeros(5 * n, dtype)
    bits_kernel[(1,)](x, out, N=64)
    u = [int(v) & ((1 << w) - 1) for v in x]
    assert [int(v) for v in out[:n]] == [bin(v).count("1") for v in u]
    assert [int(v) for v in out[n:2 * n]] == [w - v.bit_length() for v in u]
    assert [int(v) for v in out[2 * n:3 * n]] == [(v & -v).bit_length() for v in u]
    assert [int(v) & ((1 << w) - 1) for v in out[3 * n:4 * n]] == [int(f"{v:0{w}b}"[::-1], 2) for v in u]
    y = (x.astype(object) * 3 + 1)
    wrapped = [((int(b) + (1 << (w - 1))) % (1 << w)) - (1 << (w - 1)) if info.min < 0 else int(b) % (1 << w) for b in y]
    hi = [(int(a) * b) >> w for a, b in zip(x, wrapped)]
    assert [int(v) for v in out[4 * n:]] == [(h + (1 << (w - 1))) % (1 << w) - (1 << (w - 1)) if info.min < 0 else h % (1 << w)
                                             for h in hi]  # fmt: skip


@kdsl.kernel
def asin_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    x = libdevice.asin(x)
    kl.store(y_ptr + offsets, x, mask=mask)


def test_tutorial_07_asin_and_half_inputs(backend: str) -> None:
    x = np.random.default_rng(0).uniform(-1, 1, 3000).astype(np.float16)
    y = np.empty_like(x)
    asin_kernel[(kdsl.cdiv(x.size, 1024),)](x, y, x.size, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(y, np.arcsin(x.astype(np.float64)).astype(np.float32).astype(np.float16))
    assert kl.extra.libdevice is libdevice


@kdsl.kernel
def int_input(x_ptr):
    kl.store(x_ptr, libdevice.asin(kl.load(x_ptr)))


def test_integer_input_is_a_compile_error() -> None:
    with pytest.raises(CompilationError, match=r"libdevice\.asin expects floating-point"):
        int_input[(1,)](np.zeros(1, np.int32))


@kdsl.kernel
def cuda_path_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    r = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + r)
    kl.store(out_ptr + r, kl.extra.cuda.libdevice.asin(x) + cuda_libdevice.acos(x))


def test_cuda_import_path(backend: str) -> None:
    """Kernels written for Triton's NVIDIA backend reach libdevice as ``extra.cuda.libdevice``."""
    assert cuda_libdevice is libdevice
    x = np.linspace(-1, 1, 16, dtype=np.float32)
    out = np.zeros_like(x)
    cuda_path_kernel[(1,)](x, out, BLOCK=16)
    np.testing.assert_allclose(out, np.arcsin(x) + np.arccos(x), rtol=1e-5, atol=1e-6)
