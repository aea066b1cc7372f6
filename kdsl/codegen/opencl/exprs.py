"""C expressions for the scalar ``arith``/``math`` ops of the work-item IR.

Each function gets the op, its operands already spelled as C expressions,
and the renderer (for types and helper requests); it returns one C
expression. Integer arithmetic on 32/64-bit signed types goes through the
unsigned type so overflow wraps instead of being undefined; narrow types
compute in ``int`` and convert back (C's promotions); ``i1`` is reduced to
its low bit; ``f16``/``bf16`` results are rounded after every op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdsl.codegen.opencl import ctypes as ct
from kdsl.codegen.opencl.prelude import int_helpers, minmax_nan
from kdsl.errors import CompilationError
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType, Type

if TYPE_CHECKING:
    from kdsl.codegen.opencl.render import Renderer

_C_BIN = {"arith.add": "+", "arith.sub": "-", "arith.mul": "*", "arith.and": "&", "arith.or": "|", "arith.xor": "^"}
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_MATH1 = {
    "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sqrt": "sqrt",
    "math.sqrt_rn": "sqrt", "math.rsqrt": "rsqrt", "math.sin": "sin", "math.cos": "cos", "math.tanh": "tanh",
    "math.erf": "erf", "math.floor": "floor", "math.ceil": "ceil",
}


def _scalar(t: Type) -> ScalarType:
    assert isinstance(t, ScalarType), t
    return t


def narrow(r: Renderer, e: ScalarType, x: str) -> str:
    """Round a float expression to ``e``'s precision when ``e`` is a narrow float."""
    if e.name == "f16":
        r.need("kd_half")
        return f"kd_rh({x})"
    if e.name == "bf16":
        return f"{r.need('kd_rbf')}({x})"
    return x


def binary(r: Renderer, op: Operation, a: str, b: str) -> str:
    e = _scalar(op.results[0].type)
    name = op.NAME
    if e.is_float:
        return narrow(r, e, _float_binary(r, op, e, a, b))
    c = ct.reg(e)
    const_b = r.const_of(op.operands[1])
    if name in ("arith.div", "arith.rem"):
        if isinstance(const_b, int) and const_b not in (0, -1) and e.name != "i1":
            return f"(({c})({a} {'/' if name == 'arith.div' else '%'} {b}))"
        return _low_bit(e, f"{r.helper(*int_helpers(name[6:], e))}({a}, {b})")
    if name in ("arith.shl", "arith.shr"):
        if isinstance(const_b, int) and 0 <= const_b < max(8, e.bitwidth) and e.name != "i1":
            return f"(({c})({a} {'<<' if name == 'arith.shl' else '>>'} {b}))"
        return _low_bit(e, f"{r.helper(*int_helpers(name[6:], e))}({a}, {b})")
    if name in ("arith.max", "arith.min"):
        return f"{name[6:]}({a}, {b})"
    sym = _C_BIN[name]
    if e.is_signed and e.bitwidth >= 32 and sym in "+-*":
        u = ct.unsigned(e)
        return f"(({c})(({u}){a} {sym} ({u}){b}))"
    return _low_bit(e, f"(({c})({a} {sym} {b}))")


def _low_bit(e: ScalarType, x: str) -> str:
    return f"((uchar)({x} & 1))" if e.name == "i1" else x


def _float_binary(r: Renderer, op: Operation, e: ScalarType, a: str, b: str) -> str:
    name = op.NAME
    if name in ("arith.max", "arith.min"):
        kind = name[6:]
        if op.attributes.get("propagate_nan"):
            return f"{r.helper(*minmax_nan(kind, ct.reg(e)))}({a}, {b})"
        return f"f{kind}({a}, {b})"
    if name == "arith.rem":
        return f"fmod({a}, {b})"
    if name in ("arith.div", "math.div_rn"):
        return f"({a} / {b})"
    if name == "math.pow":
        return f"pow({a}, {b})"
    return f"({a} {_C_BIN[name]} {b})"


def neg(r: Renderer, op: Operation, a: str) -> str:
    e = _scalar(op.result.type)
    if e.is_float or e.name == "i1":
        return f"(-{a})" if e.is_float else a
    c = ct.reg(e)
    if e.is_signed and e.bitwidth >= 32:
        return f"(({c})(({ct.unsigned(e)})0 - ({ct.unsigned(e)}){a}))"
    return f"(({c})(-{a}))"


def cmp(op: Operation, a: str, b: str) -> str:
    return f"((uchar)({a} {_CMP[op.attributes['predicate']]} {b}))"


def math_unary(r: Renderer, op: Operation, a: str) -> str:
    e = _scalar(op.result.type)
    if op.NAME == "math.abs":
        if e.is_float:
            return f"fabs({a})"
        if not e.is_signed:
            return a
        if e.bitwidth >= 32:
            # OpenCL's abs() returns the unsigned type and PoCL treats abs(INT_MIN) as
            # overflow: negate in unsigned arithmetic so INT_MIN wraps to itself.
            u = ct.unsigned(e)
            return f"(({ct.reg(e)})(({a}) < 0 ? ({u})0 - ({u})({a}) : ({u})({a})))"
        return f"(({ct.reg(e)})abs({a}))"
    return narrow(r, e, f"{_MATH1[op.NAME]}({a})")


def fma(r: Renderer, op: Operation, a: str, b: str, c: str) -> str:
    e = _scalar(op.result.type)
    return narrow(r, e, f"fma({a}, {b}, {c})")


def umulhi(op: Operation, a: str, b: str) -> str:
    return f"mul_hi({a}, {b})"


def cast(r: Renderer, op: Operation, a: str) -> str:
    src, dst = op.operand.type, op.result.type
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return f"(({ct.reg(dst)}){a})"
    s, d = _scalar(src), _scalar(dst)
    if s == d:
        return a
    if d.name == "i1":
        return f"((uchar)({a} != 0))"
    if d.is_float:
        if s.name == "f64" and d.name == "f16":
            r.need("kd_half")
            return f"kd_rhd({a})"
        if s.name == "f64" and d.name == "bf16":  # rounded once, as the interpreter
            return narrow(r, d, f"{r.need('kd_d2f_odd')}({a})")
        if s.is_integer and s.bitwidth == 64 and d.name in ("f16", "bf16"):
            return narrow(r, d, f"((float)(double)({a}))")  # exact enough: |x| > 2^24 overflows f16 anyway
        return narrow(r, d, f"(({ct.reg(d)})({a}))")
    if s.is_float:
        return f"convert_{ct.reg(d)}_sat_rtz({a})"
    return f"(({ct.reg(d)})({a}))"


def bitcast(r: Renderer, op: Operation, a: str) -> str:
    src, dst = op.operand.type, op.result.type
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return f"(({ct.reg(dst)}){a})"
    s, d = _scalar(src), _scalar(dst)
    if s == d or d.name == "i1":
        return a
    if s.name == "f16":
        r.need("kd_half")
        return f"(({ct.reg(d)})kd_f2h({a}))"
    if d.name == "f16":
        r.need("kd_half")
        return f"kd_h2f((ushort)({a}))"
    if s.name == "bf16":
        r.need("kd_rbf")
        return f"(({ct.reg(d)})kd_bfbits({a}))"
    if d.name == "bf16":
        r.need("kd_rbf")
        return f"kd_bffrom((ushort)({a}))"
    if s.bitwidth >= 32:
        return f"as_{ct.reg(d)}({a})"
    return f"(({ct.reg(d)})({a}))"


def unsupported(op: Operation, what: str) -> CompilationError:
    return CompilationError(f"opencl: {what}", op.loc)
