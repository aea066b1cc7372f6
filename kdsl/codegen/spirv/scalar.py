"""Scalar ``arith`` ops with the interpreter's exact semantics.

What SPIR-V leaves undefined is pinned down as the interpreter defines it:
integer division by zero gives 0, ``MIN / -1`` wraps (``-MIN``), its remainder
is 0; shift amounts outside ``[0, bits)`` give 0 (left, logical right) or the
sign fill (arithmetic right); float -> int conversion saturates and maps NaN
to 0; ``i1`` arithmetic is arithmetic modulo 2. ``bf16`` values live in f32
registers and are rounded to bf16 (nearest-even) after every op.
"""

from __future__ import annotations

from kdsl.codegen.spirv.emit import Emitter, handles
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType, Type


def scalar_type(t: Type) -> ScalarType:
    assert isinstance(t, ScalarType), t
    return t


# --- memory representation --------------------------------------------------------------
def from_mem(e: Emitter, raw: int, elem: ScalarType | PointerType) -> int:
    """Global-memory value -> register value."""
    f = e.f
    if isinstance(elem, PointerType):
        return raw
    if elem.name == "i1":
        u8 = e.t.mem(elem)
        return f.cmp("ne", u8, raw, f.const(u8, 0))
    if elem.name == "bf16":
        wide = f.op("OpUConvert", e.t.u32, raw)
        return f.bitcast(e.t.f32, f.op("OpShiftLeftLogical", e.t.u32, wide, e.cu32(16)))
    return raw


def to_mem(e: Emitter, val: int, elem: ScalarType | PointerType) -> int:
    """Register value -> global-memory value."""
    f = e.f
    if isinstance(elem, PointerType):
        return val
    if elem.name == "i1":
        u8 = e.t.mem(elem)
        return f.select(u8, val, f.const(u8, 1), f.const(u8, 0))
    if elem.name == "bf16":
        bits = f.op("OpShiftRightLogical", e.t.u32, f.bitcast(e.t.u32, val), e.cu32(16))
        return f.op("OpUConvert", e.t.mem(elem), bits)
    return val


def round_bf16(e: Emitter, x: int) -> int:
    """Round an f32 to the nearest bf16 (ties to even); a NaN is quieted, keeping its sign and
    the top of its payload (the interpreter's rule, numpy's for f16)."""
    f, u32 = e.f, e.t.u32
    u = f.bitcast(u32, x)
    lsb = f.binary("and", u32, f.op("OpShiftRightLogical", u32, u, e.cu32(16)), e.cu32(1))
    r = f.binary("add", u32, u, f.binary("add", u32, lsb, e.cu32(0x7FFF)))
    r = f.binary("and", u32, r, e.cu32(0xFFFF0000))
    quiet = f.binary("and", u32, f.binary("or", u32, u, e.cu32(0x00400000)), e.cu32(0xFFFF0000))
    r = f.select(u32, f.isnan(x), quiet, r)
    return f.bitcast(e.t.f32, r)


def narrow(e: Emitter, t: ScalarType, x: int) -> int:
    return round_bf16(e, x) if t.name == "bf16" else x


# --- arith ---------------------------------------------------------------------------------
@handles("arith.constant")
def _constant(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    v = op.attributes["value"]
    if t.name == "i1":
        value: bool | int | float = bool(v)
    elif t.is_float:
        value = float(v)
        if t.name == "bf16":
            import numpy as np

            value = float(np.float32(value))
    else:
        value = int(v)
    rt = e.reg(t)
    zero = t.is_float and value == 0.0 and not str(float(value)).startswith("-")
    e.bind(op.result, e.float_zero(rt) if zero else e.m.const(rt, value))
    e.const_vals[id(op.result)] = v


@handles("arith.add", "arith.sub", "arith.mul", "arith.and", "arith.or", "arith.xor")
def _simple(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    kind = op.NAME[6:]
    a, b = e.v(op.operands[0]), e.v(op.operands[1])
    rt = e.reg(t)
    if t.name == "i1":  # arithmetic modulo 2
        kind = {"add": "xor", "sub": "xor", "mul": "and"}.get(kind, kind)
    e.bind(op.result, narrow(e, t, e.f.binary(kind, rt, a, b)))


def opaque_divisor(e: Emitter, rt: int, b: int) -> int:
    """``b`` with its bits or-ed with a zero the driver cannot see (the parameter block's).

    Why: when a divisor is provably ``0.0`` at compile time (``(0 >> n).to(f32)`` after
    folding), llvmpipe's code generator folds ``x / 0.0`` to ``0.0`` instead of ``+-inf``/NaN,
    even under ``SignedZeroInfNanPreserve`` (difftest seed 907950); an opaque divisor keeps the
    division for run time. Costs one integer ``or`` per float division."""
    bits = e.m.info[rt].bits
    if bits not in (32, 64):  # f16 registers: no 16-bit integer type may be available
        return b
    u = e.t.int_t(bits, False)
    return e.f.bitcast(rt, e.f.binary("or", u, e.f.bitcast(u, b), e.int_zero(u)))


@handles("arith.div", "arith.rem")
def _divrem(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    f = e.f
    rt = e.reg(t)
    kind = op.NAME[6:]
    a, b = e.v(op.operands[0]), e.v(op.operands[1])
    if t.is_float:
        if kind == "rem":
            from kdsl.codegen.spirv.mathlib import fmod_exact

            e.bind(op.result, fmod_exact(e, rt, a, b))  # f16 stays f16: the exact remainder fits
            return
        e.bind(op.result, narrow(e, t, f.binary(kind, rt, a, opaque_divisor(e, rt, b))))
        return
    if t.name == "i1":  # a / 1 == a, a / 0 == 0; a % b == 0 always
        e.bind(op.result, f.land(a, b) if kind == "div" else f.const(rt, False))
        return
    cb = e.const_of(op.operands[1])
    if isinstance(cb, int) and cb not in (0, -1):
        e.bind(op.result, f.binary(kind, rt, a, b))
        return
    zero, one = f.const(rt, 0), f.const(rt, 1)
    bad = f.cmp("eq", rt, b, zero)
    if t.is_signed:
        minus1 = f.cmp("eq", rt, b, f.const(rt, -1))
        safe = f.select(rt, f.lor(bad, minus1), one, b)
        q = f.binary(kind, rt, a, safe)
        q = f.select(rt, minus1, f.neg(rt, a) if kind == "div" else zero, q)
    else:
        q = f.binary(kind, rt, a, f.select(rt, bad, one, b))
    e.bind(op.result, f.select(rt, bad, zero, q))


@handles("arith.shl", "arith.shr")
def _shift(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    f = e.f
    rt = e.reg(t)
    a, b = e.v(op.operands[0]), e.v(op.operands[1])
    if t.name == "i1":  # a << b (b in {0, 1}) keeps a only for b == 0
        e.bind(op.result, f.land(a, f.lnot(b)))
        return
    bits = t.bitwidth
    cb = e.const_of(op.operands[1])
    kind = op.NAME[6:]
    if isinstance(cb, int) and 0 <= cb < bits:
        e.bind(op.result, f.binary(kind, rt, a, b))
        return
    ut = e.t.int_t(bits, False)
    ub = f.bitcast(ut, b) if t.is_signed else b
    big = f.cmp("ge", ut, ub, f.const(ut, bits))
    if kind == "shr" and t.is_signed:
        amt = f.select(rt, big, f.const(rt, bits - 1), b)
        e.bind(op.result, f.binary("shr", rt, a, amt))
        return
    shifted = f.binary(kind, rt, a, f.select(rt, big, f.const(rt, 0), b))
    e.bind(op.result, f.select(rt, big, f.const(rt, 0), shifted))


@handles("arith.max", "arith.min")
def _maxmin(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    f = e.f
    rt = e.reg(t)
    a, b = e.v(op.operands[0]), e.v(op.operands[1])
    is_max = op.NAME == "arith.max"
    if t.name == "i1":
        e.bind(op.result, f.lor(a, b) if is_max else f.land(a, b))
        return
    if not t.is_float:
        e.bind(op.result, f.select(rt, f.cmp("gt" if is_max else "lt", rt, a, b), a, b))
        return
    # fmax/fmin: a NaN operand is ignored (NMax/NMin); with propagate_nan any NaN wins
    best = f.ext(rt, "NMax" if is_max else "NMin", a, b)
    if op.attributes.get("propagate_nan"):
        best = f.select(rt, f.lor(f.isnan(a), f.isnan(b)), f.binary("add", rt, a, b), best)
    e.bind(op.result, best)


@handles("arith.neg")
def _neg(e: Emitter, op: Operation) -> None:
    t = scalar_type(op.result.type)
    a = e.v(op.operands[0])
    e.bind(op.result, a if t.name == "i1" else e.f.neg(e.reg(t), a))


@handles("arith.cmp")
def _cmp(e: Emitter, op: Operation) -> None:
    t = op.operands[0].type
    e.bind(op.result, e.f.cmp(str(op.attributes["predicate"]), e.reg(t), e.v(op.operands[0]), e.v(op.operands[1])))


@handles("arith.select")
def _select(e: Emitter, op: Operation) -> None:
    rt = e.reg(op.result.type)
    c, a, b = (e.v(x) for x in op.operands)
    e.bind(op.result, e.f.select(rt, c, a, b))


@handles("arith.cast")
def _cast(e: Emitter, op: Operation) -> None:
    src, dst = op.operands[0].type, op.result.type
    a = e.v(op.operands[0])
    if isinstance(src, PointerType) or isinstance(dst, PointerType):
        st, dt = e.reg(src), e.reg(dst)
        e.bind(op.result, a if st == dt else e.f.bitcast(dt, a))
        return
    e.bind(op.result, convert_value(e, a, scalar_type(src), scalar_type(dst)))


def convert_value(e: Emitter, a: int, s: ScalarType, d: ScalarType) -> int:
    f = e.f
    st, dt = e.reg(s), e.reg(d)
    if s == d:
        return a
    if d.name == "i1":
        return f.cmp("ne", st, a, f.const(st, 0.0 if s.is_float else 0)) if s.name != "i1" else a
    if s.name == "i1":
        return f.select(dt, a, f.const(dt, 1), f.const(dt, 0))
    if d.is_float:
        if d.name == "bf16":
            x = a if st == e.t.f32 else _f64_to_f32_odd(e, a) if s.name == "f64" else f.convert(e.t.f32, st, a)
            return round_bf16(e, x)  # f64: rounded once (to odd first), as the interpreter
        if s.name == "f64" and d.name == "f16":  # OpFConvert rounds twice (through f32) on lavapipe
            return f.convert(dt, e.t.f32, _f64_to_f32_odd(e, a))
        return f.convert(dt, st, a)
    if s.is_float:
        return _float_to_int(e, a, s, d)
    return f.convert(dt, st, a)


def _f64_to_f32_odd(e: Emitter, a: int) -> int:
    """``a`` rounded to f32 *to odd* (an inexact result gets an odd last bit), so that rounding
    it once more to a format of at most 22 significant bits equals one correct rounding of ``a``."""
    f, f32, u32 = e.f, e.t.f32, e.t.u32
    d = e.t.float_t(64)
    y = f.convert(f32, d, a)
    back = f.convert(d, f32, y)
    bits = f.bitcast(u32, y)
    inexact = f.land(f.cmp("ne", d, back, a), f.lnot(f.op("OpIsInf", e.t.bool, y)))  # NaN: unordered, ne
    even = f.cmp("eq", u32, f.binary("and", u32, bits, f.const(u32, 1)), f.const(u32, 0))
    positive = f.cmp("lt", u32, bits, f.const(u32, 1 << 31))
    away = f.op("OpLogicalEqual", e.t.bool, f.cmp("gt", d, a, back), positive)
    step = f.select(u32, away, f.const(u32, 1), f.const(u32, (1 << 32) - 1))
    odd = f.bitcast(f32, f.binary("add", u32, bits, step))
    return f.select(f32, f.land(f.land(inexact, even), f.lnot(f.isnan(a))), odd, y)


def _float_to_int(e: Emitter, a: int, s: ScalarType, d: ScalarType) -> int:
    """Truncate toward zero; out-of-range saturates, NaN -> 0 (as the interpreter)."""
    import numpy as np

    f = e.f
    st, dt = e.reg(s), e.reg(d)
    bits = d.bitwidth
    lo_f = -(2.0 ** (bits - 1)) if d.is_signed else 0.0
    hi_f = 2.0 ** (bits - 1) if d.is_signed else 2.0**bits
    if s.name == "f16":
        hi_f = float(np.float16(hi_f)) if hi_f <= 65504 else float("inf")
        lo_f = max(lo_f, -float("inf")) if lo_f >= -65504 else -float("inf")
    lo_i = -(1 << (bits - 1)) if d.is_signed else 0
    hi_i = (1 << (bits - 1)) - 1 if d.is_signed else (1 << bits) - 1
    t = f.ext(st, "Trunc", a)
    too_low = f.cmp("lt", st, t, f.const(st, lo_f))
    too_high = f.cmp("ge", st, t, f.const(st, hi_f))
    bad = f.lor(f.lor(too_low, too_high), f.isnan(t))
    safe = f.select(st, bad, f.const(st, 0.0), t)
    r = f.convert(dt, st, safe)
    r = f.select(dt, too_low, f.const(dt, lo_i), r)
    return f.select(dt, too_high, f.const(dt, hi_i), r)


@handles("arith.bitcast")
def _bitcast(e: Emitter, op: Operation) -> None:
    f = e.f
    src, dst = op.operands[0].type, op.result.type
    a = e.v(op.operands[0])
    st, dt = e.reg(src), e.reg(dst)
    if st == dt or (isinstance(dst, ScalarType) and dst.name == "i1"):
        e.bind(op.result, a)
        return
    u16 = e.t.int_t(16, False) if isinstance(src, ScalarType) and src.bitwidth == 16 else 0
    if isinstance(src, ScalarType) and src.name == "bf16":  # f32 register -> its top 16 bits
        bits = f.op("OpShiftRightLogical", e.t.u32, f.bitcast(e.t.u32, a), e.cu32(16))
        b16 = f.op("OpUConvert", u16, bits)
        e.bind(op.result, b16 if dt == u16 else f.bitcast(dt, b16))
        return
    if isinstance(dst, ScalarType) and dst.name == "bf16":
        a16 = a if st == u16 else f.bitcast(u16, a)
        wide = f.op("OpUConvert", e.t.u32, a16)
        e.bind(op.result, f.bitcast(e.t.f32, f.op("OpShiftLeftLogical", e.t.u32, wide, e.cu32(16))))
        return
    e.bind(op.result, f.bitcast(dt, a))
