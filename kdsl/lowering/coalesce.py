"""Private arrays whose lifetimes do not overlap share storage.

Why: the lowering gives every materialised tile its own ``wi.alloc`` -- a flash-attention kernel
with ``(128, 64)`` blocks declares about twenty 32 KiB private arrays, ~700 KiB per work-item,
though only a handful are alive at any point. On a CPU device every array is stack memory the
caches must hold, so the footprint, not the arithmetic, decides the speed once it passes L2.
This is register allocation for arrays: live ranges over the structured work-item IR, then
greedy interval colouring.

Live range of an array: from the first to the last op touching it, in program order (a pre-order
numbering in which an op with regions spans its nested ops). Loops stretch it:

* an array touched inside a loop and also outside it is alive for the whole loop (a value
  carried around the back edge, or one read on every iteration);
* a loop around *every* use: the array may carry data from one iteration to the next (a
  reduction's accumulator inside an element loop) -- alive for the whole loop -- unless the
  first op of the loop body touching it only writes it. Tiles are SSA values and the lowering
  writes a tile's whole array in its defining op (loop-carried tiles are assigned before their
  loop), so a tile computed inside a key-block loop stays inside one iteration's range.

Both branches of an ``scf.if`` are numbered one after the other; since only one runs, that is
merely conservative.

Only ``private`` arrays of at least :data:`MIN_BYTES` are shared: ``__local`` buffers are
shared by the work-group across barriers, and small arrays are candidates for registers in the
driver's compiler (LLVM's SROA), which one shared array of mixed uses would defeat. Arrays of one
element type share; a group's array has its largest member's size. Contents of an array start
undefined either way, so sharing changes no result.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdsl.ir.core import Operation
from kdsl.ir.dialects import scf, wi
from kdsl.ir.types import MemRefType

MIN_BYTES = 1024  # smaller private arrays keep their own storage (register candidates)


@dataclass
class _Range:
    alloc: Operation
    lo: int
    hi: int


@dataclass
class _Slot:
    members: list[Operation]  # the first keeps its alloc, the others are merged into it
    size: int
    free_at: int  # the last position of its current member


def _number(root: Operation) -> dict[Operation, tuple[int, int]]:
    """Pre-order positions: ``(first, last)`` per op, ``last`` covering its nested ops."""
    span: dict[Operation, tuple[int, int]] = {}
    counter = 0

    def visit(op: Operation) -> None:
        nonlocal counter
        first = counter
        counter += 1
        for r in op.regions:
            for b in r.blocks:
                for inner in b.ops:
                    visit(inner)
        span[op] = (first, counter - 1)

    visit(root)
    return span


def _is_loop(op: Operation) -> bool:
    """Ops whose regions run repeatedly (``scf.if`` runs one branch once; functions, modules once)."""
    return isinstance(op, (scf.ForOp, scf.WhileOp))


def _loops_around(op: Operation) -> list[Operation]:
    out: list[Operation] = []
    p = op.parent_op
    while p is not None:
        if _is_loop(p):
            out.append(p)
        p = p.parent_op
    return out


def _live_range(alloc: Operation, span: dict[Operation, tuple[int, int]]) -> _Range:
    users = [u for u, _ in alloc.result.uses]
    lo = min(span[u][0] for u in users)
    hi = max(span[u][1] for u in users)
    around = [_loops_around(u) for u in users]
    common = [lp for lp in around[0] if all(lp in a for a in around[1:])]  # innermost first
    partial = {lp for a in around for lp in a} - set(common)
    changed = True
    while changed:  # a loop touched inside and outside: the array lives through all of it
        changed = False
        for lp in partial:
            first, last = span[lp]
            if (lo < first or hi > last) and (lo > first or hi < last):
                lo, hi = min(lo, first), max(hi, last)
                changed = True
    for lp in common:  # loops around every use: alive across iterations unless defined afresh in each
        if _fresh_each_iteration(alloc, lp):
            break
        lo, hi = min(lo, span[lp][0]), max(hi, span[lp][1])
    return _Range(alloc, lo, hi)


def _fresh_each_iteration(alloc: Operation, loop: Operation) -> bool:
    """Does every iteration of ``loop`` write ``alloc`` before reading it?

    True when the first op of the loop body that touches the array only writes it (a tile's
    defining op writes its whole array; partial writes happen only as the two halves of a
    block load, both writes). ``scf.while`` and anything unusual: no.
    """
    if not isinstance(loop, scf.ForOp):
        return False
    uses = alloc.result.uses
    for op in loop.regions[0].block.ops:
        inside = [(u, i) for u, i in uses if op.is_ancestor(u)]
        if inside:
            return all(wi.write_only_operand(u) == i for u, i in inside)
    return False


def _candidates(root: Operation) -> list[Operation]:
    out: list[Operation] = []
    for op in root.walk():
        if not isinstance(op, wi.AllocOp) or not op.result.uses:
            continue
        t = _memref(op)
        if t.space == "private" and t.nbytes >= MIN_BYTES:
            out.append(op)
    return out


def coalesce_private(root: Operation) -> int:
    """Share storage between private arrays of disjoint live ranges; return the bytes saved."""
    allocs = _candidates(root)
    if len(allocs) < 2:
        return 0
    span = _number(root)
    by_elem: dict[object, list[_Range]] = {}
    for a in allocs:
        by_elem.setdefault(_memref(a).element, []).append(_live_range(a, span))
    saved = 0
    for ranges in by_elem.values():
        slots: list[_Slot] = []
        for r in sorted(ranges, key=lambda r: (r.lo, r.hi)):
            t = _memref(r.alloc)
            free = [s for s in slots if s.free_at < r.lo]
            fits = [s for s in free if s.size >= t.size]
            slot = min(fits, key=lambda s: s.size) if fits else max(free, key=lambda s: s.size, default=None)
            if slot is None:
                slots.append(_Slot([r.alloc], t.size, r.hi))
                continue
            slot.size = max(slot.size, t.size)
            slot.free_at = r.hi
            slot.members.append(r.alloc)
        for s in slots:
            saved += _merge(s)
    return saved


def _merge(slot: _Slot) -> int:
    """Point every member's uses at the first one's array, sized for the largest; erase the rest."""
    leader, *rest = slot.members
    lt = _memref(leader)
    before = sum(_memref(m).nbytes for m in slot.members)
    leader.result.type = MemRefType(slot.size, lt.element, lt.space)
    for m in rest:
        m.result.replace_all_uses_with(leader.result)
        m.erase()
    return before - _memref(leader).nbytes


def _memref(alloc: Operation) -> MemRefType:
    t = alloc.result.type
    assert isinstance(t, MemRefType)
    return t
