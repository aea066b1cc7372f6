"""Lowering of ``scf.for`` / ``scf.if`` / ``scf.while``.

Scalars flow through the wi-level ``scf`` ops as region-carried values.
Tiles do not: a tile carried by a loop or produced by a branch lives in a
private array allocated once (:meth:`Lowerer.new_mat`); the region copies
its new value into that array at its end (:meth:`Lowerer.assign`). Region
conditions are uniform scalars, so barriers inside stay legal.
"""

from __future__ import annotations

from collections.abc import Sequence

from kdsl.ir.core import Block, Operation, Region, Value
from kdsl.ir.dialects import scf
from kdsl.lowering.inplace import retarget_branch, retarget_yield
from kdsl.lowering.lowerer import Lowerer, lowers
from kdsl.lowering.reps import Mat, Rep


def _split(values: Sequence[Value]) -> tuple[list[int], list[int]]:
    scalars = [i for i, v in enumerate(values) if not v.type.shape]
    tiles = [i for i, v in enumerate(values) if v.type.shape]
    return scalars, tiles


def _carried(lw: Lowerer, values: Sequence[Value]) -> dict[int, Mat]:
    return {i: lw.new_mat(v.type.shape, v.type.scalar) for i, v in enumerate(values) if v.type.shape}


def _bind(lw: Lowerer, tile_vals: Sequence[Value], scalar_args: Sequence[Value], mats: dict[int, Mat]) -> None:
    """Map a tile-IR block's arguments: scalars to ``scalar_args`` in order, tiles to ``mats``."""
    it = iter(scalar_args)
    for i, v in enumerate(tile_vals):
        if v.type.shape:
            lw.reps[v] = mats[i]
        else:
            lw.vals[v] = next(it)


def _yield_into(
    lw: Lowerer, values: Sequence[Value], mats: dict[int, Mat], loop: tuple[Operation, Block] | None = None
) -> list[Value]:
    """Copy the tile ``values`` into their carried arrays; return the scalar ones (mapped).

    ``loop``: (the tile-IR ``scf.for``, the work-item body emitted so far) -- a tile born in the
    body is given its carried array instead, where that is safe (:mod:`kdsl.lowering.inplace`).
    """
    idx = sorted(mats)
    reps: list[Rep] = [lw.rep(values[i]) for i in idx]
    if loop is not None:
        for n, i in enumerate(idx):
            r = reps[n]
            others = [o for m, o in enumerate(reps) if m != n]
            if isinstance(r, Mat) and retarget_yield(lw, loop[0], loop[1], r, mats[i], others):
                reps[n] = mats[i]
    lw.assign([mats[i] for i in idx], reps)
    return [lw.scalar(v) for v in values if not v.type.shape]


@lowers("scf.for")
def lower_for(lw: Lowerer, op: Operation) -> None:
    inits = list(op.inits)
    mats = _carried(lw, inits)
    init_reps: list[Rep] = [lw.rep(inits[i]) for i in sorted(mats)]
    lw.close_nest()
    lw.assign([mats[i] for i in sorted(mats)], init_reps)
    s_idx, _ = _split(inits)
    scalar_inits = [lw.scalar(inits[i]) for i in s_idx]
    bounds = [lw.scalar(v) for v in (op.lower, op.upper, op.step)]
    iv_t = op.lower.type
    blk = Block([iv_t, *(v.type for v in scalar_inits)])
    loop = lw.top.create(scf.ForOp, [*bounds, *scalar_inits], [v.type for v in scalar_inits],
                         regions=[Region([blk])])
    body = op.regions[0].block
    lw.vals[body.args[0]] = blk.args[0]
    _bind(lw, list(body.args[1:]), list(blk.args[1:]), mats)
    with lw.region(blk):
        term = body.terminator
        assert term is not None
        lw.lower_block(body)
        out = _yield_into(lw, list(term.operands), mats, (op, blk))
        blk.append(scf.YieldOp(out, loc=term.loc))
    _bind(lw, list(op.results), list(loop.results), mats)


@lowers("scf.if")
def lower_if(lw: Lowerer, op: Operation) -> None:
    results = list(op.results)
    mats = _carried(lw, results)
    s_idx, _ = _split(results)
    lw.close_nest()
    branch = lw.top.create(scf.IfOp, [lw.scalar(op.cond)], [results[i].type for i in s_idx],
                           regions=[Region([Block()]), Region([Block()])])
    for src, dst in zip(op.regions, branch.regions):
        body, blk = src.block, dst.block
        with lw.region(blk):
            term = body.terminator
            assert term is not None
            lw.lower_block(body)
            out = _yield_into(lw, list(term.operands), mats)
            blk.append(scf.YieldOp(out, loc=term.loc))
    for i, t in mats.items():
        yielded = [r.block.terminator.operands[i] for r in op.regions]  # type: ignore[union-attr]
        retarget_branch(lw, op, branch, t, yielded)
    _bind(lw, results, list(branch.results), mats)


@lowers("scf.while")
def lower_while(lw: Lowerer, op: Operation) -> None:
    inits = list(op.inits)
    before, after = op.regions[0].block, op.regions[1].block
    cond = before.terminator
    assert cond is not None
    fwd = list(cond.operands)[1:]
    init_mats = _carried(lw, inits)
    fwd_mats = _carried(lw, fwd)
    lw.assign([init_mats[i] for i in sorted(init_mats)], [lw.rep(inits[i]) for i in sorted(init_mats)])
    s_init = [lw.scalar(inits[i]) for i in _split(inits)[0]]
    s_fwd_t = [fwd[i].type for i in _split(fwd)[0]]
    bblk, ablk = Block([v.type for v in s_init]), Block(s_fwd_t)
    loop = lw.top.create(scf.WhileOp, s_init, s_fwd_t, regions=[Region([bblk]), Region([ablk])])
    _bind(lw, list(before.args), list(bblk.args), init_mats)
    with lw.region(bblk):
        lw.lower_block(before)
        out = _yield_into(lw, fwd, fwd_mats)
        bblk.append(scf.ConditionOp([lw.scalar(cond.cond), *out], loc=cond.loc))
    _bind(lw, list(after.args), list(ablk.args), fwd_mats)
    with lw.region(ablk):
        term = after.terminator
        assert term is not None
        lw.lower_block(after)
        out = _yield_into(lw, list(term.operands), init_mats)
        ablk.append(scf.YieldOp(out, loc=term.loc))
    _bind(lw, list(op.results), list(loop.results), fwd_mats)
