"""Small whole-function analyses over tile IR.

``written_pointer_args`` answers "through which pointer parameters may this
kernel write?" -- the launch path uses it to reject a read-only array passed
where the kernel stores, *before* anything runs (rather than corrupting memory
numpy promised immutable, or failing half-way through a launch).
"""

from __future__ import annotations

from kdsl.ir.core import Block, Operation, Value
from kdsl.ir.types import PointerType

# Roots of a pointer value: the parameter indices it may derive from, or None
# when it may point anywhere (e.g. made from an integer).
Roots = frozenset[int] | None

_STORES = ("tile.store", "tile.atomic_rmw", "tile.atomic_cas")


def _is_ptr(v: Value) -> bool:
    return isinstance(v.type.scalar, PointerType)


def _union(a: Roots, b: Roots) -> Roots:
    if a is None or b is None:
        return None
    return a | b


class _PointerOrigins:
    """Fixpoint of pointer roots through ops, block arguments and region results."""

    def __init__(self, func: Operation) -> None:
        self.roots: dict[int, Roots] = {}
        self.changed = False
        for i, arg in enumerate(func.regions[0].blocks[0].args):
            if _is_ptr(arg):
                self.roots[id(arg)] = frozenset({i})

    def get(self, v: Value) -> Roots:
        return self.roots.get(id(v), frozenset())

    def join(self, v: Value, r: Roots) -> None:
        if not _is_ptr(v):
            return
        old = self.roots.get(id(v), frozenset())
        new = _union(old, r)
        if new != old:
            self.roots[id(v)] = new
            self.changed = True

    def visit(self, op: Operation) -> None:
        name = op.NAME
        if name in ("scf.for", "scf.while", "scf.if"):
            self._region_op(op)
            return
        if name == "arith.cast" and op.results and _is_ptr(op.result) and not _is_ptr(op.operands[0]):
            self.join(op.result, None)  # integer -> pointer: could be anything
            return
        src: Roots = frozenset()
        for v in op.operands:
            if _is_ptr(v):
                src = _union(src, self.get(v))
        for r in op.results:
            self.join(r, src)

    def _region_op(self, op: Operation) -> None:
        if op.NAME == "scf.for":
            body = op.regions[0].blocks[0]
            carried = op.operands[3:]
            ys = _yielded(body)
            for i, init in enumerate(carried):
                r = _union(self.get(init), self.get(ys[i]) if i < len(ys) else frozenset())
                self.join(body.args[i + 1], r)
                self.join(op.results[i], r)
        elif op.NAME == "scf.if":
            for region in op.regions:
                for i, y in enumerate(_yielded(region.blocks[0])):
                    self.join(op.results[i], self.get(y))
        else:  # scf.while
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            ys = _yielded(after)
            for i, init in enumerate(op.operands):
                self.join(before.args[i], _union(self.get(init), self.get(ys[i]) if i < len(ys) else frozenset()))
            cond = before.ops[-1].operands[1:] if before.ops else []
            for i, c in enumerate(cond):
                self.join(after.args[i], self.get(c))
                self.join(op.results[i], self.get(c))


def _yielded(block: Block) -> list[Value]:
    return list(block.ops[-1].operands) if block.ops else []


def written_pointer_args(func: Operation) -> frozenset[int]:
    """Indices of ``func``'s parameters that a store or atomic may write through.

    Conservative: a pointer that may come from anywhere (an integer cast)
    counts as writing every pointer parameter.
    """
    args = func.regions[0].blocks[0].args
    every = frozenset(i for i, a in enumerate(args) if _is_ptr(a))
    origins = _PointerOrigins(func)
    ops = list(func.walk())[1:]
    for _ in range(len(ops) + 2):  # monotone over a finite lattice: terminates
        origins.changed = False
        for op in ops:
            origins.visit(op)
        if not origins.changed:
            break
    written: frozenset[int] = frozenset()
    for op in ops:
        if op.NAME in _STORES:
            r = origins.get(op.operands[0])
            if r is None:
                return every
            written |= r
    return written & every
