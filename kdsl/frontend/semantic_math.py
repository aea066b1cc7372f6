"""Elementwise math builtins: transcendental functions, min/max/clamp,
``where``, ``fma``, ``umulhi`` and the correctly rounded variants."""

from __future__ import annotations

from typing import Any

from kdsl.frontend.semantic_arith import ArithSemantic
from kdsl.frontend.semantic_base import unwrap
from kdsl.ir.dialects import arith
from kdsl.ir.dialects import math as m
from kdsl.ir.types import ScalarType, bf16, f32, i1
from kdsl.language.core import PropagateNan, tensor

UNARY_MATH: dict[str, type] = {
    "exp": m.ExpOp,
    "exp2": m.Exp2Op,
    "log": m.LogOp,
    "log2": m.Log2Op,
    "sqrt": m.SqrtOp,
    "sqrt_rn": m.SqrtRnOp,
    "rsqrt": m.RsqrtOp,
    "sin": m.SinOp,
    "cos": m.CosOp,
    "tanh": m.TanhOp,
    "erf": m.ErfOp,
    "floor": m.FloorOp,
    "ceil": m.CeilOp,
}


class MathSemantic(ArithSemantic):
    """Math functions (``kl.exp``, ``kl.maximum``, ``kl.where``, ...)."""

    def float_operand(self, x: Any, fn: str) -> tuple[tensor, ScalarType]:
        """``x`` as a float tensor to compute ``fn`` on, and the result dtype.

        As in Triton, integer tensors are rejected (cast explicitly). f16/bf16
        are accepted and computed through f32 (Triton only takes fp32/fp64 here).
        """
        x = self.to_tensor(x)
        dt = x.dtype
        if not isinstance(dt, ScalarType) or not dt.is_float:
            raise self.error(f"kl.{fn} expects a floating-point tensor, got {dt}; cast it with .to(kl.float32)")
        return x, dt

    def math_unary(self, fn: str, x: Any) -> tensor:
        """Apply the ``math`` dialect function ``fn`` elementwise."""
        t, dt = self.float_operand(x, fn)
        if dt.name == "bf16":
            r = self.emit1(UNARY_MATH[fn], [self.cast(t, f32).handle], t.type.with_element(f32))
            return self.cast(r, dt)
        return self.emit1(UNARY_MATH[fn], [t.handle], t.type)

    def abs(self, x: Any) -> tensor:
        """Absolute value of ints (wrapping at INT_MIN) and floats; unsigned is identity."""
        t = self.to_tensor(x)
        if not isinstance(t.dtype, ScalarType):
            raise self.error(f"kl.abs expects numbers, got {t.dtype}")
        if t.dtype.is_unsigned:
            return t
        return self.emit1(m.AbsOp, [t.handle], t.type)

    def fma(self, a: Any, b: Any, c: Any) -> tensor:
        """``a * b + c`` with one rounding, after promoting all three operands. As in Triton,
        Python numbers become tensors first (``fma(f16, 2.0, 1.0)`` computes in f32)."""
        a, b, c = self.to_tensor(a), self.to_tensor(b), self.to_tensor(c)
        x, y = self.check_operands(a, b, "mul")
        x, z = self.check_operands(x, c, "add")
        x, y = self.check_operands(x, y, "mul")
        if not (isinstance(x.dtype, ScalarType) and x.dtype.is_float):
            raise self.error(f"kl.fma expects floating-point operands, got {x.dtype}")
        return self.emit1(m.FmaOp, [x.handle, y.handle, z.handle], x.type)

    def umulhi(self, a: Any, b: Any) -> tensor:
        """High half of the 2N-bit product of two 32/64-bit integers."""
        x, y = self.check_operands(a, b, "mul")
        dt = x.dtype
        if not (isinstance(dt, ScalarType) and dt.is_integer and dt.bitwidth in (32, 64)):
            raise self.error(f"kl.umulhi expects 32- or 64-bit integers, got {dt}")
        if dt.is_signed:  # Triton's umulhi is always the *unsigned* high product
            ut = ScalarType(dt.name.replace("i", "u"))
            hi = self.emit1(m.UmulhiOp, [self.bitcast(x, ut).handle, self.bitcast(y, ut).handle],
                            x.type.with_element(ut))
            return self.bitcast(hi, dt)
        return self.emit1(m.UmulhiOp, [x.handle, y.handle], x.type)

    def div_rn(self, a: Any, b: Any) -> tensor:
        """Correctly rounded float division."""
        x, y = self.check_operands(a, b, "truediv", div_or_mod=True)
        if not (isinstance(x.dtype, ScalarType) and x.dtype.is_float):
            raise self.error(f"kl.div_rn expects floating-point operands, got {x.dtype}")
        return self.emit1(m.DivRnOp, [x.handle, y.handle], x.type)

    def fdiv(self, a: Any, b: Any, ieee_rounding: bool = False) -> tensor:
        """Float division; both operands must already be floating point."""
        for v in (a, b):
            t = self.to_tensor(v) if not isinstance(v, tensor) else v
            if not (isinstance(t.dtype, ScalarType) and t.dtype.is_float):
                raise self.error(f"both operands of kl.fdiv must be floating point, got {t.dtype}")
        x, y = self.check_operands(a, b, "truediv", arithmetic=True, div_or_mod=True)
        op = m.DivRnOp if unwrap(ieee_rounding) else arith.DivOp
        return self.emit1(op, [x.handle, y.handle], x.type)

    def minmax(self, kind: str, a: Any, b: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
        """``kl.minimum``/``kl.maximum``; floats honour ``propagate_nan``.

        As Triton's ``maximum``/``minimum``: Python numbers become tensors first (so
        ``maximum(f16, 0.0)`` is f32 and ``maximum(i8, 5)`` i32), and bf16 operands are
        promoted to f32."""
        x, y = (self._bf16_to_f32(self.to_tensor(v)) for v in (a, b))
        x, y = self.check_operands(x, y, kind)
        cls = arith.MaxOp if kind == "max" else arith.MinOp
        dt = x.dtype
        if not isinstance(dt, ScalarType):
            raise self.error(f"kl.{kind}imum expects numbers, got {dt}")
        pn = unwrap(propagate_nan)
        if dt.is_float:
            if pn not in (PropagateNan.NONE, PropagateNan.ALL):
                raise self.error(f"propagate_nan must be kl.PropagateNan.NONE or ALL, got {pn!r}")
            return self.emit1(cls, [x.handle, y.handle], x.type, propagate_nan=pn is PropagateNan.ALL)
        return self.emit1(cls, [x.handle, y.handle], x.type)

    def _bf16_to_f32(self, t: tensor) -> tensor:
        return self.cast(t, f32) if t.dtype == bf16 else t

    def clamp(self, x: Any, lo: Any, hi: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
        """``min(max(x, lo), hi)`` on floats (Triton supports float clamp only). As Triton's:
        Python numbers become tensors first and bf16 operands are promoted to f32."""
        x, lo, hi = (self._bf16_to_f32(self.to_tensor(v)) for v in (x, lo, hi))
        lo_t, hi_t = self.check_operands(lo, hi, "clamp")
        xt, lo_t = self.check_operands(x, lo_t, "clamp")
        xt, hi_t = self.check_operands(xt, hi_t, "clamp")
        lo_t, _ = self.check_operands(lo_t, xt, "clamp")
        if not (isinstance(xt.dtype, ScalarType) and xt.dtype.is_float):
            raise self.error(f"kl.clamp supports floating-point tensors only, got {xt.dtype}")
        return self.minmax("min", self.minmax("max", xt, lo_t, propagate_nan), hi_t, propagate_nan)

    def user_where(self, cond: Any, a: Any, b: Any) -> tensor:
        """``kl.where`` as the user calls it: Triton warns (a deprecation, to become an error) when
        the condition is not boolean; kdsl's own compositions call :meth:`where` and stay quiet."""
        c = self.to_tensor(cond)
        if c.dtype != i1:
            self.warn("tl.where with a non-boolean condition is deprecated and will error out in a "
                      f"future triton release. Got {c.dtype}")
        return self.where(c, a, b)

    def where(self, cond: Any, a: Any, b: Any) -> tensor:
        """``cond ? a : b`` elementwise; cond becomes int1 (``!= 0``), a and b are
        promoted like a binary operator and everything is broadcast together."""
        c = self.to_tensor(cond)
        if c.dtype != i1:
            c = self.cast(c, i1)
        x, y = self.check_operands(a, b, "where", True, True)
        c, x, y = self.broadcast_values(c, x, y)
        return self.emit1(arith.SelectOp, [c.handle, x.handle, y.handle], x.type)
