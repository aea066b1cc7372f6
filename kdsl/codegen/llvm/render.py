"""Print one ``wi.func`` as LLVM IR (through llvmlite's IR builder).

The output module holds two functions:

* ``kd_kernel(params..., pid0, pid1, pid2, nprog0, nprog1, nprog2, status)``:
  what one program does (``internal alwaysinline``);
* ``kdsl_run(ptr argv, i32 gx, i32 gy, i32 gz, i64 start, i64 end)``: the
  exported driver. ``argv`` is an array of 8-byte slots, one per parameter
  (pointer value, or the scalar's bits in the low bytes) plus a final slot
  holding the assert-status pointer; it runs the programs whose linearised
  id ``x + gx * (y + gy * z)`` lies in ``[start, end)``. One native call thus
  runs many programs, and the runtime splits the grid over threads.

Mapping (CPU backend, ``num_threads == 1``: one work-item per program, tiles
in private arrays): ``wi.alloc`` -> an ``alloca`` in the entry block;
``scf.for``/``while``/``if`` -> LLVM loops and branches with phi nodes (the
loop vectoriser takes element loops from there); masked global loads and
stores -> a branch around the access (never a speculative load), which the
vectoriser if-converts into masked vector loads/stores; atomics -> LLVM
``atomicrmw``/``cmpxchg`` (float add/max/min through a ``cmpxchg`` loop with
the interpreter's NaN rules); ``wi.print`` -> libc ``printf``; ``wi.assert``
-> a ``cmpxchg`` of the assert id into the status word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import llvmlite.ir as ir

from kdsl.codegen.llvm import delinear, dot, streaming
from kdsl.codegen.llvm import scalar as sc
from kdsl.codegen.llvm import vector as vec
from kdsl.codegen.llvm.atomics import atomic_cas, atomic_rmw
from kdsl.codegen.llvm.block import render_block
from kdsl.codegen.llvm.types import (
    I8,
    I32,
    I64,
    PTR,
    VOID,
    bf16_to_f32,
    const,
    external,
    intrinsic,
    memref,
    reg,
    storage,
)
from kdsl.errors import CompilationError
from kdsl.ir.core import Block, Operation, Value
from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type

ENTRY = "kdsl_run"


@dataclass
class RenderedLLVM:
    """LLVM IR text of one kernel plus what the runtime needs to call it."""

    ir: str
    kernel_name: str
    param_types: tuple[Type, ...]
    has_status: bool
    has_print: bool


class FuncRenderer:
    """Builds ``kd_kernel`` for one ``wi.func`` (see the module docstring)."""

    def __init__(self, func: Operation, module: ir.Module, vector_bytes: int = 0, int8_dot: bool = False) -> None:
        if func.attributes["num_threads"] != 1:
            raise CompilationError("cpu: the LLVM renderer needs num_threads == 1 layouts (one work-item per program)")
        self.func = func
        self.module = module
        self.vector_bytes = vector_bytes  # 0: literal rendering (no micro-kernels, no loop nests)
        self.int8_dot = int8_dot  # the host has AVX-512 VNNI: int8 mmas use vpdpbusd (mma_i8.py)
        self.skip: set[int] = set()  # ops already bound by a loop rewrite (delinearised rem/div)
        self.vals: dict[int, ir.Value] = {}
        self.params = [a.type for a in func.regions[0].block.args]
        ftype = ir.FunctionType(VOID, [reg(t) for t in self.params] + [I32] * 6 + [PTR])
        self.fn = ir.Function(module, ftype, "kd_kernel")
        self.fn.linkage = "internal"
        self.fn.attributes.add("alwaysinline")
        self.fn.attributes.add("nounwind")
        if func.attributes.get("noalias"):  # the lowering fused loads and stores assuming no overlap
            for t, arg in zip(self.params, self.fn.args):
                if isinstance(t, PointerType):
                    arg.add_attribute("noalias")
        self.entry = self.fn.append_basic_block("allocas")
        self.alloca_b = ir.IRBuilder(self.entry)
        self.b = ir.IRBuilder(self.fn.append_basic_block("start"))
        n = len(self.params)
        self.pids = list(self.fn.args[n : n + 3])
        self.nprogs = list(self.fn.args[n + 3 : n + 6])
        self.status = self.fn.args[n + 6]
        self.has_print = False
        self.strings = 0

    def render(self) -> ir.Function:
        body = self.func.regions[0].block
        for arg, larg in zip(body.args, self.fn.args):
            self.vals[id(arg)] = larg
        self.block(body)
        self.b.ret_void()
        self.alloca_b.branch(self.fn.blocks[1])
        return self.fn

    # --- values ---------------------------------------------------------------------
    def v(self, x: Value) -> ir.Value:
        return self.vals[id(x)]

    def set(self, x: Value, lv: ir.Value) -> None:
        self.vals[id(x)] = lv

    def block(self, block: Block) -> None:
        for op in block.ops:
            if op.IS_TERMINATOR:
                continue
            self.op(op)

    def new_block(self, name: str) -> ir.Block:
        return self.fn.append_basic_block(name)

    # --- ops ------------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        if id(op) in self.skip:
            return
        if vec.handles(op):
            vec.emit(self, op)
            return
        handler = getattr(self, "op_" + op.NAME.replace(".", "_"), None)
        if handler is not None:
            handler(op)
            return
        args = [self.v(x) for x in op.operands]
        if op.NAME == "wi.addptr":
            self.set(op.result, self.gep(op.ptr.type, args[0], op.offset.type, args[1]))
            return
        self.set(op.result, sc.emit(self, op, args))

    def op_arith_constant(self, op: Operation) -> None:
        if isinstance(op.result.type, PointerType):
            raise CompilationError("cpu: pointer constants are not supported", op.loc)
        self.set(op.result, const(op.result.type, op.attributes["value"]))

    def op_wi_program_id(self, op: Operation) -> None:
        self.set(op.result, self.pids[op.attributes["axis"]])

    def op_wi_num_programs(self, op: Operation) -> None:
        self.set(op.result, self.nprogs[op.attributes["axis"]])

    def op_wi_local_id(self, op: Operation) -> None:
        self.set(op.result, ir.Constant(I32, 0))

    def op_wi_mma(self, op: Operation) -> None:
        dot.render_mma(self, op)

    def op_wi_block_load(self, op: Operation) -> None:
        render_block(self, op)

    op_wi_block_store = op_wi_block_load

    def op_wi_barrier(self, op: Operation) -> None:
        """One work-item per group: a barrier has nothing to wait for."""

    def op_wi_align_gap(self, op: Operation) -> None:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        addr = self.b.ptrtoint(self.v(op.ptr), I64)
        gap = self.b.and_(self.b.sub(ir.Constant(I64, 0), addr), ir.Constant(I64, op.attributes["bytes"] - 1))
        gap = self.b.udiv(gap, ir.Constant(I64, pt.pointee.itemsize))
        rt = op.result.type
        assert isinstance(rt, ScalarType)
        self.set(op.result, gap if rt.bitwidth == 64 else self.b.trunc(gap, ir.IntType(rt.bitwidth)))

    def op_wi_prefetch(self, op: Operation) -> None:
        """``llvm.prefetch`` for reading, high locality (``prefetcht0``), into the data cache."""
        fn = intrinsic(self.module, "llvm.prefetch", VOID, [PTR, I32, I32, I32], [PTR])
        self.b.call(fn, [self.v(op.ptr), ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])

    def op_wi_alloc(self, op: Operation) -> None:
        t = op.result.type
        assert isinstance(t, MemRefType)
        if t.space != "private" and t.space != "local":  # scratch: only the Vulkan backend spills
            raise CompilationError(f"cpu: memory space '{t.space}' is not supported by this renderer", op.loc)
        slot = self.alloca_b.alloca(memref(t))
        slot.type = PTR  # opaque pointer (llvmlite would print a typed one)
        slot.align = 64
        self.set(op.result, slot)

    def _elem_ptr(self, mem: Value, index: Value) -> tuple[ir.Value, ScalarType | PointerType]:
        t = mem.type
        assert isinstance(t, MemRefType)
        idx = self.index(index.type, self.v(index))
        ptr = self.b.gep(self.v(mem), [ir.Constant(I64, 0), idx], inbounds=True, source_etype=memref(t))
        return ptr, t.element

    def op_wi_load(self, op: Operation) -> None:
        p, e = self._elem_ptr(op.mem, op.index)
        self.set(op.result, self.from_mem(e, self.b.load(p, typ=storage(e))))

    def op_wi_store(self, op: Operation) -> None:
        p, e = self._elem_ptr(op.mem, op.index)
        self.b.store(self.to_mem(e, self.v(op.value)), p)

    def op_wi_gload(self, op: Operation) -> None:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        e = pt.pointee
        ptr = self.v(op.ptr)
        if op.mask is None:
            self.set(op.result, self.gload(e, ptr))
            return
        other = self.v(op.other) if op.other is not None else ir.Constant(reg(e), 0.0 if isinstance(e, ScalarType) and e.is_float else 0)
        self.set(op.result, self.guarded(self.v(op.mask), lambda: self.gload(e, ptr), other))

    def guarded(self, cond: ir.Value, load: Callable[[], ir.Value], other: ir.Value) -> ir.Value:
        """``cond ? load() : other`` with ``load`` run only when ``cond`` holds (a branch and a
        phi, never a speculative access): masked scalar loads and guarded vector loads."""
        pre = self.b.block
        then, done = self.new_block("ld"), self.new_block("ld.end")
        self.b.cbranch(cond, then, done)
        self.b.position_at_end(then)
        val = load()
        self.b.branch(done)
        self.b.position_at_end(done)
        phi = self.b.phi(other.type)
        phi.add_incoming(val, then)
        phi.add_incoming(other, pre)
        return phi

    def op_wi_gstore(self, op: Operation) -> None:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        value = self.to_mem(pt.pointee, self.v(op.value))
        if op.mask is None:
            st = self.b.store(value, self.v(op.ptr), align=_align(pt.pointee))
        else:
            with self.b.if_then(self.v(op.mask)):
                st = self.b.store(value, self.v(op.ptr), align=_align(pt.pointee))
        if streaming.wanted(op):
            streaming.mark(self.module, st)

    def op_wi_atomic_rmw(self, op: Operation) -> None:
        self.set(op.result, atomic_rmw(self, op))

    def op_wi_atomic_cas(self, op: Operation) -> None:
        self.set(op.result, atomic_cas(self, op))

    def op_wi_assert(self, op: Operation) -> None:
        failed = self.b.not_(self.v(op.cond))
        with self.b.if_then(failed, likely=False):
            self.b.cmpxchg(self.status, ir.Constant(I32, 0), ir.Constant(I32, op.attributes["id"]), "monotonic")

    def op_wi_print(self, op: Operation) -> None:
        self.has_print = True
        fmt = op.attributes["format"].encode() + b"\0"
        gv = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(fmt)), f".fmt{self.strings}")
        self.strings += 1
        gv.global_constant = True
        gv.linkage = "private"
        gv.initializer = ir.Constant(ir.ArrayType(I8, len(fmt)), bytearray(fmt))
        args: list[ir.Value] = [gv]
        for x in op.operands:
            args.append(self.vararg(x.type, self.v(x)))
        printf = external(self.module, "printf", I32, [PTR], var_arg=True)
        self.b.call(printf, args)

    def vararg(self, t: Type, x: ir.Value) -> ir.Value:
        """C default argument promotions."""
        if isinstance(t, PointerType):
            return x
        assert isinstance(t, ScalarType)
        if t.is_float:
            return x if t.name == "f64" else self.b.fpext(x, ir.DoubleType())
        if t.bitwidth < 32:
            return self.b.sext(x, I32) if t.is_signed else self.b.zext(x, I32)
        return x

    # --- memory helpers -------------------------------------------------------------
    def index(self, t: Type, x: ir.Value) -> ir.Value:
        assert isinstance(t, ScalarType)
        if t.bitwidth == 64:
            return x
        return self.b.sext(x, I64) if t.is_signed else self.b.zext(x, I64)

    def gep(self, pt: Type, ptr: ir.Value, ot: Type, off: ir.Value) -> ir.Value:
        assert isinstance(pt, PointerType)
        idx = self.index(ot, off)
        return self.b.gep(ptr, [idx], source_etype=storage(pt.pointee))

    def gload(self, e: ScalarType | PointerType, ptr: ir.Value) -> ir.Value:
        return self.from_mem(e, self.b.load(ptr, typ=storage(e), align=_align(e)))

    def from_mem(self, e: ScalarType | PointerType, raw: ir.Value) -> ir.Value:
        if isinstance(e, PointerType):
            return raw
        if e.name == "i1":
            return self.b.icmp_unsigned("!=", raw, ir.Constant(I8, 0))
        if e.name == "bf16":
            return bf16_to_f32(self.b, raw)
        return raw

    def to_mem(self, e: ScalarType | PointerType, x: ir.Value) -> ir.Value:
        if isinstance(e, PointerType):
            return x
        if e.name == "i1":
            return self.b.zext(x, I8)
        if e.name == "bf16":
            bits = self.b.lshr(self.b.bitcast(x, I32), ir.Constant(I32, 16))
            return self.b.trunc(bits, ir.IntType(16))
        return x

    # --- control flow ---------------------------------------------------------------
    def _phis(self, block: ir.Block, values: list[Value]) -> list[ir.PhiInstr]:
        self.b.position_at_end(block)
        return [self.b.phi(reg(v.type)) for v in values]

    def op_scf_for(self, op: Operation) -> None:
        if self.vector_bytes:
            nest = dot.match(op, self.vector_bytes)
            if nest is not None:
                dot.render(self, nest)
                return
            flat = delinear.plan(op)
            if flat is not None:
                delinear.render(self, op, *flat)
                return
        lo, hi, step = (self.v(x) for x in op.operands[:3])
        ivt = op.operands[0].type
        assert isinstance(ivt, ScalarType)
        inits = [self.v(x) for x in op.operands[3:]]
        body = op.regions[0].block
        pre = self.b.block
        head, loop, done = self.new_block("for.head"), self.new_block("for.body"), self.new_block("for.end")
        self.b.branch(head)
        iv, *carried = self._phis(head, list(body.args))
        iv.add_incoming(lo, pre)
        for phi, init in zip(carried, inits):
            phi.add_incoming(init, pre)
        self.b.cbranch(self._for_cond(op, ivt, iv, hi, step), loop, done)
        self.set(body.args[0], iv)
        for arg, phi in zip(body.args[1:], carried):
            self.set(arg, phi)
        self.b.position_at_end(loop)
        self.block(body)
        term = body.terminator
        assert term is not None
        nxt = self.b.add(iv, step)
        latch = self.b.block
        iv.add_incoming(nxt, latch)
        for phi, y in zip(carried, term.operands):
            phi.add_incoming(self.v(y), latch)
            _allow_reassoc(phi, self.v(y))
        self.b.branch(head)
        self.b.position_at_end(done)
        for r, phi in zip(op.results, carried):
            self.set(r, phi)

    def _for_cond(self, op: Operation, t: ScalarType, iv: ir.Value, hi: ir.Value, step: ir.Value) -> ir.Value:
        b = self.b

        def less(pred: str) -> ir.Value:
            return b.icmp_signed(pred, iv, hi) if t.is_signed else b.icmp_unsigned(pred, iv, hi)

        sop = op.operands[2].owner_op
        if sop is not None and sop.NAME == "arith.constant":
            return less("<") if int(sop.attributes["value"]) > 0 else less(">")
        return b.select(b.icmp_signed(">", step, ir.Constant(step.type, 0)), less("<"), less(">"))

    def op_scf_if(self, op: Operation) -> None:
        then, other, done = self.new_block("if.then"), self.new_block("if.else"), self.new_block("if.end")
        self.b.cbranch(self.v(op.cond), then, other)
        incoming: list[tuple[list[ir.Value], ir.Block]] = []
        for region, blk in zip(op.regions, (then, other)):
            self.b.position_at_end(blk)
            self.block(region.block)
            term = region.block.terminator
            assert term is not None
            incoming.append(([self.v(y) for y in term.operands], self.b.block))
            self.b.branch(done)
        phis = self._phis(done, list(op.results))
        for vals, blk in incoming:
            for phi, val in zip(phis, vals):
                phi.add_incoming(val, blk)
        for r, phi in zip(op.results, phis):
            self.set(r, phi)

    def op_scf_while(self, op: Operation) -> None:
        before, after = op.regions[0].block, op.regions[1].block
        pre = self.b.block
        head, body, done = self.new_block("while.head"), self.new_block("while.body"), self.new_block("while.end")
        self.b.branch(head)
        cur = self._phis(head, list(before.args))
        for phi, init in zip(cur, op.operands):
            phi.add_incoming(self.v(init), pre)
        for arg, phi in zip(before.args, cur):
            self.set(arg, phi)
        self.block(before)
        cond = before.terminator
        assert cond is not None
        fwd = [self.v(x) for x in cond.operands[1:]]
        self.b.cbranch(self.v(cond.operands[0]), body, done)
        self.b.position_at_end(body)
        for arg, val in zip(after.args, fwd):
            self.set(arg, val)
        self.block(after)
        term = after.terminator
        assert term is not None
        latch = self.b.block
        for phi, y in zip(cur, term.operands):
            phi.add_incoming(self.v(y), latch)
        self.b.branch(head)
        self.b.position_at_end(done)
        for r, val in zip(op.results, fwd):
            self.set(r, val)


def _allow_reassoc(phi: ir.PhiInstr, nxt: ir.Value) -> None:
    """Mark ``nxt = fadd phi, x`` (a loop-carried float sum) ``reassoc``.

    Triton leaves the order of a reduction unspecified; allowing LLVM to
    reassociate exactly this add lets the loop vectoriser keep partial sums in
    vector lanes (without it every float reduction runs one element at a time).
    Nothing else gets a fast-math flag.
    """
    is_sum = isinstance(nxt, ir.Instruction) and nxt.opname == "fadd" and phi in nxt.operands
    if is_sum and "reassoc" not in nxt.flags:
        nxt.flags.append("reassoc")


def _align(e: ScalarType | PointerType) -> int:
    return 8 if isinstance(e, PointerType) else e.itemsize


def _driver(module: ir.Module, kernel: ir.Function, params: list[Type]) -> None:
    """``kdsl_run(argv, gx, gy, gz, start, end)``: unpack the slots, loop over program ids."""
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, I32, I32, I32, I64, I64]), ENTRY)
    argv, gx, gy, gz, start, end = fn.args
    entry, head, body, done = (fn.append_basic_block(n) for n in ("entry", "head", "body", "done"))
    b = ir.IRBuilder(entry)
    vals: list[ir.Value] = []
    for i, t in enumerate(params):
        slot = b.gep(argv, [ir.Constant(I64, i)], source_etype=I64)
        vals.append(b.load(slot, typ=reg(t), align=8))
    status = b.load(b.gep(argv, [ir.Constant(I64, len(params))], source_etype=I64), typ=PTR, align=8)
    gx64, gy64 = b.zext(gx, I64), b.zext(gy, I64)
    b.branch(head)
    b.position_at_end(head)
    lin = b.phi(I64)
    lin.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", lin, end), body, done)
    b.position_at_end(body)
    x = b.urem(lin, gx64)
    rest = b.udiv(lin, gx64)
    y = b.urem(rest, gy64)
    z = b.udiv(rest, gy64)
    pids = [b.trunc(v, I32) for v in (x, y, z)]
    b.call(kernel, [*vals, *pids, gx, gy, gz, status])
    nxt = b.add(lin, ir.Constant(I64, 1))
    lin.add_incoming(nxt, body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()


def render_llvm(
    module: Operation, triple: str = "", data_layout: str = "", vector_bytes: int = 0, int8_dot: bool = False,
) -> RenderedLLVM:  # fmt: skip
    """LLVM IR for the single ``wi.func`` of ``module`` plus its driver.

    ``vector_bytes``: the host's widest vector register (64 with AVX-512, 32
    with AVX2); when set, ``tile.dot`` nests are rendered as register-blocked
    vector micro-kernels (:mod:`kdsl.codegen.llvm.dot`) of that width.
    ``int8_dot``: the host has AVX-512 VNNI (:mod:`kdsl.codegen.llvm.mma_i8`).
    """
    funcs = [op for op in module.regions[0].block.ops if op.NAME == "wi.func"]
    if len(funcs) != 1:
        raise CompilationError(f"cpu: expected one wi.func, got {len(funcs)}")
    func = funcs[0]
    mod = ir.Module(name=str(func.attributes["sym_name"]))
    if triple:
        mod.triple = triple
    if data_layout:
        mod.data_layout = data_layout
    fr = FuncRenderer(func, mod, vector_bytes, int8_dot)
    kernel = fr.render()
    _driver(mod, kernel, fr.params)
    return RenderedLLVM(
        ir=str(mod),
        kernel_name=str(func.attributes["sym_name"]),
        param_types=tuple(fr.params),
        has_status=bool(func.attributes.get("asserts")),
        has_print=fr.has_print,
    )
