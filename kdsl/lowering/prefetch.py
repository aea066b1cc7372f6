"""Software prefetch of the next row, for CPU targets (``Layout.prefetch``).

Why: a row kernel that reads its row more than once -- softmax (max, then ``exp`` and sum),
LayerNorm (mean, variance, normalise) -- waits on memory in its first pass and computes on
cached data in the others. The hardware prefetchers follow the first pass but stop at the end
of the row, and on a CPU nothing else runs on the core while it computes, so the memory
system idles through the compute passes and the next row's first pass waits again. On PoCL
the 4096 x 4096 softmax ran 8.1 ms against 5.2 ms for the same work on L3-resident rows; one
prefetch of the next row's line per vector of the ``exp`` pass brought it to 6.3 ms
(docs/LOWERING.md, *Prefetching the next row*).

What, on the vectorised work-item IR: a *scope* is the body of an ``scf.for`` (the row
loop: the next row is the next iteration, ``iv + step``) or the function body (one row per
program: the next row is program ``id + 1``, which the cpu and PoCL runtimes run next on the
same thread). The scope's own loops (directly in its block, or inside ``scf.if`` there) that
hold, at any depth, vector loads through a pointer depending on the scope's value are its
*passes* (a tile-level loop over column blocks counts as one pass, its element loops inside).
With two passes or more, the pass with the most arithmetic per such load (not the first, which is
the one that waits on memory) gets, after each of those loads, a ``wi.prefetch`` of the same
address computed for the next row: the pointer's arithmetic is cloned with the scope's value
replaced by the next one. The next value is clamped to the current one past the loop's bound
or the last program, so the address stays one the kernel computes anyway; a prefetch never
faults in any case. Address arithmetic that could trap (a division by a value depending on
the row) or that reads memory is not cloned: that load is simply not prefetched.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from kdsl.ir.core import Block, Builder, Operation, Value
from kdsl.ir.dialects import arith
from kdsl.ir.dialects.wi import NumProgramsOp, PrefetchOp
from kdsl.ir.types import ScalarType
from kdsl.transforms.utils import defined_inside

_I1 = ScalarType("i1")
# math ops that cost about what an add does; every other math op is a library-sized sequence
_CHEAP_MATH = frozenset({"math.fma", "math.abs", "math.floor", "math.ceil", "math.umulhi"})
_TRAPPING = frozenset({"arith.div", "arith.rem"})


def prefetch_next_rows(func: Operation) -> int:
    """Insert the prefetches into ``func`` (a vectorised ``wi.func``); returns how many."""
    inserted = 0
    for loop in [op for op in func.walk() if op.NAME == "scf.for"]:
        inserted += _Scope(loop.regions[0].block, loop.regions[0].block.args[0], partial(_next_iteration, loop=loop)).run()
    body = func.regions[0].block
    pid = next((op for op in body.ops if op.NAME == "wi.program_id" and op.attributes["axis"] == 0), None)
    if pid is not None:
        inserted += _Scope(body, pid.result, partial(_next_program, pid=pid)).run()
    return inserted


class _Scope:
    """One scope: its moving value, the passes over memory that depends on it, the clones."""

    def __init__(self, block: Block, moving: Value, make_next: Callable[[Builder], Value]) -> None:
        scope = block.parent_op
        assert scope is not None  # a loop's or the function's body
        self.block, self.scope = block, scope
        self.moving = moving
        self.make_next = make_next
        self.memo: dict[int, bool] = {}
        self.clones: dict[int, Value] = {}

    def run(self) -> int:
        passes = [(h, loads) for h in _loops(self.block) if (loads := self._row_loads(h))]
        if len(passes) < 2:
            return 0
        host, loads = max(passes[1:], key=lambda p: _cost(p[0]) / len(p[1]))
        loads = [ld for ld in loads if self._clonable(ld.operands[0])]
        if not loads:
            return 0
        owner = self.moving.owner_op  # the next value is made where the current one is
        b = Builder(self.block) if owner is None else _after(owner)
        b.loc = host.loc
        if owner is None:
            b.index = 0
        self.clones[id(self.moving)] = self.make_next(b)
        for ld in loads:
            ptr = self._clone(ld.operands[0])
            _after(ld).create(PrefetchOp, [ptr], [], loc=ld.loc)
        return len(loads)

    def _row_loads(self, loop: Operation) -> list[Operation]:
        """The vector loads in ``loop`` (at any depth: a tile-level loop over column blocks holds
        the element loops) through a pointer that depends on the row; lane-count loads end a
        loop, once per row, and are not worth a prefetch."""
        out = []
        for op in loop.regions[0].walk():
            if op.NAME != "wi.gvload" or not self._depends(op.operands[0]):
                continue
            mask = op.operands[1] if len(op.operands) > 1 else None
            if mask is None or mask.type == _I1:
                out.append(op)
        return out

    def _depends(self, v: Value) -> bool:
        if v is self.moving:
            return True
        hit = self.memo.get(id(v))
        if hit is None:
            op = v.owner_op
            hit = op is not None and defined_inside(v, self.scope) and any(self._depends(x) for x in op.operands)
            self.memo[id(v)] = hit
        return hit

    def _clonable(self, v: Value) -> bool:
        if v is self.moving or not self._depends(v):
            return True
        op = v.owner_op
        if op is None or op.regions or not (op.NAME.startswith("arith.") or op.NAME == "wi.addptr"):
            return False
        if op.NAME in _TRAPPING and self._depends(op.operands[1]):
            return False
        return all(self._clonable(x) for x in op.operands)

    def _clone(self, v: Value) -> Value:
        """``v`` computed for the next row, right after ``v``'s own definition."""
        done = self.clones.get(id(v))
        if done is not None:
            return done
        if not self._depends(v):
            return v
        op = v.owner_op
        assert op is not None
        operands = [self._clone(x) for x in op.operands]
        new = _after(op).create(type(op), operands, [r.type for r in op.results], dict(op.attributes), loc=op.loc)
        for old, res in zip(op.results, new.results):
            self.clones[id(old)] = res
        return self.clones[id(v)]


def _loops(block: Block) -> list[Operation]:
    """The ``scf.for`` ops of ``block`` and of the ``scf.if`` regions in it, in program order."""
    out: list[Operation] = []
    for op in block.ops:
        if op.NAME == "scf.for":
            out.append(op)
        elif op.NAME == "scf.if":
            for region in op.regions:
                for blk in region.blocks:
                    out.extend(_loops(blk))
    return out


def _cost(loop: Operation) -> int:
    """Arithmetic per iteration, a library math call counted as 8 and a division as 4."""
    total = 0
    for op in loop.regions[0].walk():
        n = op.NAME
        if n.startswith("math.") and n not in _CHEAP_MATH:
            total += 8
        elif n in _TRAPPING or n == "math.div_rn":
            total += 4
        else:
            total += 1
    return total


def _after(op: Operation) -> Builder:
    assert op.parent is not None
    b = Builder(op.parent)
    b.index = op.parent.ops.index(op) + 1
    b.loc = op.loc
    return b


def _select_next(b: Builder, cur: Value, nxt: Value, ok: Value) -> Value:
    return b.create(arith.SelectOp, [ok, nxt, cur], [cur.type]).result


def _next_iteration(b: Builder, loop: Operation) -> Value:
    """``iv + step`` while the loop would run it, else ``iv``."""
    iv = loop.regions[0].block.args[0]
    ub, step = loop.operands[1], loop.operands[2]
    t = iv.type
    nxt = b.create(arith.AddOp, [iv, step], [t]).result
    zero = b.create(arith.ConstantOp, [], [t], {"value": 0}).result
    up = b.create(arith.CmpOp, [step, zero], [_I1], {"predicate": "gt"}).result
    below = b.create(arith.CmpOp, [nxt, ub], [_I1], {"predicate": "lt"}).result
    above = b.create(arith.CmpOp, [nxt, ub], [_I1], {"predicate": "gt"}).result
    runs = b.create(arith.SelectOp, [up, below, above], [_I1]).result
    return _select_next(b, iv, nxt, runs)


def _next_program(b: Builder, pid: Operation) -> Value:
    """``id + 1`` along axis 0 while there is such a program, else ``id``."""
    cur = pid.result
    t = cur.type
    count = b.create(NumProgramsOp, [], [t], {"axis": 0}).result
    one = b.create(arith.ConstantOp, [], [t], {"value": 1}).result
    nxt = b.create(arith.AddOp, [cur, one], [t]).result
    ok = b.create(arith.CmpOp, [nxt, count], [_I1], {"predicate": "lt"}).result
    return _select_next(b, cur, nxt, ok)
