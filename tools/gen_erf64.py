"""Print the Chebyshev coefficients of ``erfc(x) * exp(x*x)`` that the vulkan backend's f64 ``erf``
uses (``ERF_COEFS`` in ``kdsl/codegen/spirv/mathlib64.py``).

Why a generator and literals: interpolating in doubles leaves ~1e-16 of noise on every coefficient,
and at the ends of an interval those errors add up (~1e-14 measured); computed here with 300-bit
arithmetic and rounded once, the coefficients are exact to half an ulp. Needs ``mpmath`` (a
development tool, not a kdsl dependency). ``tests/vulkan/test_math_f64.py`` recomputes them when
mpmath is installed.

Usage: python tools/gen_erf64.py
"""

from __future__ import annotations

PIECES = ((1.0, 2.0), (2.0, 3.5), (3.5, 6.0))
TOL = 2.0**-62  # stop when the remaining coefficients are below this, relative to the first


def coefficients(lo: float, hi: float) -> tuple[float, ...]:
    import mpmath

    mpmath.mp.prec = 300
    n = 48  # interpolation points; the series is cut where it is below TOL
    mid, half = (mpmath.mpf(lo) + hi) / 2, (mpmath.mpf(hi) - lo) / 2
    nodes = [mpmath.cos(mpmath.pi * (j + mpmath.mpf(0.5)) / n) for j in range(n)]
    vals = [mpmath.erfc(mid + half * u) * mpmath.exp((mid + half * u) ** 2) for u in nodes]
    coefs = []
    for k in range(n):
        s = mpmath.fsum(v * mpmath.cos(mpmath.pi * k * (j + mpmath.mpf(0.5)) / n) for j, v in enumerate(vals))
        coefs.append(s * (1 if k == 0 else 2) / n)
    last = max(k for k, c in enumerate(coefs) if abs(c) > TOL * abs(coefs[0]))
    return tuple(float(c) for c in coefs[: last + 1])


def main() -> None:
    print("ERF_COEFS = (")
    for lo, hi in PIECES:
        cs = coefficients(lo, hi)
        print(f"    (  # [{lo}, {hi}], {len(cs)} terms")
        for c in cs:
            print(f"        {c!r},")
        print("    ),")
    print(")")


if __name__ == "__main__":
    main()
