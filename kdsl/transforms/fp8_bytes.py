"""``fp8-to-bytes``: fp8 values become the bytes that hold them.

Why a pass: no kdsl target computes in fp8, and the semantic layer never asks one to -- it
decodes fp8 to f32 before any arithmetic and encodes results back with integer ops
(:mod:`kdsl.frontend.semantic_fp8`). What is left of fp8 in the tile IR is storage: loads,
stores, selects, shape ops, loop-carried values, ``arith.bitcast`` between fp8 and its byte.
Retyping those values as ``u8`` changes no bit, so after this pass the backends and the
interpreter see only types they already support, and fp8 costs them nothing to add.

It retypes every value (op results, block arguments) and every type held in an attribute
(``tile.func``'s ``result_types``, ...), then drops the ``arith.bitcast``s that became
``u8 -> u8``.
"""

from __future__ import annotations

from typing import Any

from kdsl.ir.core import ModuleOp, Operation
from kdsl.ir.types import PointerType, ScalarType, Type, u8
from kdsl.transforms.base import Pass


def _bytes(t: Type) -> Type:
    elem = t.scalar
    if isinstance(elem, PointerType) and isinstance(elem.pointee, ScalarType) and elem.pointee.is_fp8():
        return t.with_element(PointerType(u8, elem.address_space))
    if isinstance(elem, ScalarType) and elem.is_fp8():
        return t.with_element(u8)
    return t


def _attr(v: Any) -> Any:
    if isinstance(v, Type):
        return _bytes(v)
    if isinstance(v, tuple):
        return tuple(_attr(x) for x in v)
    return v


def fp8_to_bytes(module: ModuleOp) -> bool:
    """Retype fp8 to u8 under ``module``; True if anything changed."""
    changed = False
    identity: list[Operation] = []
    for op in module.walk():
        for key, value in op.attributes.items():
            new = _attr(value)
            if new != value:
                op.attributes[key] = new
                changed = True
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        for v in values:
            t = _bytes(v.type)
            if t != v.type:
                v.type = t
                changed = True
        if op.NAME == "arith.bitcast":
            identity.append(op)
    for op in identity:
        src = op.operands[0]
        if src.type == op.results[0].type:
            op.results[0].replace_all_uses_with(src)
            op.erase()
            changed = True
    return changed


class Fp8ToBytes(Pass):
    """Retype fp8 values, pointers and attributes as their bytes (``u8``)."""

    name = "fp8-to-bytes"
    summary = "fp8 values become their u8 bytes (the semantic already computes through f32)"

    def run(self, module: ModuleOp) -> None:
        fp8_to_bytes(module)
