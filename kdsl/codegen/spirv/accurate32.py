"""f32 ``sin``/``cos``/``log``/``log2`` where GLSL.std.450 is wrong on lavapipe.

Why: GLSL.std.450 leaves the precision of these to the device, and lavapipe's (Mesa 22.3)
reduces the argument of ``Sin``/``Cos`` in single precision: measured against numpy, ``cos``
is 17 ulp off near 1e4, 150 ulp near 1e6, and from about 1e8 on both return noise
(``sin(1e30) = -1``); ``Log``/``Log2`` of a subnormal are off by up to 16 (``log(2.9e-39)``
gives -87.8). Triton (libdevice) is within an ulp or two everywhere, so kdsl must be too.

* ``sin``/``cos``: arguments of magnitude below :data:`TRIG_FAST_LIMIT` keep the fast
  instruction (within 2 ulp there); larger ones branch to the f64 sine/cosine of
  :mod:`kdsl.codegen.spirv.trig64` (exact argument reduction for every finite input) and round
  to f32. A real branch, not a select: invocations with small arguments never run the f64
  path, so ordinary kernels keep their speed. Devices without 64-bit floats or integers keep
  the instruction (docs/VULKAN.md).
* ``log``/``log2``: a subnormal argument is scaled by ``2**24`` first and ``24 ln 2`` (``24``)
  subtracted after, two selects.
"""

from __future__ import annotations

import math

from kdsl.codegen.spirv import trig64
from kdsl.codegen.spirv.emit import Emitter

TRIG_FAST_LIMIT = 512.0  # |x| below: GLSL Sin/Cos measured within 2 ulp on lavapipe (2.5 at 2048)
_F32_TINY = 2.0**-126  # the smallest normal f32
_SCALE_BITS = 24


def has_f64_trig(e: Emitter) -> bool:
    """Whether the device can run the f64 fallback (64-bit floats and integers)."""
    return bool(e.target.shader_float64 and getattr(e.target, "shader_int64", False))


def trig_f32(e: Emitter, name: str, x: int) -> int:
    """``Sin``/``Cos`` (``name``) of the f32 value ``x``, accurate for every argument."""
    f, f32 = e.f, e.t.f32
    fast = f.ext(f32, name, x)
    if not has_f64_trig(e):
        return fast
    # NaN compares false: it takes the fast path, which returns NaN
    big = f.cmp("ge", f32, f.ext(f32, "FAbs", x), f.const(f32, TRIG_FAST_LIMIT))
    before = f.block
    slow_l, merge = f.new_label(), f.new_label()
    f.selection_merge(merge)
    f.branch_cond(big, slow_l, merge)
    f.label(slow_l)
    f64 = e.t.float_t(64)
    wide = (trig64.sin_f64 if name == "Sin" else trig64.cos_f64)(e, f.convert(f64, f32, x))
    slow = f.convert(f32, f64, wide)
    slow_end = f.block
    f.branch(merge)
    f.label(merge)
    return f.phi(f32, [(slow, slow_end), (fast, before)])


def log_f32(e: Emitter, name: str, x: int) -> int:
    """``Log``/``Log2`` (``name``) of the f32 value ``x``, subnormal arguments included."""
    f, f32 = e.f, e.t.f32
    small = f.cmp("lt", f32, x, f.const(f32, _F32_TINY))  # zero and negatives too: harmless
    arg = f.select(f32, small, f.binary("mul", f32, x, f.const(f32, 2.0**_SCALE_BITS)), x)
    r = f.ext(f32, name, arg)
    shift = _SCALE_BITS * math.log(2.0) if name == "Log" else float(_SCALE_BITS)
    return f.select(f32, small, f.binary("sub", f32, r, f.const(f32, shift)), r)
