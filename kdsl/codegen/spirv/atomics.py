"""``wi.atomic_rmw`` and ``wi.atomic_cas`` on global memory.

Integer kinds map to ``OpAtomic*`` directly (32-bit, or 64-bit with
``Int64Atomics``). Float ``add`` uses ``OpAtomicFAddEXT`` where the device has
``shaderBufferFloat32AtomicAdd`` (lavapipe does); float ``max``/``min`` (NaN
propagating, as the interpreter) and float add without the feature are a
compare-and-swap loop on the bit pattern; float ``xchg``/``cas`` work on the
bit pattern too. A masked-off lane does not touch memory and returns ``val``.
"""

from __future__ import annotations

from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.emit import Emitter
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


def _combine(e: Emitter, kind: str, rt: int, old: int, val: int) -> int:
    f = e.f
    if kind == "add":
        return f.binary("add", rt, old, val)
    either_nan = f.lor(f.isnan(old), f.isnan(val))
    best = f.ext(rt, "NMax" if kind == "max" else "NMin", old, val)
    return f.select(rt, either_nan, f.binary("add", rt, old, val), best)


def _cas_loop(e: Emitter, op: Operation, kind: str, addr: int, val: int, rt: int, it: int) -> int:
    """``for (cur = *p;; cur = seen) { seen = cas(p, cur, f(cur)); if (seen == cur) break; }``."""
    f = e.f
    scope, sem = _scope_sem(e, op)
    _, sem_fail = _scope_sem(e, op, for_unequal=True)
    ptr = _ptr(e, addr, it)
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
    new = f.bitcast(it, _combine(e, kind, rt, f.bitcast(rt, cur), val))
    f.emit("OpAtomicCompareExchange", it, seen, ptr, scope, sem, sem_fail, new, cur)
    done = f.cmp("eq", it, seen, cur)
    f.branch_cond(done, merge, cont)
    f.label(cont)
    f.branch(header)
    f.label(merge)
    return f.bitcast(rt, cur)


def atomic_cas(e: Emitter, op: Operation) -> None:
    pt = op.operands[0].type
    assert isinstance(pt, PointerType) and isinstance(pt.pointee, ScalarType)
    elem = pt.pointee
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
