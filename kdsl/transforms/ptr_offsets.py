"""``ptr-offsets``: loop-carried pointer tiles advanced by a uniform step become scalar offsets.

The blocked-loop idiom ``p = base + offs; for ...: x = load(p); p += STEP``
carries a whole tile of pointers around the loop, although every lane moves
by the same amount. A backend must then keep the tile in memory (one pointer
per lane, updated every iteration) and can no longer see that it is
``base + offs``. This pass rewrites each ``scf.for`` iteration argument
``%p`` of pointer-tile type whose yielded value is ``addptr(%p, splat(s))``
(or a constant tile) into a scalar ``i64`` offset::

    %r = scf.for ... iter(%p = %init) { ...%p...; yield addptr(%p, splat(%s)) }
  ->
    %o = scf.for ... iter(%off = 0) {
      %p = addptr(%init, splat(%off)) ; ...%p...; yield %off + i64(%s) }
    %r = addptr(%init, splat(%o))

so inside the loop the pointer tile is ``%init`` (loop-invariant, affine when
the frontend built it from ``arange``) plus a uniform offset. Exact: element
offsets add up in 64 bits as the pointers themselves did (``i64(%s)``
sign- or zero-extends by the step's signedness, as ``addptr`` does).
"""

from __future__ import annotations

from kdsl.ir.core import Block, Builder, ModuleOp, Operation, Region, Value
from kdsl.ir.dialects.arith import AddOp, CastOp, ConstantOp
from kdsl.ir.dialects.scf import ForOp, YieldOp
from kdsl.ir.dialects.tile import AddPtrOp, SplatOp
from kdsl.ir.rewriter import IRMapping, PatternRewriter, clone_block_into
from kdsl.ir.types import PointerType, ScalarType, TileType
from kdsl.transforms.base import Pass, Tunable
from kdsl.transforms.facts import uniform_base
from kdsl.transforms.greedy import is_attached
from kdsl.transforms.utils import const_value, make_constant

I64 = ScalarType("i64")


def _step(loop: Operation, i: int) -> Value | int | None:
    """The uniform step of iteration argument ``i`` (a scalar value or a constant), or None."""
    body = loop.regions[0].block
    arg = body.args[i + 1]
    t = arg.type
    if not (isinstance(t, TileType) and isinstance(t.scalar, PointerType)):
        return None
    term = body.terminator
    assert term is not None
    op = term.operands[i].owner_op
    if op is None or op.NAME != "tile.addptr" or op.ptr is not arg:
        return None
    c = const_value(op.offset)
    if c is not None:
        return int(c)
    return uniform_base(op.offset)


def _as_i64(b: Builder, s: Value | int) -> Value:
    if isinstance(s, int):
        return b.create(ConstantOp, [], [I64], {"value": s}).result
    return s if s.type == I64 else b.create(CastOp, [s], [I64]).result


def _rebased(b: Builder, init: Value, off: Value) -> Value:
    """``addptr(init, splat(off))`` built with ``b``."""
    t = init.type
    assert isinstance(t, TileType)
    sp = b.create(SplatOp, [off], [TileType(t.shape, I64)]).result
    return b.create(AddPtrOp, [init, sp], [t]).result


def rewrite_loop(loop: Operation) -> bool:
    """Rewrite every qualifying pointer iteration argument of ``loop`` (see module doc)."""
    inits = list(loop.inits)
    steps = {i: s for i in range(len(inits)) if (s := _step(loop, i)) is not None}
    if not steps or loop.parent is None:
        return False
    body = loop.regions[0].block
    kept = [i for i in range(len(inits)) if i not in steps]
    moved = sorted(steps)
    rw = PatternRewriter()
    rw.set_insertion_point(loop)
    zero = make_constant(rw, 0, I64)
    new_body = Block([body.args[0].type, *(inits[i].type for i in kept), *(I64 for _ in moved)])
    nb = Builder(new_body)
    nb.loc = loop.loc
    offs = dict(zip(moved, new_body.args[1 + len(kept) :]))
    args: list[Value] = [new_body.args[0]]
    for i in range(len(inits)):
        args.append(_rebased(nb, inits[i], offs[i]) if i in steps else new_body.args[1 + kept.index(i)])
    for old_arg, new_arg in zip(body.args, args):
        new_arg.name_hint = new_arg.name_hint or old_arg.name_hint
    for i, off in offs.items():
        off.name_hint = f"{body.args[i + 1].name_hint}_off" if body.args[i + 1].name_hint else None
    mapping = IRMapping()
    yields = clone_block_into(body, new_body, None, args, mapping)
    mapped = {i: mapping.lookup(s) if isinstance(s, Value) and s in mapping else s for i, s in steps.items()}
    nexts = [nb.create(AddOp, [offs[i], _as_i64(nb, mapped[i])], [I64]).result for i in moved]
    new_body.append(YieldOp([*(yields[i] for i in kept), *nexts], loc=loop.loc))
    new = rw.create(
        ForOp,
        [loop.lower, loop.upper, loop.step, *(inits[i] for i in kept), *(zero for _ in moved)],
        [inits[i].type for i in kept] + [I64] * len(moved),
        dict(loop.attributes),
        [Region([new_body])],
    )
    results = list(new.results)
    for j, i in enumerate(kept):
        results[j].name_hint = loop.results[i].name_hint
        loop.results[i].replace_all_uses_with(results[j])
    if any(loop.results[i].uses for i in moved):
        ab = PatternRewriter()
        ab.set_insertion_point(loop)
        for j, i in enumerate(moved):
            if loop.results[i].uses:
                sp = ab.create(SplatOp, [results[len(kept) + j]], [TileType(inits[i].type.shape, I64)]).result
                rebuilt = ab.create(AddPtrOp, [inits[i], sp], [inits[i].type]).result
                rebuilt.name_hint = loop.results[i].name_hint
                loop.results[i].replace_all_uses_with(rebuilt)
    loop.erase()
    return True


def ptr_offsets(root: Operation) -> int:
    # innermost first: rewriting an outer loop clones its body, inner loops included
    loops = [op for op in root.walk() if op.NAME == "scf.for"]
    return sum(1 for loop in reversed(loops) if is_attached(loop, root) and rewrite_loop(loop))


class PtrOffsets(Pass):
    """Turn loop-carried pointer tiles advanced by a uniform step into scalar offsets."""

    name = "ptr-offsets"
    summary = "loop-carried pointer tiles p += splat(s) -> init + splat(scalar offset)"
    OPTIONS = ()

    def run(self, module: ModuleOp) -> None:
        ptr_offsets(module)

    def tunables(self) -> list[Tunable]:
        return []
