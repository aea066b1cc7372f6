"""Tiles that die where a new one is born give it their storage: no copy.

Why: the lowering stores every tile in its own private array, and a loop-carried tile is
copied into its carried array at the end of each iteration (``Lowerer.assign``). In a
flash-attention body the accumulator and the score offset went through five full-tile copies
per key block (if-branch copy, a fresh accumulator for the dot, the yield copy; the same for the
offset); on a CPU device those copies cost about a third of the kernel. Two rewrites, both
decided while lowering, both checked against the work-item IR already emitted:

* **dot in place** (:func:`dot_in_place`): ``dot(a, b, acc)`` updates ``acc``'s array when
  ``acc`` has no other use and no other tile shares that array;
* **a branch result in a dying tile's array** (:func:`retarget_branch`): an ``scf.if`` result
  that one branch yields unchanged from before the ``if`` takes that tile's array, when the tile
  dies at the ``if`` and no other branch reads it (the rescale-or-keep branch of flash attention:
  the "keep" side copied the whole probability tile);
* **yield into the carried array** (:func:`retarget_yield`): a tile computed in a loop body and
  yielded to carried slot ``t`` is given ``t``'s array from the start -- when the tile's array
  belongs to values of this body only, and from the first op writing it to the end of the body
  ``t`` is read only element by element just before the same element of the tile is written
  (``acc * alpha`` into the new accumulator; a branch's copy ``acc -> new``), so the old value of
  each element is consumed before it is overwritten. The copies that become ``x[i] = x[i]`` go in
  :func:`kdsl.lowering.simplify.simplify`.
"""

from __future__ import annotations

from kdsl.ir.core import Block, BlockArgument, Operation, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.lowering.lowerer import Lowerer
from kdsl.lowering.reps import Lazy, Mat, Rep

_READS = {"wi.load": 0, "wi.vload": 0}


def _sharers(lw: Lowerer, mat: Mat) -> list[Value]:
    """Tile values whose representation reads or is ``mat``'s array."""
    return [v for v, rep in lw.reps.items() if _reads_array(rep, mat.priv)]


def _reads_array(rep: Rep, array: Value) -> bool:
    if isinstance(rep, Mat):
        return rep.priv is array
    return isinstance(rep, Lazy) and any(m.priv is array for m, _ in rep.leaves.values())


def dot_in_place(lw: Lowerer, acc: Value) -> Mat | None:
    """``acc``'s stored tile when a dot may accumulate into it: its only use is the dot, and no
    other tile value is (or reads) that array -- or it is a loop-carried tile of an ``scf.for``
    body read only by the dot (the loop's results share the array; they come after the loop)."""
    rep = lw.rep(acc)
    if not isinstance(rep, Mat) or len(acc.uses) != 1:
        return None
    carried = isinstance(acc, BlockArgument) and isinstance(acc.block.parent_op, scf.ForOp)
    if carried or (lw.layout.num_threads == 1 and _sharers(lw, rep) == [acc]):
        return rep
    return None


def _inside(v: Value, region_op: Operation) -> bool:
    """Is ``v`` defined inside ``region_op`` (not before it)?"""
    op = v.block.parent_op if isinstance(v, BlockArgument) else v.owner_op
    return op is not None and region_op.is_ancestor(op)


def retarget_yield(lw: Lowerer, loop: Operation, body: Block, r: Mat, t: Mat, others: list[Rep]) -> bool:
    """Give ``r`` (a tile of the tile-IR loop ``loop``'s body, yielded to carried slot ``t``)
    ``t``'s array, if that is safe (module doc); ``body`` is the work-item loop body emitted so
    far, ``others`` the other yielded representations (they must not read ``t``)."""
    if r is t or r.priv is t.priv or lw.layout.num_threads != 1:
        return False
    if (r.shape, r.elem) != (t.shape, t.elem) or r.priv.type != t.priv.type:
        return False
    if not all(_inside(v, loop) for v in _sharers(lw, r)):
        return False
    if any(_reads_array(o, t.priv) for o in others):  # another yielded value reads the old one (a swap)
        return False
    r_users = [u for u, _ in r.priv.uses]
    if not r_users or not all(_block_ancestor(u, body) is not None for u in r_users):
        return False
    top = list(body.ops)
    first = next(i for i, op in enumerate(top) if any(op.is_ancestor(u) for u in r_users))
    for op in top[first:]:
        for inner in op.walk():
            for i, x in enumerate(inner.operands):
                if x is not t.priv:
                    continue
                if wi.write_only_operand(inner) == i or isinstance(inner, wi.MmaOp):
                    return False  # t written before the yield
                if _READS.get(inner.NAME) != i or not _consumed_before_overwrite(inner, r, t):
                    return False
    _rename(r, t)
    return True


def _loop_offset(index: Value, loop: Operation) -> int | None:
    """``c`` when ``index`` is the element loop's induction variable plus the constant ``c``."""
    iv = loop.regions[0].block.args[0]
    if index is iv:
        return 0
    d = index.owner_op
    if d is None or d.NAME != arith.AddOp.NAME:
        return None
    a, b = d.operands
    if a is iv and b.owner_op is not None and b.owner_op.NAME == "arith.constant":
        return int(b.owner_op.attributes["value"])
    return None


def _consumed_before_overwrite(load: Operation, r: Mat, t: Mat) -> bool:
    """A read of ``t`` at the element loop's own index ``i + c`` (``0 <= c < step``, so no two
    iterations touch the same slot), before the store of ``r`` at the same index and width in
    the same loop body -- the old element is gone only after it was read."""
    block = load.parent
    loop = block.parent_op if block is not None else None
    if block is None or not isinstance(loop, scf.ForOp):
        return False
    step = loop.operands[2].owner_op
    if step is None or step.NAME != "arith.constant":
        return False
    off = _loop_offset(load.operands[1], loop)
    if off is None or not 0 <= off < int(step.attributes["value"]):
        return False
    ops = list(block.ops)
    at = ops.index(load)
    for later in ops[at + 1 :]:
        if wi.write_only_operand(later) == 1 and later.operands[1] is r.priv and later.operands[2] is load.operands[1]:
            return later.operands[0].type == load.result.type
    return False


def _rename(r: Mat, t: Mat) -> None:
    """From now on ``r`` lives in ``t``'s array: every access emitted so far follows, ``r``'s goes."""
    old = r.priv
    old.replace_all_uses_with(t.priv)
    alloc = old.owner_op
    assert alloc is not None
    alloc.erase()
    r.priv = t.priv
    r.shared = t.shared


def _block_ancestor(op: Operation, block: Block) -> Operation | None:
    """``op`` or the ancestor of ``op`` that sits directly in ``block``."""
    cur: Operation | None = op
    while cur is not None and cur.parent is not block:
        cur = cur.parent_op
    return cur


def _dies_at(v: Value, if_op: Operation) -> bool:
    """Is ``v`` defined in ``if_op``'s block (not a block argument) and used only before ``if_op``
    or inside it?"""
    block = if_op.parent
    d = v.owner_op
    if block is None or d is None or d.parent is not block:
        return False
    ops = block.ops
    at = ops.index(if_op)
    for u, _ in v.uses:
        anc = _block_ancestor(u, block)
        if anc is None or (anc is not if_op and ops.index(anc) > at):
            return False
    return True


def retarget_branch(lw: Lowerer, if_op: Operation, wi_if: Operation, t: Mat, yielded: list[Value]) -> bool:
    """Give the ``scf.if`` result array ``t`` the array of a tile that one branch yields unchanged
    from before the ``if`` (``yielded``: the value each branch yields to ``t``), when that tile dies
    at the ``if`` and the other branches never read it (module doc). The branch's copy becomes
    ``x[i] = x[i]``."""
    if lw.layout.num_threads != 1:
        return False
    for k, v in enumerate(yielded):
        r = lw.reps.get(v)
        if not isinstance(r, Mat) or r.priv is t.priv or _inside(v, if_op):
            continue
        if (r.shape, r.elem) != (t.shape, t.elem) or r.priv.type != t.priv.type:
            continue
        if not all(_dies_at(u, if_op) for u in _sharers(lw, r)):
            continue
        others = [reg for j, reg in enumerate(wi_if.regions) if j != k]
        if any(x is r.priv for reg in others for op in reg.walk() for x in op.operands):
            continue
        if any(not wi_if.is_ancestor(u) for u, _ in t.priv.uses):
            continue  # the result array is used outside this if already (never, for a fresh one)
        _rename(t, r)
        return True
    return False
