"""f32 ``sin``/``cos``/``log``/``log2`` where GLSL.std.450 is wrong on lavapipe.

Why: GLSL.std.450 leaves the precision of these to the device, and lavapipe's (Mesa 22.3)
reduces the argument of ``Sin``/``Cos`` in single precision: measured against numpy, ``cos``
is 17 ulp off near 1e4, 150 ulp near 1e6, and from about 1e8 on both return noise
(``sin(1e30) = -1``); ``Log``/``Log2`` of a subnormal are off by up to 16 (``log(2.9e-39)``
gives -87.8). Triton (libdevice) is within an ulp or two everywhere.

* ``sin``/``cos``: arguments of magnitude below :data:`TRIG_FAST_LIMIT` keep the instruction
  (within 2 ulp there). From there up to :data:`TRIG_REDUCED_LIMIT` (2**30) the argument is
  reduced in f64 by Cody-Waite with pi/2 in three 23-bit heads and a tail
  (:func:`kdsl.codegen.spirv.trig64.cody_waite`: ``k * head`` is exact for ``k < 2**30``, so
  ``x - k pi/2`` keeps ~120 bits of pi/2) and the
  instruction takes the reduced ``|r| <= pi/4``, the quadrant choosing ``+-sin``/``+-cos``:
  within 1.3 ulp. Larger arguments keep the instruction: the exact reduction for them
  (Payne-Hanek, as the f64 ``sin`` does) made a shader with a few ``sin`` take 30 s to build
  on lavapipe, whose llvmpipe also runs both sides of a divergent branch. Known gap
  (docs/VULKAN.md): ``|x| >= 2**30``. Selects, not a branch; devices without 64-bit floats
  keep the instruction.
* ``log``/``log2``: a subnormal argument is scaled by ``2**24`` first and ``24 ln 2`` (``24``)
  subtracted after, two selects.
"""

from __future__ import annotations

import math

from kdsl.codegen.spirv import trig64
from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.f64ops import F64Ops

TRIG_FAST_LIMIT = 512.0  # |x| below: GLSL Sin/Cos measured within 2 ulp on lavapipe (2.5 at 2048)
TRIG_REDUCED_LIMIT = 2.0**30  # |x| below (and >= TRIG_FAST_LIMIT): reduced in f64 first
_HEAD_BITS = 23  # k < 2**30 times a 23-bit head: exact in f64
_F32_TINY = 2.0**-126  # the smallest normal f32
_SCALE_BITS = 24


def trig_f32(e: Emitter, name: str, x: int) -> int:
    """``Sin``/``Cos`` (``name``) of the f32 value ``x``; see the module docstring for accuracy."""
    f, f32 = e.f, e.t.f32
    fast = f.ext(f32, name, x)
    if not e.target.shader_float64:
        return fast
    h = F64Ops(e)
    ax = f.ext(f32, "FAbs", x)
    mid = f.land(f.cmp("ge", f32, ax, f.const(f32, TRIG_FAST_LIMIT)),
                 f.cmp("lt", f32, ax, f.const(f32, TRIG_REDUCED_LIMIT)))  # fmt: skip
    x64 = f.convert(h.d, f32, f.select(f32, mid, x, f.const(f32, 0.0)))
    k, r_hi, _ = trig64.cody_waite(h, x64, _HEAD_BITS)  # k < 2**30: each k * head exact
    r = f.convert(f32, h.d, r_hi)
    i32 = h.i32
    if name == "Cos":  # cos x = sin(x + pi/2)
        k = f.binary("and", i32, f.binary("add", i32, k, f.const(i32, 1)), f.const(i32, 3))
    odd = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 1)), f.const(i32, 1))
    negate = f.cmp("eq", i32, f.binary("and", i32, k, f.const(i32, 2)), f.const(i32, 2))
    v = f.select(f32, odd, f.ext(f32, "Cos", r), f.ext(f32, "Sin", r))
    v = f.select(f32, negate, f.neg(f32, v), v)
    return f.select(f32, mid, v, fast)


def log_f32(e: Emitter, name: str, x: int) -> int:
    """``Log``/``Log2`` (``name``) of the f32 value ``x``, subnormal arguments included."""
    f, f32 = e.f, e.t.f32
    small = f.cmp("lt", f32, x, f.const(f32, _F32_TINY))  # zero and negatives too: harmless
    arg = f.select(f32, small, f.binary("mul", f32, x, f.const(f32, 2.0**_SCALE_BITS)), x)
    r = f.ext(f32, name, arg)
    shift = _SCALE_BITS * math.log(2.0) if name == "Log" else float(_SCALE_BITS)
    return f.select(f32, small, f.binary("sub", f32, r, f.const(f32, shift)), r)
