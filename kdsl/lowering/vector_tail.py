"""The lane-count iteration that ends a vector loop (``vectorize`` calls it).

Why: a vector loop over ``[lo, L)`` runs ``(L - lo) // N`` whole vectors; the last
``L - vend < N`` elements ran in the scalar remainder loop, one element, one masked
``wi.gload`` and one scalar ``math.exp`` at a time. A softmax row of 781 columns spends
13 of its elements there, and on PoCL each scalar ``exp`` costs what a vector of 16 does
(docs/LOWERING.md, *The lane-count iteration*, has the numbers).

What: one more iteration of the vector body, over ``[vend, L)``, whose lanes ``i >=
count = L - vend`` are *inactive* -- the body's memory accesses take the lane count::

    for s in [vend, L) step N:              (runs once when L > vend, else never)
        count = L - s
        x = wi.gvload p(s), count           lanes >= count: 0 (or the guard's other), no memory read
        wi.vstore f(x), M, s, count         lanes >= count: not written
        acc = select(lane_ids < count, acc op g(x), acc)

Active lanes are exactly the scalar iterations ``vend .. L-1``: every lane-true bound mask
holds there (``L`` is the vector loop's own limit), the values they compute are the vector
body's, and an inactive lane changes nothing -- its loads are not done, its stores not made,
its reduction lanes keep their accumulator, so max/min (NaN-propagating or not), integer and
bitwise kinds are exact and a float sum is one more reassociation of the same terms. A chunk
guard (one ``i1`` for the whole vector) folds into the count: ``guard ? count : 0``.

Everything the vector body can hold has such a form, so a loop that vectorises always gets
its lane-count iteration; what cannot be made exact (atomics, prints, asserts, gathers,
lane-varying masks) already kept the whole loop scalar (``vectorize.py``).
"""

from __future__ import annotations

from kdsl.ir.core import Block, Builder, Operation, Region, Value
from kdsl.ir.dialects import arith, scf
from kdsl.ir.dialects.wi_vector import BroadcastOp, GVLoadOp, GVStoreOp, LaneIdsOp, VLoadOp, VStoreOp
from kdsl.ir.types import ScalarType, VectorType

# the operand position of the lanes operand (``mask`` of the global ops, ``count`` of the private ones)
_LANES_AT = {GVLoadOp: 1, GVStoreOp: 2, VLoadOp: 2, VStoreOp: 3}


def emit_tail(vloop: Operation, hi: Value, pre: Builder) -> Operation:
    """Build, at ``pre``, the lane-count iteration over ``[vend, hi)`` after ``vloop`` (a vector
    loop of ``vectorize``: unit lanes, step ``N``, ending at ``vend``; ``hi - vend < N``); its
    results are ``vloop``'s reductions with the iteration's active lanes folded in."""
    return emit_counted(vloop, vloop.operands[1], hi, list(vloop.results), pre)


def emit_counted(vloop: Operation, start: Value, hi: Value, accs: list[Value], pre: Builder) -> Operation:
    """Build, at ``pre``, one iteration of ``vloop``'s body over ``[start, hi)`` (``hi - start <
    N``; none when empty) whose lanes past ``hi`` do nothing, folding into ``accs``: the tail
    above, or the head that aligns a loop's streaming stores (``align_stores.py``)."""
    body = vloop.regions[0].block
    step = vloop.operands[2]
    it = body.args[0].type
    assert isinstance(it, ScalarType)
    block = Block([it, *(a.type for a in accs)])
    b = Builder(block)
    b.loc = vloop.loc
    iv = block.args[0]
    count = b.create(arith.SubOp, [hi, iv], [it]).result
    zero: Value | None = None
    vmap: dict[Value, Value] = dict(zip(body.args, block.args))
    term = body.terminator
    for op in body.ops:
        if op is term:
            continue
        operands = [vmap.get(v, v) for v in op.operands]
        at = _LANES_AT.get(type(op))
        if at is not None and at < len(operands):  # a chunk guard: no lane when it is false
            if zero is None:
                zero = pre.create(arith.ConstantOp, [], [it], {"value": 0}).result
            operands[at] = b.create(arith.SelectOp, [operands[at], count, zero], [it]).result
        elif at is not None:
            operands.append(count)
        new = b.create(type(op), operands, [r.type for r in op.results], dict(op.attributes))
        vmap.update(zip(op.results, new.results))
    yields: list[Value] = []
    if term is not None and term.operands:
        lanes = b.create(LaneIdsOp, [], [VectorType(_lanes(accs[0].type), it)]).result
        counts = b.create(BroadcastOp, [count], [lanes.type]).result
        active = b.create(arith.CmpOp, [lanes, counts], [VectorType(_lanes(lanes.type), ScalarType("i1"))],
                          {"predicate": "lt"}).result  # fmt: skip
        for old, new_acc in zip(term.operands, block.args[1:]):  # inactive lanes keep their accumulator
            yields.append(b.create(arith.SelectOp, [active, vmap.get(old, old), new_acc], [new_acc.type]).result)
    block.append(scf.YieldOp(yields, loc=vloop.loc))
    return pre.create(scf.ForOp, [start, hi, step, *accs], [a.type for a in accs], regions=[Region([block])])


def _lanes(t: object) -> int:
    assert isinstance(t, VectorType), t
    return t.lanes
