"""Cloning and in-place rewriting of IR (the MLIR ``PatternRewriter`` model).

Two jobs live here because every transformation needs both:

* **cloning** -- :func:`clone_op`, :func:`clone_region` and
  :func:`clone_block_into` deep-copy IR while mapping values through an
  :class:`IRMapping`; the inliner, the frontend (combine functions) and loop
  transforms use them.
* **rewriting** -- a :class:`RewritePattern` inspects one op and, when it
  applies, changes IR *only* through a :class:`PatternRewriter`. Routing every
  change through the rewriter lets a driver (see
  ``kdsl.transforms.greedy``) learn which ops were created, changed or erased
  and revisit exactly those, instead of rescanning the whole module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

from kdsl.ir.core import (
    AttrValue,
    Block,
    IRError,
    Location,
    Operation,
    Region,
    Value,
)
from kdsl.ir.types import Type

OpT = TypeVar("OpT", bound=Operation)


# --------------------------------------------------------------------------- cloning
class IRMapping:
    """Old value -> new value map used while cloning (values absent map to themselves)."""

    def __init__(self, pairs: Sequence[tuple[Value, Value]] = ()) -> None:
        self._map: dict[Value, Value] = dict(pairs)

    def map(self, old: Value, new: Value) -> None:
        self._map[old] = new

    def lookup(self, v: Value) -> Value:
        """The replacement of ``v``, or ``v`` itself (a value from an outer scope)."""
        return self._map.get(v, v)

    def __contains__(self, v: Value) -> bool:
        return v in self._map


def clone_op(op: OpT, mapping: IRMapping | None = None) -> OpT:
    """A detached deep copy of ``op`` (regions included).

    Operands are looked up in ``mapping`` (unmapped values are reused as they
    are, which is right for values defined above the cloned op); the new
    results and block arguments are recorded in ``mapping`` so later clones
    refer to them.
    """
    mapping = mapping if mapping is not None else IRMapping()
    regions = [clone_region(r, mapping) for r in op.regions]
    new = type(op)(
        [mapping.lookup(v) for v in op.operands],
        [r.type for r in op.results],
        dict(op.attributes),
        regions,
        op.loc,
    )
    for old_r, new_r in zip(op.results, new.results):
        new_r.name_hint = old_r.name_hint
        mapping.map(old_r, new_r)
    return new


def clone_region(region: Region, mapping: IRMapping | None = None) -> Region:
    """A detached deep copy of ``region`` (blocks, arguments and ops)."""
    mapping = mapping if mapping is not None else IRMapping()
    new = Region()
    for block in region.blocks:
        nb = Block()
        for a in block.args:
            mapping.map(a, nb.add_arg(a.type, a.name_hint))
        new.add_block(nb)
    for block, nb in zip(region.blocks, new.blocks):
        for op in block.ops:
            nb.append(clone_op(op, mapping))
    return new


def clone_block_into(
    block: Block,
    dest: Block,
    index: int | None,
    args: Sequence[Value],
    mapping: IRMapping | None = None,
    *,
    skip_terminator: bool = True,
) -> list[Value]:
    """Clone ``block``'s ops into ``dest`` at ``index`` (None: at the end),
    binding the block's arguments to ``args``.

    Returns the (mapped) operands of the block's terminator -- the values the
    block "returns" -- which is what inlining a callee or a region needs.
    """
    if len(args) != len(block.args):
        raise IRError(f"block takes {len(block.args)} arguments, got {len(args)}")
    mapping = mapping if mapping is not None else IRMapping()
    for a, v in zip(block.args, args):
        mapping.map(a, v)
    term = block.terminator
    pos = index
    for op in block.ops:
        if skip_terminator and op is term:
            continue
        new = clone_op(op, mapping)
        if pos is None:
            dest.append(new)
        else:
            dest.insert(pos, new)
            pos += 1
    return [mapping.lookup(v) for v in term.operands] if term is not None else []


# --------------------------------------------------------------------------- rewriting
class RewriteListener:
    """Callbacks a driver registers to hear about every change a rewriter makes."""

    def notify_inserted(self, op: Operation) -> None:
        """``op`` was created or moved into a block."""

    def notify_modified(self, op: Operation) -> None:
        """``op``'s operands or attributes changed in place."""

    def notify_replaced(self, old: Value, new: Value) -> None:
        """All uses of ``old`` now use ``new`` (called before the change)."""

    def notify_erased(self, op: Operation) -> None:
        """``op`` is about to be erased (its operands are still attached)."""


class PatternRewriter:
    """The only door through which patterns change IR.

    New ops are inserted before the insertion point op (by default the op
    being rewritten) and get that op's location unless one is given, so
    rewritten code keeps pointing at the user's source line.
    """

    def __init__(self, listener: RewriteListener | None = None) -> None:
        self.listener = listener or RewriteListener()
        self._anchor: Operation | None = None
        self.loc: Location = Location()
        self._created: set[int] = set()  # ids of ops created since the insertion point was set

    # -- insertion point ----------------------------------------------------
    def set_insertion_point(self, op: Operation) -> None:
        """Insert new ops right before ``op``, with ``op``'s location by default."""
        self._anchor = op
        self.loc = op.loc
        self._created = set()

    def insert_before(self, anchor: Operation, op: OpT) -> OpT:
        block = anchor.parent
        if block is None:
            raise IRError(f"cannot insert before detached {anchor.NAME}", anchor.loc)
        block.insert(block.ops.index(anchor), op)
        self.listener.notify_inserted(op)
        return op

    def create(
        self,
        op_cls: type[OpT],
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: dict[str, AttrValue] | None = None,
        regions: Sequence[Region] = (),
        loc: Location | None = None,
    ) -> OpT:
        """Create ``op_cls`` before the insertion point."""
        if self._anchor is None:
            raise IRError("rewriter has no insertion point")
        op = op_cls(operands, result_types, attributes, regions, loc or self.loc)
        self._created.add(id(op))
        return self.insert_before(self._anchor, op)

    # -- changes ------------------------------------------------------------
    def replace_all_uses(self, old: Value, new: Value) -> None:
        if old is new:
            return
        self.listener.notify_replaced(old, new)
        old.replace_all_uses_with(new)

    def replace_op(self, op: Operation, new: Sequence[Value] | Operation) -> None:
        """Replace every result of ``op`` by ``new`` (values or another op's results), then erase ``op``.

        A replacement value created by this rewrite and still unnamed takes the
        replaced value's name hint, so the user's names survive in dumps.
        """
        values: Sequence[Value] = new.results if isinstance(new, Operation) else new
        if len(values) != len(op.results):
            raise IRError(f"replacing {op.NAME} with {len(values)} values for {len(op.results)} results", op.loc)
        for old_v, new_v in zip(op.results, values):
            if old_v.type != new_v.type:
                raise IRError(f"replacing {op.NAME} result of type {old_v.type} with {new_v.type}", op.loc)
            owner = new_v.owner_op
            if new_v.name_hint is None and owner is not None and id(owner) in self._created:
                new_v.name_hint = old_v.name_hint
            self.replace_all_uses(old_v, new_v)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        """Erase ``op`` (and everything nested in it); its results must be unused."""
        self.listener.notify_erased(op)
        op.erase()

    def set_operand(self, op: Operation, index: int, value: Value) -> None:
        op.set_operand(index, value)
        self.listener.notify_modified(op)

    def modified(self, op: Operation) -> None:
        """Report an in-place change made directly on ``op`` (attributes, operand order)."""
        self.listener.notify_modified(op)

    def inline_block_before(self, block: Block, anchor: Operation, args: Sequence[Value] = ()) -> list[Value]:
        """Move ``block``'s ops (all but its terminator) before ``anchor``.

        Block arguments are replaced by ``args``. Returns the terminator's
        operands; the terminator stays behind in ``block`` (erased with it).
        """
        if len(args) != len(block.args):
            raise IRError(f"block takes {len(block.args)} arguments, got {len(args)}", anchor.loc)
        for a, v in zip(block.args, args):
            self.replace_all_uses(a, v)
        term = block.terminator
        dest = anchor.parent
        if dest is None:
            raise IRError(f"cannot inline before detached {anchor.NAME}", anchor.loc)
        for op in [o for o in block.ops if o is not term]:
            block.ops.remove(op)
            dest.insert(dest.ops.index(anchor), op)
            self.listener.notify_inserted(op)
        return list(term.operands) if term is not None else []

    def erase_block_arg(self, block: Block, index: int) -> None:
        """Remove an unused block argument and renumber the others."""
        arg = block.args[index]
        if arg.has_uses:
            raise IRError(f"erasing block argument #{index} that is still used")
        del block.args[index]
        for i, a in enumerate(block.args):
            a.index = i


class RewritePattern:
    """One local rewrite. Subclasses set ``OPS`` (op names the pattern looks at;
    empty = every op) and implement :meth:`match_and_rewrite`, which checks its
    conditions first, returns ``False`` without touching IR when they fail, and
    otherwise rewrites through ``rewriter`` and returns ``True``."""

    OPS: ClassVar[tuple[str, ...]] = ()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        raise NotImplementedError


__all__ = [
    "IRMapping",
    "PatternRewriter",
    "RewriteListener",
    "RewritePattern",
    "clone_block_into",
    "clone_op",
    "clone_region",
]
