"""LLVM spellings of kdsl types and constants.

Registers vs memory (the same split as the OpenCL renderer, for the same
reasons): ``i1`` is an LLVM ``i1`` in registers and one byte (0 or 1) in
memory; ``f16`` is LLVM ``half`` everywhere (LLVM's ``half`` arithmetic is
correctly rounded per op, exactly what the interpreter computes); ``bf16``
lives in ``float`` registers rounded back after every op and is an ``i16``
bit pattern in memory (llvmlite's IR builder has no ``bfloat``). Unsigned
integers are plain ``iN``: signedness is chosen per instruction.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir
import numpy as np

from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type, VectorType

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F16 = ir.HalfType()
F32 = ir.FloatType()
F64 = ir.DoubleType()
PTR = ir.PointerType()
VOID = ir.VoidType()

_REG: dict[str, ir.Type] = {
    "i1": I1, "i8": I8, "i16": I16, "i32": I32, "i64": I64,
    "u8": I8, "u16": I16, "u32": I32, "u64": I64,
    "f16": F16, "bf16": F32, "f32": F32, "f64": F64,
}  # fmt: skip


def scalar(t: Type) -> ScalarType:
    assert isinstance(t, ScalarType), t
    return t


def reg(t: Type) -> ir.Type:
    """LLVM type of a register holding a value of ``t``."""
    if isinstance(t, PointerType):
        return PTR
    if isinstance(t, VectorType):
        return ir.VectorType(_REG[t.element.name], t.lanes)
    return _REG[scalar(t).name]


def storage(t: ScalarType | PointerType) -> ir.Type:
    """LLVM type of one element of ``t`` in memory."""
    if isinstance(t, PointerType):
        return PTR
    if t.name == "i1":
        return I8
    if t.name == "bf16":
        return I16
    return _REG[t.name]


def memref(t: MemRefType) -> ir.ArrayType:
    return ir.ArrayType(storage(t.element), t.size)


def const(t: Type, v: object) -> ir.Constant:
    """An LLVM constant of kdsl type ``t`` (floats rounded to ``t`` first)."""
    e = scalar(t)
    lt = reg(e)
    if not e.is_float:
        assert isinstance(v, (bool, int))
        return ir.Constant(lt, int(v) & ((1 << e.bitwidth) - 1))
    assert isinstance(v, (bool, int, float))
    fv = float(v)
    with np.errstate(all="ignore"):
        if e.name == "f16":
            fv = float(np.float16(fv))
        elif e.name == "f32":
            fv = float(np.float32(fv))
        elif e.name == "bf16":
            fv = round_bf16(fv)
    return ir.Constant(lt, fv)


def round_bf16(v: float) -> float:
    """``v`` rounded to the nearest bf16 (ties to even), as a Python float."""
    if math.isnan(v):
        return v
    with np.errstate(all="ignore"):
        bits = int(np.float32(v).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


def intrinsic(module: ir.Module, base: str, ret: ir.Type, args: list[ir.Type], overload: list[ir.Type]) -> ir.Function:
    """Declare (once) the intrinsic ``base`` mangled by the ``overload`` types."""
    name = base + "".join("." + intrinsic_name(t) for t in overload)
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name)


def intrinsic_name(t: ir.Type) -> str:
    """The overload suffix of ``t`` (``f32``, ``v16f32``: llvmlite's vector type has none)."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{intrinsic_name(t.element)}"
    name: str = t.intrinsic_name
    return name


def external(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type], var_arg: bool = False) -> ir.Function:
    """Declare (once) an external C function such as ``printf`` or ``erff``."""
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    return ir.Function(module, ir.FunctionType(ret, args, var_arg=var_arg), name)


def unsigned_to_float(b: ir.IRBuilder, x: ir.Value, dt: ir.Type) -> ir.Value:
    """``uitofp`` without the instruction: LLVM (llvmlite 0.50, x86 with AVX-512) miscompiles a
    vectorised ``uitofp (sext <N x i16> to <N x i64>)`` as if the extension stopped at 32 bits
    (difftest seed 904502: ``int16(-2830).to(uint64).to(float32)`` gave 4.29e9, not 1.84e19).
    Narrow sources are widened with ``zext`` to i64 (then non-negative: ``sitofp`` is exact);
    a 64-bit source converts ``(x >> 1) | (x & 1)`` (the dropped bit kept as a sticky bit, so the
    one rounding is still correct) and doubles it when the top bit is set."""
    t = x.type
    n = t.count if isinstance(t, ir.VectorType) else 0
    elem = t.element if isinstance(t, ir.VectorType) else t
    i64: ir.Type = ir.VectorType(ir.IntType(64), n) if n else ir.IntType(64)

    def c(v: int) -> ir.Constant:
        return ir.Constant(i64, [v] * n) if n else ir.Constant(i64, v)

    if elem.width < 64:
        return b.sitofp(b.zext(x, i64), dt)
    half = b.or_(b.lshr(x, c(1)), b.and_(x, c(1)))
    fl = dt.element if isinstance(dt, ir.VectorType) else dt
    two = ir.Constant(dt, [2.0] * n) if n else ir.Constant(fl, 2.0)
    big = b.fmul(b.sitofp(half, dt), two)
    return b.select(b.icmp_signed("<", x, c(0)), big, b.sitofp(x, dt))


def bf16_to_f32(b: ir.IRBuilder, raw: ir.Value) -> ir.Value:
    """bf16 bit patterns (``i16``, or a vector of them) as the f32 values they are: the high
    half of an f32 -- widen, shift left by 16, reinterpret."""
    if isinstance(raw.type, ir.VectorType):
        n = raw.type.count
        it: ir.Type = ir.VectorType(I32, n)
        sixteen = ir.Constant(it, [16] * n)
        ft: ir.Type = ir.VectorType(F32, n)
    else:
        it, sixteen, ft = I32, ir.Constant(I32, 16), F32
    return b.bitcast(b.shl(b.zext(raw, it), sixteen), ft)
