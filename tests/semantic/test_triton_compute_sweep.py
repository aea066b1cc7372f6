"""Compute-area cases ported from Triton's unit tests and documented semantics
(python/test/unit/language/test_core.py, triton/language/core.py, standard.py, math.py),
kept where they found a divergence or cover something the other semantic tests do not.

Facts checked (Triton's behaviour, reproduced by kdsl on every backend):
- ``tl.fma`` is one rounding of ``a*b + c``, also for float64 (LLVM ``llvm.fma``), including
  when the product alone overflows but the sum does not, or ``c`` cancels it.
- Python-scalar promotion (``semantic.computation_type_impl``): a scalar of a kind (bool <
  int < float) no higher than the tensor's takes the tensor's type; a float scalar with an
  int tensor takes its own type, float64 when the value is not representable as a normal
  float32 (``to_tensor_type``), so ``int32 + 1e300`` is float64 and ``int32 + 0.1`` float32.
- Reverse scans combine ``combine(accumulated_right_part, element)``, like the forward scan
  of the flipped input.
- ``sum``/``cumsum`` of bool accumulate in uint32 (``_pick_sum_dtype``: int1 is unsigned);
  ``max`` of bool/uint8 widen to int32; ``xor_sum`` keeps the type.
Integer references are exact; float references exact unless a tolerance is named.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def fma_kernel(a_ptr, b_ptr, c_ptr, o_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    r = kl.fma(kl.load(a_ptr + offs), kl.load(b_ptr + offs), kl.load(c_ptr + offs))
    kl.store(o_ptr + offs, r)


def _fma_ref(a: float, b: float, c: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c
    try:
        return float(exact)
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


def test_fma_float64_single_rounding(backend: str) -> None:
    rng = np.random.default_rng(7)
    n = 64
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n)
    b = rng.standard_normal(n)
    c = -(a * b) * (1 + rng.standard_normal(n) * 1e-12)  # heavy cancellation: the product's low bits decide
    c[::3] = rng.standard_normal(n)[::3]
    a[:6] = [1 + 2**-30, 0.0, -0.0, 1e300, 1e-300, 3.0]
    b[:6] = [1 + 2**-30, 5.0, 5.0, 1e10, 1e-20, 0.0]
    c[:6] = [-(1 + 2**-29), -0.0, 0.0, -1e300, 1e-310, -0.0]  # [0] is 2**-60 fused, 0 unfused
    want = np.array([_fma_ref(*v) for v in zip(a.tolist(), b.tolist(), c.tolist())])
    out = np.zeros(n)
    fma_kernel[(1,)](a, b, c, out, N=n)
    assert np.array_equal(out.view(np.uint64), want.view(np.uint64)), (out - want)[out != want]
