"""Arithmetic, bitwise, comparison and logical operators with Triton's
implicit promotion (see :mod:`kdsl.frontend.semantic_types`)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from kdsl.frontend.semantic_base import is_py_scalar, unwrap
from kdsl.frontend.semantic_shape import ShapeSemantic
from kdsl.frontend.semantic_types import TypeRuleError, all_ones, computation_type, int_bounds, mantissa_width
from kdsl.ir.dialects import arith, tile
from kdsl.ir.dialects import math as m
from kdsl.ir.types import PointerType, ScalarType, f32, i1, i64, u64
from kdsl.language.core import constexpr, tensor

_PY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "and_": operator.and_,
    "or_": operator.or_,
    "xor": operator.xor,
    "lshift": operator.lshift,
    "rshift": operator.rshift,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "logical_and": lambda a, b: a and b,
    "logical_or": lambda a, b: a or b,
}

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "and_": "&", "or_": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "eq": "==", "ne": "!=",
           "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "logical_and": "and", "logical_or": "or"}

_BITWISE = {"and_": arith.AndOp, "or_": arith.OrOp, "xor": arith.XorOp, "lshift": arith.ShlOp,
            "rshift": arith.ShrOp}

_CMP = ("eq", "ne", "lt", "le", "gt", "ge")


class ArithSemantic(ShapeSemantic):
    """Operators on scalars and tiles."""

    # --- entry points used by the visitor ------------------------------------------
    def binary(self, op: str, a: Any, b: Any) -> Any:
        """``a <op> b`` for op in add sub mul truediv floordiv mod pow and_ or_ xor
        lshift rshift eq ne lt le gt ge logical_and logical_or.

        Two compile-time operands fold to a ``constexpr`` with Python semantics
        (a division by zero is left to run time, as IR).
        """
        if op not in _PY_OPS:
            raise self.error(f"unknown binary operator {op!r}")
        if not isinstance(a, tensor) and not isinstance(b, tensor):
            folded = self._fold(op, a, b)
            if folded is not None:
                return folded
        if op in _CMP:
            return self.compare(op, a, b)
        if op in _BITWISE:
            return self.bitwise(op, a, b)
        handler: Callable[[Any, Any], tensor] = getattr(self, op if op != "pow" else "power")
        return handler(a, b)

    def _fold(self, op: str, a: Any, b: Any) -> constexpr | None:
        try:
            return constexpr(_PY_OPS[op](unwrap(a), unwrap(b)))
        except ZeroDivisionError:
            if is_py_scalar(a) and is_py_scalar(b):
                return None
            raise self.error(f"division by zero in compile-time expression {unwrap(a)!r} {_SYMBOL[op]} "
                             f"{unwrap(b)!r}") from None
        except (TypeError, ValueError, OverflowError) as e:
            raise self.error(f"invalid compile-time operands for '{_SYMBOL[op]}': {e}") from None

    def unary(self, op: str, a: Any) -> Any:
        """``-a``, ``+a``, ``~a``, ``not a`` (op: neg pos invert not_)."""
        if not isinstance(a, tensor):
            v = unwrap(a)
            fns: dict[str, Callable[[Any], Any]] = {"neg": operator.neg, "pos": operator.pos,
                                                    "invert": operator.invert, "not_": operator.not_}
            if op not in fns:
                raise self.error(f"unknown unary operator {op!r}")
            try:
                return constexpr(fns[op](v))
            except TypeError as e:
                raise self.error(f"invalid compile-time operand for {op}: {e}") from None
        if op == "neg":
            return self.neg(a)
        if op == "pos":
            if isinstance(a.dtype, PointerType):
                raise self.error(f"wrong type argument to unary plus ({a.dtype})")
            return a
        if op == "invert":
            return self.invert(a)
        if op == "not_":
            return self.invert(self.cast(a, i1))
        raise self.error(f"unknown unary operator {op!r}")

    # --- operand preparation ----------------------------------------------------------
    def check_operands(self, a: Any, b: Any, op: str, allow_lhs_ptr: bool = False, allow_rhs_ptr: bool = False,
                       arithmetic: bool = True, div_or_mod: bool = False) -> tuple[tensor, tensor]:
        """Convert, promote and broadcast two operands (Triton's
        ``binary_op_type_checking_impl``)."""
        a_scalar, b_scalar = is_py_scalar(a), is_py_scalar(b)
        av, bv = unwrap(a), unwrap(b)
        ta = self.py_scalar_type(av) if a_scalar else self._tensor_operand(a).dtype
        tb = self.py_scalar_type(bv) if b_scalar else self._tensor_operand(b).dtype
        self._check_ptr(ta, tb, allow_lhs_ptr, op)
        self._check_ptr(tb, ta, allow_rhs_ptr, op)
        if arithmetic and isinstance(ta, ScalarType) and isinstance(tb, ScalarType):
            try:
                ret = computation_type(ta, a_scalar, tb, b_scalar, div_or_mod)
            except TypeRuleError as e:
                raise self.error(str(e)) from None
            for is_s, v in ((a_scalar, av), (b_scalar, bv)):
                if is_s and ret.is_integer and not ret.is_boolean:
                    self._check_scalar_fits(v, ret)
            x = self.constant(av, ret) if a_scalar else self.cast(a, ret)
            y = self.constant(bv, ret) if b_scalar else self.cast(b, ret)
        else:
            x = self.to_tensor(a)
            y = self.to_tensor(b)
        x, y = self.broadcast_values(x, y)
        return x, y

    def _tensor_operand(self, x: Any) -> tensor:
        if isinstance(x, tensor):
            return x
        raise self.error(f"invalid operand {unwrap(x)!r} ({type(unwrap(x)).__name__}) in an expression")

    def _check_scalar_fits(self, v: Any, ty: ScalarType) -> None:
        if isinstance(v, float):
            return
        lo, hi = int_bounds(ty)
        if v < 0 and ty.is_unsigned:
            raise self.error(f"cannot combine an unsigned tensor ({ty}) with the negative scalar {v}; "
                             "cast one of them explicitly")
        if not lo <= int(v) <= hi:
            raise self.error(f"scalar {v} is out of range for type {ty}")

    def _check_ptr(self, ta: ScalarType | PointerType, tb: ScalarType | PointerType, allowed: bool, op: str) -> None:
        if not isinstance(ta, PointerType):
            return
        bad = (not allowed
               or (isinstance(tb, PointerType) and ta != tb)
               or (isinstance(tb, ScalarType) and tb.is_float))
        if bad:
            raise self.error(f"invalid operands of type {ta} and {tb} for '{_SYMBOL.get(op, op)}'")

    # --- arithmetic ---------------------------------------------------------------
    def add(self, a: Any, b: Any) -> tensor:
        x, y = self.check_operands(a, b, "add", True, True)
        if isinstance(x.dtype, PointerType) and isinstance(y.dtype, PointerType):
            raise self.error("cannot add pointers together")
        if isinstance(y.dtype, PointerType):
            x, y = y, x
        if isinstance(x.dtype, PointerType):
            return self.emit1(tile.AddPtrOp, [x.handle, y.handle], x.type)
        return self.emit1(arith.AddOp, [x.handle, y.handle], x.type)

    def sub(self, a: Any, b: Any) -> tensor:
        x, y = self.check_operands(a, b, "sub", True, False)
        if isinstance(x.dtype, PointerType):
            off = y if y.dtype.is_signed else self.cast(y, i64)  # type: ignore[union-attr]
            return self.emit1(tile.AddPtrOp, [x.handle, self.neg(off).handle], x.type)
        return self.emit1(arith.SubOp, [x.handle, y.handle], x.type)

    def mul(self, a: Any, b: Any) -> tensor:
        x, y = self.check_operands(a, b, "mul")
        return self.emit1(arith.MulOp, [x.handle, y.handle], x.type)

    def truediv(self, a: Any, b: Any) -> tensor:
        """``/``: int/int computes in f32; float/float in the operand with the wider mantissa."""
        x, y = self.check_operands(a, b, "truediv", div_or_mod=True)
        tx, ty = x.dtype, y.dtype
        assert isinstance(tx, ScalarType) and isinstance(ty, ScalarType)
        if tx.is_integer and ty.is_integer:
            x, y = self.cast(x, f32), self.cast(y, f32)
        elif tx.is_float and ty.is_integer:
            y = self.cast(y, tx)
        elif tx.is_integer and ty.is_float:
            x = self.cast(x, ty)
        elif tx != ty:
            if mantissa_width(tx) > mantissa_width(ty):
                y = self.cast(y, tx)
            else:
                x = self.cast(x, ty)
        return self.emit1(arith.DivOp, [x.handle, y.handle], x.type)

    def floordiv(self, a: Any, b: Any) -> tensor:
        """``//`` on integers: C division truncating toward zero (floats are rejected)."""
        x, y = self.check_operands(a, b, "floordiv", div_or_mod=True)
        if not (_is_int(x) and _is_int(y)):
            raise self.error(f"'//' is only supported on integers, got {x.dtype} and {y.dtype}")
        return self.emit1(arith.DivOp, [x.handle, y.handle], x.type)

    def mod(self, a: Any, b: Any) -> tensor:
        """``%``: C remainder on integers (sign of the dividend), ``fmod`` on floats."""
        x, y = self.check_operands(a, b, "mod", div_or_mod=True)
        return self.emit1(arith.RemOp, [x.handle, y.handle], x.type)

    def power(self, a: Any, b: Any) -> tensor:
        """``**``: float operands use ``math.pow``; an integer base with a
        non-negative constexpr integer exponent is expanded into multiplications."""
        bv = unwrap(b)
        int_exp = isinstance(bv, int) and not isinstance(bv, bool) and bv >= 0
        if isinstance(a, tensor) and _is_int(a) and not isinstance(b, tensor) and int_exp:
            return self._int_power(a, bv)
        x, y = self.check_operands(a, b, "pow")
        if isinstance(x.dtype, ScalarType) and x.dtype.is_float:
            return self.emit1(m.PowOp, [x.handle, y.handle], x.type)
        ta = a.dtype if isinstance(a, tensor) else type(unwrap(a)).__name__
        tb = b.dtype if isinstance(b, tensor) else type(bv).__name__
        raise self.error(f"'**' is not supported between {ta} and {tb}: use floating-point operands "
                         "or a non-negative constexpr integer exponent")

    def _int_power(self, base: tensor, exp: int) -> tensor:
        result: tensor | None = None
        sq = base
        while exp:
            if exp & 1:
                result = sq if result is None else self.mul(result, sq)
            exp >>= 1
            if exp:
                sq = self.mul(sq, sq)
        return result if result is not None else self.full(base.shape, 1, base.dtype)

    def neg(self, a: Any) -> tensor:
        x = self.to_tensor(a)
        if isinstance(x.dtype, PointerType):
            raise self.error(f"wrong type argument to unary minus ({x.dtype})")
        return self.emit1(arith.NegOp, [x.handle], x.type)

    def invert(self, a: Any) -> tensor:
        x = self.to_tensor(a)
        if not _is_int(x):
            raise self.error(f"wrong type argument to unary invert ({x.dtype}); '~' needs integers")
        assert isinstance(x.dtype, ScalarType)
        ones = self.constant(all_ones(x.dtype), x.type)
        return self.emit1(arith.XorOp, [x.handle, ones.handle], x.type)

    # --- bitwise and comparisons ------------------------------------------------------
    def bitwise(self, op: str, a: Any, b: Any) -> tensor:
        """``& | ^ << >>`` on integers (``>>`` is arithmetic for signed types)."""
        for v in (a, b):
            t = v.dtype if isinstance(v, tensor) else self.py_scalar_type(unwrap(v))
            if not (isinstance(t, ScalarType) and t.is_integer):
                ta = a.dtype if isinstance(a, tensor) else self.py_scalar_type(unwrap(a))
                tb = b.dtype if isinstance(b, tensor) else self.py_scalar_type(unwrap(b))
                raise self.error(f"invalid operands of type {ta} and {tb} for '{_SYMBOL[op]}': "
                                 "bitwise operators need integers")
        if op in ("lshift", "rshift") and isinstance(a, tensor) and isinstance(a.dtype, ScalarType):
            amount = unwrap(b)
            if isinstance(amount, int) and not isinstance(amount, bool) and amount >= a.dtype.bitwidth:
                # Triton's check_bit_width: a warning, not an error (the result is undefined)
                self.warn(f"Value {amount} exceeds the maximum bitwidth ({a.dtype.bitwidth}) for type "
                          f"'{repr(a.dtype).rsplit('.', 1)[-1]}'. This may result in undefined behavior.")
        x, y = self.check_operands(a, b, op)
        # Triton's ``__rshift__``/``__rrshift__`` pick ashr/lshr from the *tensor* operand's own
        # type (the left one, or the right one when the left is a Python scalar), not from the
        # promoted type: int8 >> uint16 sign-extends to uint16 and still shifts arithmetically.
        decider = a if isinstance(a, tensor) else b
        elem = x.dtype
        if (op == "rshift" and isinstance(decider, tensor) and isinstance(decider.dtype, ScalarType)
                and decider.dtype.is_signed and isinstance(elem, ScalarType) and elem.is_unsigned
                and not elem.is_boolean):
            signed = ScalarType("i" + elem.name[1:])
            xs, ys = self.bitcast(x, signed), self.bitcast(y, signed)
            return self.bitcast(self.emit1(arith.ShrOp, [xs.handle, ys.handle], xs.type), elem)
        return self.emit1(_BITWISE[op], [x.handle, y.handle], x.type)

    def and_(self, a: Any, b: Any) -> tensor:
        return self.bitwise("and_", a, b)

    def or_(self, a: Any, b: Any) -> tensor:
        return self.bitwise("or_", a, b)

    def xor(self, a: Any, b: Any) -> tensor:
        return self.bitwise("xor", a, b)

    def compare(self, op: str, a: Any, b: Any) -> tensor:
        """Comparisons give ``int1``; float ones are ordered except ``!=``;
        pointers compare by address."""
        x, y = self.check_operands(a, b, op, True, True)
        if isinstance(x.dtype, PointerType) or isinstance(y.dtype, PointerType):
            if not (isinstance(x.dtype, PointerType) and isinstance(y.dtype, PointerType)):
                raise self.error(f"cannot compare {x.dtype} with {y.dtype}")
            x, y = self.cast(x, u64), self.cast(y, u64)
        return self.emit1(arith.CmpOp, [x.handle, y.handle], x.type.with_element(i1), predicate=op)

    def logical_and(self, a: Any, b: Any) -> tensor:
        return self.bitwise("and_", self.cast(a, i1), self.cast(b, i1))

    def logical_or(self, a: Any, b: Any) -> tensor:
        return self.bitwise("or_", self.cast(a, i1), self.cast(b, i1))


def _is_int(x: tensor) -> bool:
    return isinstance(x.dtype, ScalarType) and x.dtype.is_integer

