"""``loop-split``: split a masked ``scf.for`` into a mask-free main loop and a masked tail.

The common blocked loop ``for k in range(lb, n, BLOCK): offs = k +
arange(0, BLOCK); x = load(p + offs, mask=offs < n)`` pays for the mask on
every iteration although only the last one can be partial. When the step
``S`` is a positive constant, ``lb`` a constant >= 0, and the body compares
``splat(iv) + c < splat(ub)`` with lane constants ``0 <= c < S`` against the
loop's own bound, the loop becomes::

    main_ub = lb + ((max(ub, lb) - lb) / S) * S     # last full block (no overflow)
    r = scf.for iv = lb to main_ub step S  { body with those compares = true }
    r = scf.if main_ub < ub { body at iv = main_ub } else { r }

In the main loop ``iv + S <= main_ub <= ub`` so every lane's compare holds;
at most one iteration is left (``main_ub + S > ub``), and it runs the
original, masked body. The constant-true masks are then dropped (the
``mask-elim`` rules, applied here to the new code). Bodies larger than
``max-body-ops`` are not duplicated.
"""

from __future__ import annotations

from kdsl.ir.core import Block, ModuleOp, Operation, Region
from kdsl.ir.dialects.arith import AddOp, CmpOp, DivOp, MaxOp, MulOp, SubOp
from kdsl.ir.dialects.scf import ForOp, IfOp, YieldOp
from kdsl.ir.rewriter import IRMapping, PatternRewriter, clone_block_into
from kdsl.ir.types import ScalarType
from kdsl.transforms.base import Option, Pass, Tunable
from kdsl.transforms.canonicalize import fold_to_constant
from kdsl.transforms.facts import lanes
from kdsl.transforms.greedy import apply_patterns_greedily, is_attached
from kdsl.transforms.masks import ConstantMask
from kdsl.transforms.unroll import body_size
from kdsl.transforms.utils import const_value, make_constant

_I1 = ScalarType("i1")


def _iv_masks(loop: Operation, step: int) -> list[Operation]:
    """Compares in ``loop``'s body of the form ``splat(iv) + c < splat(ub)``, ``0 <= c < step``."""
    iv, ub = loop.regions[0].block.args[0], loop.upper
    out: list[Operation] = []
    for op in loop.regions[0].walk():
        if op.NAME != "arith.cmp" or not op.result.type.shape:
            continue
        pred = op.attributes["predicate"]
        if pred not in ("lt", "gt"):
            continue
        small, big = (op.lhs, op.rhs) if pred == "lt" else (op.rhs, op.lhs)
        left, right = lanes(small), lanes(big)
        if left is None or right is None or left.base is not iv or right.base is not ub:
            continue
        if right.lo == right.hi == 0 and 0 <= left.lo <= left.hi < step:
            out.append(op)
    return out


def split_loop(loop: Operation) -> bool:
    """Split ``loop`` if it has the shape described in the module docstring."""
    step_c, lb_c = const_value(loop.step), const_value(loop.lower)
    if step_c is None or lb_c is None or int(step_c) <= 0 or int(lb_c) < 0 or loop.parent is None:
        return False
    step = int(step_c)
    masks = _iv_masks(loop, step)
    if not masks:
        return False
    rw = PatternRewriter()
    rw.set_insertion_point(loop)
    t = loop.lower.type
    hi = rw.create(MaxOp, [loop.upper, loop.lower], [t]).result
    span = rw.create(SubOp, [hi, loop.lower], [t]).result
    blocks = rw.create(DivOp, [span, loop.step], [t]).result
    full = rw.create(MulOp, [blocks, loop.step], [t]).result
    main_ub = rw.create(AddOp, [loop.lower, full], [t]).result
    main_ub.name_hint = "main_ub"

    # main loop: a clone whose edge compares are constant true
    mapping = IRMapping()
    body = loop.regions[0].block
    new_body = Block([a.type for a in body.args])
    for a, na in zip(body.args, new_body.args):
        na.name_hint = a.name_hint
    clone_block_into(body, new_body, None, list(new_body.args), mapping, skip_terminator=False)
    main = rw.create(ForOp, [loop.lower, main_ub, loop.step, *loop.inits], [r.type for r in loop.results],
                     dict(loop.attributes), [Region([new_body])])
    for m in masks:
        clone = mapping.lookup(m.result).owner_op
        assert clone is not None
        inner = PatternRewriter()
        inner.set_insertion_point(clone)
        inner.replace_op(clone, [make_constant(inner, True, m.result.type)])

    # tail: the original body once, at iv = main_ub, when main_ub < ub
    cond = rw.create(CmpOp, [main_ub, loop.upper], [_I1], {"predicate": "lt"}).result
    then_b, else_b = Block(), Block()
    tail_vals = clone_block_into(body, then_b, None, [main_ub, *main.results])
    then_b.append(YieldOp(tail_vals, [], loc=loop.loc))
    else_b.append(YieldOp(list(main.results), [], loc=loop.loc))
    tail = rw.create(IfOp, [cond], [r.type for r in loop.results], None, [Region([then_b]), Region([else_b])])
    for old, new in zip(loop.results, tail.results):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    loop.erase()
    apply_patterns_greedily(main, [ConstantMask()], fold_to_constant)
    return True


def loop_split(root: Operation, max_body_ops: int) -> int:
    done = 0
    for loop in [op for op in root.walk() if op.NAME == "scf.for"]:
        if is_attached(loop, root) and body_size(loop) <= max_body_ops and split_loop(loop):
            done += 1
    return done


class LoopSplit(Pass):
    """Peel the partial last block of masked blocked loops so the main loop is mask-free."""

    name = "loop-split"
    summary = "split scf.for with iv-dependent edge masks into a mask-free loop and a masked tail"
    OPTIONS = (Option("max-body-ops", int, 400, "do not duplicate loop bodies larger than this (0: never split)"),)

    def run(self, module: ModuleOp) -> None:
        loop_split(module, self.options["max-body-ops"])

    def tunables(self) -> list[Tunable]:
        return [Tunable("max-body-ops", (0, 400), "0 disables splitting")]
