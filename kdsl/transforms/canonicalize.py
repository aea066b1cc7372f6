"""``canonicalize``: constant folding, algebraic simplification and control-flow cleanup.

Runs the greedy driver with three kinds of rewrites:

* folding (:func:`fold_to_constant`) -- an op whose operands are all
  ``arith.constant`` becomes one, with the exact semantics of
  ``kdsl.transforms.folding`` (tile constants are splats, so the same
  scalar computation folds whole tiles);
* the one-line rules of ``kdsl.transforms.simplify`` (``x*1 -> x``, ...);
* structured control flow: ``scf.if`` on a constant condition is replaced by
  the taken branch, ``scf.for`` with constant bounds and zero trips by its
  initial values, and an ``scf.for``/``scf.while`` value passed on unchanged
  by its initial value (``dce`` then drops a dead ``scf.for`` slot).

Replacements keep the location of the op they replace.
"""

from __future__ import annotations

from kdsl.ir.core import ModuleOp, Operation, Value
from kdsl.ir.rewriter import PatternRewriter, RewritePattern
from kdsl.transforms.base import Pass
from kdsl.transforms.folding import fold_constant
from kdsl.transforms.greedy import apply_patterns_greedily
from kdsl.transforms.simplify import ConstantsToRight, TableRules
from kdsl.transforms.utils import const_value, make_constant


def fold_to_constant(op: Operation, rewriter: PatternRewriter) -> Value | None:
    """A new ``arith.constant`` equal to ``op``'s result, if ``op`` folds."""
    if op.NAME == "arith.constant" or len(op.results) != 1 or not op.operands:
        return None
    values = [const_value(v) for v in op.operands]
    if any(v is None for v in values):
        return None
    consts = [v for v in values if v is not None]
    result = op.fold(consts)
    if result is None:
        result = fold_constant(op, consts)
    if result is None:
        return None
    return make_constant(rewriter, result, op.result.type)


class InlineConstantIf(RewritePattern):
    """``scf.if`` with a constant condition -> the ops of the taken region."""

    OPS = ("scf.if",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        cond = const_value(op.cond)
        if cond is None:
            return False
        block = op.regions[0 if cond else 1].block
        results = rewriter.inline_block_before(block, op)
        rewriter.replace_op(op, results)
        return True


class RemoveZeroTripFor(RewritePattern):
    """``scf.for`` with constant bounds that runs zero times -> its init values."""

    OPS = ("scf.for",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        lb, ub, step = (const_value(v) for v in (op.lower, op.upper, op.step))
        if lb is None or ub is None or step is None or int(step) == 0:
            return False
        runs = int(lb) < int(ub) if int(step) > 0 else int(lb) > int(ub)
        if runs:
            return False
        rewriter.replace_op(op, list(op.inits))
        return True


class ForwardInvariantIterArgs(RewritePattern):
    """``scf.for`` iteration argument yielded unchanged -> its init value, inside and after the loop.

    Such a value equals its init on every iteration, so reading the init keeps
    what is known about it (a constant, a kernel argument's divisibility)
    visible in the loop. The frontend carries every leaf of a loop-carried
    block pointer, most of which (base, shape, strides) never change.
    """

    OPS = ("scf.for",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        body = op.regions[0].block
        term = body.terminator
        if term is None:
            return False
        changed = False
        for i, init in enumerate(op.inits):
            arg = body.args[i + 1]
            if term.operands[i] is not arg:
                continue
            rewriter.replace_all_uses(arg, init)
            rewriter.replace_all_uses(op.results[i], init)
            changed = True
        if changed:
            rewriter.modified(op)
        return changed


class ForwardInvariantWhileArgs(RewritePattern):
    """``scf.while`` slot passed on unchanged (``scf.condition`` forwards ``before`` argument
    ``i`` as value ``i`` and ``after`` yields its argument ``i``) -> the init value.

    The argument of both regions and the result then always equal the init. The
    slot itself stays (``dce`` keeps ``scf.while``); its uses are gone.
    """

    OPS = ("scf.while",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        before, after = op.regions[0].block, op.regions[1].block
        cond, term = before.terminator, after.terminator
        if cond is None or term is None:
            return False
        values = cond.operands[1:]
        changed = False
        for i, init in enumerate(op.inits):
            if i >= len(values) or values[i] is not before.args[i] or term.operands[i] is not after.args[i]:
                continue
            for v in (before.args[i], after.args[i], op.results[i]):
                rewriter.replace_all_uses(v, init)
            changed = True
        if changed:
            rewriter.modified(op)
        return changed


def canonicalization_patterns() -> list[RewritePattern]:
    return [ConstantsToRight(), TableRules(), InlineConstantIf(), RemoveZeroTripFor(), ForwardInvariantIterArgs(),
            ForwardInvariantWhileArgs()]


class Canonicalize(Pass):
    """Fold constants and simplify algebra and control flow to a fixpoint."""

    name = "canonicalize"
    summary = "constant folding, algebraic simplification, dead pure op removal"

    def run(self, module: ModuleOp) -> None:
        apply_patterns_greedily(module, canonicalization_patterns(), fold_to_constant)

