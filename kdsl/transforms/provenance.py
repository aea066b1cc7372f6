"""Pointer provenance: the entry parameter each pointer value of a tile function derives from.

Why a shared analysis: the sanitiser checks an access against the bounds of the array it reads,
and the CPU lowering streams stores only to arrays the kernel never reads
(:mod:`kdsl.lowering.stream_stores`); both need to know which parameter a pointer tile comes from.

A pointer derives from parameter ``p`` when an ``addptr`` chain starts at ``p``, followed through
splats/broadcasts/reshapes, ``select`` and values carried by ``scf.for``/``if``/``while``.
:meth:`Provenance.sources` is None for a pointer made from memory or an integer (unknown).
"""

from __future__ import annotations

from kdsl.ir.core import Block, BlockArgument, Operation, OpResult, Region, Value
from kdsl.ir.types import PointerType

# Ops whose pointer results point into the same array as their pointer operands.
_VIEWS = (
    "tile.addptr",
    "tile.splat",
    "tile.broadcast",
    "tile.expand_dims",
    "tile.reshape",
    "tile.permute",
    "tile.join",
    "tile.split",
    "tile.hint",
    "arith.bitcast",
    "arith.select",
)


class Provenance:
    """The entry parameter each pointer value derives from (None: unknown or several)."""

    def __init__(self, entry: Block) -> None:
        self.entry = entry
        self.memo: dict[Value, frozenset[int] | None] = {}
        self.open: set[Value] = set()
        self.hit_cycle = False

    def param(self, v: Value) -> int | None:
        """The one parameter ``v`` derives from (None: unknown, or one of several)."""
        srcs = self.sources(v)
        return next(iter(srcs)) if srcs is not None and len(srcs) == 1 else None

    def sources(self, v: Value) -> frozenset[int] | None:
        if v in self.memo:
            return self.memo[v]
        if v in self.open:  # a loop-carried cycle contributes nothing new
            self.hit_cycle = True
            return frozenset()
        self.open.add(v)
        outer_cycle, self.hit_cycle = self.hit_cycle, False
        try:
            out = self._compute(v)
        finally:
            self.open.discard(v)
        if not self.hit_cycle or not self.open:
            self.memo[v] = out
        self.hit_cycle = self.hit_cycle or outer_cycle
        return out

    def _union(self, values: list[Value]) -> frozenset[int] | None:
        acc: frozenset[int] = frozenset()
        for x in values:
            if not isinstance(x.type.scalar, PointerType):
                continue
            s = self.sources(x)
            if s is None:
                return None
            acc |= s
        return acc

    def _compute(self, v: Value) -> frozenset[int] | None:
        if isinstance(v, BlockArgument):
            return self._block_arg(v)
        assert isinstance(v, OpResult)
        op, k = v.op, v.index
        if op.NAME in _VIEWS:
            return self._union(list(op.operands[1:] if op.NAME == "arith.select" else op.operands))
        if op.NAME == "scf.for":
            return self._union([op.operands[3 + k], _yields(op.regions[0])[k]])
        if op.NAME == "scf.if":
            return self._union([_yields(op.regions[0])[k], _yields(op.regions[1])[k]])
        if op.NAME == "scf.while":
            return self._union([_condition(op)[k]])
        return None

    def _block_arg(self, a: BlockArgument) -> frozenset[int] | None:
        blk, k = a.block, a.index
        if blk is self.entry:
            return frozenset({k}) if isinstance(a.type.scalar, PointerType) else None
        owner = blk.parent_op
        if owner is None:
            return None
        if owner.NAME == "scf.for" and k >= 1:
            return self._union([owner.operands[2 + k], _yields(owner.regions[0])[k - 1]])
        if owner.NAME == "scf.while":
            if blk is owner.regions[0].block:
                return self._union([owner.operands[k], _yields(owner.regions[1])[k]])
            return self._union([_condition(owner)[k]])
        return None


def _yields(region: Region) -> list[Value]:
    term = region.block.terminator
    return list(term.operands) if term is not None else []


def _condition(op: Operation) -> list[Value]:
    return _yields(op.regions[0])[1:]
