"""Explicit and implicit conversions: ``x.to(dtype)``, ``kl.cast``, bitcasts,
and pointer <-> integer / pointer <-> pointer casts."""

from __future__ import annotations

from typing import Any

from kdsl.frontend.semantic_base import SemanticBase, unwrap
from kdsl.ir.dialects import arith
from kdsl.ir.types import PointerType, ScalarType, i1, i64
from kdsl.language.core import tensor


class CastSemantic(SemanticBase):
    """Conversions between element types (shape is kept)."""

    def cast(self, value: Any, dtype: Any, bitcast: bool = False) -> tensor:
        """Convert each element of ``x`` to ``dtype``.

        Value casts follow ``arith.cast`` (C conversions; ``-> int1`` is
        ``!= 0``). Pointers cast to pointers of another pointee, to ``int64``/
        ``uint64`` (the address) and to ``int1`` (non-null); integers cast to
        pointers. ``bitcast=True`` reinterprets bits (equal widths required).
        """
        x = self.to_tensor(value)
        dst = self.const_dtype(dtype)
        if unwrap(bitcast):
            return self.bitcast(x, dst)
        src = x.dtype
        if src == dst:
            return x
        if isinstance(src, PointerType):
            return self._cast_from_ptr(x, dst)
        if isinstance(dst, PointerType):
            if not src.is_integer:
                raise self.error(f"cannot cast {src} to pointer type {dst}")
            if src.name not in ("i64", "u64"):
                x = self.emit1(arith.CastOp, [x.handle], x.type.with_element(i64))
            return self.emit1(arith.CastOp, [x.handle], x.type.with_element(dst))
        return self.emit1(arith.CastOp, [x.handle], x.type.with_element(dst))

    def _cast_from_ptr(self, x: tensor, dst: ScalarType | PointerType) -> tensor:
        if isinstance(dst, PointerType):
            return self.emit1(arith.BitcastOp, [x.handle], x.type.with_element(dst))
        if dst.name in ("i64", "u64"):
            return self.emit1(arith.CastOp, [x.handle], x.type.with_element(dst))
        if dst == i1:
            addr = self.emit1(arith.CastOp, [x.handle], x.type.with_element(i64))
            zero = self.constant(0, addr.type)
            return self.emit1(arith.CmpOp, [addr.handle, zero.handle], x.type.with_element(i1), predicate="ne")
        raise self.error(f"cannot cast pointer {x.dtype} to {dst}; cast to kl.int64 instead")

    def bitcast(self, value: Any, dtype: Any) -> tensor:
        """Reinterpret the bits of each element as ``dtype`` (same bit width)."""
        x = self.to_tensor(value)
        dst = self.const_dtype(dtype)
        src = x.dtype
        if src == dst:
            return x
        if isinstance(src, PointerType) or isinstance(dst, PointerType):
            return self.cast(x, dst)
        if src.bitwidth != dst.bitwidth:
            raise self.error(f"cannot bitcast {src} ({src.bitwidth} bits) to {dst} ({dst.bitwidth} bits)")
        return self.emit1(arith.BitcastOp, [x.handle], x.type.with_element(dst))
