"""``wi.atomic_rmw`` and ``wi.atomic_cas`` on global memory.

Integer kinds map to ``OpAtomic*`` directly (32-bit, or 64-bit with
``Int64Atomics``). Float ``add`` uses ``OpAtomicFAddEXT`` where the device has
``shaderBufferFloat32AtomicAdd`` (lavapipe does); float ``max``/``min`` (NaN
propagating, as the interpreter) and float add without the feature are a
compare-and-swap loop on the bit pattern; float ``xchg``/``cas`` work on the
bit pattern too. 16-bit elements (Triton's f16/bf16 ``atomic_add`` and 16-bit
``atomic_cas``; Vulkan has no 16-bit atomics) are a compare-and-swap loop on the
aligned 32-bit word holding them, replacing only their half. A masked-off lane
does not touch memory and returns ``val``.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.emit import Emitter
from kdsl.codegen.spirv.scalar import narrow
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType

_SEM = {
    "acq_rel": "AcquireRelease",
    "acquire": "Acquire",
    "release": "Release",
    "relaxed": "",
}
_SCOPE = {"gpu": "Device", "sys": "Device", "cta": "Workgroup"}
_INT_OPS = {"add": ("OpAtomicIAdd",) * 2, "max": ("OpAtomicSMax", "OpAtomicUMax"),
            "min": ("OpAtomicSMin", "OpAtomicUMin"), "xchg": ("OpAtomicExchange",) * 2,
            "and": ("OpAtomicAnd",) * 2, "or": ("OpAtomicOr",) * 2, "xor": ("OpAtomicXor",) * 2}


def _scope_sem(e: Emitter, op: Operation, for_unequal: bool = False) -> tuple[int, int]:
    sem_name = _SEM[str(op.attributes.get("sem", "acq_rel"))]
    if for_unequal:  # the failure ordering of a CAS may not release
        sem_name = {"AcquireRelease": "Acquire", "Release": ""}.get(sem_name, sem_name)
    sem = g.MEMORY_SEMANTICS["UniformMemory"] | g.MEMORY_SEMANTICS[sem_name] if sem_name else 0
    scope = g.SCOPE[_SCOPE[str(op.attributes.get("scope", "gpu"))]]
    return e.cu32(scope), e.cu32(sem)


def _int_type_for(e: Emitter, op: Operation, elem: ScalarType) -> int:
    if elem.bitwidth not in (32, 64) or elem.name == "bf16":
        raise e.error(op, f"atomics on {elem} are not supported (32- and 64-bit types only)")
    if elem.bitwidth == 64:
        e.t.require("int64_atomics", f"a 64-bit atomic on {elem}")
        e.m.capability("Int64Atomics")
    return e.t.int_t(elem.bitwidth, elem.is_signed and not elem.is_float)


def _ptr(e: Emitter, addr: int, type_id: int) -> int:
    return e.f.op("OpConvertUToPtr", e.m.t_ptr("PhysicalStorageBuffer", type_id), addr)


def _masked(e: Emitter, op: Operation, compute: object) -> None:
    """Run ``compute() -> result id`` where the mask holds; the result is ``val`` elsewhere."""
    assert callable(compute)
    f = e.f
    mask_v = op.operands[2] if len(op.operands) > 2 and op.NAME == "wi.atomic_rmw" else None
    if mask_v is None:
        e.bind(op.result, compute())
        return
    rt = e.reg(op.result.type)
    pre = f.block
    body, merge = f.new_label(), f.new_label()
    f.selection_merge(merge)
    f.branch_cond(e.v(mask_v), body, merge)
    f.label(body)
    res = compute()
    end = f.block
    f.branch(merge)
    f.label(merge)
    e.bind(op.result, f.phi(rt, [(res, end), (e.v(op.operands[1]), pre)]))


def atomic_rmw(e: Emitter, op: Operation) -> None:
    pt = op.operands[0].type
    assert isinstance(pt, PointerType) and isinstance(pt.pointee, ScalarType)
    elem = pt.pointee
    kind = str(op.attributes["kind"])
    if elem.bitwidth == 16 and elem.is_float and kind == "add":
        _masked(e, op, lambda: _narrow_add(e, op, elem))
        return
    it = _int_type_for(e, op, elem)
    f = e.f
    scope, sem = _scope_sem(e, op)
    addr, val = e.v(op.operands[0]), e.v(op.operands[1])
    rt = e.reg(elem)

    def compute() -> int:
        if not elem.is_float:
            opname = _INT_OPS[kind][0 if elem.is_signed else 1]
            return f.op(opname, rt, _ptr(e, addr, rt), scope, sem, val)
        if kind == "xchg":
            old = f.op("OpAtomicExchange", it, _ptr(e, addr, it), scope, sem, f.bitcast(it, val))
            return f.bitcast(rt, old)
        if kind == "add" and _native_fadd(e, elem):
            return f.op("OpAtomicFAddEXT", rt, _ptr(e, addr, rt), scope, sem, val)
        if kind not in ("add", "max", "min"):
            raise e.error(op, f"atomic {kind} on {elem} is not supported")
        return _cas_loop(e, op, kind, addr, val, rt, it)

    _masked(e, op, compute)


def _native_fadd(e: Emitter, elem: ScalarType) -> bool:
    feature = "float32_atomic_add" if elem.name == "f32" else "float64_atomic_add"
    if not getattr(e.target, feature):
        return False
    e.m.extension("SPV_EXT_shader_atomic_float_add")
    e.m.capability("AtomicFloat32AddEXT" if elem.name == "f32" else "AtomicFloat64AddEXT")
    return True


def _combine(e: Emitter, kind: str, rt: int, it: int, old: int, val: int) -> int:
    f = e.f
    if kind == "add":
        return f.binary("add", rt, old, val)
    either_nan = f.lor(f.isnan(old), f.isnan(val))
    best = f.ext(rt, "NMax" if kind == "max" else "NMin", old, val)
    # -0.0 below +0.0 (IEEE maximum/minimum, the interpreter's rule): on a tie keep the one whose
    # sign bit says so
    old_neg = f.op("OpSLessThan", e.m.t_bool(), f.bitcast(it, old), f.const(it, 0))
    tie = f.select(rt, old_neg, val, old) if kind == "max" else f.select(rt, old_neg, old, val)
    best = f.select(rt, f.op("OpFOrdEqual", e.m.t_bool(), old, val), tie, best)
    return f.select(rt, either_nan, f.binary("add", rt, old, val), best)


def _cas_loop(e: Emitter, op: Operation, kind: str, addr: int, val: int, rt: int, it: int) -> int:
    cur = _loop(e, op, _ptr(e, addr, it), it,
                lambda cur: e.f.bitcast(it, _combine(e, kind, rt, it, e.f.bitcast(rt, cur), val)))
    return e.f.bitcast(rt, cur)


def _loop(e: Emitter, op: Operation, ptr: int, it: int, new_of: Callable[[int], int]) -> int:
    """``for (cur = *p;; cur = seen) { seen = cas(p, cur, new_of(cur)); if (seen == cur) break; }``;
    returns the ``cur`` the successful exchange replaced."""
    f = e.f
    scope, sem = _scope_sem(e, op)
    _, sem_fail = _scope_sem(e, op, for_unequal=True)
    first = f.op("OpAtomicLoad", it, ptr, scope, e.cu32(0))
    pre = f.block
    header, body, cont, merge = (f.new_label() for _ in range(4))
    f.branch(header)
    f.label(header)
    seen = e.m.new_id()
    cur = f.phi(it, [(first, pre), (seen, cont)])
    f.loop_merge(merge, cont)
    f.branch(body)
    f.label(body)
    new = new_of(cur)
    f.emit("OpAtomicCompareExchange", it, seen, ptr, scope, sem, sem_fail, new, cur)
    done = f.cmp("eq", it, seen, cur)
    f.branch_cond(done, merge, cont)
    f.label(cont)
    f.branch(header)
    f.label(merge)
    return cur


class _Half:
    """The 16-bit half of an aligned 32-bit word that holds the element at ``addr``
    (little-endian: the element at ``addr % 4 == 2`` is the high half)."""

    def __init__(self, e: Emitter, addr: int) -> None:
        f, u32, u64 = e.f, e.t.u32, e.t.u64
        self.e = e
        self.word = _ptr(e, f.binary("and", u64, addr, f.const(u64, ~3 & (2**64 - 1))), u32)
        low = f.op("OpUConvert", u32, f.binary("and", u64, addr, f.const(u64, 2)))
        self.shift = f.binary("mul", u32, low, e.cu32(8))
        self.keep = f.op("OpNot", u32, f.op("OpShiftLeftLogical", u32, e.cu32(0xFFFF), self.shift))

    def get(self, word: int) -> int:
        """The element's 16 bits, zero-extended to a u32."""
        f, u32 = self.e.f, self.e.t.u32
        return f.binary("and", u32, f.op("OpShiftRightLogical", u32, word, self.shift), self.e.cu32(0xFFFF))

    def put(self, word: int, bits: int) -> int:
        """``word`` with the element's half replaced by ``bits`` (a u32 below 2**16)."""
        f, u32 = self.e.f, self.e.t.u32
        return f.binary("or", u32, f.binary("and", u32, word, self.keep), f.op("OpShiftLeftLogical", u32, bits, self.shift))


def _from_bits(e: Emitter, elem: ScalarType, bits: int) -> int:
    """A register of the 16-bit ``elem`` from its bits in a u32."""
    f, u32 = e.f, e.t.u32
    if elem.name == "bf16":
        return f.bitcast(e.t.f32, f.op("OpShiftLeftLogical", u32, bits, e.cu32(16)))
    h = f.op("OpUConvert", e.t.int_t(16, False), bits)
    return h if elem.name == "u16" else f.bitcast(e.reg(elem), h)


def _to_bits(e: Emitter, elem: ScalarType, val: int) -> int:
    """The bits of a 16-bit ``elem`` register, zero-extended to a u32 (bf16 registers are exact
    bf16 values in an f32, so their bits are its top half)."""
    f, u32 = e.f, e.t.u32
    if elem.name == "bf16":
        return f.op("OpShiftRightLogical", u32, f.bitcast(u32, val), e.cu32(16))
    h = val if elem.name == "u16" else f.bitcast(e.t.int_t(16, False), val)
    return f.op("OpUConvert", u32, h)


def _narrow_add(e: Emitter, op: Operation, elem: ScalarType) -> int:
    """f16/bf16 ``atomic_add``: the sum rounded to ``elem`` (bf16 through :func:`round_bf16`)."""
    half = _Half(e, e.v(op.operands[0]))
    val, rt = e.v(op.operands[1]), e.reg(elem)

    def new_of(cur: int) -> int:
        total = e.f.binary("add", rt, _from_bits(e, elem, half.get(cur)), val)
        return half.put(cur, _to_bits(e, elem, narrow(e, elem, total)))

    return _from_bits(e, elem, half.get(_loop(e, op, half.word, e.t.u32, new_of)))


def _narrow_cas(e: Emitter, op: Operation, elem: ScalarType) -> int:
    """16-bit ``atomic_cas``: bit patterns compared, as a hardware compare-and-swap does."""
    f, u32 = e.f, e.t.u32
    half = _Half(e, e.v(op.operands[0]))
    cmp, val = _to_bits(e, elem, e.v(op.operands[1])), _to_bits(e, elem, e.v(op.operands[2]))

    def new_of(cur: int) -> int:
        bits = half.get(cur)
        return half.put(cur, f.select(u32, f.cmp("eq", u32, bits, cmp), val, bits))

    return _from_bits(e, elem, half.get(_loop(e, op, half.word, u32, new_of)))


def atomic_cas(e: Emitter, op: Operation) -> None:
    pt = op.operands[0].type
    assert isinstance(pt, PointerType) and isinstance(pt.pointee, ScalarType)
    elem = pt.pointee
    if elem.bitwidth == 16:
        e.bind(op.result, _narrow_cas(e, op, elem))
        return
    it = _int_type_for(e, op, elem)
    f = e.f
    scope, sem = _scope_sem(e, op)
    _, sem_fail = _scope_sem(e, op, for_unequal=True)
    rt = e.reg(elem)
    cmp, val = e.v(op.operands[1]), e.v(op.operands[2])
    if elem.is_float:
        cmp, val = f.bitcast(it, cmp), f.bitcast(it, val)
    rt_int = it if elem.is_float else rt
    old = f.op("OpAtomicCompareExchange", rt_int, _ptr(e, e.v(op.operands[0]), rt_int), scope, sem, sem_fail, val,
               cmp)
    e.bind(op.result, f.bitcast(rt, old) if elem.is_float else old)
