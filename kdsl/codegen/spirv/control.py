"""``scf.for`` / ``scf.if`` / ``scf.while`` as structured SPIR-V control flow.

Shapes (``OpPhi`` carries region values; block order is dominance order)::

    for:   pre -> header[phi iv, iters; LoopMerge merge cont; cond ? body : merge]
           body... -> cont[iv += step] -> header ;  results = header phis
    if:    SelectionMerge merge; cond ? then : else ; merge[phi per result]
    while: pre -> header[phi args; LoopMerge merge cont] -> before...
           [cond ? after : merge] ; after... -> cont -> header ; results = forwarded values

On a driver that cuts long loops (lavapipe), each loop's merge block also checks
that the loop really finished (:mod:`kdsl.codegen.spirv.loopcap`).
"""

from __future__ import annotations

from kdsl.codegen.spirv import loopcap
from kdsl.codegen.spirv.emit import Emitter, handles
from kdsl.ir.core import Operation, Value


def _terminator_operands(op: Operation, region: int) -> list[Value]:
    term = op.regions[region].block.terminator
    assert term is not None
    return list(term.operands)


@handles("scf.for")
def _for(e: Emitter, op: Operation) -> None:
    f = e.f
    lo, hi, step = (e.v(x) for x in op.operands[:3])
    body = op.regions[0].block
    iv_t = e.reg(body.args[0].type)
    carried = list(op.operands[3:])
    pre = f.block
    header, body_l, cont, merge = (f.new_label() for _ in range(4))
    f.branch(header)
    f.label(header)
    iv = e.m.new_id()
    iv_next = e.m.new_id()
    next_ids = [e.m.new_id() for _ in carried]
    f.phi(iv_t, [(lo, pre), (iv_next, cont)], rid=iv)
    phis = [f.phi(e.reg(x.type), [(e.v(x), pre), (n, cont)]) for x, n in zip(carried, next_ids)]
    cond = _for_cond(e, op, iv_t, iv, hi)
    f.loop_merge(merge, cont, "Unroll" if id(op) in e.unrolled else "None")
    f.branch_cond(cond, body_l, merge)
    f.label(body_l)
    e.bind(body.args[0], iv)
    for arg, p in zip(body.args[1:], phis):
        e.bind(arg, p)
    e.block(body)
    yields = [e.v(x) for x in _terminator_operands(op, 0)]
    f.branch(cont)
    f.label(cont)
    # the continue block re-defines the yielded values under pre-allocated ids for the header phis
    for nid, y, x in zip(next_ids, yields, carried):
        f.emit("OpCopyObject", e.reg(x.type), nid, y)
    f.emit("OpIAdd", iv_t, iv_next, iv, step)
    f.branch(header)
    f.label(merge)
    if loopcap.enabled(e):  # would the loop still run on its (advanced) header values?
        loopcap.report_if(e, op, _for_cond(e, op, iv_t, loopcap.opaque(e, iv, iv_t), hi))
    for r, p in zip(op.results, phis):
        e.bind(r, p)


def _for_cond(e: Emitter, op: Operation, iv_t: int, iv: int, hi: int) -> int:
    """``iv`` still inside the range of ``scf.for`` ``op``."""
    f = e.f
    cst = e.const_of(op.operands[2])
    if isinstance(cst, int) and cst != 0:
        return f.cmp("lt" if cst > 0 else "gt", iv_t, iv, hi)
    # (step > 0 && iv < hi) || (step <= 0 && iv > hi); an OpSelect of bools here
    # miscompiles in Mesa 22's loop analysis (the loop never runs)
    step = e.v(op.operands[2])
    up = f.cmp("gt", iv_t, step, f.const(iv_t, 0))
    return f.lor(f.land(up, f.cmp("lt", iv_t, iv, hi)), f.land(f.lnot(up), f.cmp("gt", iv_t, iv, hi)))


@handles("scf.if")
def _if(e: Emitter, op: Operation) -> None:
    f = e.f
    then_l, else_l, merge = f.new_label(), f.new_label(), f.new_label()
    f.selection_merge(merge)
    f.branch_cond(e.v(op.operands[0]), then_l, else_l)
    incoming: list[list[tuple[int, int]]] = [[] for _ in op.results]
    for k, label in enumerate((then_l, else_l)):
        f.label(label)
        if k < len(op.regions):
            e.block(op.regions[k].block)
            for lst, y in zip(incoming, _terminator_operands(op, k)):
                lst.append((e.v(y), f.block))
        f.branch(merge)
    f.label(merge)
    for r, inc in zip(op.results, incoming):
        e.bind(r, f.phi(e.reg(r.type), inc))


@handles("scf.while")
def _while(e: Emitter, op: Operation) -> None:
    f = e.f
    before, after = op.regions[0].block, op.regions[1].block
    pre = f.block
    header, before_l, after_l, cont, merge = (f.new_label() for _ in range(5))
    f.branch(header)
    f.label(header)
    next_ids = [e.m.new_id() for _ in before.args]
    header_values = [
        f.phi(e.reg(arg.type), [(e.v(init), pre), (n, cont)])
        for arg, init, n in zip(before.args, op.operands, next_ids)
    ]
    for arg, hv in zip(before.args, header_values):
        e.bind(arg, hv)
    f.loop_merge(merge, cont)
    f.branch(before_l)
    f.label(before_l)
    e.block(before)
    cond, *fwd = _terminator_operands(op, 0)
    go, still = e.v(cond), 0
    replay = loopcap.enabled(e) and loopcap.replayable(before)
    if loopcap.enabled(e) and not replay:
        go, still = loopcap.guarded_condition(e, go)
    f.branch_cond(go, after_l, merge)
    f.label(after_l)
    for arg, x in zip(after.args, fwd):
        e.bind(arg, e.v(x))
    e.block(after)
    yields = [e.v(x) for x in _terminator_operands(op, 1)]
    f.branch(cont)
    f.label(cont)
    for nid, y, arg in zip(next_ids, yields, before.args):
        f.emit("OpCopyObject", e.reg(arg.type), nid, y)
    f.branch(header)
    f.label(merge)
    if replay:  # run the condition again on the header values (see loopcap)
        loopcap.replay_before(e, op, header_values, lambda: e.block(before))
        still = e.v(cond)
    if still:
        loopcap.report_if(e, op, still)
    for r, x in zip(op.results, fwd):
        e.bind(r, e.v(x))
