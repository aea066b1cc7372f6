"""OpenCL C for ``sin``/``cos`` on ``float16`` vectors, computed in double precision.

Why: PoCL's ``sin``/``cos`` on ``float16`` run lane by lane through its argument reduction
(``__pocl_argReductionS``): ``kdsl.ops.rope`` on PoCL spent 87 % of its time there and ran at
a seventh of the cpu backend's speed. This is the cpu backend's method (``codegen/llvm/vmath.py``
``_trig``) for the arguments that matter, on 16 lanes at once: in double, ``n = rint(x * 2/pi)``
(by adding and subtracting 1.5 * 2^52, exact here), ``r = x - n pi/2`` with a three-part
Cody-Waite ``pi/2`` (fma), Taylor polynomials on ``|r| <= pi/4``, the quadrant of ``n``, one
rounding to float at the end (0.5 ulp but for the final rounding's double-rounding cases). Lanes
of ``|x| >= 2^24``, infinite or NaN take the scalar builtin (those need the exact reduction of
huge arguments), computed only when a vector holds one; the others keep this result. PoCL's
*vector* builtins are never used: one huge lane corrupts the other lanes' results there. Without ``cl_khr_fp64`` or clang the helpers are macros for
the lane-by-lane builtins, so the generated source stays portable.
"""

from __future__ import annotations

from kdsl.codegen.opencl.vmem import Helper

# the cpu backend's coefficients and pi/2 split (kdsl/codegen/llvm/vmath.py)
_SIN = (-1 / 6, 1 / 120, -1 / 5040, 1 / 362880, -1 / 39916800, 1 / 6227020800)
_COS = (1.0, -1 / 2, 1 / 24, -1 / 720, 1 / 40320, -1 / 3628800, 1 / 479001600, -1 / 87178291200)
_PIO2 = (1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33)


def _horner(coeffs: tuple[float, ...], var: str) -> str:
    acc = f"{coeffs[-1]!r}"
    for c in reversed(coeffs[:-1]):
        acc = f"fma({acc}, {var}, {c!r})"
    return acc


def _source() -> str:
    p0, p1, p2 = (repr(v) for v in _PIO2)
    return f"""\
#if defined(cl_khr_fp64) && defined(__clang__)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
inline float16 kd_trig_v16(float16 x, long quadrant) {{
  const double16 y = convert_double16(x);
  const double16 n = (y * 0.6366197723675814 + 6755399441055744.0) - 6755399441055744.0;
  double16 r = fma(-n, {p0}, y);
  r = fma(-n, {p1}, r);
  r = fma(-n, {p2}, r);
  const double16 r2 = r * r;
  const double16 s = fma(r * r2, {_horner(_SIN, "r2")}, r);
  const double16 c = {_horner(_COS, "r2")};
  const long16 q = convert_long16(n) + quadrant;
  const double16 v = select(s, c, (q & 1L) != 0L);
  return convert_float16(select(v, -v, (q & 2L) != 0L));
}}
inline float16 kd_sin_v16(float16 x) {{
  const float16 f = select(kd_trig_v16(x, 0L), x, x == 0.0f);  /* sin(-0) = -0 */
  const int16 big = !(fabs(x) < 16777216.0f);
  return any(big) ? select(f, kd_sin16(x), big) : f;
}}
inline float16 kd_cos_v16(float16 x) {{
  const float16 f = kd_trig_v16(x, 1L);  /* cos(x) = sin(x + pi/2) */
  const int16 big = !(fabs(x) < 16777216.0f);
  return any(big) ? select(f, kd_cos16(x), big) : f;
}}
#else
#define kd_sin_v16(x) kd_sin16(x)
#define kd_cos_v16(x) kd_cos16(x)
#endif
"""


def lane_wise(helper: Helper, name: str, lanes: int) -> str:
    """``kd_<name><lanes>``: the scalar builtin on each lane. PoCL's vector ``sin``/``cos``
    (float2..float16) let one lane that needs the large-argument reduction (1e30, inf) corrupt
    the others (``sin(1e-30)`` came out 0.0099); its scalar functions are right."""
    fn = f"kd_{name}{lanes}"
    parts = ", ".join(f"{name}(x.s{i:x})" for i in range(lanes))
    return helper(fn, f"inline float{lanes} {fn}(float{lanes} x) {{ return (float{lanes})({parts}); }}\n")


def declare(helper: Helper, name: str, lanes: int) -> str:
    """Register the helpers once in the program's prelude; return the function computing ``name``
    (``"sin"`` or ``"cos"``) on ``float<lanes>``: the double-precision path on 16 lanes, the
    scalar builtins lane by lane otherwise."""
    if lanes != 16:
        return lane_wise(helper, name, lanes)
    for f in ("sin", "cos"):  # the fallbacks the 16-lane helpers call
        lane_wise(helper, f, 16)
    helper("kd_trig_v16", _source())
    return f"kd_{name}_v16"


__all__ = ["declare"]
