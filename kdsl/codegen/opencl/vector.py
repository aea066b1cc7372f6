"""OpenCL C for the vector ops of the work-item IR (``vector<NxT>``, see ``wi_vector.py``).

Spellings: ``vector<16xf32>`` is ``float16``; lane masks ``vector<Nxi1>``
are ``intN`` holding -1 (true) or 0, the type OpenCL's relational operators
return for 32-bit lanes (64-bit compares are converted to it, and the mask is
widened back for a 64-bit ``select``). Memory: ``vloadN``/``vstoreN`` (only
element alignment needed; spelled by :mod:`.vmem`); accesses limited to a lane
count are staged through a private vector (:mod:`.vcount`). Signed 32/64-bit ``+ - *`` go through the
unsigned type (``as_uintN``) so overflow wraps, as in the scalar path;
float -> int casts saturate (``convert_intN_sat_rtz``); an f32 vector divided by a
splat scalar goes through :mod:`.vdiv` (correctly rounded, no vector divide); max/min with
``propagate_nan`` select ``a + b`` where a lane is NaN. ``wi.vreduce`` is a
tree over halves (``.lo``/``.hi``), the order the op documents.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdsl.codegen.opencl import ctypes as ct
from kdsl.codegen.opencl import streaming, vcount, vdiv, vexp2, vmem, vtrig
from kdsl.codegen.opencl.exprs import _MATH1
from kdsl.codegen.uniform_div import uniform_divisor
from kdsl.errors import CompilationError
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, ScalarType, Type, VectorType

if TYPE_CHECKING:
    from kdsl.codegen.opencl.render import Renderer

_WI_VECTOR = frozenset({"wi.vload", "wi.vstore", "wi.gvload", "wi.gvstore", "wi.broadcast", "wi.vreduce",
                        "wi.lane_ids"})  # fmt: skip
_SYM = {"arith.add": "+", "arith.sub": "-", "arith.mul": "*", "arith.div": "/", "math.div_rn": "/",
        "arith.and": "&", "arith.or": "|", "arith.xor": "^",
        "arith.shl": "<<", "arith.shr": ">>"}  # fmt: skip -- shifts: constant, in-range amounts only
_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_KIND_OP = {"add": "arith.add", "mul": "arith.mul", "max": "arith.max", "min": "arith.min", "and": "arith.and",
            "or": "arith.or", "xor": "arith.xor"}  # fmt: skip


def handles(op: Operation) -> bool:
    """True for the ops this module renders: the wi vector ops and arith/math ops on vectors."""
    if op.NAME in _WI_VECTOR:
        return True
    if op.NAME.startswith(("arith.", "math.")):
        return any(isinstance(v.type, VectorType) for v in (*op.operands, *op.results))
    return False


def render(r: Renderer, op: Operation, depth: int) -> None:
    """Emit ``op`` (one statement, or a few for ``wi.vreduce``)."""
    a = [r.name(v) for v in op.operands]
    n = op.NAME
    if n == "wi.gvstore" and _counted(op):
        vt = op.value.type
        if _elem(vt).name == "f16":
            fn = vcount.store_half(r.helper, _lanes(vt), _half_bits(r.helper, _lanes(vt)))
        else:
            nt = bool(op.attributes.get("nontemporal", False))
            fn = vcount.store(r.helper, ct.reg(_elem(vt)), _lanes(vt), "global", nt)
        r.emit(depth, f"{fn}({a[0]}, {a[2]}, {a[1]});")
        return
    if n == "wi.vstore" and _counted(op):
        vt, space = op.value.type, _space(op.mem.type)
        r.emit(depth, f"{vcount.store(r.helper, ct.reg(_elem(vt)), _lanes(vt), space)}({a[1]} + {a[2]}, {a[3]}, {a[0]});")
        return
    if n == "wi.gvstore":
        vt = op.value.type
        if _elem(vt).name == "f16":  # float lanes to half storage, rounded as kd_f2h does
            plain = f"{r.helper(f'kd_sth{_lanes(vt)}', _store_half(r.helper, _lanes(vt)))}({a[0]}, {a[1]});"
            r.emit(depth, plain if op.mask is None else f"if ({a[2]}) {{ {plain} }}")
            return
        plain = vmem.store(r.helper, ct.reg(_elem(vt)), _lanes(vt), "global", a[0], a[1])
        if op.attributes.get("nontemporal", False) and _elem(vt).name != "i1":
            plain = streaming.vector(ct.reg(vt), _lanes(vt), _elem(vt).itemsize, a[1], a[0], plain)
        r.emit(depth, plain if op.mask is None else f"if ({a[2]}) {{ {plain} }}")
        return
    if n == "wi.vstore":
        vt, space = op.value.type, _space(op.mem.type)
        r.emit(depth, vmem.store(r.helper, ct.reg(_elem(vt)), _lanes(vt), space, f"{a[1]} + {a[2]}", a[0]))
        return
    if n == "wi.vreduce":
        _vreduce(r, op, a[0], depth)
        return
    t = op.result.type
    r.emit(depth, f"const {ct.reg(t)} {r.fresh(op.result)} = {_expr(r, op, a)};")


def _uniform_divide(r: Renderer, op: Operation, a: list[str]) -> str | None:
    """An f32 vector divided by a splat scalar (``wi.broadcast``) through ``vdiv``, else None."""
    t = op.result.type
    s = uniform_divisor(op)
    if s is None or _lanes(t) not in vdiv.LANES:
        return None
    return f"{vdiv.declare(r.helper, _lanes(t))}({a[0]}, {r.name(s)})"


def _counted(op: Operation) -> bool:
    """The access is limited to a lane count (an ``i32`` where the guard or ``count`` sits)."""
    at = {"wi.gvload": 1, "wi.gvstore": 2, "wi.vload": 2, "wi.vstore": 3}[op.NAME]
    return len(op.operands) > at and op.operands[at].type == ScalarType("i32")


def _counted_load(r: Renderer, op: Operation, a: list[str]) -> str:
    t = op.result.type
    e, n = _elem(t), _lanes(t)
    if op.NAME == "wi.gvload":
        other = a[2] if op.other is not None else "0"
        if e.name == "f16":
            return f"{vcount.load_half(r.helper, n, _load_half(r.helper, n, 'private'))}({a[0]}, {a[1]}, {other})"
        return f"{vcount.load(r.helper, ct.reg(e), n, 'global')}({a[0]}, {a[1]}, {other})"
    fn = vcount.load(r.helper, ct.reg(e), n, _space(op.mem.type), op.attributes.get("stride", 1))
    return f"{fn}({a[0]} + {a[1]}, {a[2]}, 0)"


def _load(r: Renderer, op: Operation, a: list[str]) -> str:
    t = op.result.type
    if _counted(op):
        return _counted_load(r, op, a)
    if op.NAME == "wi.gvload":
        if _elem(t).name == "f16":  # half storage to float lanes, NaN payloads kept as kd_h2f does
            whole = f"{_load_half(r.helper, _lanes(t))}({a[0]})"
        else:
            whole = vmem.load(r.helper, ct.reg(_elem(t)), _lanes(t), "global", a[0])
        if op.mask is None:
            return whole
        other = a[2] if op.other is not None else "0"
        return f"({a[1]} ? {whole} : (({ct.reg(t)})({other})))"  # C's ?: evaluates one arm only
    k = op.attributes.get("stride", 1)
    if k != 1:  # a column: gathered lane by lane (the array is private or local, in L1)
        lanes = ", ".join(f"{a[0]}[{a[1]} + {i * k}]" for i in range(_lanes(t)))
        return f"(({ct.reg(t)})({lanes}))"
    return vmem.load(r.helper, ct.reg(_elem(t)), _lanes(t), _space(op.mem.type), f"{a[0]} + {a[1]}")


def _lanes(t: Type) -> int:
    assert isinstance(t, VectorType), t
    return t.lanes


def _space(t: Type) -> str:
    assert isinstance(t, MemRefType), t
    return t.space


def _elem(t: Type) -> ScalarType:
    e = t.scalar
    assert isinstance(e, ScalarType)
    return e


def _expr(r: Renderer, op: Operation, a: list[str]) -> str:
    n = op.NAME
    t = op.result.type
    if n in ("wi.gvload", "wi.vload"):
        return _load(r, op, a)
    if n == "wi.lane_ids":
        return f"(({ct.reg(t)})({', '.join(str(i) for i in range(_lanes(t)))}))"
    if n == "wi.broadcast":
        if _elem(t).name == "i1":
            return f"(({ct.reg(t)})(-(int)({a[0]})))"
        return f"(({ct.reg(t)})({a[0]}))"
    if n == "arith.cmp":
        rel = f"({a[0]} {_CMP[op.attributes['predicate']]} {a[1]})"
        return f"convert_{ct.reg(t)}{rel}" if _elem(op.lhs.type).bitwidth == 64 else rel
    if n == "arith.select":
        mask = a[0] if _elem(t).bitwidth == 32 else f"convert_long{_lanes(t)}({a[0]})"
        return f"select({a[2]}, {a[1]}, {mask})"
    if n == "arith.cast":
        return _cast(r, op, a[0])
    if n == "arith.bitcast":  # same-width 32/64-bit lanes
        return f"as_{ct.reg(t)}({a[0]})"
    if n == "math.umulhi":
        return _mul_hi(t, a[0], a[1])
    if n == "math.fma":
        return f"fma({a[0]}, {a[1]}, {a[2]})"
    if len(a) == 2:
        return _uniform_divide(r, op, a) or binary(n, t, a[0], a[1], bool(op.attributes.get("propagate_nan")))
    if n == "math.exp2" and _elem(t).name == "f32" and _lanes(t) == 16:
        return f"{vexp2.declare(r.helper)}({a[0]})"
    if n in ("math.sin", "math.cos") and _elem(t).name == "f32" and isinstance(t, VectorType):
        return f"{vtrig.declare(r.helper, n[5:], _lanes(t))}({a[0]})"
    return _unary(n, t, a[0], op)


def _mul_hi(t: Type, x: str, y: str) -> str:
    """The high half of the product of 32-bit lanes, through one widening multiply: PoCL builds
    ``mul_hi(uint16)`` from 16-bit pieces (4 ``vpmulld`` and the adds), 3x slower than the
    ``vpmuludq`` pair LLVM makes of a 64-bit product (Philox in ``kl.rand``: dropout)."""
    e = _elem(t)
    if e.bitwidth != 32:
        return f"mul_hi({x}, {y})"
    n, w = _lanes(t), ("long" if e.is_signed else "ulong")
    return f"convert_{ct.reg(t)}((convert_{w}{n}({x}) * convert_{w}{n}({y})) >> 32)"


def binary(n: str, t: Type, x: str, y: str, propagate_nan: bool = False) -> str:
    """``x op y`` on vectors (or scalars) of ``t``."""
    e = _elem(t)
    c = ct.reg(t)
    if e.is_float:
        if n in ("arith.max", "arith.min"):
            m = f"f{n[6:]}({x}, {y})"
            return f"select({m}, {x} + {y}, isnan({x}) | isnan({y}))" if propagate_nan else m
        if n == "arith.rem":
            return f"fmod({x}, {y})"
        return f"({x} {_SYM[n]} {y})"
    if n in ("arith.max", "arith.min"):
        return f"{n[6:]}({x}, {y})"
    sym = _SYM[n]
    if e.is_signed and sym in "+-*":
        u = "u" + c
        return (
            f"as_{c}(as_{u}({x}) {sym} as_{u}({y}))"
            if isinstance(t, VectorType)
            else f"(({c})(({u}){x} {sym} ({u}){y}))"
        )
    return f"({x} {sym} {y})"


def _unary(n: str, t: Type, x: str, op: Operation) -> str:
    e = _elem(t)
    c = ct.reg(t)
    if n == "arith.neg":
        return f"as_{c}(-as_u{c}({x}))" if e.is_signed else f"(-{x})"
    if n == "math.abs":
        if e.is_float:
            return f"fabs({x})"
        if not e.is_signed:
            return x
        # not abs(): PoCL treats abs(INT_MIN) as overflow (difftest seed 901786 got +2**31);
        # negate in unsigned arithmetic so INT_MIN wraps to itself, as the scalar path does
        u = f"as_u{c}({x})"
        return f"as_{c}(select({u}, (u{c})(0) - {u}, {x} < 0))"
    if n in _MATH1:
        return f"{_MATH1[n]}({x})"
    raise CompilationError(f"opencl: cannot render vector op '{n}'", op.loc)


def _cast(r: Renderer, op: Operation, x: str) -> str:
    s, d = _elem(op.operand.type), _elem(op.result.type)
    dt = ct.reg(op.result.type)
    if s == d:
        return x
    if d.name == "f16":  # f16 lanes are floats holding half values: round each lane to half
        n = _lanes(op.result.type)
        return f"{r.helper(f'kd_rh{n}', _round_half(n))}({x})"
    if s.name == "f16":  # already floats
        return x
    if s.is_float and d.is_integer:
        return f"convert_{dt}_sat_rtz({x})"
    if s.is_integer and d.is_integer and s.bitwidth == d.bitwidth:
        return f"as_{dt}({x})"
    return f"convert_{dt}({x})"


def _round_half(n: int) -> str:
    """``kd_rhN``: ``kd_rh`` on N lanes -- ``vstore_halfN_rte``/``vload_halfN`` (core OpenCL C, no
    ``cl_khr_fp16``), and NaN lanes as the scalar ``kd_f2h``/``kd_h2f`` pair leaves them (the low 13
    mantissa bits cleared, a quiet bit kept so the value stays a NaN)."""
    f, u = f"float{n}", f"uint{n}"
    return (
        f"inline {f} kd_rh{n}({f} x) {{\n"
        f"  __private ushort h[{n}];  /* half storage: a half array needs cl_khr_fp16 */\n"
        f"  vstore_half{n}_rte(x, 0, (__private half*)h);\n"
        f"  const {f} y = vload_half{n}(0, (__private const half*)h);\n"
        f"  {u} b = as_{u}(x) & ({u})0xffffe000u;\n"
        f"  b |= select(({u})0u, ({u})0x2000u, as_{u}((b & ({u})0x7fe000u) == ({u})0u));\n"
        f"  return select(y, as_{f}(b), isnan(x));\n"
        f"}}\n"
    )


def _load_half(helper: vmem.Helper, n: int, space: str = "global") -> str:
    """``kd_ldhN``: N f16 values at a global ``ushort*`` as floats -- ``vload_halfN``, with NaN
    lanes rebuilt from their bits so the payload is kept exactly (the scalar ``kd_h2f``);
    ``kd_ldhpN`` the same from a private array. Returns the name."""
    f, u, i = f"float{n}", f"uint{n}", f"int{n}"
    name, s = (f"kd_ldh{n}", "__global") if space == "global" else (f"kd_ldhp{n}", "__private")
    return helper(name, (
        f"inline {f} {name}({s} const ushort* p) {{\n"
        f"  const {u} u = convert_{u}({vmem.load(helper, 'ushort', n, space, 'p')});\n"
        f"  const {f} y = vload_half{n}(0, ({s} const half*)p);\n"
        f"  const {u} nan = ((u & 0x8000u) << 16) | 0x7f800000u | ((u & 0x3ffu) << 13);\n"
        f"  const {i} is_nan = ((u & 0x7c00u) == 0x7c00u) & ((u & 0x3ffu) != 0u);\n"
        f"  return select(y, as_{f}(nan), is_nan);\n"
        f"}}\n"
    ))


def _half_bits(helper: vmem.Helper, n: int) -> str:
    """``kd_hbitsN``: the f16 bits of N float lanes -- ``vstore_halfN_rte``, with NaN lanes encoded
    as the scalar ``kd_f2h`` does (top 10 mantissa bits kept). Returns the name."""
    f, u, us, sh = f"float{n}", f"uint{n}", f"ushort{n}", f"short{n}"
    return helper(f"kd_hbits{n}", (
        f"inline {us} kd_hbits{n}({f} x) {{\n"
        f"  __private ushort h[{n}];  /* half storage: a half array needs cl_khr_fp16 */\n"
        f"  vstore_half{n}_rte(x, 0, (__private half*)h);\n"
        f"  const {u} u = as_{u}(x);\n"
        f"  const {u} m = (u & 0x7fffffu) >> 13;\n"
        f"  const {us} nan = convert_{us}(((u >> 16) & 0x8000u) | 0x7c00u | select(m, ({u})1u, m == 0u));\n"
        f"  return select(vload{n}(0, h), nan, convert_{sh}(isnan(x)));\n"
        f"}}\n"
    ))


def _store_half(helper: vmem.Helper, n: int) -> str:
    """``kd_sthN``: N float lanes stored as f16 at a global ``ushort*`` (:func:`_half_bits`). The
    bits go out as one ``ushortN`` store (:mod:`.vmem`): PoCL's ``vstore16`` of ushorts is 16 scalar
    stores, which made this store 1.5x slower (tutorial 05's fp16 LayerNorm)."""
    bits = _half_bits(helper, n)
    return (
        f"inline void kd_sth{n}(__global ushort* p, float{n} x) {{\n"
        f"  {vmem.store(helper, 'ushort', n, 'global', 'p', f'{bits}(x)')}\n"
        f"}}\n"
    )


def _vreduce(r: Renderer, op: Operation, src: str, depth: int) -> None:
    """Combine halves until one lane is left: ``t = f(v.lo, v.hi)``, then ``f(t.lo, t.hi)``..."""
    vt = op.operand.type
    assert isinstance(vt, VectorType)
    e = _elem(vt)
    name = _KIND_OP[op.attributes["kind"]]
    cur, lanes = src, vt.lanes
    while lanes > 1:
        lanes //= 2
        t: Type = VectorType(lanes, e) if lanes > 1 else e
        r.counter += 1
        tmp = f"t{r.counter}"
        expr = binary(name, t, f"{cur}.lo", f"{cur}.hi", bool(op.attributes.get("propagate_nan")))
        if e.is_float and name in ("arith.max", "arith.min") and lanes == 1 and op.attributes.get("propagate_nan"):
            expr = f"(isnan({cur}.lo) || isnan({cur}.hi) ? {cur}.lo + {cur}.hi : f{name[6:]}({cur}.lo, {cur}.hi))"
        r.emit(depth, f"const {ct.reg(t)} {tmp} = {expr};")
        cur = tmp
    r.names[id(op.result)] = cur
