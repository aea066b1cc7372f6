"""OpenCL C spellings of kdsl types and constants.

Registers vs storage: ``f16``/``bf16`` values live in ``float`` registers and
are rounded back after every op (so each op is correctly rounded for the
narrow type, exactly as the interpreter computes); in global memory both are
``ushort`` bit patterns, converted with ``vload_half``/``vstore_half_rte``
(which PoCL supports without ``cl_khr_fp16``) plus numpy's NaN-payload rules. ``i1`` is ``uchar``
holding 0 or 1, in registers and in memory.
"""

from __future__ import annotations

import math

import numpy as np

from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type, VectorType

_REG = {
    "i1": "uchar",
    "i8": "char",
    "i16": "short",
    "i32": "int",
    "i64": "long",
    "u8": "uchar",
    "u16": "ushort",
    "u32": "uint",
    "u64": "ulong",
    "f16": "float",
    "bf16": "float",
    "f32": "float",
    "f64": "double",
}

_STORAGE = {"f16": "ushort", "bf16": "ushort"}


def reg(t: Type) -> str:
    """C type of a register holding a value of ``t``."""
    if isinstance(t, PointerType):
        if isinstance(t.pointee, PointerType):  # a pointer to pointers in global memory
            return f"{reg(t.pointee)} __global*"
        return f"__global {storage(t.pointee)}*"
    if isinstance(t, VectorType):  # lane masks: intN of -1/0, what relational operators give
        return f"int{t.lanes}" if t.element.name == "i1" else f"{_REG[t.element.name]}{t.lanes}"
    assert isinstance(t, ScalarType), t
    return _REG[t.name]


def storage(t: ScalarType) -> str:
    """C type of ``t`` in memory."""
    return _STORAGE.get(t.name, _REG[t.name])


def array_decl(t: MemRefType, name: str) -> str:
    space = "__local " if t.space == "local" else ""
    e = t.element
    if isinstance(e, PointerType):
        return f"{reg(e)} {space}{name}[{t.size}]"
    return f"{space}{reg(e)} {name}[{t.size}]"


def unsigned(t: ScalarType) -> str:
    return "u" + _REG[t.name] if t.is_signed else _REG[t.name]


def int_literal(v: int, t: ScalarType) -> str:
    c = _REG[t.name]
    if t.bitwidth == 64:
        if t.is_signed and v == -(1 << 63):
            return "(-9223372036854775807L - 1L)"
        return f"{v}UL" if t.is_unsigned else f"{v}L"
    if t.is_signed and t.bitwidth == 32 and v == -(1 << 31):
        return "(-2147483647 - 1)"
    if t.name == "u32":
        return f"{v}u"
    if t.name == "i32":
        return str(v)
    return f"(({c}){v})"


def float_literal(v: float, t: ScalarType) -> str:
    if t.name == "f16":
        v = float(np.float16(v))
    elif t.name == "bf16":
        v = float(np.float32(v))  # constants are rounded by the frontend/interpreter the same way
    if math.isnan(v):
        return "(double)NAN" if t.name == "f64" else "NAN"
    if math.isinf(v):
        s = "-" if v < 0 else ""
        return f"{s}(double)INFINITY" if t.name == "f64" else f"{s}INFINITY"
    if t.name == "f64":
        return repr(float(v))
    text = repr(float(np.float32(v)))
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def literal(v: object, t: ScalarType) -> str:
    if t.is_float:
        assert isinstance(v, (int, float))
        return float_literal(float(v), t)
    assert isinstance(v, (int, bool))
    return int_literal(int(v), t)
