"""``math``: elementwise transcendental and special functions.

Float ops accept f16/f32/f64 (f16 is computed in f32 and rounded back).
Accuracy contract (what the semantic tests allow): ``sqrt``, ``div_rn``,
``sqrt_rn``, ``floor``, ``ceil``, ``abs``, ``fma`` are exact (correctly
rounded); the others are within a few ulp of the correctly rounded result.
"""

from __future__ import annotations

from typing import Any

from kdsl.ir.core import Dialect, Elementwise, Operation, Pure, SameOperandsAndResultType
from kdsl.ir.dialects.common import element, require_float, require_int, same_type

_TRAITS: Any = (Pure, Elementwise, SameOperandsAndResultType)


class _UnaryFloat(Operation):
    OPERANDS = ("operand",)
    TRAITS = _TRAITS

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        require_float(self, self.result.type)


class ExpOp(_UnaryFloat):
    """e**x."""

    NAME = "math.exp"


class Exp2Op(_UnaryFloat):
    """2**x."""

    NAME = "math.exp2"


class LogOp(_UnaryFloat):
    """Natural logarithm (-inf at 0, NaN below)."""

    NAME = "math.log"


class Log2Op(_UnaryFloat):
    """Base-2 logarithm."""

    NAME = "math.log2"


class SqrtOp(_UnaryFloat):
    """Square root (backends may use a fast approximation; see ``sqrt_rn``)."""

    NAME = "math.sqrt"


class SqrtRnOp(_UnaryFloat):
    """Correctly rounded square root."""

    NAME = "math.sqrt_rn"


class RsqrtOp(_UnaryFloat):
    """1 / sqrt(x)."""

    NAME = "math.rsqrt"


class SinOp(_UnaryFloat):
    NAME = "math.sin"


class CosOp(_UnaryFloat):
    NAME = "math.cos"


class TanhOp(_UnaryFloat):
    NAME = "math.tanh"


class ErfOp(_UnaryFloat):
    NAME = "math.erf"


class FloorOp(_UnaryFloat):
    NAME = "math.floor"


class CeilOp(_UnaryFloat):
    NAME = "math.ceil"


class AbsOp(Operation):
    """Absolute value: floats clear the sign bit; integers wrap (``abs(INT_MIN) == INT_MIN``)."""

    NAME = "math.abs"
    OPERANDS = ("operand",)
    TRAITS = _TRAITS

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        element(self, self.result.type)


class PowOp(Operation):
    """Float power ``x ** y`` (C ``pow``)."""

    NAME = "math.pow"
    OPERANDS = ("lhs", "rhs")
    TRAITS = _TRAITS

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        require_float(self, self.result.type)


class DivRnOp(Operation):
    """Correctly rounded float division."""

    NAME = "math.div_rn"
    OPERANDS = ("lhs", "rhs")
    TRAITS = _TRAITS

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        require_float(self, self.result.type)


class FmaOp(Operation):
    """Fused multiply-add ``a * b + c`` with a single rounding."""

    NAME = "math.fma"
    OPERANDS = ("a", "b", "c")
    TRAITS = _TRAITS

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        require_float(self, self.result.type)


class UmulhiOp(Operation):
    """High half of the full-width product of two 32- or 64-bit integers
    (operands interpreted by their signedness; Philox uses u32)."""

    NAME = "math.umulhi"
    OPERANDS = ("lhs", "rhs")
    TRAITS = (Pure, Elementwise, SameOperandsAndResultType, )

    def verify_(self) -> None:
        same_type(self, [*self.operands, *self.results])
        e = require_int(self, self.result.type)
        if e.bitwidth not in (32, 64):
            raise self.error(f"expects 32- or 64-bit integers, got {e}")


MATH = Dialect(
    "math",
    [
        ExpOp,
        Exp2Op,
        LogOp,
        Log2Op,
        SqrtOp,
        SqrtRnOp,
        RsqrtOp,
        SinOp,
        CosOp,
        TanhOp,
        ErfOp,
        FloorOp,
        CeilOp,
        AbsOp,
        PowOp,
        DivRnOp,
        FmaOp,
        UmulhiOp,
    ],
)
