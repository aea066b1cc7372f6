"""LLVM IR for non-temporal (streaming) stores: the ``nontemporal`` hint of
``wi.gstore`` / ``wi.gvstore`` (whole or lane-counted) / ``wi.block_store``.

A store tagged ``!nontemporal !{i32 1}`` becomes an x86 ``movnt*`` store that
skips the read-for-ownership of the output cache line (docs/OPTIMIZER.md).
LLVM splits an under-aligned vector non-temporal store into scalar ``movnti``
(correct but slower: copy 1.2x instead of 1.5x), so vector stores check the
address at run time and store with the whole vector's alignment where it
holds -- rows of contiguous tensors are aligned, so the branch is
predictable. The hint never changes results.
"""

from __future__ import annotations

from llvmlite import ir

from kdsl.ir.core import Operation


def wanted(op: Operation) -> bool:
    """True when ``op`` (a store) carries the ``nontemporal`` hint."""
    return bool(op.attributes.get("nontemporal", False))


def mark(module: ir.Module, store: ir.Instruction) -> None:
    """Tag ``store`` with ``!nontemporal !{i32 1}``."""
    store.set_metadata("nontemporal", module.add_metadata([ir.Constant(ir.IntType(32), 1)]))


def vector_store(module: ir.Module, b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, elem_align: int) -> None:
    """A non-temporal store of vector ``value`` at ``ptr`` (aligned to ``elem_align``):
    with the vector's own alignment when the address has it, else element-aligned."""
    vt = value.type
    assert isinstance(vt, ir.VectorType)
    size = vt.count * elem_align
    if size & (size - 1):
        mark(module, b.store(value, ptr, align=elem_align))
        return
    i64 = ir.IntType(64)
    low = b.and_(b.ptrtoint(ptr, i64), ir.Constant(i64, size - 1))
    with b.if_else(b.icmp_unsigned("==", low, ir.Constant(i64, 0)), likely=True) as (aligned, unaligned):
        with aligned:
            mark(module, b.store(value, ptr, align=size))
        with unaligned:
            mark(module, b.store(value, ptr, align=elem_align))


def counted_store(
    module: ir.Module, b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, count: ir.Value, elem_align: int
) -> None:
    """Lanes ``i < count`` of vector ``value`` to ``ptr + i``, one streaming store each.

    x86 has no masked streaming store, and a plain (masked) store into a line that
    streaming stores are filling flushes their write-combining buffer half full: one per
    row cost a LayerNorm of 781 columns half its speed. So the lanes go out as scalar
    streaming stores, as the scalar remainder loop did."""
    vt = value.type
    assert isinstance(vt, ir.VectorType)
    i32 = ir.IntType(32)
    lanes = ir.Constant(i32, vt.count)
    n = b.select(b.icmp_signed("<", count, lanes), count, lanes)
    pre = b.block
    loop = b.append_basic_block("nt.lane")
    done = b.append_basic_block("nt.done")
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i32, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i32)
    i.add_incoming(ir.Constant(i32, 0), pre)
    q = b.gep(ptr, [b.sext(i, ir.IntType(64))], inbounds=True, source_etype=vt.element)
    mark(module, b.store(b.extract_element(value, i), q, align=elem_align))
    nxt = b.add(i, ir.Constant(i32, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
