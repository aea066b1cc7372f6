"""``mask-elim``: remove load/store masks that specialisation facts prove always true.

Masks in Triton-style kernels guard the ragged edge of the data:
``offs = pid*BLOCK + arange(0, BLOCK); mask = offs < n``. Every masked
access costs a compare and a select per lane (or a masked vector
instruction), and blocks vectorisation on devices without masked moves.
Rewrites, all exact (``kdsl.transforms.facts`` holds the proofs):

* **uniform lanes** -- ``splat(s) + arange(lo, hi+1) < splat(n)`` where a
  power of two ``B > hi`` divides ``s`` and ``n`` (``divisibility`` of
  kernel arguments, ``kl.multiple_of``, loop steps) is the same for every
  lane: it becomes ``splat(s < n)``;
* **loop bound** -- inside ``scf.for`` with a positive constant step,
  ``iv < ub`` is true (``iv > ub`` for a negative step);
* **constant masks** -- an all-true mask is dropped (with ``other``); an
  all-false load becomes ``other`` (or zero), an all-false store goes away;
* **uniform masks** (option ``branch-uniform``) -- an access whose mask is
  ``splat(c)`` for a runtime scalar ``c`` becomes ``scf.if c`` around the
  unmasked access: one scalar branch instead of a per-lane predicate.
"""

from __future__ import annotations

from kdsl.ir.core import Block, ModuleOp, Operation, Region, Value
from kdsl.ir.dialects.arith import CmpOp
from kdsl.ir.dialects.scf import IfOp, YieldOp
from kdsl.ir.dialects.tile import LoadOp, SplatOp, StoreOp
from kdsl.ir.rewriter import PatternRewriter, RewritePattern
from kdsl.ir.types import ScalarType
from kdsl.transforms.base import Option, Pass, Tunable
from kdsl.transforms.canonicalize import fold_to_constant
from kdsl.transforms.facts import CAP, divisor, lanes, uniform_base
from kdsl.transforms.greedy import apply_patterns_greedily
from kdsl.transforms.utils import const_value, make_constant

_I1 = ScalarType("i1")


def _lt_operands(op: Operation) -> tuple[Value, Value] | None:
    """``(a, b)`` when ``op`` computes ``a < b`` (``lt a, b`` or ``gt b, a``)."""
    pred = op.attributes["predicate"]
    if pred == "lt":
        return op.lhs, op.rhs
    if pred == "gt":
        return op.rhs, op.lhs
    return None


class UniformLaneMask(RewritePattern):
    """``splat(s) + lanes < splat(n)`` with ``s``, ``n`` multiples of ``B > lanes`` -> ``splat(s < n)``."""

    OPS = ("arith.cmp",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not op.result.type.shape or not op.lhs.type.scalar.is_integer:
            return False
        pair = _lt_operands(op)
        if pair is None:
            return False
        left, right = lanes(pair[0]), lanes(pair[1])
        if left is None or right is None or left.lo == left.hi or right.lo != right.hi:
            return False
        if right.base is not None and right.lo != 0:
            return False
        b_left = divisor(left.base) if left.base is not None else CAP
        b_right = divisor(right.base) if right.base is not None else divisor_of_const(right.lo)
        if left.lo < 0 or left.hi >= min(b_left, b_right):
            return False
        elem = op.lhs.type.scalar
        s = left.base if left.base is not None else make_constant(rewriter, 0, elem)
        n = right.base if right.base is not None else make_constant(rewriter, right.lo, elem)
        scalar = rewriter.create(CmpOp, [s, n], [_I1], {"predicate": "lt"}).result
        rewriter.replace_op(op, [rewriter.create(SplatOp, [scalar], [op.result.type]).result])
        return True


def divisor_of_const(c: int) -> int:
    return CAP if c == 0 else min(CAP, abs(c) & -abs(c))


class LoopBoundIsTrue(RewritePattern):
    """Inside ``scf.for`` with a constant step > 0, ``iv < ub`` holds (``iv > ub`` for step < 0)."""

    OPS = ("arith.cmp",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.result.type.shape:
            return False
        pair = _lt_operands(op)
        if pair is None:
            return False
        small, big = pair
        for iv, ub, forward in ((small, big, True), (big, small, False)):
            loop = _loop_of_iv(iv)
            if loop is None or loop.upper is not ub:
                continue
            step = const_value(loop.step)
            if step is None or (int(step) > 0) != forward or int(step) == 0:
                continue
            rewriter.replace_op(op, [make_constant(rewriter, True, _I1)])
            return True
        return False


def _loop_of_iv(v: Value) -> Operation | None:
    block = getattr(v, "block", None)
    if block is None or getattr(v, "index", -1) != 0:
        return None
    owner = block.parent_op
    return owner if owner is not None and owner.NAME == "scf.for" else None


def _mask_constant(mask: Value | None) -> bool | None:
    if mask is None:
        return None
    c = const_value(mask)
    if c is None:
        base = uniform_base(mask)
        c = const_value(base) if base is not None else None
    return None if c is None else bool(c)


class ConstantMask(RewritePattern):
    """All-true masks are dropped; all-false loads yield ``other``/zero, all-false stores vanish."""

    OPS = ("tile.load", "tile.store")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        known = _mask_constant(op.mask)
        if known is None:
            return False
        if known:
            operands = [op.ptr] if op.NAME == "tile.load" else [op.ptr, op.value]
            types = [op.result.type] if op.NAME == "tile.load" else []
            new = rewriter.create(type(op), operands, types, dict(op.attributes))
            rewriter.replace_op(op, new.results)
            return True
        if op.NAME == "tile.store":
            rewriter.erase_op(op)
            return True
        if op.attributes.get("volatile"):
            return False
        other = op.other if op.other is not None else make_constant(rewriter, _zero(op.result.type.scalar), op.result.type)
        rewriter.replace_op(op, [other])
        return True


def _zero(e: object) -> int | float:
    return 0.0 if getattr(e, "is_float", False) else 0


class BranchOnUniformMask(RewritePattern):
    """``load/store`` with mask ``splat(c)`` -> ``scf.if c`` around the unmasked access."""

    OPS = ("tile.load", "tile.store")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if op.mask is None:
            return False
        cond = uniform_base(op.mask)
        if cond is None or cond.type != _I1 or const_value(cond) is not None:
            return False
        then_b, else_b = Block(), Block()
        if op.NAME == "tile.store":
            then_b.append(StoreOp([op.ptr, op.value], [], dict(op.attributes), loc=op.loc))
            then_b.append(YieldOp([], [], loc=op.loc))
            else_b.append(YieldOp([], [], loc=op.loc))
            rewriter.create(IfOp, [cond], [], None, [Region([then_b]), Region([else_b])])
            rewriter.erase_op(op)
            return True
        t = op.result.type
        other = op.other if op.other is not None else make_constant(rewriter, _zero(t.scalar), t)
        load = then_b.append(LoadOp([op.ptr], [t], dict(op.attributes), loc=op.loc))
        load.result.name_hint = op.result.name_hint
        then_b.append(YieldOp([load.result], [], loc=op.loc))
        else_b.append(YieldOp([other], [], loc=op.loc))
        new_if = rewriter.create(IfOp, [cond], [t], None, [Region([then_b]), Region([else_b])])
        rewriter.replace_op(op, new_if.results)
        return True


def mask_patterns() -> list[RewritePattern]:
    """The proofs; run to a fixpoint before any branching so proven masks vanish outright."""
    return [UniformLaneMask(), LoopBoundIsTrue(), ConstantMask()]


class MaskElim(Pass):
    """Drop masks proven always true; turn lane-uniform masks into scalar branches."""

    name = "mask-elim"
    summary = "eliminate load/store masks proven true from divisibility and loop facts"
    OPTIONS = (
        Option("branch-uniform", bool, True, "guard accesses with a lane-uniform mask by one scf.if"),
    )

    def run(self, module: ModuleOp) -> None:
        apply_patterns_greedily(module, mask_patterns(), fold_to_constant)
        if self.options["branch-uniform"]:
            apply_patterns_greedily(module, [BranchOnUniformMask()], fold_to_constant)

    def tunables(self) -> list[Tunable]:
        return [Tunable("branch-uniform", (True, False), "scalar branch vs per-lane predicate for uniform masks")]
