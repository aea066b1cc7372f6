"""Polynomial fits shared by the renderers that write their own math (LLVM, OpenCL C).

Why one place: the LLVM and OpenCL renderers both evaluate ``exp2`` with these coefficients
on AVX-512 hosts, and their results must agree bit for bit with each other on the same
machine (the difference tests compare backends).
"""

from __future__ import annotations

# 2^r on [-1/2, 1/2], lowest degree first: a near-minimax fit of relative error (Lawson iterations
# over Chebyshev nodes), each coefficient rounded to f32 before the higher ones were refitted;
# 3e-9 relative in exact arithmetic, 0.78 ulp in f32 Horner form with fused multiply-adds.
EXP2_POLY = (1.0, 0.6931471824645996, 0.24022647738456726, 0.05550359562039375, 0.00961849931627512,
             0.0013390971580520272, 0.0001532933092676103)  # fmt: skip

# exp2's argument is clamped to this range first: beyond it the result is inf / 0 anyway, and
# the clamp keeps rint(x) and x - rint(x) finite for +-inf.
EXP2_CLAMP = (-152.0, 129.0)

# exp2(x) rounds to 0 for every x <= this: 2^-150 is half the smallest subnormal, a tie, rounded to
# the even 0. The renderers compute no scaling for such lanes (an underflowing one is slow on Intel).
EXP2_ZERO = -150.0

__all__ = ["EXP2_CLAMP", "EXP2_POLY", "EXP2_ZERO"]
