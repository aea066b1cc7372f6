"""``licm``: loop-invariant code motion out of ``scf.for`` and ``scf.while``.

Work inside a loop body whose inputs do not change between iterations is
done once, before the loop. Frontend IR is full of it: pointer bases
(``x + row*stride``), ``splat``s of bounds, ``arange``s, constants. An op
moves when

* it is pure, has no regions, and every operand is defined outside the loop
  (or by an op already moved); and it cannot trap (integer ``div``/``rem``
  only by a non-zero constant), because the loop may run zero times;
* or it is a non-volatile ``tile.load`` (option ``hoist-loads``) of a loop
  that certainly runs at least once (constant bounds, or the ``before``
  region of a ``scf.while``) and contains no store, atomic or call, so no
  iteration can change what it reads.

Only the loop body's top-level ops move (ops under an ``scf.if`` in the loop
stay conditional). Inner loops are processed first, so code moves outward
through a whole nest. A loop marked ``disable_licm`` (``kl.range(...,
disable_licm=True)``, ``while kl.condition(c, disable_licm=True)``) keeps its
code: nothing moves out of it (code may still move out of loops inside it).
"""

from __future__ import annotations

from kdsl.ir.core import Block, ModuleOp, Operation, Pure
from kdsl.ir.types import ScalarType
from kdsl.transforms.base import Option, Pass, Tunable
from kdsl.transforms.utils import const_value, defined_inside

_WRITES = ("tile.store", "tile.atomic_rmw", "tile.atomic_cas", "tile.call")
_LOOPS = ("scf.for", "scf.while")


def _may_trap(op: Operation) -> bool:
    e = op.result.type.scalar
    if op.NAME not in ("arith.div", "arith.rem") or not (isinstance(e, ScalarType) and e.is_integer):
        return False
    c = const_value(op.rhs)
    return c is None or int(c) == 0


def _writes_memory(loop: Operation) -> bool:
    return any(inner.NAME in _WRITES for inner in loop.walk())


def _runs_at_least_once(loop: Operation, block: Block) -> bool:
    if loop.NAME == "scf.while":
        return block is loop.regions[0].block
    lb, ub, step = (const_value(v) for v in (loop.lower, loop.upper, loop.step))
    if lb is None or ub is None or step is None or int(step) == 0:
        return False
    return int(lb) < int(ub) if int(step) > 0 else int(lb) > int(ub)


def hoist_loop(loop: Operation, hoist_loads: bool) -> int:
    """Move invariant ops of ``loop``'s body block(s) right before it; returns how many moved."""
    parent = loop.parent
    if parent is None or loop.attributes.get("disable_licm", False):
        return 0
    moved = 0
    read_only = not _writes_memory(loop)
    for region in loop.regions:
        block = region.block
        loads_ok = hoist_loads and read_only and _runs_at_least_once(loop, block)
        for op in list(block.ops):
            if op.IS_TERMINATOR or any(defined_inside(v, loop) for v in op.operands):
                continue
            if not _movable(op, loads_ok):
                continue
            block.ops.remove(op)
            parent.insert(parent.ops.index(loop), op)
            moved += 1
    return moved


def _movable(op: Operation, loads_ok: bool) -> bool:
    if op.regions:
        return False
    if op.has_trait(Pure):
        return not _may_trap(op)
    return loads_ok and op.NAME == "tile.load" and not op.attributes.get("volatile", False)


def licm(root: Operation, hoist_loads: bool = True) -> int:
    """Hoist invariant code out of every loop under ``root`` (innermost first)."""
    loops = [op for op in root.walk() if op.NAME in _LOOPS]
    return sum(hoist_loop(loop, hoist_loads) for loop in reversed(loops))


class LICM(Pass):
    """Move loop-invariant pure ops (and provably unchanging loads) out of loops."""

    name = "licm"
    summary = "loop-invariant code motion out of scf.for / scf.while"
    OPTIONS = (Option("hoist-loads", bool, True, "also hoist loads of loops that run at least once and never write"),)

    def run(self, module: ModuleOp) -> None:
        licm(module, self.options["hoist-loads"])

    def tunables(self) -> list[Tunable]:
        return []
