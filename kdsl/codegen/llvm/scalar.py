"""LLVM instructions for the scalar ``arith``/``math`` ops of the work-item IR.

Everything LLVM leaves undefined or poison is pinned down here exactly as the
interpreter (the oracle) defines it, with selects rather than branches so
element loops stay vectorisable:

* integer ``div``/``rem`` by 0 give 0; ``MIN / -1`` wraps to ``MIN`` and its
  remainder is 0 (the divisor is replaced by 1 before the ``sdiv``, so the
  instruction itself never traps);
* shift amounts (read as unsigned) ``>= bits`` give 0, or the sign fill for
  an arithmetic right shift;
* float -> int casts use ``llvm.fptosi.sat``/``fptoui.sat`` (NaN -> 0,
  saturating), never the poison-producing ``fptosi``;
* float compares are ordered except ``ne`` (``une``); ``max``/``min`` are
  ``maxnum``/``minnum``, or ``maximum``/``minimum`` with ``propagate_nan``;
* no fast-math flags anywhere: ``fdiv``/``sqrt``/``fma`` are correctly rounded
  (``div_rn``, ``sqrt_rn`` need nothing more).

Narrow floats: ``f16`` is LLVM ``half`` (per-op correct rounding); ``bf16``
is computed in ``float`` and rounded back by ``kd_rbf`` after every op.
Transcendentals: see :func:`math_unary` for the accuracy of each.
"""

from __future__ import annotations

from typing import Protocol

import llvmlite.ir as ir

from kdsl.codegen.llvm import vmath
from kdsl.codegen.llvm.types import F32, F64, I1, I16, I32, external, intrinsic, reg, scalar, unsigned_to_float
from kdsl.errors import CompilationError
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType

_ICMP_S = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_INT_BIN = {"arith.add": "add", "arith.sub": "sub", "arith.mul": "mul", "arith.and": "and_",
            "arith.or": "or_", "arith.xor": "xor"}  # fmt: skip
_FLOAT_BIN = {"arith.add": "fadd", "arith.sub": "fsub", "arith.mul": "fmul", "arith.div": "fdiv",
              "math.div_rn": "fdiv", "arith.rem": "frem"}  # fmt: skip
_VMATH_F32 = ("exp", "exp2", "log", "log2", "tanh", "sin", "cos")
_LLVM_UNARY = {"exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
               "sqrt": "llvm.sqrt", "sqrt_rn": "llvm.sqrt", "sin": "llvm.sin", "cos": "llvm.cos",
               "floor": "llvm.floor", "ceil": "llvm.ceil", "abs": "llvm.fabs"}  # fmt: skip
_LIBM = {"tanh": "tanh", "erf": "erf"}


class Ctx(Protocol):
    b: ir.IRBuilder
    module: ir.Module


def _e(op: Operation, i: int = 0) -> ScalarType:
    return scalar(op.operands[i].type)


def emit(cx: Ctx, op: Operation, a: list[ir.Value]) -> ir.Value:
    """The LLVM value of the single result of the scalar ``op``."""
    n = op.NAME
    b = cx.b
    if n in ("arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem", "arith.and", "arith.or",
             "arith.xor", "arith.shl", "arith.shr", "arith.max", "arith.min", "math.pow", "math.div_rn"):
        e = scalar(op.result.type)
        if e.is_float:
            return float_binary(cx, op, e, a[0], a[1])
        return int_binary(cx, n, e, a[0], a[1])
    if n == "arith.neg":
        e = scalar(op.result.type)
        if e.name == "i1":
            return a[0]
        if e.is_float:
            return b.fneg(a[0])
        return b.sub(ir.Constant(a[0].type, 0), a[0])
    if n == "arith.cmp":
        return cmp(cx, op.attributes["predicate"], _e(op), a[0], a[1])
    if n == "arith.select":
        return b.select(a[0], a[1], a[2])
    if n == "arith.cast":
        return cast(cx, op, a[0])
    if n == "arith.bitcast":
        return bitcast(cx, op, a[0])
    if n == "math.fma":
        return fma(cx, scalar(op.result.type), a)
    if n == "math.umulhi":
        return umulhi(cx, scalar(op.result.type), a[0], a[1])
    if n.startswith("math."):
        return math_unary(cx, n[5:], scalar(op.result.type), a[0])
    raise CompilationError(f"cpu: cannot render op '{n}'", op.loc)


# --- integers -------------------------------------------------------------------


def int_binary(cx: Ctx, name: str, e: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = cx.b
    if e.name == "i1":
        return _bool_binary(cx, name, x, y)
    if name in _INT_BIN:
        out: ir.Value = getattr(b, _INT_BIN[name])(x, y)
        return out
    t = x.type
    zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
    if name in ("arith.div", "arith.rem"):
        is0 = b.icmp_unsigned("==", y, zero)
        special = b.or_(is0, b.icmp_signed("==", y, ir.Constant(t, -1))) if e.is_signed else is0
        safe = b.select(special, one, y)
        if name == "arith.div":
            q = b.sdiv(x, safe) if e.is_signed else b.udiv(x, safe)  # y == -1: x / 1 == x, negated below
            if e.is_signed:
                q = b.select(b.icmp_signed("==", y, ir.Constant(t, -1)), b.sub(zero, x), q)
            return b.select(is0, zero, q)
        r = b.srem(x, safe) if e.is_signed else b.urem(x, safe)
        return b.select(special, zero, r)
    bits = ir.Constant(t, e.bitwidth)
    big = b.icmp_unsigned(">=", y, bits)
    if name == "arith.shl":
        return b.select(big, zero, b.shl(x, b.select(big, zero, y)))
    if name == "arith.shr":
        if e.is_signed:
            return b.ashr(x, b.select(big, ir.Constant(t, e.bitwidth - 1), y))
        return b.select(big, zero, b.lshr(x, b.select(big, zero, y)))
    if name in ("arith.max", "arith.min"):
        kind = ("s" if e.is_signed else "u") + name[6:]
        fn = intrinsic(cx.module, f"llvm.{kind}", t, [t, t], [t])
        return b.call(fn, [x, y])
    raise CompilationError(f"cpu: integer op {name} on {e}")


def _bool_binary(cx: Ctx, name: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """i1 ops as the interpreter computes them: in u8, then the low bit."""
    b = cx.b
    table = {"arith.add": b.xor, "arith.sub": b.xor, "arith.mul": b.and_, "arith.and": b.and_,
             "arith.or": b.or_, "arith.xor": b.xor, "arith.max": b.or_, "arith.min": b.and_}  # fmt: skip
    if name in table:
        return table[name](x, y)
    false = ir.Constant(I1, 0)
    if name == "arith.div":  # x / 0 == 0, x / 1 == x
        return b.and_(x, y)
    if name == "arith.rem":
        return false
    return b.select(y, false, x)  # shifts by >= 1 give 0


def umulhi(cx: Ctx, e: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = cx.b
    wide = ir.IntType(2 * e.bitwidth)
    ext = b.sext if e.is_signed else b.zext
    p = b.mul(ext(x, wide), ext(y, wide))
    return b.trunc(b.lshr(p, ir.Constant(wide, e.bitwidth)), x.type)


def cmp(cx: Ctx, pred: str, e: ScalarType | PointerType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = cx.b
    if isinstance(e, PointerType):
        return b.icmp_unsigned(_ICMP_S[pred], x, y)
    if e.is_float:
        if pred == "ne":
            return b.fcmp_unordered("!=", x, y)
        return b.fcmp_ordered(_ICMP_S[pred], x, y)
    if e.is_signed:
        return b.icmp_signed(_ICMP_S[pred], x, y)
    return b.icmp_unsigned(_ICMP_S[pred], x, y)


# --- floats ---------------------------------------------------------------------


def rbf(cx: Ctx, x: ir.Value) -> ir.Value:
    """Round a float to bf16 precision (ties to even; NaN stays a quiet NaN)."""
    b = cx.b
    bits = b.bitcast(x, I32)
    lsb = b.and_(b.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
    hi = ir.Constant(I32, 0xFFFF0000)
    r = b.and_(b.add(b.add(bits, ir.Constant(I32, 0x7FFF)), lsb), hi)
    q = b.and_(b.or_(bits, ir.Constant(I32, 0x00400000)), hi)
    nan = b.fcmp_unordered("uno", x, x)
    return b.bitcast(b.select(nan, q, r), F32)


def f64_to_f32_odd(cx: Ctx, d: ir.Value) -> ir.Value:
    """f64 -> f32 rounding to odd: a second rounding to a format of at most 22 bits of precision
    (f16's 11, bf16's 8) is then exactly the one rounding of ``d`` to it."""
    b = cx.b
    f = b.fptrunc(d, F32)
    back = b.fpext(f, F64)
    inexact = b.fcmp_ordered("!=", back, d)
    fabs = intrinsic(cx.module, "llvm.fabs", F64, [F64], [F64])
    away = b.fcmp_ordered(">", b.call(fabs, [back]), b.call(fabs, [d]))
    bits = b.bitcast(f, I32)
    bits = b.select(b.and_(inexact, away), b.sub(bits, ir.Constant(I32, 1)), bits)
    bits = b.select(inexact, b.or_(bits, ir.Constant(I32, 1)), bits)
    return b.bitcast(bits, F32)


def f64_to_bf16(cx: Ctx, d: ir.Value) -> ir.Value:
    """f64 -> bf16 with one rounding: narrow to f32 rounding to odd, then ``rbf``."""
    return rbf(cx, f64_to_f32_odd(cx, d))


def f64_to_f16(cx: Ctx, d: ir.Value) -> ir.Value:
    """f64 -> f16 with one rounding, through f32 rounded to odd. Why not ``fptrunc double to half``:
    without AVX512-FP16 (AMD Zen, Intel before Sapphire Rapids) LLVM makes it a call to
    ``__truncdfhf2``, a compiler-runtime function the JIT-linked kernel cannot reach; f32 -> f16 is
    one F16C instruction."""
    return cx.b.fptrunc(f64_to_f32_odd(cx, d), ir.HalfType())


def fptrunc(cx: Ctx, x: ir.Value, t: ir.Type) -> ir.Value:
    """``fptrunc`` that never becomes a libcall: f64 -> f16 through :func:`f64_to_f16`."""
    if x.type == F64 and isinstance(t, ir.HalfType):
        return f64_to_f16(cx, x)
    return cx.b.fptrunc(x, t)


def narrow(cx: Ctx, e: ScalarType, x: ir.Value) -> ir.Value:
    """``x`` computed in a wider type -> ``e``'s register value."""
    if e.name == "bf16":
        return f64_to_bf16(cx, x) if x.type == F64 else rbf(cx, x)
    if x.type == reg(e):
        return x
    return fptrunc(cx, x, reg(e))


def float_binary(cx: Ctx, op: Operation, e: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = cx.b
    name = op.NAME
    t = x.type
    if name in ("arith.max", "arith.min"):
        base = ("maximum" if name == "arith.max" else "minimum") if op.attributes.get("propagate_nan") else (
            "maxnum" if name == "arith.max" else "minnum")
        return b.call(intrinsic(cx.module, f"llvm.{base}", t, [t, t], [t]), [x, y])  # exact in any type
    if name == "math.pow":  # in f64, as the interpreter (precise)
        if e.name != "f64":
            x, y = b.fpext(x, F64), b.fpext(y, F64)
        r = b.call(intrinsic(cx.module, "llvm.pow", F64, [F64, F64], [F64]), [x, y])
        return narrow(cx, e, r)
    r = getattr(b, _FLOAT_BIN[name])(x, y)
    return rbf(cx, r) if e.name == "bf16" else r


def fma(cx: Ctx, e: ScalarType, a: list[ir.Value]) -> ir.Value:
    b = cx.b
    if e.name in ("f32", "f64"):
        t = reg(e)
        return b.call(intrinsic(cx.module, "llvm.fma", t, [t, t, t], [t]), a)
    wide = [b.fpext(v, F64) for v in a]  # products of f16/bf16 are exact in f64
    r = b.call(intrinsic(cx.module, "llvm.fma", F64, [F64] * 3, [F64]), wide)
    return narrow(cx, e, r)


def math_unary(cx: Ctx, name: str, e: ScalarType, x: ir.Value) -> ir.Value:
    """Accuracy per function: sqrt/sqrt_rn/floor/ceil/abs exact (LLVM intrinsics);
    exp/exp2/log/log2/tanh/sin/cos on f32 (and f16/bf16, computed in f32) by the
    vectorisable code of :mod:`vmath` (<= 2 ulp; sin/cos <= 0.51 ulp over the whole
    float range); rsqrt = 1/sqrt (<= 1.5 ulp); erf via libm ``erff``/``erf`` (scalar
    calls); f64 functions via libm (< 1 ulp)."""
    b = cx.b
    if e.is_integer:  # abs; wraps at MIN
        neg = b.sub(ir.Constant(x.type, 0), x)
        return b.select(b.icmp_signed("<", x, ir.Constant(x.type, 0)), neg, x) if e.is_signed else x
    if name in ("abs", "floor", "ceil", "sqrt", "sqrt_rn") and e.name != "bf16":
        t = x.type
        return b.call(intrinsic(cx.module, _LLVM_UNARY[name], t, [t], [t]), [x])
    if e.name == "f64":
        return _unary_in(cx, name, x, F64)
    xf = b.fpext(x, F32) if x.type != F32 else x
    return narrow(cx, e, _unary_in(cx, name, xf, F32))


def _unary_in(cx: Ctx, name: str, x: ir.Value, t: ir.Type) -> ir.Value:
    b = cx.b
    if name == "rsqrt":
        s = b.call(intrinsic(cx.module, "llvm.sqrt", t, [t], [t]), [x])
        return b.fdiv(ir.Constant(t, 1.0), s)
    if t == F32 and name in _VMATH_F32:
        return b.call(vmath.get(cx.module, name), [x])
    if name in _LIBM:
        fname = _LIBM[name] + ("f" if t == F32 else "")
        return b.call(external(cx.module, fname, t, [t]), [x])
    return b.call(intrinsic(cx.module, _LLVM_UNARY[name], t, [t], [t]), [x])


# --- casts ----------------------------------------------------------------------


def cast(cx: Ctx, op: Operation, x: ir.Value) -> ir.Value:
    b = cx.b
    src, dst = op.operand.type, op.result.type
    if isinstance(src, PointerType) and isinstance(dst, PointerType):
        return x
    if isinstance(src, PointerType):
        return b.ptrtoint(x, reg(dst))
    if isinstance(dst, PointerType):
        return b.inttoptr(x, reg(dst))
    s, d = scalar(src), scalar(dst)
    if s == d:
        return x
    if d.name == "i1":
        if s.is_float:
            return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))
    if d.is_float:
        return _to_float(cx, s, d, x)
    if s.is_float:
        if s.name == "f16":  # LLVM's x86 fptosi.sat on half gets NaN wrong: widen first (exact)
            x = b.fpext(x, F32)
        kind = "llvm.fptosi.sat" if d.is_signed else "llvm.fptoui.sat"
        return b.call(intrinsic(cx.module, kind, reg(d), [x.type], [reg(d), x.type]), [x])
    dt = reg(d)
    if s.bitwidth == d.bitwidth:
        return x
    if s.bitwidth > d.bitwidth:
        return b.trunc(x, dt)
    return b.sext(x, dt) if s.is_signed else b.zext(x, dt)


def _to_float(cx: Ctx, s: ScalarType, d: ScalarType, x: ir.Value) -> ir.Value:
    b = cx.b
    if s.is_integer:
        if d.name == "bf16":
            wide = b.sitofp(x, F64) if s.is_signed else unsigned_to_float(b, x, F64)
            return f64_to_bf16(cx, wide)
        return b.sitofp(x, reg(d)) if s.is_signed else unsigned_to_float(b, x, reg(d))
    if d.name == "bf16":
        if s.name == "f64":
            return f64_to_bf16(cx, x)
        return rbf(cx, b.fpext(x, F32))
    st, dt = x.type, reg(d)
    if st == dt:
        return x
    widths = {"half": 16, "float": 32, "double": 64}
    if widths[str(st)] < widths[str(dt)]:
        return b.fpext(x, dt)
    return fptrunc(cx, x, dt)


def bitcast(cx: Ctx, op: Operation, x: ir.Value) -> ir.Value:
    b = cx.b
    src, dst = op.operand.type, op.result.type
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        return x
    s, d = scalar(src), scalar(dst)
    if s == d or d.name == "i1":
        return x
    if s.name == "bf16":
        return b.bitcast(b.trunc(b.lshr(b.bitcast(x, I32), ir.Constant(I32, 16)), I16), reg(d))
    if d.name == "bf16":
        wide = b.zext(b.bitcast(x, I16), I32)
        return b.bitcast(b.shl(wide, ir.Constant(I32, 16)), F32)
    return b.bitcast(x, reg(d))
