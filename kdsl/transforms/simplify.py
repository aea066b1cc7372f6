"""Algebraic simplification rules used by ``canonicalize``, one line per rule.

Each rule is ``R(op name, condition, replacement)``: when ``condition(op)``
holds, ``op``'s single result is replaced by ``replacement(op, rewriter)``
(an existing value or a new op). Rules never change results: float rules
that are not exact under IEEE (``x*0``, ``x-x``, ``x+0.0``) are integer-only,
with the float-exact variant listed separately where one exists. ``0+x`` and
friends need no rule: constants are first moved to the right of commutative
ops (:class:`ConstantsToRight`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kdsl.ir.core import Commutative, Operation, Value
from kdsl.ir.dialects.tile import BroadcastOp, PermuteOp, ReshapeOp, SplatOp
from kdsl.ir.rewriter import PatternRewriter, RewritePattern
from kdsl.ir.types import ScalarType
from kdsl.transforms.folding import wrap_int
from kdsl.transforms.utils import const_value, defining, make_constant


@dataclass(frozen=True)
class R:
    """One rewrite rule: ``op`` name, ``when(op)`` condition, ``to(op, rewriter)`` replacement."""

    op: str
    when: Callable[[Operation], bool]
    to: Callable[[Operation, PatternRewriter], Value]


# --------------------------------------------------------------------------- predicates
def _is_int(v: Value) -> bool:
    e = v.type.scalar
    return isinstance(e, ScalarType) and e.is_integer


def _is_float(v: Value) -> bool:
    e = v.type.scalar
    return isinstance(e, ScalarType) and e.is_float


def int_eq(v: Value, k: int) -> bool:
    """``v`` is an integer constant equal to ``k`` (``-1`` means all ones)."""
    c = const_value(v)
    e = v.type.scalar
    return c is not None and isinstance(e, ScalarType) and e.is_integer and wrap_int(int(c), e) == wrap_int(k, e)


def float_eq(v: Value, k: float) -> bool:
    """``v`` is a float constant equal to ``k`` including the sign of zero."""
    c = const_value(v)
    if c is None or not _is_float(v):
        return False
    f = float(c)
    return f == k and math.copysign(1.0, f) == math.copysign(1.0, k)


def is_one(v: Value) -> bool:
    return int_eq(v, 1) or float_eq(v, 1.0)


def same(op: Operation) -> bool:
    return op.operands[0] is op.operands[1]


def same_int(op: Operation) -> bool:
    return same(op) and _is_int(op.operands[0])


def const_is(v: Value, truth: bool) -> bool:
    c = const_value(v)
    return c is not None and bool(c) is truth


def same_type(op: Operation) -> bool:
    return op.operands[0].type == op.result.type


def producer(v: Value, name: str) -> Operation | None:
    return defining(v, name)


# --------------------------------------------------------------------------- replacements
def lhs(op: Operation, rw: PatternRewriter) -> Value:
    return op.operands[0]


def rhs(op: Operation, rw: PatternRewriter) -> Value:
    return op.operands[1]


def zero(op: Operation, rw: PatternRewriter) -> Value:
    return make_constant(rw, 0, op.result.type)


def true_(op: Operation, rw: PatternRewriter) -> Value:
    return make_constant(rw, True, op.result.type)


def false_(op: Operation, rw: PatternRewriter) -> Value:
    return make_constant(rw, False, op.result.type)


def inner_operand(op: Operation, rw: PatternRewriter) -> Value:
    """The operand of the op producing ``op``'s operand: f(f(x)) -> x."""
    owner = op.operands[0].owner_op
    assert owner is not None
    return owner.operands[0]


def rebuild(cls: type[Operation], **attrs: object) -> Callable[[Operation, PatternRewriter], Value]:
    """Replacement: a new ``cls`` op applied to the inner operand, with ``op``'s result type."""

    def make(op: Operation, rw: PatternRewriter) -> Value:
        return rw.create(cls, [inner_operand(op, rw)], [op.result.type], dict(attrs) or None).result

    return make


def _composed_permute(op: Operation, rw: PatternRewriter) -> Value:
    inner = op.operand.owner_op
    order = tuple(inner.attributes["order"][j] for j in op.attributes["order"])
    return rw.create(PermuteOp, [inner.operand], [op.result.type], {"order": order}).result


def _arange_start(op: Operation, rw: PatternRewriter) -> Value:
    return make_constant(rw, op.attributes["start"], op.result.type)


def _is_identity(order: tuple[int, ...]) -> bool:
    return tuple(order) == tuple(range(len(order)))


def _tile_result(op: Operation) -> bool:
    return bool(op.result.type.shape)


# --------------------------------------------------------------------------- the table
# fmt: off
RULES: tuple[R, ...] = (
    R("arith.add", lambda op: int_eq(op.rhs, 0), lhs),                      # x+0 -> x (ints)
    R("arith.add", lambda op: float_eq(op.rhs, -0.0), lhs),                 # x+(-0.0) -> x (floats; x+0.0 is not x for x=-0.0)
    R("arith.sub", lambda op: int_eq(op.rhs, 0) or float_eq(op.rhs, 0.0), lhs),  # x-0 -> x
    R("arith.sub", same_int, zero),                                         # x-x -> 0 (ints; inf-inf is NaN)
    R("arith.mul", lambda op: is_one(op.rhs), lhs),                         # x*1 -> x
    R("arith.mul", lambda op: int_eq(op.rhs, 0), rhs),                      # x*0 -> 0 (ints; NaN*0 is NaN, -1.0*0 is -0.0)
    R("arith.div", lambda op: is_one(op.rhs), lhs),                         # x/1 -> x (exact for floats too)
    R("arith.rem", lambda op: int_eq(op.rhs, 1), zero),                     # x%1 -> 0 (ints)
    R("arith.and", lambda op: int_eq(op.rhs, 0), rhs),                      # x&0 -> 0
    R("arith.and", lambda op: int_eq(op.rhs, -1), lhs),                     # x&-1 -> x
    R("arith.and", same, lhs),                                              # x&x -> x
    R("arith.or", lambda op: int_eq(op.rhs, 0), lhs),                       # x|0 -> x
    R("arith.or", lambda op: int_eq(op.rhs, -1), rhs),                      # x|-1 -> -1
    R("arith.or", same, lhs),                                               # x|x -> x
    R("arith.xor", lambda op: int_eq(op.rhs, 0), lhs),                      # x^0 -> x
    R("arith.xor", same, zero),                                             # x^x -> 0
    R("arith.shl", lambda op: int_eq(op.rhs, 0), lhs),                      # x<<0 -> x
    R("arith.shr", lambda op: int_eq(op.rhs, 0), lhs),                      # x>>0 -> x
    R("arith.max", same, lhs),                                              # max(x,x) -> x
    R("arith.min", same, lhs),                                              # min(x,x) -> x
    R("arith.neg", lambda op: producer(op.operand, "arith.neg") is not None, inner_operand),  # -(-x) -> x
    R("arith.cmp", lambda op: same_int(op) and op.predicate in ("eq", "le", "ge"), true_),  # x==x -> true (ints)
    R("arith.cmp", lambda op: same_int(op) and op.predicate in ("ne", "lt", "gt"), false_),  # x<x -> false (ints)
    R("arith.select", lambda op: const_is(op.cond, True), lambda op, rw: op.true_value),  # select(true,a,b) -> a
    R("arith.select", lambda op: const_is(op.cond, False), lambda op, rw: op.false_value),  # select(false,a,b) -> b
    R("arith.select", lambda op: op.true_value is op.false_value, lambda op, rw: op.true_value),  # select(c,a,a) -> a
    R("arith.select", lambda op: op.cond.type == op.result.type and const_is(op.true_value, True)
      and const_is(op.false_value, False), lambda op, rw: op.cond),         # select(c,true,false) -> c
    R("arith.cast", same_type, lambda op, rw: op.operand),                  # cast x:T to T -> x
    R("arith.bitcast", same_type, lambda op, rw: op.operand),               # bitcast x:T to T -> x
    R("math.abs", lambda op: producer(op.operand, "math.abs") is not None, lambda op, rw: op.operand),  # abs(abs(x)) -> abs(x)
    R("tile.addptr", lambda op: int_eq(op.offset, 0), lambda op, rw: op.ptr),  # addptr p, 0 -> p
    R("tile.broadcast", same_type, lambda op, rw: op.operand),              # broadcast x:T to T -> x
    R("tile.broadcast", lambda op: producer(op.operand, "tile.broadcast") is not None, rebuild(BroadcastOp)),  # broadcast(broadcast(x)) -> broadcast(x)
    R("tile.broadcast", lambda op: producer(op.operand, "tile.splat") is not None, rebuild(SplatOp)),  # broadcast(splat(s)) -> splat(s)
    R("tile.expand_dims", lambda op: producer(op.operand, "tile.splat") is not None, rebuild(SplatOp)),  # expand_dims(splat(s)) -> splat(s)
    R("tile.expand_dims", lambda op: producer(op.operand, "tile.reshape") is not None, rebuild(ReshapeOp)),  # expand_dims(reshape(x)) -> reshape(x)
    R("tile.reshape", same_type, lambda op, rw: op.operand),                # reshape x:T to T -> x
    R("tile.reshape", lambda op: producer(op.operand, "tile.reshape") is not None, rebuild(ReshapeOp)),  # reshape(reshape(x)) -> reshape(x)
    R("tile.reshape", lambda op: producer(op.operand, "tile.expand_dims") is not None, rebuild(ReshapeOp)),  # reshape(expand_dims(x)) -> reshape(x)
    R("tile.reshape", lambda op: _tile_result(op) and producer(op.operand, "tile.splat") is not None, rebuild(SplatOp)),  # reshape(splat(s)) -> splat(s)
    R("tile.permute", lambda op: _is_identity(op.order), lambda op, rw: op.operand),  # permute x, (0,1,..) -> x
    R("tile.permute", lambda op: producer(op.operand, "tile.permute") is not None, _composed_permute),  # permute(permute(x)) -> permute(x)
    R("tile.permute", lambda op: producer(op.operand, "tile.splat") is not None, rebuild(SplatOp)),  # permute(splat(s)) -> splat(s)
    R("tile.arange", lambda op: op.end - op.start == 1, _arange_start),   # arange(s, s+1) -> constant s
)
# fmt: on

_BY_OP: dict[str, tuple[R, ...]] = {}
for _rule in RULES:
    _BY_OP[_rule.op] = (*_BY_OP.get(_rule.op, ()), _rule)
OPS_WITH_RULES: tuple[str, ...] = tuple(_BY_OP)


class TableRules(RewritePattern):
    """Applies the first matching rule of :data:`RULES` for the op."""

    OPS = OPS_WITH_RULES

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        for rule in _BY_OP.get(op.NAME, ()):
            if not rule.when(op):
                continue
            rewriter.replace_op(op, [rule.to(op, rewriter)])
            return True
        return False


class ConstantsToRight(RewritePattern):
    """``c op x`` -> ``x op c`` for commutative ops, so rules only look at the rhs (0+x -> x+0)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        if not op.has_trait(Commutative) or len(op.operands) != 2:
            return False
        a, b = op.operands
        if const_value(a) is None or const_value(b) is not None:
            return False
        rewriter.set_operand(op, 0, b)
        rewriter.set_operand(op, 1, a)
        return True
