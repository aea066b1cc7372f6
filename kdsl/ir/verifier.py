"""Structural and per-op verification of IR.

Generic checks (arity against the op's declaration, attribute presence and
kinds, region count, terminators, SSA dominance within our single-block
structured regions, isolation of functions) live here; op-specific rules live
in each op's ``verify_``. The first problem raises :class:`IRError` carrying
the op's location and a precise message.
"""

from __future__ import annotations

from typing import NamedTuple

from kdsl.ir.core import IRError, IsolatedFromAbove, ModuleOp, Operation, Value, spec_arity
from kdsl.ir.types import Type


def verify(root: Operation) -> None:
    """Verify ``root`` and everything nested in it."""
    _verify_op(root, set())


class _Decl(NamedTuple):
    """An op class's declaration, digested once: the JIT verifies ~10 times per compile.

    ``source`` holds the declaration objects it was computed from, so a class
    whose ``OPERANDS``/``RESULTS``/``ATTRS`` are replaced (tests) is re-digested.
    """

    source: tuple[object, ...]
    operands: tuple[int, int | None]
    results: tuple[int, int | None]
    declared: dict[str, tuple[bool, object]]
    isolated: bool


_DECLS: dict[type[Operation], _Decl] = {}


def _decl(cls: type[Operation]) -> _Decl:
    d = _DECLS.get(cls)
    if d is not None:
        o, r, a, t = d.source
        if o is cls.OPERANDS and r is cls.RESULTS and a is cls.ATTRS and t is cls.TRAITS:
            return d
    d = _Decl(
        (cls.OPERANDS, cls.RESULTS, cls.ATTRS, cls.TRAITS),
        spec_arity(cls.OPERANDS),
        spec_arity(cls.RESULTS),
        {k.rstrip("?"): (k.endswith("?"), t) for k, t in cls.ATTRS.items()},
        cls.has_trait(IsolatedFromAbove),
    )
    _DECLS[cls] = d
    return d


def _verify_op(op: Operation, visible: set[int]) -> None:
    decl = _check_decl(op)
    for i, v in enumerate(op.operands):
        if id(v) not in visible:
            raise op.error(f"operand #{i} does not dominate this use" + (f" ('{v.name_hint}')" if v.name_hint else ""))
    if op.regions:
        inner_base: set[int] = set() if decl.isolated else visible
        for region in op.regions:
            for block in region.blocks:
                seen = set(inner_base)
                seen.update([id(a) for a in block.args])
                last = len(block.ops) - 1
                for j, child in enumerate(block.ops):
                    if child.IS_TERMINATOR and j != last:
                        raise child.error("terminator must be the last op of its block")
                    _verify_op(child, seen)
                    for r in child.results:
                        seen.add(id(r))
    op.verify_()
    if isinstance(op, ModuleOp):
        _check_symbols(op)


def _check_decl(op: Operation) -> _Decl:
    cls = type(op)
    if not cls.NAME:
        raise IRError(f"unregistered op class {cls.__name__}", op.loc)
    decl = _decl(cls)
    lo, hi = decl.operands
    n = len(op.operands)
    if n < lo or (hi is not None and n > hi):
        raise op.error(f"expects {_arity_text(lo, hi)} operands, got {n}")
    lo, hi = decl.results
    n = len(op.results)
    if n < lo or (hi is not None and n > hi):
        raise op.error(f"expects {_arity_text(lo, hi)} results, got {n}")
    if len(op.regions) != cls.REGIONS:
        raise op.error(f"expects {cls.REGIONS} regions, got {len(op.regions)}")
    for r in op.regions:
        if len(r.blocks) != 1:
            raise op.error(f"regions must have exactly one block, got {len(r.blocks)}")
    attributes = op.attributes
    declared = decl.declared
    for name, (optional, kind) in declared.items():
        if name not in attributes:
            if not optional:
                raise op.error(f"requires attribute '{name}'")
            continue
        value = attributes[name]
        if not _attr_ok(value, kind):
            raise op.error(f"attribute '{name}' has invalid value {value!r}")
    for name in attributes:
        if name not in declared:
            raise op.error(f"unknown attribute '{name}'")
    return decl


def _attr_ok(value: object, kind: object) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        return False
    if Type in kinds and isinstance(value, Type):
        return True
    return isinstance(value, kinds)  # type: ignore[arg-type, unused-ignore]


def _arity_text(lo: int, hi: int | None) -> str:
    if hi is None:
        return f"at least {lo}"
    return str(lo) if lo == hi else f"{lo} to {hi}"


def _check_symbols(module: ModuleOp) -> None:
    names: set[str] = set()
    for op in module.body.ops:
        name = op.attributes.get("sym_name")
        if name is None:
            continue
        if name in names:
            raise op.error(f"redefinition of symbol '@{name}'")
        names.add(name)
    for op in module.walk():
        callee = op.attributes.get("callee")
        if callee is None:
            continue
        target = module.lookup(callee.name)
        if target is None:
            raise op.error(f"calls unknown function '@{callee.name}'")
        want = [a.type for a in target.regions[0].block.args]
        got = [v.type for v in op.operands]
        if got != want:
            raise op.error(f"call argument types ({_tl(got)}) do not match '@{callee.name}' ({_tl(want)})")
        rt = list(target.attributes["result_types"])
        if [r.type for r in op.results] != rt:
            raise op.error(f"call result types do not match '@{callee.name}' ({_tl(rt)})")


def _tl(types: list[Type]) -> str:
    return ", ".join(str(t) for t in types)


def values_defined_in(op: Operation) -> set[int]:
    """ids of every value defined inside ``op``'s regions (helper for passes)."""
    out: set[int] = set()
    for inner in op.walk():
        out.update(id(r) for r in inner.results)
        for reg in inner.regions:
            for b in reg.blocks:
                out.update(id(a) for a in b.args)
    return out


__all__ = ["Value", "values_defined_in", "verify"]
