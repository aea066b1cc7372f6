"""Clean-up of freshly lowered work-item IR.

The lowering stores every element a loop produces into the tile's private
array, because it cannot know yet whether a later loop will read it. Here
arrays that are never read lose their stores, stores of an element back where
it was just loaded from go (copies that in-place lowering turned into
``x[i] = x[i]``, :mod:`kdsl.lowering.inplace`), then dead pure code and empty
loops/branches go, so the printed kernel holds only live work.
"""

from __future__ import annotations

from kdsl.ir.core import Operation, Pure
from kdsl.ir.dialects import scf, wi
from kdsl.ir.types import MemRefType

_REMOVABLE = (wi.LoadOp, wi.AllocOp)


def _dead(op: Operation) -> bool:
    if op.IS_TERMINATOR or any(r.uses for r in op.results):
        return False
    if op.has_trait(Pure) or isinstance(op, _REMOVABLE):
        return True
    if isinstance(op, (scf.ForOp, scf.IfOp)):
        return all(len(r.blocks[0].ops) == 1 for r in op.regions)
    return False


def _unread_arrays(root: Operation) -> list[Operation]:
    out: list[Operation] = []
    for op in root.walk():
        if not isinstance(op, wi.AllocOp):
            continue
        t = op.result.type
        assert isinstance(t, MemRefType)
        if all(isinstance(u, wi.StoreOp) and i == 1 for u, i in op.result.uses):
            out.append(op)
    return out


def _self_copies(root: Operation) -> list[Operation]:
    """``wi.store`` of ``wi.load(m, i)`` to ``m[i]`` with no store to ``m`` in between."""
    out: list[Operation] = []
    for op in root.walk():
        if not isinstance(op, wi.StoreOp):
            continue
        value, mem, index = op.operands
        load = value.owner_op
        if not isinstance(load, wi.LoadOp) or load.parent is not op.parent or load.operands[0] is not mem:
            continue
        if load.operands[1] is not index or op.parent is None:
            continue
        ops = op.parent.ops
        between = ops[ops.index(load) + 1 : ops.index(op)]
        if not any(isinstance(b, wi.StoreOp) and b.operands[1] is mem for b in between):
            out.append(op)
    return out


def simplify(root: Operation) -> None:
    for alloc in _unread_arrays(root):
        for user, _ in list(alloc.result.uses):
            user.erase()
        alloc.erase()
    for store in _self_copies(root):
        store.erase()
    changed = True
    while changed:
        changed = False
        for op in reversed(list(root.walk())):
            if op is root or op.parent is None:
                continue
            if _dead(op):
                op.erase()
                changed = True
