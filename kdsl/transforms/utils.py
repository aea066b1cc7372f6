"""Small IR queries shared by the passes (constants, attribute keys, effects)."""

from __future__ import annotations

import math
import struct

from kdsl.ir.core import AttrValue, Block, Operation, Pure, Value
from kdsl.ir.dialects.arith import ConstantOp
from kdsl.ir.rewriter import PatternRewriter, clone_block_into, clone_op, clone_region
from kdsl.ir.types import Type
from kdsl.transforms.folding import Const, wrap_int

__all__ = [
    "attr_key",
    "clone_block_into",
    "clone_op",
    "clone_region",
    "const_value",
    "defined_inside",
    "defining",
    "is_removable",
    "make_constant",
]

# Ops without the Pure trait whose only effect is reading memory: when their
# result is unused they can go (Triton's DCE drops unused loads too). A
# ``volatile`` load is kept: the user asked for the access to happen.
_READ_ONLY = ("tile.load",)

# Region-holding ops that are side-effect free when their bodies are. A
# ``scf.while`` is not listed: removing it could remove an infinite loop.
_STRUCTURED = ("scf.for", "scf.if", "tile.reduce", "tile.scan")

_TERMINATORS = ("scf.yield",)


def defining(v: Value, name: str) -> Operation | None:
    """The op defining ``v`` if it is a ``name`` op, else None."""
    owner = v.owner_op
    return owner if owner is not None and name == owner.NAME else None


def const_value(v: Value) -> Const | None:
    """The value of ``v`` if an ``arith.constant`` defines it (tiles: the splatted element)."""
    owner = defining(v, "arith.constant")
    if owner is None:
        return None
    value: Const = owner.attributes["value"]
    return value


def make_constant(rewriter: PatternRewriter, value: Const, type: Type) -> Value:
    """Create ``arith.constant value : type`` at the rewriter's insertion point.

    Integer values are normalised to the type (``i1`` becomes a bool) so equal
    constants print and CSE identically.
    """
    e = type.scalar
    if isinstance(value, (bool, int)) and not isinstance(value, float) and getattr(e, "is_integer", False):
        value = wrap_int(int(value), e)  # type: ignore[arg-type]
    elif getattr(e, "is_float", False):
        value = float(value)
    return rewriter.create(ConstantOp, [], [type], {"value": value}).result


def attr_key(v: AttrValue) -> object:
    """A hashable key equal exactly when two attribute values mean the same thing.

    Python's ``==`` is wrong for this: ``nan != nan``, ``0.0 == -0.0`` and
    ``True == 1 == 1.0``; keys compare floats by their bits and keep kinds apart.
    """
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return ("f", struct.pack("<d", v) if not math.isnan(v) else b"nan")
    if isinstance(v, tuple):
        return ("t", tuple(attr_key(x) for x in v))
    return ("o", type(v).__name__, v)


def is_removable(op: Operation) -> bool:
    """Whether ``op`` may be deleted when none of its results is used."""
    if op.IS_TERMINATOR:
        return False
    if op.has_trait(Pure):
        return all(is_removable_or_terminator(i) for r in op.regions for i in r.walk())
    if op.NAME in _READ_ONLY:
        return not op.attributes.get("volatile", False)
    if op.NAME in _STRUCTURED:
        return all(is_removable_or_terminator(i) for r in op.regions for i in r.walk())
    return False


def is_removable_or_terminator(op: Operation) -> bool:
    return op.NAME in _TERMINATORS or is_removable(op)


def defined_inside(v: Value, loop: Operation) -> bool:
    """Whether ``v`` is defined in a region nested (at any depth) under ``loop`` (any op with
    regions: a loop for LICM, a loop or a function body for the lowering's CPU steps); the op's
    own results are not."""
    owner = v.owner_op
    block: Block | None = owner.parent if owner is not None else getattr(v, "block", None)
    while block is not None:
        parent = block.parent_op
        if parent is loop:
            return True
        if parent is None:
            return False
        block = parent.parent
    return False
