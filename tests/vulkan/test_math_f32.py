"""f32 ``sin``/``cos``/``log``/``log2`` on vulkan (``kdsl/codegen/spirv/accurate32.py``) against
numpy in f64: lavapipe's own ``Sin``/``Cos`` reduce the argument in single precision and its
``Log``/``Log2`` mishandle subnormals, so kdsl computes sin/cos itself and guards the logs.
Every decade of magnitude up to the largest f32, both sides of each step of the reduction's
window of 2/pi, the f32 nearest to a multiple of pi/2, subnormal and special arguments."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.spirv.accurate32 import WINDOW_STEPS


@kdsl.kernel
def f32_math_kernel(x_ptr, s_ptr, c_ptr, l_ptr, l2_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m, other=1.0)
    kl.store(s_ptr + offs, kl.sin(x), mask=m)
    kl.store(c_ptr + offs, kl.cos(x), mask=m)
    kl.store(l_ptr + offs, kl.log(x), mask=m)
    kl.store(l2_ptr + offs, kl.log2(x), mask=m)


def _run(x: np.ndarray) -> list[np.ndarray]:
    outs = [np.zeros_like(x) for _ in range(4)]
    with kdsl.backend("vulkan"):
        f32_math_kernel[(kdsl.cdiv(x.size, 1024),)](x, *outs, x.size, BLOCK=1024)
    return outs


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the f32 spacing at ``want`` (relative to the result)."""
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / np.maximum(spacing, np.finfo(np.float32).smallest_subnormal)


def test_sin_cos_every_decade() -> None:
    rng = np.random.default_rng(7)
    mags = np.concatenate([rng.uniform(1, 10, 512) * 10.0**e for e in range(-3, 38)])
    x = (mags * rng.choice([-1.0, 1.0], mags.size)).astype(np.float32)
    below = [np.nextafter(np.float32(s), 0) for s in WINDOW_STEPS]  # the window of 2/pi moves at each step
    edges = [*WINDOW_STEPS, *below, 512, 2.0**30, np.finfo(np.float32).max]
    hard = [16367173 * 2.0**72, 13176795 * 2.0**-22, 2.0**24 * np.pi]  # 16367173 * 2**72: nearest f32 to k pi/2
    x = np.concatenate([x, np.float32(edges), np.float32(hard), -np.float32(edges)])
    s, c, _, _ = _run(x)
    xd = x.astype(np.float64)
    # the exact reduction and f64 polynomials, rounded once: 0.503 ulp measured over all f32
    assert _ulps(s, np.sin(xd)).max() <= 0.51
    assert _ulps(c, np.cos(xd)).max() <= 0.51


def test_special_arguments() -> None:
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 2.9e-39, 1.4e-45, np.finfo(np.float32).tiny, -1.0])
    s, c, lg, lg2 = _run(x)
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        for got, ref in ((s, np.sin(xd)), (c, np.cos(xd)), (lg, np.log(xd)), (lg2, np.log2(xd))):
            want = ref.astype(np.float32)
            finite = np.isfinite(want)
            assert (np.isnan(got) == np.isnan(want)).all(), (got, want)
            assert (got[~finite & ~np.isnan(want)] == want[~finite & ~np.isnan(want)]).all()
            assert _ulps(got[finite], ref[finite]).max() <= 2, (got, want)
    assert np.signbit(s[1])  # sin(-0.0) = -0.0


@pytest.mark.parametrize("lo", [-149, -140, -130, -127])
def test_logs_of_subnormals(lo: int) -> None:
    rng = np.random.default_rng(-lo)
    x = np.exp2(rng.uniform(lo, lo + 3, 2048)).astype(np.float32)
    x = x[x > 0]
    _, _, lg, lg2 = _run(x)
    xd = x.astype(np.float64)
    assert _ulps(lg, np.log(xd)).max() <= 2
    assert _ulps(lg2, np.log2(xd)).max() <= 2
