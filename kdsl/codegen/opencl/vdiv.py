"""OpenCL C for an f32 vector divided by a uniform scalar, correctly rounded without a vector divide.

Why: a ``float16`` division is one ``vdivps`` on AVX-512 (PoCL on this host), 10-16 cycles per
16 lanes because the divider is not pipelined, and the normalisation pass of a row softmax
(``numerator / denominator``) is a quarter of its time. With ``r = 1/s`` computed once (the
divisor is uniform, so the compiler hoists it out of the element loop), ``q = x r``, the exact
remainder ``e = fma(-q, s, x)`` and ``fma(e, r, q)`` give the correctly rounded quotient when
nothing underflows or overflows (Markstein's theorem) -- the same bits as ``/``; the cpu backend
emits the same sequence (``codegen/llvm/vector.py``: ``divide_by_uniform``, whose docstring says
how it was checked); which divisions qualify and the safe ranges are
:mod:`kdsl.codegen.uniform_div`, shared by both. Vectors with a lane outside the ranges, a NaN or an
infinity take a plain division, written as two half-width divisions so that the compiler, whose
if-conversion would otherwise speculate one cheap-looking divide and put it back on every
vector, keeps it behind the branch.
"""

from __future__ import annotations

from kdsl.codegen.opencl.vmem import Helper
from kdsl.codegen.uniform_div import S_RANGE, X_RANGE

LANES = (2, 4, 8, 16)


def _all(mask: str, lanes: int) -> tuple[str, str]:
    """(statements, condition) for ``all(mask)`` as a tree of ``&`` over halves: PoCL's ``all()``
    tests lane by lane, with a branch per lane."""
    lines, cur, n = [], mask, lanes
    while n > 2:
        n //= 2
        lines.append(f"  const int{n} {mask}{n} = {cur}.lo & {cur}.hi;\n")
        cur = f"{mask}{n}"
    return "".join(lines), f"(({cur}.x & {cur}.y) < 0)"


def _hex(v: float) -> str:
    """A power of two as a C hex float without padding (``0x1p-80``)."""
    mant, _, exp = float(v).hex().partition("p")
    return f"{mant.rstrip('0').rstrip('.')}p{exp.lstrip('+')}"


def declare(helper: Helper, lanes: int) -> str:
    """The name of ``kd_divu<lanes>(floatN x, float s)``, defined once per kernel source."""
    name = f"kd_divu{lanes}"
    halves = "x.x / s, x.y / s" if lanes == 2 else "x.lo / s, x.hi / s"
    fold, every = _all("ok", lanes)
    (xlo, xhi), (slo, shi) = (_hex(v) for v in X_RANGE), (_hex(v) for v in S_RANGE)
    return helper(
        name,
        f"""\
inline float{lanes} {name}(float{lanes} x, float s) {{
  const float r = 1.0f / s;
  const float{lanes} q = x * r;
  const float{lanes} q1 = fma(fma(-q, (float{lanes})(s), x), (float{lanes})(r), q);
  const float{lanes} ax = fabs(x);
  const int{lanes} zero = x == 0.0f;
  const int{lanes} ok = ((ax >= {xlo}f) & (ax <= {xhi}f)) | zero;
  const float as = fabs(s);
{fold}  if ({every} && as >= {slo}f && as <= {shi}f) return select(q1, q, zero);
  return (float{lanes})({halves});
}}
""",
    )
