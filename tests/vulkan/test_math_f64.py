"""f64 ``exp``/``exp2``/``log``/``log2``/``rsqrt``/``tanh``/``sin``/``cos`` on vulkan
(``kdsl/codegen/spirv/mathlib64.py``, ``trig64.py``) against numpy: at most 1 ulp on wide random
ranges (2 ulp asserted; tanh 3), special values exactly (NaN, +-inf, +-0, subnormal inputs and
results, the overflow/underflow thresholds); sin/cos also at the hardest arguments for the
reduction, against values computed with 2500-bit arithmetic (mpmath)."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.codegen.spirv import Target, emit_spirv
from kdsl.lowering import Layout, lower_to_wi

FUNCS = {
    "exp": (kl.exp, np.exp),
    "exp2": (kl.exp2, np.exp2),
    "log": (kl.log, np.log),
    "log2": (kl.log2, np.log2),
    "rsqrt": (kl.rsqrt, lambda x: 1 / np.sqrt(x)),
    "tanh": (kl.tanh, np.tanh),
    "sin": (kl.sin, np.sin),
    "cos": (kl.cos, np.cos),
    "erf": (kl.erf, np.vectorize(math.erf, otypes=[np.float64])),
}
SPECIALS = np.array([
    0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 3.0, 0.1, 1024.0, 1e300, 2.0**-1074, 2.0**-1022,
    1e-310, 709.78, 709.79, 709.782712893384, -745.13, -745.1332191019412, -745.2, -708.4, -720.0,
    1023.99, 1024.0, -1022.0, -1074.0, -1075.0, -1076.0, 2.0**1023, np.finfo(np.float64).max,
])  # fmt: skip


@kdsl.kernel
def unary_f64(x_ptr, out_ptr, n, FN: kl.constexpr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    if FN == "exp":
        y = kl.exp(x)
    elif FN == "exp2":
        y = kl.exp2(x)
    elif FN == "log":
        y = kl.log(x)
    elif FN == "log2":
        y = kl.log2(x)
    elif FN == "tanh":
        y = kl.tanh(x)
    elif FN == "sin":
        y = kl.sin(x)
    elif FN == "cos":
        y = kl.cos(x)
    elif FN == "erf":
        y = kl.erf(x)
    else:
        y = kl.rsqrt(x)
    kl.store(out_ptr + offs, y, mask=m)


def _run(name: str, x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    with kdsl.backend("vulkan"):
        unary_f64[(kdsl.cdiv(x.size, 256),)](x, out, x.size, FN=name, BLOCK=256)
    return out


def _check(name: str, x: np.ndarray, max_ulp: float | None = None) -> None:
    max_ulp = max_ulp or (3.0 if name == "tanh" else 2.0)
    got = _run(name, x)
    with np.errstate(all="ignore"):
        want = FUNCS[name][1](x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions")
    exact = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(got[exact & ~np.isnan(want)], want[exact & ~np.isnan(want)], err_msg=name)
    fin = ~exact
    ulps = np.abs(got[fin] - want[fin]) / np.spacing(np.abs(want[fin]))
    worst = int(np.argmax(ulps)) if ulps.size else 0
    assert ulps.size == 0 or ulps.max() <= max_ulp, f"{name}({x[fin][worst]!r}): {ulps.max()} ulp"


def _inputs(name: str) -> np.ndarray:
    rng = np.random.default_rng(len(name))
    if name == "tanh":
        return np.concatenate([SPECIALS, -SPECIALS, rng.uniform(-1, 1, 3000), rng.uniform(-25, 25, 3000),
                               np.exp2(rng.uniform(-1074, -1, 1000)) * rng.choice([-1, 1], 1000)])  # fmt: skip
    if name == "erf":
        return np.concatenate([SPECIALS, -SPECIALS, rng.uniform(-1, 1, 3000), rng.uniform(-7, 7, 4000),
                               np.exp2(rng.uniform(-1074, -1, 500)), [1.0, -1.0, 2.0, 3.5, 6.0, 5.9999999]])  # fmt: skip
    if name in ("sin", "cos"):
        huge = np.exp2(rng.uniform(19, 1023.9, 3000)) * rng.choice([-1, 1], 3000)  # the Payne-Hanek path
        return np.concatenate([SPECIALS, -SPECIALS, rng.uniform(-4, 4, 3000), rng.uniform(-6e5, 6e5, 3000), huge,
                               np.exp2(rng.uniform(-1074, -1, 500))])  # fmt: skip
    if name.startswith("exp"):
        wide = rng.uniform(-1100 if name == "exp2" else -760, 1100 if name == "exp2" else 720, 4000)
        return np.concatenate([SPECIALS, wide, rng.uniform(-2, 2, 2000)])
    pos = np.exp2(rng.uniform(-1074, 1023.9, 4000))
    return np.concatenate([SPECIALS, pos, rng.uniform(0.5, 2.0, 2000), -pos[:50]])


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_f64_math_matches_numpy(name: str) -> None:
    _check(name, _inputs(name))


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(FUNCS)), st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=64))
def test_f64_math_any_double(name: str, xs: list[float]) -> None:
    _check(name, np.array(xs, np.float64))


# (x, sin x, cos x) from mpmath at 2500 bits. 6381956970095103 * 2**797 is the double closest to a
# multiple of pi/2 (remainder ~2**-61); glibc's cos is 8 ulp off there, so numpy cannot judge it.
HARD = [
    (6381956970095103.0 * 2.0**797, "0x1.0000000000000p+0", "-0x1.14ae72e6ba22fp-61"),
    (1e22, "-0x1.b453ab76bf397p-1", "0x1.0be2cef01c8f4p-1"),
    (1.7976931348623157e308, "0x1.452fc98b34e97p-8", "-0x1.fffe62ecfab75p-1"),
    (524288.0, "0x1.57481ec90fde3p-3", "0x1.f8c1986ca67fap-1"),  # first argument of the large path
    (524287.99999999994, "0x1.57481ec7171cap-3", "0x1.f8c1986cbbf43p-1"),  # last of Cody-Waite
    (1.5707963267948966, "0x1.0000000000000p+0", "0x1.1a62633145c07p-54"),
    (3.141592653589793, "0x1.1a62633145c07p-53", "-0x1.0000000000000p+0"),
    (4.71238898038469, "-0x1.0000000000000p+0", "-0x1.a79394c9e8a0ap-53"),
    (1e300, "-0x1.a2c16b010e385p-1", "-0x1.2699022adc4c1p-1"),
    (8.988465674311579e307, "0x1.ffff98bb3443cp-1", "0x1.45300b2210ee6p-9"),
]


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_f64_trig_hard_arguments(name: str) -> None:
    xs = np.array([h[0] for h in HARD] + [-h[0] for h in HARD])
    want = np.array([float.fromhex(h[1 if name == "sin" else 2]) for h in HARD])
    want = np.concatenate([want, -want if name == "sin" else want])
    got = _run(name, xs)
    ulps = np.abs(got - want) / np.spacing(np.abs(want))
    assert ulps.max() <= 1.0, f"{name}({xs[np.argmax(ulps)]!r}): {ulps.max()} ulp"


def test_erf_coefficients_are_the_generated_ones() -> None:
    """``ERF_COEFS`` are what ``tools/gen_erf64.py`` computes (300-bit arithmetic)."""
    pytest.importorskip("mpmath")
    import importlib.util

    from kdsl.codegen.spirv.mathlib64 import ERF_COEFS, ERF_PIECES

    path = Path(__file__).resolve().parents[2] / "tools" / "gen_erf64.py"
    spec = importlib.util.spec_from_file_location("kdsl_gen_erf64", path)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.PIECES == ERF_PIECES
    assert tuple(gen.coefficients(lo, hi) for lo, hi in ERF_PIECES) == ERF_COEFS


@kdsl.kernel
def pow_f64(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) ** kl.load(y_ptr + offs, mask=m), mask=m)


def _check_pow(x: np.ndarray, y: np.ndarray) -> None:
    got = np.zeros_like(x)
    with kdsl.backend("vulkan"):
        pow_f64[(kdsl.cdiv(x.size, 256),)](x, y, got, x.size, BLOCK=256)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg="pow: NaN positions")
    exact = (~np.isfinite(want) | (want == 0)) & ~np.isnan(want)
    np.testing.assert_array_equal(got[exact], want[exact], err_msg="pow: specials")
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]), err_msg="pow: signs")
    fin = np.isfinite(want) & (want != 0)
    ulps = np.abs(got[fin] - want[fin]) / np.spacing(np.abs(want[fin]))
    worst = int(np.argmax(ulps)) if ulps.size else 0
    assert ulps.size == 0 or ulps.max() <= 2.0, f"pow({x[fin][worst]!r}, {y[fin][worst]!r}): {ulps.max()} ulp"


def test_f64_pow_matches_numpy() -> None:
    """Wide ranges (results up to the overflow/underflow edges, |y log x| near 745), x near 1 with
    large y (where log x must carry ~63 bits), negative x with integer y, and every pairing of
    C99's special values."""
    rng = np.random.default_rng(7)
    n = 3000
    x = np.concatenate([rng.uniform(0, 4, n), np.exp2(rng.uniform(-1074, 1023, n)), rng.uniform(0.99, 1.01, n),
                        -rng.uniform(0, 3, n)])  # fmt: skip
    y = np.concatenate([rng.uniform(-30, 30, n), rng.uniform(-1, 1, n), rng.uniform(-70000, 70000, n),
                        np.round(rng.uniform(-40, 40, n))])  # fmt: skip
    sx = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-310, -1e-310])
    sy = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 2.0, 0.5, -0.5, 1e300, -1e300, 1075.0])
    gx, gy = np.meshgrid(sx, sy)
    _check_pow(np.concatenate([x, gx.ravel()]), np.concatenate([y, gy.ravel()]))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.floats(), st.floats()), min_size=1, max_size=64))
def test_f64_pow_any_doubles(pairs: list[tuple[float, float]]) -> None:
    _check_pow(np.array([p[0] for p in pairs], np.float64), np.array([p[1] for p in pairs], np.float64))


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="install Debian spirv-tools")
@pytest.mark.parametrize("name", [*sorted(FUNCS), "pow"])
def test_f64_math_modules_validate(name: str, tmp_path: Path) -> None:
    """The lookup tables (function-local arrays), u64 limb arithmetic and selects pass spirv-val."""
    x = np.zeros(64)
    if name == "pow":
        module = kdsl.compile_to_ir(pow_f64, x, x, x, 64, optimize=True, BLOCK=64)
    else:
        module = kdsl.compile_to_ir(unary_f64, x, x, 64, optimize=True, FN=name, BLOCK=64)
    kname = "pow_f64" if name == "pow" else "unary_f64"
    spirv = emit_spirv(lower_to_wi(module, kname, Layout(num_threads=64)), Target())  # type: ignore[arg-type]
    path = tmp_path / "k.spv"
    path.write_bytes(spirv.binary)
    r = subprocess.run(["spirv-val", "--target-env", spirv.target_env, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout
