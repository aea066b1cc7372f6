"""Factories for the elementwise ``arith`` and ``math`` ops (numerics live in
``elementwise``, ``intops`` and ``casts``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kdsl.interpreter import elementwise as ew
from kdsl.interpreter.casts import make_bitcast, make_cast
from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import Frame, OpFn
from kdsl.interpreter.values import Array, constant_array
from kdsl.ir.core import Operation
from kdsl.ir.types import ScalarType


def _elem(op: Operation, index: int = 0) -> ScalarType:
    e = op.operands[index].type.scalar
    assert isinstance(e, ScalarType)
    return e


def _short(op: Operation) -> str:
    return op.NAME.split(".", 1)[1]


@register("arith.constant")
def _constant(op: Operation, c: Compiler) -> OpFn:
    value = constant_array(op.attributes["value"], op.result.type)
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = value

    return run


@register(
    "arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem", "arith.and", "arith.or", "arith.xor",
    "arith.shl", "arith.shr", "arith.max", "arith.min", "math.pow", "math.div_rn", "math.umulhi",
)  # fmt: skip
def _binary(op: Operation, c: Compiler) -> OpFn:
    fn = ew.binary(_short(op), _elem(op), op.attributes)
    a, b = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = fn(fr.get(a), fr.get(b))

    return run


def _unary_op(op: Operation, fn: Any) -> OpFn:
    x = op.operands[0]
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = fn(fr.get(x))

    return run


@register(
    "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.sqrt_rn", "math.rsqrt", "math.sin",
    "math.cos", "math.tanh", "math.erf", "math.floor", "math.ceil", "math.abs",
)  # fmt: skip
def _unary(op: Operation, c: Compiler) -> OpFn:
    return _unary_op(op, ew.unary(_short(op), _elem(op)))


@register("arith.neg")
def _neg(op: Operation, c: Compiler) -> OpFn:
    return _unary_op(op, ew.neg(_elem(op)))


@register("arith.cast")
def _cast(op: Operation, c: Compiler) -> OpFn:
    return _unary_op(op, make_cast(op.operand.type, op.result.type))


@register("arith.bitcast")
def _bitcast(op: Operation, c: Compiler) -> OpFn:
    return _unary_op(op, make_bitcast(op.operand.type, op.result.type))


_CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@register("arith.cmp")
def _cmp(op: Operation, c: Compiler) -> OpFn:
    # numpy's float comparisons are already ordered, except != (unordered),
    # exactly the IR's rule; integer order follows the dtype's signedness.
    fn = _CMP[op.attributes["predicate"]]
    a, b = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = fn(fr.get(a), fr.get(b))

    return run


@register("arith.select")
def _select(op: Operation, c: Compiler) -> OpFn:
    cond, t, f = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = np.where(fr.get(cond), fr.get(t), fr.get(f))

    return run


@register("math.fma")
def _fma(op: Operation, c: Compiler) -> OpFn:
    fn = ew.fma(_elem(op))
    a, b, d = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        x: Array = fn(fr.get(a), fr.get(b), fr.get(d))
        fr.vals[r] = x

    return run
