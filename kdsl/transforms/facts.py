"""Value facts the tile-level passes prove masks and bounds with.

Two small analyses, both conservative (an unknown answer is always safe):

* :func:`divisor` -- a power of two known to divide an integer scalar (or
  every element of a tile), from constants, the ``divisibility`` the JIT
  records per kernel argument, ``tile.hint {multiple_of}``, loop induction
  variables and ``+ - * <<``;
* :func:`lanes` -- an integer tile written as ``splat(base) + c`` where the
  lane constants ``c`` lie in ``[lo, hi]`` (``pid*BLOCK + arange(0, BLOCK)``
  is ``base = pid*BLOCK, lo = 0, hi = BLOCK-1``).

With both, ``base + c < n`` is the same predicate for every lane when a
power of two ``B > hi`` divides ``base`` and ``n`` (and ``lo >= 0``): both
are multiples of ``B``, so ``base < n`` implies ``base + B - 1 < n``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdsl.ir.core import BlockArgument, Operation, Value
from kdsl.ir.types import PointerType, ScalarType
from kdsl.transforms.utils import const_value

CAP = 1 << 30  # divisor reported for 0 (divisible by everything) and the cap of products


def _pow2_divisor(c: int) -> int:
    if c == 0:
        return CAP
    return min(CAP, abs(c) & -abs(c))


def _pow2_floor(v: int) -> int:
    return 1 << (v.bit_length() - 1) if v > 0 else 1


def divisor(v: Value, depth: int = 0) -> int:
    """A power of two dividing ``v`` (1 when nothing is known)."""
    e = v.type.scalar
    if depth > 32 or not (isinstance(e, PointerType) or (isinstance(e, ScalarType) and e.is_integer)):
        return 1
    c = const_value(v)
    if c is not None and not isinstance(c, float):
        return _pow2_divisor(int(c))
    if isinstance(v, BlockArgument):
        return _arg_divisor(v, depth)
    op = v.owner_op
    if op is None:
        return 1
    return _op_divisor(op, depth + 1)


def _arg_divisor(v: BlockArgument, depth: int) -> int:
    owner = v.block.parent_op
    if owner is None:
        return 1
    if owner.NAME == "tile.func":
        div = owner.attributes.get("divisibility")
        return int(div[v.index]) if div and v.index < len(div) and div[v.index] > 0 else 1
    if owner.NAME == "scf.for" and v.index == 0:
        return min(divisor(owner.lower, depth + 1), divisor(owner.step, depth + 1))
    return 1


def _op_divisor(op: Operation, depth: int) -> int:
    name = op.NAME
    if name in ("arith.add", "arith.sub"):
        return min(divisor(op.lhs, depth), divisor(op.rhs, depth))
    if name == "arith.mul":
        return min(CAP, divisor(op.lhs, depth) * divisor(op.rhs, depth))
    if name == "arith.shl":
        k = const_value(op.rhs)
        if k is not None and 0 <= int(k) < 31:
            return min(CAP, divisor(op.lhs, depth) << int(k))
        return divisor(op.lhs, depth)
    if name in ("tile.splat", "tile.broadcast", "tile.expand_dims"):
        return divisor(op.operand, depth)
    if name == "tile.addptr":
        rt = op.result.type.scalar
        elem = rt.pointee if isinstance(rt, PointerType) else None
        size = elem.itemsize if isinstance(elem, ScalarType) else 8
        return min(divisor(op.ptr, depth), min(CAP, divisor(op.offset, depth) * size))
    if name == "arith.cast":
        src, dst = op.operand.type.scalar, op.result.type.scalar
        if isinstance(src, ScalarType) and isinstance(dst, ScalarType) and src.is_integer and dst.is_integer:
            return divisor(op.operand, depth) if dst.bitwidth >= src.bitwidth else 1
        return 1
    if name == "tile.hint":
        known = divisor(op.operand, depth)
        mult = op.attributes.get("multiple_of")
        if mult:
            known = max(known, _pow2_divisor(_gcd_all(mult)))
        return known
    return 1


def _gcd_all(values: tuple[int, ...]) -> int:
    from math import gcd

    g = 0
    for x in values:
        g = gcd(g, int(x))
    return g


@dataclass(frozen=True)
class Lanes:
    """``splat(base) + c`` with lane constants ``c`` in ``[lo, hi]`` (base None: 0)."""

    base: Value | None
    lo: int
    hi: int


def lanes(v: Value, depth: int = 0) -> Lanes | None:
    """Decompose an integer tile into a uniform base plus bounded lane constants."""
    if depth > 32 or not getattr(v.type.scalar, "is_integer", False):
        return None
    c = const_value(v)
    if c is not None and not isinstance(c, float):
        return Lanes(None, int(c), int(c))
    op = v.owner_op
    if op is None:
        return Lanes(v, 0, 0) if not v.type.shape else None
    name = op.NAME
    if not v.type.shape:
        return Lanes(v, 0, 0)
    if name == "tile.arange":
        return Lanes(None, int(op.attributes["start"]), int(op.attributes["end"]) - 1)
    if name == "tile.splat":
        return Lanes(op.operand, 0, 0)
    if name in ("tile.broadcast", "tile.expand_dims", "tile.hint"):
        return lanes(op.operand, depth + 1)
    if name == "arith.add":
        a, b = lanes(op.lhs, depth + 1), lanes(op.rhs, depth + 1)
        if a is None or b is None or (a.base is not None and b.base is not None):
            return None
        return Lanes(a.base if a.base is not None else b.base, a.lo + b.lo, a.hi + b.hi)
    return None


def uniform_base(v: Value) -> Value | None:
    """The scalar ``s`` when ``v`` is ``splat(s)`` (through broadcasts), else None."""
    d = lanes(v)
    if d is None or d.base is None or d.lo != 0 or d.hi != 0:
        return None
    return d.base
