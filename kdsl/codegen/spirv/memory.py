"""Work-item ids, arrays, global memory, barriers, atomics, print and assert.

Global memory is reached through ``OpConvertUToPtr`` of a ``u64`` address to
a ``PhysicalStorageBuffer`` pointer (every access carries ``Aligned``, as the
spec requires for that storage class). Atomics use device scope and the
op's memory semantics on ``UniformMemory``; float add uses
``OpAtomicFAddEXT`` when the device reports it, every other float atomic is a
compare-and-swap loop (:mod:`kdsl.codegen.spirv.atomics`).
"""

from __future__ import annotations

from kdsl.codegen.spirv import abi, scratch
from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.atomics import atomic_cas, atomic_rmw
from kdsl.codegen.spirv.emit import Emitter, PrintSpec, handles
from kdsl.codegen.spirv.scalar import from_mem, to_mem
from kdsl.codegen.spirv.target import mem_size
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, PointerType, ScalarType

_ACCESS = g.MEMORY_ACCESS["Aligned"]


@handles("wi.program_id")
def _program_id(e: Emitter, op: Operation) -> None:
    axis = int(op.attributes["axis"])
    if axis == 0 and e.pack > 1:  # several programs per work-group (emit.programs_per_group)
        e.bind(op.result, e.program_x)
        return
    e.bind(op.result, e.builtin_component("WorkgroupId", axis))


@handles("wi.num_programs")
def _num_programs(e: Emitter, op: Operation) -> None:
    e.bind(op.result, e.grid[int(op.attributes["axis"])])


@handles("wi.local_id")
def _local_id(e: Emitter, op: Operation) -> None:
    e.bind(op.result, e.builtin_component("LocalInvocationId", 0))


@handles("wi.alloc")
def _alloc(e: Emitter, op: Operation) -> None:
    t = op.result.type
    assert isinstance(t, MemRefType)
    if t.space == "scratch":
        scratch.alloc(e, op)
        return
    arr = e.m.t_array(e.t.array_elem(t.element), t.size)
    if t.space == "local":
        var = e.m.global_variable(e.m.t_ptr("Workgroup", arr), "Workgroup", f"local{len(e.arrays)}")
        e.arrays[id(op.result)] = (var, t, "Workgroup")
    else:
        var = e.f.variable(e.m.t_ptr("Function", arr), f"priv{len(e.arrays)}")
        e.arrays[id(op.result)] = (var, t, "Function")


def _element_ptr(e: Emitter, op: Operation) -> tuple[int, MemRefType, list[int]]:
    """Pointer to the element an array ``wi.load``/``wi.store`` touches, its array type and the
    memory-access operands (``Aligned`` for a scratch array, in global memory)."""
    var, t, storage = e.arrays[id(op.operands[-2] if op.NAME == "wi.store" else op.operands[0])]
    idx = e.v(op.operands[-1])
    if storage == "PhysicalStorageBuffer":
        return scratch.element_ptr(e, var, t, idx), t, [_ACCESS, scratch.itemsize(t)]
    ptr = e.f.op("OpAccessChain", e.m.t_ptr(storage, e.t.array_elem(t.element)), var, idx)
    return ptr, t, []


@handles("wi.load")
def _load(e: Emitter, op: Operation) -> None:
    ptr, t, access = _element_ptr(e, op)
    raw = e.f.op("OpLoad", e.t.array_elem(t.element), ptr, *access)
    if isinstance(t.element, ScalarType) and t.element.name == "i1":
        raw = e.f.cmp("ne", e.t.u32, raw, e.cu32(0))
    e.bind(op.result, raw)


@handles("wi.store")
def _store(e: Emitter, op: Operation) -> None:
    ptr, t, access = _element_ptr(e, op)
    val = e.v(op.operands[0])
    if isinstance(t.element, ScalarType) and t.element.name == "i1":
        val = e.f.select(e.t.u32, val, e.cu32(1), e.cu32(0))
    e.f.emit("OpStore", ptr, val, *access)


@handles("wi.addptr")
def _addptr(e: Emitter, op: Operation) -> None:
    f, u64 = e.f, e.t.u64
    pt = op.result.type
    assert isinstance(pt, PointerType)
    off = f.convert(u64, e.reg(op.operands[1].type), e.v(op.operands[1]))
    size = mem_size(pt.pointee)
    if size != 1:
        off = f.op("OpIMul", u64, off, f.const(u64, size))
    e.bind(op.result, f.op("OpIAdd", u64, e.v(op.operands[0]), off))


def global_ptr(e: Emitter, addr: int, elem: ScalarType | PointerType) -> int:
    return e.f.op("OpConvertUToPtr", e.m.t_ptr("PhysicalStorageBuffer", e.t.mem(elem)), addr)


def scratch_addr(e: Emitter) -> int:
    return e.f.op("OpIAdd", e.t.u64, e.status, e.f.const(e.t.u64, abi.STATUS_SCRATCH))


@handles("wi.gload")
def _gload(e: Emitter, op: Operation) -> None:
    f = e.f
    pt = op.operands[0].type
    assert isinstance(pt, PointerType)
    elem = pt.pointee
    addr = e.v(op.operands[0])
    mask = e.v(op.operands[1]) if len(op.operands) > 1 else None
    if mask is not None:
        addr = f.select(e.t.u64, mask, addr, scratch_addr(e))
    raw = f.op("OpLoad", e.t.mem(elem), global_ptr(e, addr, elem), _ACCESS, mem_size(elem))
    val = from_mem(e, raw, elem)
    if mask is not None:
        rt = e.reg(elem)
        other = e.v(op.operands[2]) if len(op.operands) > 2 else f.const(rt, False if isinstance(elem, ScalarType) and elem.name == "i1" else 0)
        val = f.select(rt, mask, val, other)
    e.bind(op.result, val)


@handles("wi.gstore")
def _gstore(e: Emitter, op: Operation) -> None:
    pt = op.operands[0].type
    assert isinstance(pt, PointerType)
    elem = pt.pointee

    def store() -> None:
        ptr = global_ptr(e, e.v(op.operands[0]), elem)
        e.f.emit("OpStore", ptr, to_mem(e, e.v(op.operands[1]), elem), _ACCESS, mem_size(elem))

    if len(op.operands) > 2:
        e.structured_if(e.v(op.operands[2]), store)
    else:
        store()


@handles("wi.align_gap")
def _align_gap(e: Emitter, op: Operation) -> None:
    """Addresses are u64 here (``global_ptr`` converts them when used)."""
    f, u64 = e.f, e.t.u64
    pt = op.operands[0].type
    assert isinstance(pt, PointerType)
    neg = f.binary("sub", u64, f.const(u64, 0), e.v(op.operands[0]))
    gap = f.binary("div", u64, f.binary("and", u64, neg, f.const(u64, op.attributes["bytes"] - 1)),
                   f.const(u64, pt.pointee.itemsize))  # fmt: skip
    e.bind(op.result, f.convert(e.t.reg(op.result.type), u64, gap))


@handles("wi.prefetch")
def _prefetch(e: Emitter, op: Operation) -> None:
    """SPIR-V has no prefetch; the hint is dropped (the lowering only asks for it on CPU targets)."""


@handles("wi.barrier")
def _barrier(e: Emitter, op: Operation) -> None:
    sem = (
        g.MEMORY_SEMANTICS["AcquireRelease"]
        | g.MEMORY_SEMANTICS["WorkgroupMemory"]
        | g.MEMORY_SEMANTICS["UniformMemory"]
    )
    wg = e.cu32(g.SCOPE["Workgroup"])
    e.f.emit("OpControlBarrier", wg, wg, e.cu32(sem))


handles("wi.atomic_rmw")(atomic_rmw)
handles("wi.atomic_cas")(atomic_cas)


@handles("wi.assert")
def _assert(e: Emitter, op: Operation) -> None:
    failed = e.f.lnot(e.v(op.operands[0]))
    e.structured_if(failed, lambda: e.record_status(int(op.attributes["id"])))


@handles("wi.print")
def _print(e: Emitter, op: Operation) -> None:
    """Append a record (print index + one u64 per argument) to the status buffer."""
    f, u32, u64 = e.f, e.t.u32, e.t.u64
    index = len(e.prints)
    e.prints.append(PrintSpec(str(op.attributes["format"]), tuple(a.type for a in op.operands)))
    size = 8 + 8 * len(op.operands)
    cursor = f.op(
        "OpConvertUToPtr",
        e.m.t_ptr("PhysicalStorageBuffer", u32),
        f.op("OpIAdd", u64, e.status, f.const(u64, abi.STATUS_PRINT_CURSOR)),
    )
    off = f.op("OpAtomicIAdd", u32, cursor, e.cu32(g.SCOPE["Device"]), e.cu32(0), e.cu32(size))
    fits = f.cmp("le", u32, off, e.cu32(abi.PRINT_CAPACITY - size))
    slots = [_print_slot(e, e.v(a), a.type) for a in op.operands]

    def write() -> None:
        base = f.op("OpIAdd", u64, e.status, f.op("OpUConvert", u64, off))
        base = f.op("OpIAdd", u64, base, f.const(u64, abi.STATUS_RECORDS))
        p0 = f.op("OpConvertUToPtr", e.m.t_ptr("PhysicalStorageBuffer", u32), base)
        f.emit("OpStore", p0, e.cu32(index), _ACCESS, 8)
        for k, s in enumerate(slots):
            addr = f.op("OpIAdd", u64, base, f.const(u64, 8 + 8 * k))
            p = f.op("OpConvertUToPtr", e.m.t_ptr("PhysicalStorageBuffer", u64), addr)
            f.emit("OpStore", p, s, _ACCESS, 8)

    e.structured_if(fits, write)


def _print_slot(e: Emitter, val: int, t: object) -> int:
    """The u64 slot of a printed value: ints extended, floats as f32/f64 bits."""
    f, u64 = e.f, e.t.u64
    if isinstance(t, PointerType):
        return val
    assert isinstance(t, ScalarType)
    if t.name == "i1":
        return f.select(u64, val, f.const(u64, 1), f.const(u64, 0))
    if t.is_float:
        if t.name == "f64":
            return f.bitcast(u64, val)
        x = f.convert(e.t.f32, e.reg(t), val) if t.name == "f16" else val
        return f.op("OpUConvert", u64, f.bitcast(e.t.u32, x))
    return f.convert(u64, e.reg(t), val)
