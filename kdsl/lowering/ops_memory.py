"""Lowering of global-memory ops, atomics and the debug ops.

Tile loads/stores become guarded per-element ``wi.gload``/``wi.gstore`` in an
element loop (fused with neighbouring elementwise work). Atomics get an
element loop of their own. Scalar (uniform) side effects that must happen
once per program -- scalar atomics, ``print`` -- run in work-item 0.
"""

from __future__ import annotations

from kdsl.ir.core import Operation, Value
from kdsl.ir.dialects import wi
from kdsl.ir.types import PointerType
from kdsl.lowering.block import store_hints, try_block_load, try_block_store
from kdsl.lowering.index import Index
from kdsl.lowering.lowerer import Lowerer, lowers
from kdsl.lowering.printing import lower_print_op, once
from kdsl.lowering.reps import Rep


def _opt(lw: Lowerer, v: Value | None, idx: Index) -> list[Value]:
    if v is None:
        return []
    return [lw.elem(lw.rep(v), idx)]


@lowers("tile.load")
def lower_load(lw: Lowerer, op: Operation) -> None:
    res = op.result
    if not res.type.shape:
        lw.close_nest()
        lw.order_memory("load")
        ops = [lw.scalar(v) for v in op.operands]
        lw.vals[res] = lw.top.create(wi.GLoadOp, ops, [res.type]).result
        return
    if try_block_load(lw, op):
        return
    m = lw.new_mat(res.type.shape, res.type.scalar)
    reads = [lw.rep(v) for v in op.operands]

    def body(idx: Index) -> None:
        ops = [lw.elem(r, idx) for r in reads]
        lw.put(m, idx, lw.emit(wi.GLoadOp, ops, res.type.scalar))

    lw.elementwise(res.type.shape, reads, body, mem="load")
    lw.reps[res] = m


@lowers("tile.store")
def lower_store(lw: Lowerer, op: Operation) -> None:
    hints = store_hints(lw, op)
    if not op.ptr.type.shape:
        lw.close_nest()
        lw.order_memory("store", uniform=True)
        ops = [lw.scalar(v) for v in op.operands]
        once(lw, lambda: lw.eb.create(wi.GStoreOp, ops, [], hints))
        return
    if try_block_store(lw, op):
        return
    reads = [lw.rep(v) for v in op.operands]

    def body(idx: Index) -> None:
        lw.eb.create(wi.GStoreOp, [lw.elem(r, idx) for r in reads], [], hints)

    lw.elementwise(op.ptr.type.shape, reads, body, mem="store")


def _atomic(lw: Lowerer, op: Operation, cls: type[Operation]) -> None:
    res = op.result
    attrs = dict(op.attributes)
    pointee = op.ptr.type.scalar
    assert isinstance(pointee, PointerType)
    if not res.type.shape:
        ops = [lw.scalar(v) for v in op.operands]
        lw.vals[res] = lw.uniform_once(lambda: lw.emit(cls, ops, res.type, attrs), pointee.pointee)
        return
    m = lw.new_mat(res.type.shape, res.type.scalar)
    reads: list[Rep] = [lw.rep(v) for v in op.operands]

    def body(idx: Index) -> None:
        lw.put(m, idx, lw.emit(cls, [lw.elem(r, idx) for r in reads], res.type.scalar, attrs))

    lw.order_memory("load")
    lw.elementwise(res.type.shape, reads, body, alone=True)
    lw.stores_pending = True
    lw.reps[res] = m


@lowers("tile.atomic_rmw")
def lower_atomic_rmw(lw: Lowerer, op: Operation) -> None:
    _atomic(lw, op, wi.AtomicRMWOp)


@lowers("tile.atomic_cas")
def lower_atomic_cas(lw: Lowerer, op: Operation) -> None:
    _atomic(lw, op, wi.AtomicCASOp)


@lowers("tile.assert")
def lower_assert(lw: Lowerer, op: Operation) -> None:
    loc = op.loc
    lw.asserts.append((op.attributes["message"], loc.file, loc.line, loc.col))
    aid = len(lw.asserts)
    cond = op.cond
    if not cond.type.shape:
        lw.close_nest()
        lw.top.create(wi.AssertOp, [lw.scalar(cond)], [], {"id": aid})
        return
    rep = lw.rep(cond)
    def body(idx: Index) -> None:
        lw.eb.create(wi.AssertOp, [lw.elem(rep, idx)], [], {"id": aid})

    lw.elementwise(cond.type.shape, [rep], body, alone=True)


@lowers("tile.print")
def lower_print(lw: Lowerer, op: Operation) -> None:
    lower_print_op(lw, op)
