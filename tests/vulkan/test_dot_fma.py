"""The dot accumulates with fused multiply-adds on vulkan, as on cpu and opencl.

Regression for difftest seeds 700632 and 800223: a 16x16 ``kl.dot`` whose products overflow
f32 to ``+inf`` in one step and ``-inf`` in another gave NaN on vulkan (product rounded, then
``inf + -inf``) and ``inf`` on cpu/opencl (``fma(a, b, inf)`` with an exact finite product).
``kdsl/codegen/spirv/contract.py`` emits each dot step as an exact fma.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend


@kdsl.kernel
def dot16(a, b, out):
    r = kl.arange(0, 16)
    idx = r[:, None] * 16 + r[None, :]
    kl.store(out + idx, kl.dot(kl.load(a + idx), kl.load(b + idx)))


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(700632)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    # row 3 x column 5: +inf then -inf products (finite in exact arithmetic: 6e38 and -6e38)
    a[3, 2], b[2, 5] = 3e38, 2.0
    a[3, 9], b[9, 5] = -3e38, 2.0
    # row 7: the first product overflows to -inf, later ones are finite and huge
    a[7, 0], b[0, :] = -3e38, 4.0
    a[7, 1], b[1, :] = 3e38, 3.0
    # row 11: products that round differently fused and unfused (exact rounding is checked bitwise)
    a[11, :] = np.float32(1 + 2**-12)
    b[:, 8] = np.float32(1 + 2**-12)
    return a, b


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((16, 16), np.float32)
    with kdsl.backend("cpu"):
        dot16[(1,)](a, b, out)
    return out


@pytest.mark.parametrize("nt", [1, 64])  # 8: lavapipe's LLVM compile of this shader alone takes ~90 s
def test_dot_overflow_matches_cpu(nt: int) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("cpu backend unavailable (llvmlite): it is the reference here")
    a, b = _inputs()
    want = _reference(a, b)
    assert np.isposinf(want[3, 5]) or np.isneginf(want[3, 5])  # the overflow case is exercised
    assert not np.isnan(want).any()
    module = kdsl.compile_to_ir(dot16, a, b, want, optimize=True)
    kernel = VulkanBackend().compile(module, "dot16", LaunchOptions(num_threads=nt))
    got = np.full((16, 16), 7.0, np.float32)
    kernel.launch((1, 1, 1), [a, b, got])
    assert not np.isnan(got).any(), np.argwhere(np.isnan(got))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_plain_multiply_add_is_not_contracted() -> None:
    """A user's ``x * y + z`` (not a dot) keeps its two roundings, as on opencl (FP_CONTRACT OFF)."""

    @kdsl.kernel
    def muladd(x, y, z, out, BLOCK: kl.constexpr):
        i = kl.arange(0, BLOCK)
        kl.store(out + i, kl.load(x + i) * kl.load(y + i) + kl.load(z + i))

    x = np.array([3e38, 1 + 2**-12] * 4, np.float32)
    y = np.array([2.0, 1 + 2**-12] * 4, np.float32)
    z = np.array([-np.inf, -1.0] * 4, np.float32)
    out = np.zeros(8, np.float32)
    module = kdsl.compile_to_ir(muladd, x, y, z, out, optimize=True, BLOCK=8)
    VulkanBackend().compile(module, "muladd", LaunchOptions(num_threads=8)).launch((1, 1, 1), [x, y, z, out])
    with np.errstate(over="ignore", invalid="ignore"):
        want = x * y + z
    np.testing.assert_array_equal(out, want)
