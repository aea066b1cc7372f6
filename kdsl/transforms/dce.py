"""``dce``: dead-code elimination.

Removes ops none of whose results are used when that cannot change what the
program does (see :func:`kdsl.transforms.utils.is_removable`):

* pure ops;
* non-volatile ``tile.load`` -- a load is not marked pure (it reads memory
  and may fault), but an unused load has no observable effect on a correct
  program, so, like Triton, we drop it; ``volatile`` loads stay;
* ``scf.for`` / ``scf.if`` / ``tile.reduce`` / ``tile.scan`` whose bodies are
  removable (``scf.while`` stays: it might not terminate).

Stores, atomics (even with unused results), prints, asserts and calls stay.
Blocks are scanned backwards so a use dies before its definition is looked
at, and nested regions are cleaned before their parent is judged.

Dead loop-carried values are also dropped: an ``scf.for`` result that is
unused and whose iteration argument only feeds removable ops flowing back
into its own ``scf.yield`` slot (``acc = acc + x`` never read) is removed
together with its init, argument and yield operand; unused ``scf.if``
results are removed from both branches.
"""

from __future__ import annotations

from kdsl.ir.core import Block, ModuleOp, Operation, Region, Value
from kdsl.ir.rewriter import PatternRewriter
from kdsl.transforms.base import Pass
from kdsl.transforms.utils import is_removable


def _dce_block(block: Block) -> bool:
    changed = False
    for op in reversed(list(block.ops)):
        for region in op.regions:
            for b in region.blocks:
                changed |= _dce_block(b)
        if op.NAME == "scf.for":
            changed |= _drop_dead_iter_args(op)
        elif op.NAME == "scf.if":
            changed |= _drop_dead_if_results(op)
        if op.parent is None:
            continue
        if any(r.uses for r in op.results) or not is_removable(op):
            continue
        op.erase()
        changed = True
    return changed


def dce(root: Operation) -> bool:
    """Remove dead code under ``root`` to a fixpoint; True if anything was removed."""
    changed = False
    while any(_dce_block(b) for r in root.regions for b in r.blocks):
        changed = True
    return changed


# --------------------------------------------------------------------------- loop-carried values
def _feeds_only_itself(arg: Value, slot: int, yield_op: Operation) -> bool:
    """Every transitive user of ``arg`` is a removable op whose results are used
    only by such ops or by ``yield_op``'s operand ``slot``."""
    seen: set[int] = set()
    stack = [arg]
    while stack:
        v = stack.pop()
        for user, idx in v.uses:
            if user is yield_op:
                if idx != slot:
                    return False
                continue
            if user.regions or not is_removable(user):
                return False
            if id(user) not in seen:
                seen.add(id(user))
                stack.extend(user.results)
    return True


def _drop_dead_iter_args(op: Operation) -> bool:
    body: Block = op.regions[0].block
    term = body.terminator
    if term is None:
        return False
    dead = [i for i, r in enumerate(op.results) if not r.uses and _feeds_only_itself(body.args[i + 1], i, term)]
    if not dead:
        return False
    for i in reversed(dead):
        _remove_operand(term, i)
    _dce_block(body)  # the ops that only fed the dropped slots are dead now
    rw = PatternRewriter()
    for i in reversed(dead):
        rw.erase_block_arg(body, i + 1)
    keep = [i for i in range(len(op.results)) if i not in dead]
    _rebuild(op, [*op.operands[:3], *(op.inits[i] for i in keep)], keep)
    return True


def _remove_operand(op: Operation, index: int) -> None:
    """Remove operand ``index`` of a variadic op, renumbering the later uses."""
    operands = list(op.operands)
    op.drop_operands()
    del operands[index]
    for i, v in enumerate(operands):
        op.operands.append(v)
        v.uses.append((op, i))


def _rebuild(op: Operation, operands: list[Value], keep: list[int]) -> None:
    """Replace ``op`` by a copy with ``operands``, results ``keep`` and ``op``'s regions moved over."""
    regions = list(op.regions)
    for r in regions:
        r.parent = None
    op.regions = [Region() for _ in regions]
    new = type(op)(operands, [op.results[i].type for i in keep], dict(op.attributes), regions, op.loc)
    for new_r, i in zip(new.results, keep):
        new_r.name_hint = op.results[i].name_hint
        op.results[i].replace_all_uses_with(new_r)
    block = op.parent
    assert block is not None
    block.insert(block.ops.index(op), new)
    op.erase()


def _drop_dead_if_results(op: Operation) -> bool:
    dead = [i for i, r in enumerate(op.results) if not r.uses]
    if not dead:
        return False
    for region in op.regions:
        term = region.block.terminator
        assert term is not None
        for i in reversed(dead):
            _remove_operand(term, i)
    keep = [i for i in range(len(op.results)) if i not in dead]
    _rebuild(op, list(op.operands), keep)
    return True


class DCE(Pass):
    """Remove code whose results are unused and that has no side effects."""

    name = "dce"
    summary = "dead-code elimination (pure ops, unused loads, dead loop-carried values)"

    def run(self, module: ModuleOp) -> None:
        dce(module)
