"""Verification helpers shared by the dialect modules."""

from __future__ import annotations

from kdsl.ir.core import Operation, Value
from kdsl.ir.types import ScalarType, Type


def same_shape(op: Operation, values: list[Value]) -> None:
    shapes = {v.type.shape for v in values}
    if len(shapes) > 1:
        raise op.error("requires all operands and results to have the same shape, got " + ", ".join(str(v.type) for v in values))


def same_type(op: Operation, values: list[Value]) -> None:
    types = {v.type for v in values}
    if len(types) > 1:
        raise op.error("requires all operands and results to have the same type, got " + ", ".join(str(v.type) for v in values))


def element(op: Operation, t: Type) -> ScalarType:
    e = t.scalar
    if not isinstance(e, ScalarType):
        raise op.error(f"expects a scalar or tile of scalars, got {t}")
    return e


def require_int(op: Operation, t: Type) -> ScalarType:
    e = element(op, t)
    if not e.is_integer:
        raise op.error(f"expects an integer type, got {t}")
    return e


def require_float(op: Operation, t: Type) -> ScalarType:
    e = element(op, t)
    if not e.is_float:
        raise op.error(f"expects a floating-point type, got {t}")
    return e


def require_bool(op: Operation, t: Type) -> None:
    if element(op, t).name != "i1":
        raise op.error(f"expects an i1 condition, got {t}")
