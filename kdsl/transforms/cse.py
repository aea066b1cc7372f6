"""``cse``: common-subexpression elimination of pure ops, respecting region scopes.

Two pure ops are the same computation when they have the same name,
operands, attributes (compared by :func:`attr_key`, so ``nan`` matches
``nan`` and ``0.0`` does not match ``-0.0``) and result types. The table of
available expressions is scoped like SSA visibility: an op inside a region
may reuse a value computed before the region op, but a value computed inside
a region is forgotten when the region ends (it does not dominate code after
it). Functions (``IsolatedFromAbove``) start from an empty table.
"""

from __future__ import annotations

from collections import ChainMap

from kdsl.ir.core import Block, IsolatedFromAbove, ModuleOp, Operation, Pure
from kdsl.transforms.base import Pass
from kdsl.transforms.utils import attr_key

Table = ChainMap[object, Operation]


def _key(op: Operation) -> object:
    attrs = dict(op.attributes)
    if op.NAME == "arith.constant":
        # ``1 : i1`` and ``true : i1``, ``1 : f32`` and ``1.0 : f32`` are the same constant
        e = op.results[0].type.scalar
        v = attrs["value"]
        attrs["value"] = float(v) if getattr(e, "is_float", False) else int(v)
    return (
        op.NAME,
        tuple(id(v) for v in op.operands),
        tuple(sorted((k, attr_key(v)) for k, v in attrs.items())),
        tuple(r.type for r in op.results),
    )


def _cse_block(block: Block, table: Table) -> int:
    removed = 0
    for op in list(block.ops):
        for region in op.regions:
            inner: Table = ChainMap() if op.has_trait(IsolatedFromAbove) else table.new_child()
            for b in region.blocks:
                removed += _cse_block(b, inner.new_child())
        if not op.has_trait(Pure) or op.regions or not op.results:
            continue
        key = _key(op)
        existing = table.get(key)
        if existing is None:
            table[key] = op
            continue
        for old, new in zip(op.results, existing.results):
            old.replace_all_uses_with(new)
        op.erase()
        removed += 1
    return removed


def cse(root: Operation) -> int:
    """Eliminate common subexpressions under ``root``; returns the number of ops removed."""
    removed = 0
    for region in root.regions:
        for block in region.blocks:
            removed += _cse_block(block, ChainMap())
    return removed


class CSE(Pass):
    """Reuse the first of several identical pure computations."""

    name = "cse"
    summary = "common-subexpression elimination of pure ops"

    def run(self, module: ModuleOp) -> None:
        cse(module)
