"""Unroll a vector reduction loop with independent accumulators (``vectorize`` calls it).

Why: a vector loop ``acc = acc op f(x[s..s+N))`` is one dependency chain: each
iteration waits for the previous ``op`` (3-4 cycles for ``vaddps``, more for
``fmax``'s NaN blend), so a cheap body (a row's max, LayerNorm's sums) runs at
the chain's latency, not at the core's throughput. ``U`` copies of the body,
each with its own accumulators, make ``U`` independent chains:

    for s in [lo, uend) step U*N:  a_k = a_k op f(x[s + k*N ..])   (k < U)
    a = (a_0 op a_1) op (a_2 op a_3)
    for s in [uend, vend) step N:   a = a op f(x[s..])             (the original loop)

Float sums are reassociated once more (Triton reductions have no specified
order; max/min/integer results are exact). Bodies with stores are unrolled too
(each copy touches its own elements, in increasing order).
"""

from __future__ import annotations

from kdsl.ir.core import Block, Builder, Operation, Region, Value
from kdsl.ir.dialects import arith, scf
from kdsl.ir.types import Type

_CHEAP_MATH = frozenset({"math.fma", "math.abs", "math.floor", "math.ceil"})


def cheap(vloop: Operation) -> bool:
    """True when the body has no transcendental (whose cost, not the chain, bounds the loop)."""
    return not any(o.NAME.startswith("math.") and o.NAME not in _CHEAP_MATH for o in vloop.regions[0].block.ops)


def unroll_reductions(vloop: Operation, factor: int) -> Operation | None:
    """Put a ``factor``-times unrolled copy of ``vloop`` (a vector loop with reductions) before it.

    The copy runs the leading whole multiples of
    ``factor`` iterations; ``vloop`` then starts where it stopped, from the
    combined accumulators. Returns the new loop, or None when there is nothing to do.
    """
    body = vloop.regions[0].block
    n_acc = len(body.args) - 1
    term = body.terminator
    if factor < 2 or n_acc == 0 or term is None or any(o.regions for o in body.ops):
        return None
    combiners = [term.operands[i].owner_op for i in range(n_acc)]
    if any(c is None or c.parent is not body or len(c.operands) != 2 for c in combiners):
        return None
    pre = Builder()
    pre.set_insertion_point_before(vloop)
    pre.loc = vloop.loc
    lo, vend, step = vloop.operands[:3]
    it = lo.type
    vw = step.owner_op.attributes.get("value") if isinstance(step.owner_op, arith.ConstantOp) else None
    if not isinstance(vw, int):
        return None
    ustep = _const(pre, vw * factor, it)
    span = pre.create(arith.SubOp, [vend, lo], [it]).result
    whole = pre.create(arith.MulOp, [pre.create(arith.DivOp, [span, ustep], [it]).result, ustep], [it]).result
    uend = pre.create(arith.AddOp, [lo, whole], [it]).result
    inits = list(vloop.operands[3:]) * factor
    block = Block([it, *(v.type for v in inits)])
    b = Builder(block)
    b.loc = vloop.loc
    yields: list[Value] = []
    for k in range(factor):
        iv: Value = block.args[0]
        if k:
            iv = b.create(arith.AddOp, [block.args[0], _const(b, k * vw, it)], [it]).result
        vmap: dict[Value, Value] = {body.args[0]: iv}
        vmap.update(zip(body.args[1:], block.args[1 + k * n_acc : 1 + (k + 1) * n_acc]))
        for op in body.ops:
            if op is term:
                continue
            c = b.create(type(op), [vmap.get(v, v) for v in op.operands], [r.type for r in op.results],
                         dict(op.attributes))  # fmt: skip
            vmap.update(zip(op.results, c.results))
        yields.extend(vmap.get(v, v) for v in term.operands)
    block.append(scf.YieldOp(yields, loc=vloop.loc))
    uloop = pre.create(scf.ForOp, [lo, uend, ustep, *inits], [v.type for v in inits], regions=[Region([block])])
    for i, comb in enumerate(combiners):
        assert comb is not None
        parts = [uloop.results[k * n_acc + i] for k in range(factor)]
        while len(parts) > 1:  # pairwise: (a0 op a1) op (a2 op a3)
            nxt = [pre.create(type(comb), [x, y], [x.type], dict(comb.attributes)).result
                   for x, y in zip(parts[::2], parts[1::2])]  # fmt: skip
            parts = nxt + ([parts[-1]] if len(parts) % 2 else [])
        vloop.set_operand(3 + i, parts[0])
    vloop.set_operand(0, uend)
    return uloop


def _const(b: Builder, value: int, t: Type) -> Value:
    return b.create(arith.ConstantOp, [], [t], {"value": value}).result
