"""``arith``: elementwise arithmetic on scalars and tiles.

Every op here is elementwise: operands and results are either all scalars or
all tiles of one shape (the frontend inserts ``tile.splat``/``tile.broadcast``).
Integer semantics are C's on two's complement: results wrap, ``div`` truncates
toward zero, ``rem`` takes the sign of the dividend. Signedness comes from the
type (``i32`` vs ``u32``). Float semantics are IEEE-754 with round-to-nearest.
Division by zero in integer ``div``/``rem`` is undefined (backends may differ);
the interpreter returns 0 for it so that masked-off lanes never trap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from kdsl.ir.core import (
    AttrValue,
    Commutative,
    Dialect,
    Elementwise,
    Operation,
    Pure,
    SameOperandsAndResultType,
    Trait,
)
from kdsl.ir.dialects.common import element, require_bool, require_float, require_int, same_shape, same_type
from kdsl.ir.types import ScalarType

CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class ConstantOp(Operation):
    """``arith.constant {value = V} : T`` -- a scalar, or a tile with every element V.

    ``value`` is a Python bool/int/float (``nan``/``inf`` allowed for floats);
    ints must fit the result type's range (unsigned values are non-negative).
    """

    NAME = "arith.constant"
    ATTRS = {"value": (bool, int, float)}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        e = element(self, self.result.type)
        v = self.attributes["value"]
        if e.is_float:
            if not isinstance(v, (int, float)):
                raise self.error(f"float constant needs a number, got {v!r}")
            return
        if isinstance(v, float):
            raise self.error(f"integer constant of type {e} has float value {v!r}")
        lo, hi = int_range(e)
        if not lo <= int(v) <= hi:
            raise self.error(f"value {v} out of range for {e}")

    def fold(self, constants: Sequence[AttrValue | None]) -> AttrValue | None:
        return self.attributes["value"]


def int_range(e: ScalarType) -> tuple[int, int]:
    bits = e.bitwidth
    if e.name == "i1":
        return 0, 1
    if e.is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


class _Binary(Operation):
    OPERANDS = ("lhs", "rhs")
    TRAITS: ClassVar[tuple[type[Trait], ...]] = (Pure, Elementwise, SameOperandsAndResultType)
    KINDS: ClassVar[str] = "int,float"  # which element kinds are accepted

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        e = element(self, self.result.type)
        if e.is_float and "float" not in self.KINDS:
            raise self.error(f"expects an integer type, got {self.result.type}")
        if e.is_integer and "int" not in self.KINDS:
            raise self.error(f"expects a floating-point type, got {self.result.type}")


class AddOp(_Binary):
    """Addition (integers wrap)."""

    NAME = "arith.add"
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class SubOp(_Binary):
    """Subtraction (integers wrap)."""

    NAME = "arith.sub"


class MulOp(_Binary):
    """Multiplication (integers wrap, low bits)."""

    NAME = "arith.mul"
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class DivOp(_Binary):
    """Float: IEEE division. Integer: C division truncating toward zero."""

    NAME = "arith.div"


class RemOp(_Binary):
    """Float: ``fmod`` (sign of the dividend). Integer: C remainder (sign of the dividend)."""

    NAME = "arith.rem"


class AndOp(_Binary):
    """Bitwise and (i1 included)."""

    NAME = "arith.and"
    KINDS = "int"
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class OrOp(_Binary):
    """Bitwise or (i1 included)."""

    NAME = "arith.or"
    KINDS = "int"
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class XorOp(_Binary):
    """Bitwise xor (i1 included); ``~x`` is ``xor x, -1``."""

    NAME = "arith.xor"
    KINDS = "int"
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class ShlOp(_Binary):
    """Shift left. A shift amount outside [0, bitwidth) gives an undefined result."""

    NAME = "arith.shl"
    KINDS = "int"


class ShrOp(_Binary):
    """Shift right: arithmetic for signed types, logical for unsigned."""

    NAME = "arith.shr"
    KINDS = "int"


class MaxOp(_Binary):
    """Maximum. Floats: ``propagate_nan`` false means ``fmax`` (a NaN operand is
    ignored unless both are NaN); true means any NaN operand gives NaN."""

    NAME = "arith.max"
    ATTRS = {"propagate_nan?": bool}
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class MinOp(_Binary):
    """Minimum; NaN handling as :class:`MaxOp`."""

    NAME = "arith.min"
    ATTRS = {"propagate_nan?": bool}
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, Commutative)


class NegOp(Operation):
    """Negation (integers wrap: ``-INT_MIN == INT_MIN``)."""

    NAME = "arith.neg"
    OPERANDS = ("operand",)
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType)

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        element(self, self.result.type)


class CmpOp(Operation):
    """Compare two same-typed operands; result i1 of the same shape.

    ``predicate`` is one of eq ne lt le gt ge. Integer order follows the type's
    signedness. Float comparisons are ordered (false if either is NaN) except
    ``ne``, which is unordered (true if either is NaN).
    """

    NAME = "arith.cmp"
    OPERANDS = ("lhs", "rhs")
    ATTRS = {"predicate": str}
    TRAITS = (Pure, Elementwise)

    def verify_(self) -> None:
        same_type(self, list(self.operands))
        same_shape(self, [*self.operands, *self.results])
        element(self, self.lhs.type)
        if self.attributes["predicate"] not in CMP_PREDICATES:
            raise self.error(f"unknown predicate {self.attributes['predicate']!r}")
        require_bool(self, self.result.type)


class SelectOp(Operation):
    """``select %cond, %a, %b``: elementwise ``cond ? a : b`` (a, b may be pointers)."""

    NAME = "arith.select"
    OPERANDS = ("cond", "true_value", "false_value")
    TRAITS = (Pure, Elementwise)

    def verify_(self) -> None:
        require_bool(self, self.cond.type)
        same_type(self, [self.true_value, self.false_value, self.result])
        same_shape(self, [*self.operands, *self.results])


class CastOp(Operation):
    """Value-converting cast between scalar types of the same shape.

    int -> int: sign- or zero-extend by the *source* signedness, or truncate.
    int -> float: round to nearest. float -> int: truncate toward zero
    (out-of-range is undefined). float -> float: round to nearest.
    x -> i1: ``x != 0``. i1 -> x: 0 or 1. ptr <-> i64/u64: address.
    """

    NAME = "arith.cast"
    OPERANDS = ("operand",)
    TRAITS = (Pure, Elementwise)

    def verify_(self) -> None:
        same_shape(self, [self.operand, self.result])
        src, dst = self.operand.type.scalar, self.result.type.scalar
        if src.is_ptr() or dst.is_ptr():
            other = dst if src.is_ptr() else src
            if not (other.is_ptr() or (isinstance(other, ScalarType) and other.name in ("i64", "u64"))):
                raise self.error(f"cannot cast between {self.operand.type} and {self.result.type}")


class BitcastOp(Operation):
    """Reinterpret the bits of each element as another type of the same width
    (pointers may be bitcast to pointers of another pointee)."""

    NAME = "arith.bitcast"
    OPERANDS = ("operand",)
    TRAITS = (Pure, Elementwise)

    def verify_(self) -> None:
        same_shape(self, [self.operand, self.result])
        src, dst = self.operand.type.scalar, self.result.type.scalar
        if src.is_ptr() != dst.is_ptr():
            raise self.error("cannot bitcast between pointer and non-pointer")
        if isinstance(src, ScalarType) and isinstance(dst, ScalarType) and src.bitwidth != dst.bitwidth:
            raise self.error(f"bitcast needs equal bit widths, got {src} and {dst}")


ARITH = Dialect(
    "arith",
    [
        ConstantOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        RemOp,
        AndOp,
        OrOp,
        XorOp,
        ShlOp,
        ShrOp,
        MaxOp,
        MinOp,
        NegOp,
        CmpOp,
        SelectOp,
        CastOp,
        BitcastOp,
    ],
)

# Re-exported for the verifier helpers' users.
__all__ = ["ARITH", "CMP_PREDICATES", "int_range", "require_float", "require_int"]
