"""Aligned streaming stores: a vector loop over an unaligned row starts with a lane-count head.

Why: a streaming (non-temporal) store skips the read of the line it fills, but x86 has one only
for a whole aligned vector. A row of 781 floats starts at a different offset in its line on every
row, so the vector loop's stores were unaligned on 15 rows of 16: LLVM splits an unaligned
non-temporal vector store into 16 scalar ``movnti``, and the OpenCL renderer falls back to plain
stores (each line read before it is written). The 1823 x 781 softmax ran 0.68 ms on the cpu
backend and 1.04 ms on PoCL, against 0.55 and 0.52 ms for the same rows 784 floats apart.

What, after vectorisation (CPU targets, ``Layout.align_stores``): a vector loop without
reductions (its iterations are independent, so where the vectors start changes no result) that
streams to ``addptr(X, iv + c)`` with ``X`` and ``c`` fixed (``c`` may be absent), followed by its
lane-count tail, gets::

    h     = max(0, min(wi.align_gap(X + c + lo), limit - lo))   elements before the first aligned vector
    head  = the body over [lo, lo + h) as one lane-count iteration (runs when h > 0)
    loop  over [lo + h, vend') step N                   every vector store aligned
    tail  over [vend', limit)                           vend' = lo + h + (limit - lo - h) // N * N

Loads at the same index in rows with the same offset (the input of a same-shape op) become
aligned too. Rows that are aligned already get ``h = 0``: the head does not run.
"""

from __future__ import annotations

from kdsl.ir.core import Builder, Operation, Value
from kdsl.ir.dialects import arith
from kdsl.ir.dialects.wi import AddPtrOp, AlignGapOp
from kdsl.ir.types import PointerType, VectorType
from kdsl.lowering.vector_tail import emit_counted
from kdsl.transforms.utils import defined_inside


def align_streaming_stores(func: Operation) -> int:
    """Give every qualifying vector loop of ``func`` its aligning head; returns how many."""
    done = 0
    for loop in [op for op in func.walk() if op.NAME == "scf.for"]:
        plan = _plan(loop)
        if plan is not None:
            _align(loop, *plan)
            done += 1
    return done


def _plan(loop: Operation) -> tuple[Operation, Value, Value | None, int] | None:
    """(the tail loop after ``loop``, the stored row's base ``X``, the invariant ``c`` of an index
    ``iv + c`` (None for ``iv``), the vector's bytes) when ``loop`` qualifies (see the module doc)."""
    body = loop.regions[0].block
    if loop.results or loop.parent is None:
        return None
    store = next((op for op in body.ops if op.NAME == "wi.gvstore" and op.attributes.get("nontemporal")
                  and len(op.operands) == 2), None)  # fmt: skip
    if store is None:
        return None
    run = vector_run(store, loop)
    if run is None:
        return None
    vt = store.operands[1].type
    assert isinstance(vt, VectorType)
    size = vt.lanes * vt.element.itemsize
    if size & (size - 1):
        return None
    ops = loop.parent.ops
    at = ops.index(loop)
    tail = ops[at + 1] if at + 1 < len(ops) else None
    if tail is None or tail.NAME != "scf.for" or tail.operands[0] is not loop.operands[1] or tail.results:
        return None
    return tail, run[0], run[1], size


def vector_run(store: Operation, loop: Operation) -> tuple[Value, Value | None] | None:
    """(``X``, ``c``) when the vector store ``store`` in ``loop``'s body writes ``addptr(X, iv + c)``
    (``X`` and ``c`` fixed in ``loop``, ``c`` None for ``iv`` alone) and ``loop`` steps by the
    vector's lanes, so consecutive iterations store consecutive vectors; else None. Also the
    test of :mod:`kdsl.lowering.stream_stores` for stores that fill whole lines."""
    vt = store.operands[1].type
    step = loop.operands[2].owner_op
    ptr = store.operands[0].owner_op
    if not isinstance(vt, VectorType) or step is None or step.attributes.get("value") != vt.lanes:
        return None
    if not isinstance(ptr, AddPtrOp) or defined_inside(ptr.operands[0], loop):
        return None
    affine, shift = _index_shift(ptr.operands[1], loop.regions[0].block.args[0], loop)
    return (ptr.operands[0], shift) if affine else None


def _index_shift(index: Value, iv: Value, loop: Operation) -> tuple[bool, Value | None]:
    """(True, ``c``) when ``index`` is ``iv + c`` or ``c + iv`` with ``c`` fixed in ``loop``
    (a flat index ``pid * BLOCK + iv`` is such a sum), (True, None) for ``iv`` itself, else
    (False, None)."""
    if index is iv:
        return True, None
    op = index.owner_op
    if op is None or op.NAME != "arith.add":
        return False, None
    a, b = op.operands
    other = b if a is iv else a if b is iv else None
    if other is None or defined_inside(other, loop):
        return False, None
    return True, other


def _align(loop: Operation, tail: Operation, base: Value, shift: Value | None, size: int) -> None:
    b = Builder()
    b.set_insertion_point_before(loop)
    b.loc = loop.loc
    lo, limit, step = loop.operands[0], tail.operands[1], loop.operands[2]
    it = lo.type
    assert isinstance(base.type, PointerType)
    at = lo if shift is None else b.create(arith.AddOp, [shift, lo], [it]).result
    first = b.create(AddPtrOp, [base, at], [base.type]).result
    gap = b.create(AlignGapOp, [first], [it], {"bytes": size}).result
    span = b.create(arith.SubOp, [limit, lo], [it]).result
    zero = b.create(arith.ConstantOp, [], [it], {"value": 0}).result
    # never below 0: the vectors must not start before lo (the vectoriser's limit is >= lo anyway)
    h = b.create(arith.MaxOp, [b.create(arith.MinOp, [gap, span], [it]).result, zero], [it]).result
    start = b.create(arith.AddOp, [lo, h], [it]).result
    rest = b.create(arith.SubOp, [limit, start], [it]).result
    whole = b.create(arith.MulOp, [b.create(arith.DivOp, [rest, step], [it]).result, step], [it]).result
    vend = b.create(arith.AddOp, [start, whole], [it]).result
    emit_counted(loop, lo, start, [], b)
    loop.set_operand(0, start)
    loop.set_operand(1, vend)
    tail.set_operand(0, vend)

