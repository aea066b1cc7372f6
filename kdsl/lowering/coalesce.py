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

Private arrays share only from :data:`MIN_BYTES` up: small arrays are candidates for registers
in the driver's compiler (LLVM's SROA), which one shared array of mixed uses would defeat.
Arrays of one element type share; a group's array has its largest member's size. Contents of an
array start undefined either way, so sharing changes no result.

``__local`` buffers (:func:`coalesce_local`; the lowering makes one per ``__local`` copy of a
tile) are read by the whole work-group, so disjoint live ranges in one work-item's program order
are not enough: a fast work-item could write the new tile while a slow one still reads the old.
A buffer therefore takes over another's storage only when a barrier that every work-item executes
lies between the old buffer's last use and the new one's first: its *gate*, the last barrier
before the first use in a block enclosing it (``to_shared`` starts with one). A gate outside a
loop that holds the buffer's whole live range would not separate one iteration's reads from the
next one's writes, so such a buffer keeps its own storage. This is what lets attention kernels
on lavapipe (32 KiB of shared memory) keep their successive dot operands in ``__local``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kdsl.ir.core import Operation
from kdsl.ir.dialects import scf, wi
from kdsl.ir.types import MemRefType, PointerType, ScalarType

ItemSize = Callable[[ScalarType | PointerType], int]

MIN_BYTES = 1024  # smaller private arrays keep their own storage (register candidates)


@dataclass
class _Range:
    alloc: Operation
    lo: int
    hi: int
    ready: int  # a slot it joins must be free before this position: lo, or a __local buffer's gate


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
    return _Range(alloc, lo, hi, lo)


def _fresh_each_iteration(alloc: Operation, loop: Operation) -> bool:
    """Does every iteration of ``loop`` write ``alloc`` before reading it?

    True when, on every path through the loop body, the first op touching the array only writes
    it (a tile's defining op writes its whole array; partial writes happen only as the two halves
    of a block load, both writes). Paths split at ``scf.if``: a branch that does not touch the
    array continues to the ops after the ``if`` (a causal-attention body makes its tiles inside
    one branch). ``scf.while`` and anything unusual: no.
    """
    if not isinstance(loop, scf.ForOp):
        return False
    return _first_touch(loop.regions[0].block.ops, alloc.result.uses) is not False


def _first_touch(ops: list[Operation], uses: list[tuple[Operation, int]]) -> bool | None:
    """False if some path through ``ops`` reads the array before writing it; True if every path
    touching it writes first; None if no path touches it."""
    for op in ops:
        inside = [(u, i) for u, i in uses if op.is_ancestor(u)]
        if not inside:
            continue
        if isinstance(op, scf.IfOp) and all(u is not op for u, _ in inside):
            branches = [_first_touch(r.blocks[0].ops if r.blocks else [], uses) for r in op.regions]
            if False in branches:
                return False
            if None not in branches:
                return True
            continue  # a branch left it untouched: the ops after the if decide for that path
        return all(wi.write_only_operand(u) == i for u, i in inside)
    return None


def _used_allocs(root: Operation, space: str) -> list[Operation]:
    return [op for op in root.walk() if isinstance(op, wi.AllocOp) and op.result.uses and _memref(op).space == space]


def coalesce_private(root: Operation) -> int:
    """Share storage between private arrays of disjoint live ranges; return the bytes saved."""
    allocs = [op for op in _used_allocs(root, "private") if _memref(op).nbytes >= MIN_BYTES]
    if len(allocs) < 2:
        return 0
    span = _number(root)
    return _share([_live_range(a, span) for a in allocs])


def coalesce_local(root: Operation, single_work_item: bool) -> int:
    """Share ``__local`` buffers separated by a barrier (module docstring); return the bytes saved.

    With one work-item per group nothing else reads a buffer and the lowering emits no barriers:
    the private rule (disjoint live ranges) applies."""
    allocs = _used_allocs(root, "local")
    if len(allocs) < 2:
        return 0
    span = _number(root)
    ranges: list[_Range] = []
    for a in allocs:
        r = _live_range(a, span)
        gate = r.lo if single_work_item else _gate(a, r, span)
        if gate >= 0:
            ranges.append(replace(r, ready=min(r.lo, gate)))
    return _share(ranges)


def _gate(alloc: Operation, r: _Range, span: dict[Operation, tuple[int, int]]) -> int:
    """Position of the last barrier certain to run before ``alloc``'s first use and after
    everything before it (-1: none, or only outside a loop holding the whole live range)."""
    cur: Operation | None = min((u for u, _ in alloc.result.uses), key=lambda u: span[u][0])
    while cur is not None and cur.parent is not None:
        ops = cur.parent.ops
        for prev in reversed(ops[: ops.index(cur)]):
            if isinstance(prev, wi.BarrierOp):
                return span[prev][0]
        cur = cur.parent_op
        if cur is not None and _is_loop(cur) and span[cur][0] <= r.lo and r.hi <= span[cur][1]:
            return -1
    return -1


def _share(ranges: list[_Range]) -> int:
    """Greedy interval colouring: an array takes a slot whose last member ended before its ``ready``."""
    by_elem: dict[object, list[_Range]] = {}
    for r in ranges:
        by_elem.setdefault(_memref(r.alloc).element, []).append(r)
    saved = 0
    for group in by_elem.values():
        slots: list[_Slot] = []
        for r in sorted(group, key=lambda r: (r.lo, r.hi)):
            t = _memref(r.alloc)
            free = [s for s in slots if s.free_at < r.ready]
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


def local_allocs(root: Operation) -> list[Operation]:
    """The ``wi.alloc`` ops of ``__local`` buffers in ``root``, in program order."""
    return [op for op in root.walk() if isinstance(op, wi.AllocOp) and _memref(op).space == "local"]


def alloc_bytes(alloc: Operation, itemsize: ItemSize | None = None) -> int:
    """Bytes of one array. ``itemsize``: bytes per element as the target declares its arrays
    (default: at least 4, as OpenCL C's registers hold f16/bf16)."""
    t = _memref(alloc)
    return t.size * (itemsize or default_local_itemsize)(t.element)


def local_bytes(root: Operation, itemsize: ItemSize | None = None) -> int:
    """Bytes of ``__local`` memory a work-group needs (``itemsize``: as for :func:`alloc_bytes`)."""
    return sum(alloc_bytes(op, itemsize) for op in local_allocs(root))


def default_local_itemsize(e: ScalarType | PointerType) -> int:
    return max(e.itemsize, 4) if isinstance(e, ScalarType) else 8


def _memref(alloc: Operation) -> MemRefType:
    t = alloc.result.type
    assert isinstance(t, MemRefType)
    return t
