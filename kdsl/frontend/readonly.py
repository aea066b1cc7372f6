"""``ptr: kl.const`` parameters: which pointer values derive from one.

Triton makes constness part of the pointer type, so ``kl.store`` through anything computed from
a ``kl.const`` parameter is "Cannot store to a constant pointer". kdsl's IR pointers carry no
constness (the backends already mark every pointer the kernel never writes ``const``:
``kdsl.ir.analysis``); instead the semantic remembers the read-only parameters of the function
being compiled, and a store or atomic asks :func:`read_only_root` whether its address derives
from one -- through pointer arithmetic, splats and reshapes, ``kl.where``, ``if`` results and
values carried by loops. A read-only pointer passed to another kernel makes that parameter
read-only too (``ParamSpec.read_only``, part of the specialisation key).
"""

from __future__ import annotations

from kdsl.ir.core import BlockArgument, Operation, OpResult, Value
from kdsl.ir.types import PointerType


def _is_ptr(v: Value) -> bool:
    return isinstance(v.type.scalar, PointerType)


def _yielded(region_op: Operation, index: int) -> list[Value]:
    """What the regions of ``region_op`` hand to its result ``index``."""
    if region_op.NAME == "scf.while":
        cond = region_op.regions[0].block.terminator
        return [cond.operands[index + 1]] if cond is not None and index + 1 < len(cond.operands) else []
    out: list[Value] = []
    for region in region_op.regions:
        term = region.block.terminator
        if term is not None and index < len(term.operands):
            out.append(term.operands[index])
    if region_op.NAME == "scf.for":
        out.append(region_op.operands[3 + index])
    return out


def _sources(v: Value) -> list[Value]:
    """The pointer values ``v`` may be computed from, one step back."""
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op
        if parent is None:
            return []
        if parent.NAME == "scf.for" and v.index >= 1:
            term = v.block.terminator
            back = [term.operands[v.index - 1]] if term is not None else []
            return [parent.operands[2 + v.index], *back]
        if parent.NAME == "scf.while":
            before, after = parent.regions[0].block, parent.regions[1].block
            if v.block is before:
                term = after.terminator
                return [parent.operands[v.index], *([term.operands[v.index]] if term is not None else [])]
            cond = before.terminator
            return [cond.operands[v.index + 1]] if cond is not None else []
        return []
    owner = v.owner_op
    if owner is None:
        return []
    if owner.regions and owner.NAME.startswith("scf.") and isinstance(v, OpResult):
        return _yielded(owner, v.index)
    return [o for o in owner.operands if _is_ptr(o)]


def inherit(roots: dict[Value, str], args: list[Value], inits: list[Value]) -> None:
    """Loop block arguments start as their inits: read-only if the init is (the loop op does
    not exist yet while its body is compiled, so :func:`_sources` cannot see the link)."""
    for arg, init in zip(args, inits):
        name = read_only_root(init, roots) if roots else None
        if name is not None:
            roots[arg] = name


def read_only_root(ptr: Value, roots: dict[Value, str]) -> str | None:
    """The description of the read-only parameter ``ptr`` may derive from, or None."""
    seen: set[int] = set()
    stack = [ptr]
    while stack:
        v = stack.pop()
        if id(v) in seen or not _is_ptr(v):
            continue
        seen.add(id(v))
        name = roots.get(v)
        if name is not None:
            return name
        stack.extend(_sources(v))
    return None


__all__ = ["inherit", "read_only_root"]
