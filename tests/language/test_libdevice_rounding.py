"""libdevice's directed rounding (``add/sub/mul/div/rcp/sqrt/fma`` ``_rz/_rd/_ru``) and its
conversions with a rounding mode, bit for bit against exact references.

The reference rounds the exact result -- a ``fractions.Fraction`` for the rational operations,
a bracketing by squares for ``sqrt`` -- to the target format in the requested direction, with
IEEE overflow (+-inf or the largest finite value, by direction), subnormals and signed zeros.
Inputs are adversarial: random bit patterns (every exponent, so products and quotients overflow
and underflow), operands of close exponents, cancelling sums, exact ties, and the special values
crossed with each other. One kernel per dtype computes every function, so each backend compiles
twice (vulkan's compiles are slow).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.language.extra import libdevice

MODES = ("rz", "rd", "ru")
FMT = {np.float32: (24, -126, 127), np.float64: (53, -1022, 1023)}


def round_exact(q: Fraction, mode: str, dtype: type, neg_zero: bool = False) -> float:
    """The exact value ``q`` rounded to ``dtype`` in direction ``mode`` (rn rz rd ru)."""
    p, emin, emax = FMT[dtype]
    if q == 0:
        return -0.0 if neg_zero else 0.0
    neg, a = q < 0, abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    m = a / quantum
    lo = m.numerator // m.denominator
    up = {"rz": False, "rd": neg, "ru": not neg}.get(mode)
    if up is None:  # to nearest, ties to even
        frac = m - lo
        n = lo + (1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2) else 0)
    else:
        n = lo + (1 if up and m != lo else 0)
    v = n * quantum
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    overflow = math.inf if (up is None or up) else float(largest)
    v_f = overflow if v > largest else float(v)
    return -v_f if neg else v_f


def _q(x: float) -> Fraction:
    return Fraction(float(x))


def reference(op: str, mode: str, dtype: type, x: float, y: float, z: float) -> float:
    """``op`` on float operands (NaN/inf by IEEE, via numpy), else rounded exactly."""
    with np.errstate(all="ignore"):
        rn = {"add": lambda: dtype(x) + dtype(y), "sub": lambda: dtype(x) - dtype(y),
              "mul": lambda: dtype(x) * dtype(y), "div": lambda: dtype(x) / dtype(y),
              "rcp": lambda: dtype(1) / dtype(x), "sqrt": lambda: np.sqrt(dtype(x)),
              "fma": lambda: dtype(np.float64(x) * np.float64(y) + np.float64(z))}[op]()  # fmt: skip
    operands = {"add": (x, y), "sub": (x, y), "mul": (x, y), "div": (x, y), "rcp": (x,), "sqrt": (x,),
                "fma": (x, y, z)}[op]  # fmt: skip
    by_zero = op in ("div", "rcp") and (y if op == "div" else x) == 0
    if not all(math.isfinite(v) for v in operands) or by_zero:
        return float(rn)
    if op == "sqrt":
        return _sqrt_ref(x, mode, dtype)
    q = [_q(v) for v in operands]
    exact = {"add": lambda: q[0] + q[1], "sub": lambda: q[0] - q[1], "mul": lambda: q[0] * q[1],
             "div": lambda: q[0] / q[1], "rcp": lambda: 1 / q[0], "fma": lambda: q[0] * q[1] + q[2]}[op]()  # fmt: skip
    neg_zero = False
    if exact == 0:  # IEEE 754 6.3: the sign of an exact zero
        terms = {"add": (x, y), "sub": (x, -y), "fma": (math.copysign(0.0, x) * y if x * y == 0 else x * y, z)}
        if op in terms:
            a, b = terms[op]
            both_neg = math.copysign(1, a) < 0 and math.copysign(1, b) < 0
            neg_zero = both_neg or (mode == "rd" and not (math.copysign(1, a) > 0 and math.copysign(1, b) > 0))
        else:
            neg_zero = math.copysign(1.0, float(rn)) < 0
    return round_exact(exact, mode, dtype, neg_zero)


def _sqrt_ref(x: float, mode: str, dtype: type) -> float:
    if x < 0:
        return math.nan
    if x == 0:
        return x
    r = float(np.sqrt(np.float64(x)).astype(dtype))  # correctly rounded (53 >= 2 * 24 + 2)
    qx, qr = _q(x), _q(r)
    if qr * qr == qx:
        return r
    step = np.nextafter(dtype(r), dtype(math.inf if qr * qr < qx else 0.0))
    lo, hi = sorted((r, float(step)))
    return hi if mode == "ru" else lo


def _inputs(dtype: type, n: int = 400) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    ut = np.uint32 if dtype == np.float32 else np.uint64
    info = np.iinfo(ut)
    bits = lambda k: rng.integers(0, info.max, k, dtype=ut, endpoint=True).view(dtype)  # noqa: E731
    p = FMT[dtype][0]
    close = lambda k: (rng.uniform(1, 2, k) * 2.0 ** rng.integers(-5, 5, k)).astype(dtype)  # noqa: E731
    fi = np.finfo(dtype)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, fi.max, -fi.max, fi.tiny, -fi.tiny,
                         fi.smallest_subnormal, -fi.smallest_subnormal, 3.0, 2.0 ** -p, 1 + 2.0 ** (1 - p)],
                        dtype)  # fmt: skip
    sx, sy = (a.ravel() for a in np.meshgrid(specials, specials))
    x = np.concatenate([bits(n), close(n), close(n), sx, [1.0, 1.0, 2.0 ** (p - 1)]]).astype(dtype)
    y = np.concatenate([bits(n), close(n), -close(n), sy, [2.0 ** -p, -(2.0 ** -p), 0.5]]).astype(dtype)
    y[n: 2 * n: 7] = -x[n: 2 * n: 7]  # exact cancellation
    z = np.concatenate([bits(n), -(x[n: 2 * n] * y[n: 2 * n]), close(n), sy[::-1], [0.0, -0.0, 1.0]]).astype(dtype)
    return x, y, z


OPS = ("add", "sub", "mul", "div", "rcp", "sqrt", "fma")


@kdsl.kernel
def directed_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, HAS_FMA: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    y = kl.load(y_ptr + offs, mask=m)
    z = kl.load(z_ptr + offs, mask=m)
    kl.store(out_ptr + offs, libdevice.add_rz(x, y), mask=m)
    kl.store(out_ptr + n + offs, libdevice.add_rd(x, y), mask=m)
    kl.store(out_ptr + 2 * n + offs, libdevice.add_ru(x, y), mask=m)
    kl.store(out_ptr + 3 * n + offs, libdevice.sub_rz(x, y), mask=m)
    kl.store(out_ptr + 4 * n + offs, libdevice.sub_rd(x, y), mask=m)
    kl.store(out_ptr + 5 * n + offs, libdevice.sub_ru(x, y), mask=m)
    kl.store(out_ptr + 6 * n + offs, libdevice.mul_rz(x, y), mask=m)
    kl.store(out_ptr + 7 * n + offs, libdevice.mul_rd(x, y), mask=m)
    kl.store(out_ptr + 8 * n + offs, libdevice.mul_ru(x, y), mask=m)
    kl.store(out_ptr + 9 * n + offs, libdevice.div_rz(x, y), mask=m)
    kl.store(out_ptr + 10 * n + offs, libdevice.div_rd(x, y), mask=m)
    kl.store(out_ptr + 11 * n + offs, libdevice.div_ru(x, y), mask=m)
    kl.store(out_ptr + 12 * n + offs, libdevice.rcp_rz(x), mask=m)
    kl.store(out_ptr + 13 * n + offs, libdevice.rcp_rd(x), mask=m)
    kl.store(out_ptr + 14 * n + offs, libdevice.rcp_ru(x), mask=m)
    kl.store(out_ptr + 15 * n + offs, libdevice.sqrt_rz(x), mask=m)
    kl.store(out_ptr + 16 * n + offs, libdevice.sqrt_rd(x), mask=m)
    kl.store(out_ptr + 17 * n + offs, libdevice.sqrt_ru(x), mask=m)
    if HAS_FMA:
        kl.store(out_ptr + 18 * n + offs, libdevice.fma_rz(x, y, z), mask=m)
        kl.store(out_ptr + 19 * n + offs, libdevice.fma_rd(x, y, z), mask=m)
        kl.store(out_ptr + 20 * n + offs, libdevice.fma_ru(x, y, z), mask=m)


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN."""
    return (got.view(np.uint8).reshape(got.size, -1) == want.view(np.uint8).reshape(want.size, -1)).all(1) | (
        np.isnan(got) & np.isnan(want))  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_directed_arithmetic(backend: str, dtype: type) -> None:
    x, y, z = _inputs(dtype)
    n = x.size
    ops = OPS if dtype == np.float32 else OPS[:-1]
    out = np.zeros(len(ops) * 3 * n, dtype)
    directed_kernel[(kdsl.cdiv(n, 256),)](x, y, z, out, n, HAS_FMA=dtype == np.float32, BLOCK=256)
    for k, (op, mode) in enumerate((op, mode) for op in ops for mode in MODES):
        got = out[k * n: (k + 1) * n]
        want = np.array([reference(op, mode, dtype, *v) for v in zip(x.tolist(), y.tolist(), z.tolist())], dtype)
        bad = np.nonzero(~_same(got, want))[0]
        assert bad.size == 0, (f"{op}_{mode}: {bad.size} wrong, e.g. x={x[bad[0]]!r} y={y[bad[0]]!r} z={z[bad[0]]!r}: "
                               f"got {got[bad[0]]!r}, want {want[bad[0]]!r}")  # fmt: skip


@kdsl.kernel
def fma64(x_ptr, y_ptr, z_ptr, out_ptr):
    r = kl.arange(0, 2)
    kl.store(out_ptr + r, libdevice.fma_rn(kl.load(x_ptr + r), kl.load(y_ptr + r), kl.load(z_ptr + r)))


def test_float64_fma_is_fused(backend: str) -> None:
    """libdevice.fma_rn rounds once (tests/semantic/test_math.py checks f32), on vulkan too: lavapipe's
    f64 ``Fma`` is not fused, so the SPIR-V renderer computes it exactly (docs/VULKAN.md)."""
    e = 2.0**-30
    x = np.array([1 + e, 1 + 2 * e])
    z = np.array([-(1 + 2 * e), -(1 + 4 * e)])
    out = np.zeros(2)
    fma64[(1,)](x, x.copy(), z, out)
    assert list(out) == [e * e, 4 * e * e]


@kdsl.kernel
def fma_rz_kernel(x_ptr):
    kl.store(x_ptr, libdevice.fma_rz(kl.load(x_ptr), 1.0, 1.0))


def test_float64_fma_directed_is_refused() -> None:
    x = np.zeros(1, np.float64)
    with pytest.raises(CompilationError, match=r"libdevice\.fma_rz: float64 is not available"):
        fma_rz_kernel[(1,)](x)


# --- conversions ---------------------------------------------------------------------------------
ROUND = ("rn", "rz", "rd", "ru")
INT_OF = {"int": np.int32, "uint": np.uint32, "ll": np.int64, "ull": np.uint64}
SIGNED = {np.int32: np.int32, np.uint32: np.int32, np.int64: np.int64, np.uint64: np.int64}


@kdsl.kernel
def four_modes(x_ptr, out_ptr, n, F0: kl.constexpr, F1: kl.constexpr, F2: kl.constexpr, F3: kl.constexpr,
               BLOCK: kl.constexpr):  # fmt: skip
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    kl.store(out_ptr + offs, F0(x), mask=m)
    kl.store(out_ptr + n + offs, F1(x), mask=m)
    kl.store(out_ptr + 2 * n + offs, F2(x), mask=m)
    kl.store(out_ptr + 3 * n + offs, F3(x), mask=m)


def _run4(prefix: str, x: np.ndarray, out_dtype: type) -> np.ndarray:
    out = np.zeros(4 * x.size, out_dtype)
    fns = {f"F{i}": getattr(libdevice, f"{prefix}_{m}") for i, m in enumerate(ROUND)}
    four_modes[(kdsl.cdiv(x.size, 256),)](x, out, x.size, BLOCK=256, **fns)
    return out.reshape(4, x.size)


def _float_inputs(dtype: type) -> np.ndarray:
    rng = np.random.default_rng(9)
    halves = np.arange(-12, 12) / 2  # exact ties
    big = [2.0**31, 2.0**31 - 128, -(2.0**31), -(2.0**31) - 256, 2.0**32, 2.0**32 - 256, 2.0**63, -(2.0**63),
           2.0**64, 2.0**63 - 1024, 1e30, -1e30, np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-40, -1e-40, 4294967295.5]
    x = np.concatenate([halves, rng.uniform(-3e9, 5e9, 300), rng.uniform(-10, 10, 100),
                        rng.standard_normal(100) * 2.0 ** rng.integers(0, 70, 100), big])  # fmt: skip
    return x.astype(dtype)


def _int_ref(x: np.ndarray, mode: str, it: type) -> np.ndarray:
    f = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode]
    info = np.iinfo(it)
    out = []
    for v in f(x.astype(np.float64)).tolist():
        k = 0 if math.isnan(v) else info.max if v >= info.max else info.min if v <= info.min else int(v)
        out.append(k)
    return np.array(out, dtype=object).astype(it).view(SIGNED[it])


@pytest.mark.parametrize("src", ["float", "double"])
def test_float_to_int(backend: str, src: str) -> None:
    dtype = np.float32 if src == "float" else np.float64
    x = _float_inputs(dtype)
    for name, it in INT_OF.items():
        got = _run4(f"{src}2{name}", x, SIGNED[it])
        for row, mode in zip(got, ROUND):
            want = _int_ref(x, mode, it)
            bad = np.nonzero(row != want)[0]
            assert bad.size == 0, f"{src}2{name}_{mode}({x[bad[0]]!r}) = {row[bad[0]]}, want {want[bad[0]]}"


def _check_rows(got: np.ndarray, exact: list[Fraction | float], dtype: type, what: str) -> None:
    for row, mode in zip(got, ROUND):
        want = np.array([round_exact(q, mode, dtype) if isinstance(q, Fraction) else q for q in exact], dtype)
        bad = np.nonzero(~_same(row, want))[0]
        assert bad.size == 0, f"{what}_{mode}: input {bad[0]} gives {row[bad[0]]!r}, want {want[bad[0]]!r}"


def test_double_to_float(backend: str) -> None:
    rng = np.random.default_rng(2)
    fi = np.finfo(np.float32)
    x = np.concatenate([rng.integers(0, 2**64 - 1, 400, dtype=np.uint64).view(np.float64) * 0 +
                        rng.standard_normal(400) * 2.0 ** rng.integers(-160, 130, 400),
                        [float(fi.max) * (1 + 2.0**-25), float(fi.max) * (1 + 2.0**-23), 2.0**128, -2.0**128,
                         2.0**-150, 2.0**-151, 3 * 2.0**-151, -2.0**-150, 1 + 2.0**-24, 1 + 3 * 2.0**-25,
                         0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e-300]])  # fmt: skip
    got = _run4("double2float", x, np.float32)
    _check_rows(got, [Fraction(v) if math.isfinite(v) and v != 0 else v for v in x.tolist()], np.float32, "double2float")


@pytest.mark.parametrize(("name", "dst"), [(n, d) for n in INT_OF for d in ("float", "double")
                                           if not (d == "double" and n in ("int", "uint"))])  # fmt: skip
def test_int_to_float(backend: str, name: str, dst: str) -> None:
    it = INT_OF[name]
    info = np.iinfo(it)
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.integers(info.min, info.max, 300, dtype=it, endpoint=True),
                        (rng.integers(0, 2**20, 100) << rng.integers(0, info.bits - 21, 100)).astype(it),
                        np.array([0, 1, info.max, info.min, info.max - 1, 2**24 + 1, 2**53 + 1
                                  if info.bits == 64 else 2**25 + 3], dtype=it)])  # fmt: skip
    if info.min < 0:
        x[300:400:2] = -x[300:400:2]
    got = _run4(f"{name}2{dst}", x, np.float32 if dst == "float" else np.float64)
    _check_rows(got, [Fraction(int(v)) for v in x], np.float32 if dst == "float" else np.float64, f"{name}2{dst}")


@kdsl.kernel
def exact_to_double(i_ptr, u_ptr, out_ptr, N: kl.constexpr):
    r = kl.arange(0, N)
    kl.store(out_ptr + r, libdevice.int2double_rn(kl.load(i_ptr + r)))
    kl.store(out_ptr + N + r, libdevice.uint2double_rn(kl.load(u_ptr + r)))


def test_int2double_rn_and_refusals(backend: str) -> None:
    i = np.array([0, -1, 2**31 - 1, -(2**31)], np.int32)
    u = np.array([0, 1, 2**32 - 1, 2**31], np.uint32)
    out = np.zeros(8)
    exact_to_double[(1,)](i, u, out, N=4)
    assert list(out) == [*map(float, i.tolist()), *map(float, u.tolist())]
    if backend == "interpreter":
        with pytest.raises(CompilationError, match=r"libdevice\.int2double_rn expects int32, got u32"):
            exact_to_double[(1,)](u, u, out, N=4)
