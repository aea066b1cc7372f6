"""OpenCL C for ``exp2`` on ``float16`` where the compiler targets AVX-512 (PoCL on this host).

Why: PoCL's ``exp2(float16)`` is about 27 vector instructions (its rounding even runs on 256-bit
halves), and the ``exp2`` of a flash-attention block was 13-17 % of the kernel's time. Clang
exposes ``vscalefps`` as ``__builtin_ia32_scalefps512_mask``: with it, ``2^x`` is ``2^r`` by a
degree-6 polynomial (:data:`kdsl.codegen.polynomials.EXP2_POLY`, ``r = x - rint(x)``, the
rounding done by adding and subtracting ``1.5 * 2^23``: exact for the clamped ``x``) times
``2^rint(x)`` in one rounding -- subnormal results included -- in about 15 instructions, the same
code the cpu backend emits (``codegen/llvm/vmath.py``). Lanes whose result is 0 (``x <= -150``:
``-inf`` is every masked attention score) are masked out of ``vscalefps``: its underflow takes a
microcode assist on Intel cores that made ``exp2(-inf)`` 25 times slower than ``exp2(0)``. Anywhere else (no clang, no AVX-512F) the
helper is a macro for the builtin ``exp2``, so the generated source stays portable.
"""

from __future__ import annotations

from kdsl.codegen.opencl.vmem import Helper
from kdsl.codegen.polynomials import EXP2_CLAMP, EXP2_POLY, EXP2_ZERO

NAME = "kd_exp2_v16"


def _source() -> str:
    lo, hi = EXP2_CLAMP
    zero = EXP2_ZERO
    poly = f"{float(EXP2_POLY[-1])!r}f"
    for c in reversed(EXP2_POLY[:-1]):
        poly = f"fma({poly}, r, {float(c)!r}f)"
    return f"""\
#if defined(__clang__) && defined(__AVX512F__)
typedef float kd_v16sf __attribute__((vector_size(64)));
inline float16 {NAME}(float16 x) {{
  float16 c = select(x, (float16)({hi}f), x > {hi}f);
  c = select(c, (float16)({lo}f), c < {lo}f);
  const float16 n = (c + 12582912.0f) - 12582912.0f;  /* rint for |c| < 2^22: PoCL's rint() is ~20 ops */
  const float16 r = c - n;
  const float16 p = {poly};
  /* lanes with x <= {zero} are 0 and masked out of vscalefps: an underflowing one is ~30x slower */
  const ushort live = __builtin_ia32_cmpps512_mask(__builtin_convertvector(x, kd_v16sf),
      __builtin_convertvector((float16)({zero}f), kd_v16sf), 0x1e /* _CMP_GT_OQ */, (ushort)0xFFFF, 4);
  const float16 y = __builtin_convertvector(__builtin_ia32_scalefps512_mask(__builtin_convertvector(p, kd_v16sf),
      __builtin_convertvector(n, kd_v16sf), __builtin_convertvector((float16)(0.0f), kd_v16sf), live, 4), float16);
  return select(y, x, isnan(x));
}}
#else
#define {NAME}(x) exp2(x)
#endif
"""


def declare(helper: Helper) -> str:
    """Register the helper once in the program's prelude; return the name to call."""
    return helper(NAME, _source())


__all__ = ["NAME", "declare"]
