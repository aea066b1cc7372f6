"""``math`` ops: GLSL.std.450 where its accuracy on the device is good enough,
kdsl's own polynomials elsewhere (:mod:`kdsl.codegen.spirv.mathlib`), and f32
``sin``/``cos``/``log``/``log2`` guarded where lavapipe's are wrong
(:mod:`kdsl.codegen.spirv.accurate32`).

``f16``/``bf16`` are computed in f32 and rounded back (the math dialect's
contract). GLSL.std.450's transcendental instructions only take 16/32-bit
floats, so f64 ``exp``/``exp2``/``log``/``log2``/``rsqrt``/``tanh``/``sin``/``cos``/``erf``/``pow``
use kdsl's own f64 implementations (:mod:`kdsl.codegen.spirv.mathlib64`,
:mod:`kdsl.codegen.spirv.trig64`, :mod:`kdsl.codegen.spirv.pow64`).
"""

from __future__ import annotations

from kdsl.codegen.spirv import accurate32, mathlib, mathlib64, pow64
from kdsl.codegen.spirv.emit import Emitter, handles
from kdsl.codegen.spirv.scalar import narrow, opaque_divisor, scalar_type
from kdsl.ir.core import Operation

_GLSL1 = {
    "math.exp": "Exp", "math.exp2": "Exp2", "math.log": "Log", "math.log2": "Log2", "math.sqrt": "Sqrt",
    "math.sqrt_rn": "Sqrt", "math.rsqrt": "InverseSqrt", "math.sin": "Sin", "math.cos": "Cos",
    "math.floor": "Floor", "math.ceil": "Ceil", "math.abs": "FAbs",
}
_F64_NATIVE = {"math.sqrt", "math.sqrt_rn", "math.floor", "math.ceil", "math.abs"}


def _compute(e: Emitter, op: Operation, fn: object) -> None:
    """Evaluate ``fn(compute_type, *operands)`` in f32 for f16/bf16 and round back."""
    assert callable(fn)
    f = e.f
    t = scalar_type(op.result.type)
    rt = e.reg(t)
    args = [e.v(x) for x in op.operands]
    if t.name == "f16":
        f32 = e.t.f32
        r = fn(f32, *[f.convert(f32, rt, a) for a in args])
        e.bind(op.result, f.convert(rt, f32, r))
        return
    e.bind(op.result, narrow(e, t, fn(rt, *args)))


def _f64(e: Emitter, op: Operation) -> None:
    """A unary f64 function from :mod:`mathlib64`, or a located error where there is none."""
    impl = mathlib64.F64.get(op.NAME)
    if impl is None:
        raise e.error(op, f"{op.NAME} on f64 is not available on the vulkan backend")
    e.bind(op.result, impl(e, e.v(op.operands[0])))


@handles(*_GLSL1)
def _unary(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    if op.NAME == "math.abs" and not t.is_float:
        f, rt = e.f, e.reg(t)
        a = e.v(op.operands[0])
        e.bind(op.result, a if not t.is_signed else f.select(rt, f.cmp("lt", rt, a, f.const(rt, 0)), f.neg(rt, a), a))
        return
    if t.name == "f64" and op.NAME not in _F64_NATIVE:
        _f64(e, op)
        return
    special = mathlib.F32.get(op.NAME)
    if special is not None:
        _compute(e, op, lambda rt, a: special(e, a))
        return
    name = _GLSL1[op.NAME]
    if name in ("Sin", "Cos"):
        _compute(e, op, lambda rt, a: accurate32.trig_f32(e, name, a))
    elif name in ("Log", "Log2"):
        _compute(e, op, lambda rt, a: accurate32.log_f32(e, name, a))
    else:
        _compute(e, op, lambda rt, a: e.f.ext(rt, name, a))


@handles("math.tanh", "math.erf")
def _own(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    if t.name == "f64":
        _f64(e, op)
        return
    impl = mathlib.F32[op.NAME]
    _compute(e, op, lambda rt, a: impl(e, a))


@handles("math.pow")
def _pow(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    if t.name == "f64":
        e.bind(op.result, pow64.pow_f64(e, e.v(op.operands[0]), e.v(op.operands[1])))
        return
    _compute(e, op, lambda rt, a, b: mathlib.pow_f32(e, a, b))


@handles("math.div_rn")
def _div_rn(e: Emitter, op: Operation) -> None:
    _compute(e, op, lambda rt, a, b: e.f.binary("div", rt, a, opaque_divisor(e, rt, b)))


@handles("math.fma")
def _fma(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    if t.name == "f64":
        e.bind(op.result, mathlib64.fma_f64(e, *[e.v(x) for x in op.operands]))
        return
    if e.target.shader_float64:
        _compute(e, op, lambda rt, a, b, c: mathlib.fma_f32_exact(e, a, b, c))
        return
    _compute(e, op, lambda rt, a, b, c: e.f.ext(rt, "Fma", a, b, c))  # not guaranteed fused: docs/VULKAN.md


@handles("math.umulhi")
def _umulhi(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    f, rt = e.f, e.reg(t)
    pair = e.m.t_struct([rt, rt], "mulext")
    prod = f.op("OpSMulExtended" if t.is_signed else "OpUMulExtended", pair, e.v(op.operands[0]), e.v(op.operands[1]))
    e.bind(op.result, f.op("OpCompositeExtract", rt, prod, 1))
