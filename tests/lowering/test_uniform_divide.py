"""f32 division by a uniform divisor: correctly rounded without a vector divide (cpu, OpenCL).

``x / s`` with ``s`` the same for every lane (a scalar, a reduction result) is rendered as one
reciprocal and Markstein's correction (``codegen/llvm/vector.py`` ``divide_by_uniform``,
``codegen/opencl/vdiv.py``); vectors with a lane outside the safe ranges fall back to a plain
divide. The bits must equal numpy's ``x / s`` on every backend, specials included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl

BLOCK = 1024


@kdsl.kernel
def div_by_row_scalar(x, s, y, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    i = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = i < n
    d = kl.load(s + kl.program_id(0))
    kl.store(y + i, kl.load(x + i, mask=m) / d, mask=m)


@kdsl.kernel
def normalise_rows(x, y, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    row = kl.program_id(0)
    v = kl.load(x + row * BLOCK + kl.arange(0, BLOCK))
    kl.store(y + row * BLOCK + kl.arange(0, BLOCK), v / kl.sum(kl.abs(v), axis=0))


def _same_bits(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    same: np.ndarray[Any, Any] = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    return same


def _random_floats(rng: np.random.Generator, n: int) -> np.ndarray[Any, Any]:
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32).copy()


def test_bits_equal_numpy_with_specials(backend: str) -> None:
    """Random bit patterns (every exponent, NaNs, infinities, subnormals) over divisors of every
    kind: the fast path, the per-vector fallback and the uniform fallback all give ``x / s``."""
    rng = np.random.default_rng(3)
    rows = 96
    x = _random_floats(rng, rows * BLOCK)
    x[::17], x[1::17], x[2::97], x[3::101], x[4::103] = 0.0, -0.0, np.inf, np.nan, 1e-42
    x[BLOCK : 2 * BLOCK] = rng.standard_normal(BLOCK)  # whole vectors on the fast path
    x[2 * BLOCK : 3 * BLOCK] = np.where(rng.random(BLOCK) < 0.5, 0.0, -0.0)
    s = _random_floats(rng, rows)
    s[::3] = rng.standard_normal(len(s[::3])).astype(np.float32)
    s[5:14] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3e38, 2.0**-40, 2.0**40]
    s[14:17] = [np.nextafter(np.float32(2.0**-40), 0), np.nextafter(np.float32(2.0**40), np.inf), 1.0]
    y = np.empty_like(x)
    div_by_row_scalar[(rows,)](x, s, y, x.size, BLOCK=BLOCK)
    with np.errstate(all="ignore"):
        want = x / np.repeat(s, BLOCK)
    bad = ~_same_bits(y, want)
    assert not bad.any(), (int(bad.sum()), x[bad][:3], np.repeat(s, BLOCK)[bad][:3], y[bad][:3], want[bad][:3])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31), scale=st.sampled_from([1e-30, 1e-3, 1.0, 1e3, 1e30]))
def test_normalised_rows_equal_numpy(backend: str, seed: int, scale: float) -> None:
    """The divisor is a row reduction (softmax's shape), as in the normalisation pass of a softmax."""
    x = (np.random.default_rng(seed).standard_normal((4, 256)) * scale).astype(np.float32)
    y = np.empty_like(x)
    normalise_rows[(4,)](x, y, BLOCK=256)
    # the kernel's sum may round differently from numpy's (Triton leaves the order unspecified)
    want = x / np.abs(x).sum(axis=1, keepdims=True, dtype=np.float32)
    np.testing.assert_allclose(y, want, rtol=2e-6)


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_generated_code_has_no_divide_on_the_fast_path(target: str) -> None:
    if target not in kdsl.available_backends():
        pytest.skip(f"backend {target!r} unavailable (see tests/conftest.py for what to install)")
    x = np.ones(BLOCK, np.float32)
    with kdsl.backend(target):
        warmed = div_by_row_scalar.warmup(x, x, x, BLOCK, BLOCK=BLOCK, grid=(1,))
    if target == "cpu":
        llir = warmed.asm["llir"]
        assert "kd_fdiv_v" in llir and "llvm.fma.v" in llir  # the fallback is a call; the fast path fmas
    else:
        assert any("kd_divu" in str(v) for k, v in warmed.asm.items() if k.endswith("cl")), sorted(warmed.asm)
