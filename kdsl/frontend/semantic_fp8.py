"""fp8 element types (``kl.float8e5``, ``float8e4nv``, ``float8e4b15``, ``float8e4b8``,
``float8e5b16``) and correctly rounded float conversions done with integer ops.

Why in the semantic layer: none of kdsl's targets has fp8 arithmetic, and what a GPU does with
an fp8 operand is convert it. So fp8 values stay storage in the IR, and every operation that
computes on one (``+``, comparisons, ``kl.exp``, ``kl.maximum``, reduction combines, ``dot``)
is built here on their exact f32 values, rounding a result back to fp8 where its type is fp8 --
Triton's semantics for fp8 arithmetic. Conversions are integer sequences (decode: exact; encode:
round to nearest even, or toward zero for ``fp_downcast_rounding="rtz"``), so every backend
agrees bit for bit; the ``fp8-to-bytes`` pass then retypes what is left as ``u8``.

The same encoder serves ``fp_downcast_rounding="rtz"`` for the standard downcasts (f32 -> f16,
bf16; f64 -> f32, f16, bf16), which no backend instruction offers. Overflow and NaN rules are
those of :mod:`kdsl.ir.floatcodec`, the Python reference the tests compare with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kdsl.frontend.semantic_base import OpT, unwrap
from kdsl.frontend.semantic_reduce import ReduceSemantic
from kdsl.ir import floatcodec
from kdsl.ir.core import Operation, Value
from kdsl.ir.dialects import arith
from kdsl.ir.dialects import math as m
from kdsl.ir.types import FLOAT_FORMATS, FloatFormat, ScalarType, Type, bf16, f16, f32, f64, u8, u16, u32, u64
from kdsl.language.core import tensor

# ops that compute on float values: with fp8 operands they run on the decoded f32 values
_COMPUTE: frozenset[type[Operation]] = frozenset({
    arith.AddOp, arith.SubOp, arith.MulOp, arith.DivOp, arith.RemOp, arith.MaxOp, arith.MinOp, arith.NegOp,
    arith.CmpOp, m.ExpOp, m.Exp2Op, m.LogOp, m.Log2Op, m.SqrtOp, m.SqrtRnOp, m.RsqrtOp, m.SinOp, m.CosOp,
    m.TanhOp, m.ErfOp, m.FloorOp, m.CeilOp, m.AbsOp, m.PowOp, m.DivRnOp, m.FmaOp,
})  # fmt: skip
_STORAGE = {8: u8, 16: u16, 32: u32}
ROUNDINGS = ("rtne", "rtz")


def is_fp8(t: Type) -> bool:
    e = t.scalar
    return isinstance(e, ScalarType) and e.is_fp8()


class Fp8Semantic(ReduceSemantic):
    """fp8 values: conversions, constants, and computing through f32."""

    # --- conversions ------------------------------------------------------------------
    def cast(self, value: Any, dtype: Any, bitcast: bool = False, fp_downcast_rounding: Any = None) -> tensor:
        """``x.to(dtype)``: see :meth:`CastSemantic.cast`; conversions to or from fp8, and float
        downcasts with ``fp_downcast_rounding="rtz"``, are built here."""
        x = self.to_tensor(value)
        dst = self.const_dtype(dtype)
        rounding = unwrap(fp_downcast_rounding)
        src = x.dtype
        if rounding is not None:
            if rounding not in ROUNDINGS:
                raise self.error(f"unknown fp_downcast_rounding {rounding!r}; expected 'rtne' or 'rtz'")
            narrower = isinstance(src, ScalarType) and isinstance(dst, ScalarType) and dst.bitwidth < src.bitwidth
            if not (_is_float(src) and _is_float(dst) and narrower) or unwrap(bitcast):
                raise self.error(f"fp_downcast_rounding applies to float downcasts only, not {src} to {dst}")
        if unwrap(bitcast) or src == dst or not isinstance(src, ScalarType) or not isinstance(dst, ScalarType):
            return super().cast(x, dst, bitcast)
        rtz = rounding == "rtz"
        if not (src.is_fp8() or dst.is_fp8() or rtz):
            if dst == bf16 and src.is_integer:
                # Triton's GPU lowering converts an integer to bf16 through f32 (two roundings;
                # torch does too): built here so every backend does the same
                x = super().cast(x, f32)
            return super().cast(x, dst)
        if src.is_fp8():
            x = self._decode(self._byte_bits(x), FLOAT_FORMATS[src.name])
            return x if dst == f32 else self.cast(x, dst, fp_downcast_rounding=rounding if dst.is_float else None)
        if src.bitwidth < 32 or not src.is_float:  # exact (f16/bf16), or one rounding of an integer
            x = super().cast(x, f32)
        return self._encode(x, dst, rtz)

    def _byte_bits(self, x: tensor) -> tensor:
        """An fp8 (or 8-bit integer) tile's bytes as u32 values 0..255."""
        return super().cast(self.bitcast(x, u8), u32)

    def _decode(self, bits: tensor, fmt: FloatFormat) -> tensor:
        """Exact f32 values of the ``fmt`` codes in the low bits of a u32 tile (``fmt`` narrower than 16 bits)."""
        ebits, mbits, bias = fmt.ebits, fmt.mbits, fmt.bias
        sign = self.binary("and_", self.binary("rshift", bits, ebits + mbits), 1)
        exp = self.binary("and_", self.binary("rshift", bits, mbits), (1 << ebits) - 1)
        man = self.binary("and_", bits, (1 << mbits) - 1)
        # normal numbers: rebias the exponent and left-align the mantissa in f32's fields
        f32_bits = self.binary("or_", self.binary("lshift", sign, 31), self.binary(
            "or_", self.binary("lshift", self.binary("add", exp, 127 - bias), 23),
            self.binary("lshift", man, 23 - mbits)))  # fmt: skip
        normal = self.bitcast(f32_bits, f32)
        # subnormals (exp == 0): man * 2**(1 - bias - mbits), exact in f32
        sub = self.binary("mul", self.cast(man, f32), 2.0 ** (1 - bias - mbits))
        sub = self.where(self.compare("ne", sign, 0), self.unary("neg", sub), sub)
        value = self.where(self.compare("eq", exp, 0), sub, normal)
        top = (1 << ebits) - 1
        if fmt.special == "ieee":  # top exponent: inf (mantissa 0) or NaN
            inf = self.where(self.compare("ne", sign, 0), float("-inf"), float("inf"))
            special = self.where(self.compare("eq", man, 0), inf, float("nan"))
            value = self.where(self.compare("eq", exp, top), special, value)
        elif fmt.special == "fn":  # only S.1..1.1..1 is special (NaN)
            nan_bits = self.logical_and(self.compare("eq", exp, top), self.compare("eq", man, (1 << mbits) - 1))
            value = self.where(nan_bits, float("nan"), value)
        elif fmt.special == "fnuz":  # the "negative zero" code is the NaN
            value = self.where(self.compare("eq", bits, 1 << (fmt.width - 1)), float("nan"), value)
        return self.cast(value, f32)

    def _encode(self, x: tensor, dst: ScalarType, rtz: bool) -> tensor:
        """Round the f32/f64 tile ``x`` to ``dst`` (an fp8, f16, bf16 or f32 type)."""
        src = x.dtype
        assert isinstance(src, ScalarType) and src in (f32, f64)
        s, t = FLOAT_FORMATS[src.name], FLOAT_FORMATS[dst.name]
        uint = u32 if src == f32 else u64
        bits = self.bitcast(x, uint)
        b = self.binary
        sign = b("rshift", bits, s.width - 1)
        a = b("and_", bits, (1 << (s.width - 1)) - 1)
        shift = s.mbits - t.mbits
        # normal results: rebias in place, then drop `shift` mantissa bits (the carry may bump the exponent)
        v = b("sub", a, (s.bias - t.bias) << s.mbits)
        normal = self._round_shift(v, shift, rtz)
        # subnormal results: the significand with its hidden bit, shifted by a per-element amount
        e_src = b("rshift", a, s.mbits)
        hidden = self.cast(self.compare("ne", e_src, 0), uint)
        e_eff = self.minmax("max", e_src, 1)
        sig = b("or_", b("and_", a, (1 << s.mbits) - 1), b("lshift", hidden, s.mbits))
        lowest = 1 - t.bias + s.bias  # biased source exponent of the target's smallest normal
        is_sub = self.compare("lt", e_eff, lowest)
        amount = self.where(is_sub, b("sub", shift + lowest, e_eff), shift)
        amount = self.minmax("min", amount, s.mbits + 2)  # beyond: rounds to 0 anyway
        mag = self.where(is_sub, self._round_shift(sig, amount, rtz), normal)
        # overflow, infinities, NaN
        inf_src = ((1 << s.ebits) - 1) << s.mbits
        over = self.compare("gt", mag, t.max_code)
        if t.inf_code is not None:
            mag = self.where(over, t.max_code if rtz else t.inf_code, mag)
            mag = self.where(self.compare("eq", a, inf_src), t.inf_code, mag)
        else:
            mag = self.where(over, t.max_code, mag)
        code = b("or_", b("lshift", sign, t.width - 1), mag)
        is_nan = self.compare("gt", a, inf_src)
        if t.special == "ieee":  # keep the sign and the payload's top bits; quiet
            payload = b("and_", b("rshift", a, shift), (1 << t.mbits) - 1)
            nan = b("or_", b("lshift", sign, t.width - 1), b("or_", payload, floatcodec.nan_code(t)))
        elif t.special == "fn":
            nan = b("or_", b("lshift", sign, t.width - 1), floatcodec.nan_code(t))
        elif t.special == "fnuz":  # no negative zero; one NaN
            code = self.where(self.compare("eq", mag, 0), 0, code)
            nan = self.full(code.shape, floatcodec.nan_code(t), uint)
        else:
            nan = b("or_", b("lshift", sign, t.width - 1), t.max_code)
        code = self.where(is_nan, nan, code)
        return self.bitcast(super().cast(code, _STORAGE[t.width]), dst)

    def _round_shift(self, v: tensor, amount: Any, rtz: bool) -> tensor:
        """``v >> amount`` rounded toward zero or to nearest even (``amount`` >= 1)."""
        b = self.binary
        if rtz:
            shifted: tensor = b("rshift", v, amount)
            return shifted
        half_minus_one = b("sub", b("lshift", 1, b("sub", amount, 1)), 1) if isinstance(amount, tensor) \
            else (1 << (amount - 1)) - 1  # fmt: skip
        odd = b("and_", b("rshift", v, amount), 1)
        rounded: tensor = b("rshift", b("add", b("add", v, half_minus_one), odd), amount)
        return rounded

    # --- constants and computing through f32 --------------------------------------------
    def constant(self, value: Any, ty: Type) -> tensor:
        if not is_fp8(ty):
            return super().constant(value, ty)
        elem = ty.scalar
        assert isinstance(elem, ScalarType)
        code = floatcodec.encode(float(unwrap(value)), FLOAT_FORMATS[elem.name])
        byte = super().constant(code, ty.with_element(u8))
        return self.wrap(super().emit(arith.BitcastOp, [byte.handle], [ty]).result)

    def emit1(self, cls: type[Operation], operands: Sequence[Value], result_type: Type, **attrs: Any) -> tensor:
        if cls in _COMPUTE and (is_fp8(result_type) or any(is_fp8(v.type) for v in operands)):
            wide = [self.cast(self.wrap(v), f32).handle if is_fp8(v.type) else v for v in operands]
            out: tensor = super().emit1(cls, wide, result_type.with_element(f32) if is_fp8(result_type) else result_type,
                                        **attrs)  # fmt: skip
            return self.cast(out, result_type.scalar) if is_fp8(result_type) else out
        if cls is arith.ConstantOp and is_fp8(result_type):
            return self.constant(attrs["value"], result_type)
        if cls is arith.CastOp and (is_fp8(result_type) or is_fp8(operands[0].type)):
            return self.cast(self.wrap(operands[0]), result_type.scalar)
        plain: tensor = super().emit1(cls, operands, result_type, **attrs)
        return plain

    def emit(self, cls: type[OpT], operands: Sequence[Value], result_types: Sequence[Type] = (),
             **attrs: Any) -> OpT:  # fmt: skip
        if cls in _COMPUTE and any(is_fp8(t) for t in [*result_types, *(v.type for v in operands)]):
            raise self.error(f"{cls.NAME} on fp8 values must go through emit1 (internal error)")
        return super().emit(cls, operands, result_types, **attrs)

    def dot(self, a: Any, b: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
            max_num_imprecise_acc: Any = None, out_dtype: Any = f32) -> tensor:  # fmt: skip
        """fp8 operands are multiplied exactly (decoded to f32) and accumulated in f32, as Triton's fp8
        ``dot`` does; an f16 ``out_dtype`` rounds the f32 result."""
        x, y = self.to_tensor(a), self.to_tensor(b)
        if not (is_fp8(x.type) or is_fp8(y.type)):
            return super().dot(x, y, acc, input_precision, allow_tf32, max_num_imprecise_acc, out_dtype)
        for v in (x, y):
            if not (is_fp8(v.type) or v.dtype in (f16, bf16, f32)):
                raise self.error(f"kl.dot: an fp8 operand pairs with fp8, f16, bf16 or f32, got {v.dtype}")
        imprecise = unwrap(max_num_imprecise_acc)
        if is_fp8(x.type) and is_fp8(y.type) and imprecise is not None and x.shape and imprecise > x.shape[-1]:
            # Triton checks the bound although kdsl accumulates exactly: a kernel it refuses is refused here
            raise self.error(f"max_num_imprecise_acc ({imprecise}) must be <= K ({x.shape[-1]})")
        out = self.const_dtype(out_dtype, "out_dtype")
        r = super().dot(self.cast(x, f32), self.cast(y, f32), None if out == f16 else acc, "ieee")
        if out == f16:
            r = self.cast(r, f16)
            return r if unwrap(acc) is None else self.binary("add", r, acc)
        return r


def _is_float(t: Any) -> bool:
    return isinstance(t, ScalarType) and t.is_float


__all__ = ["ROUNDINGS", "Fp8Semantic", "is_fp8"]
