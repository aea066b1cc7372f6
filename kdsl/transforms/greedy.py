"""Greedy pattern driver: apply folding and rewrite patterns until nothing changes.

A worklist holds ops that may be rewritable. Each popped op is, in order:
erased if it is trivially dead (pure, results unused), folded to an
``arith.constant`` if all its inputs are constant, or offered to every
pattern registered for its name. Every change reported by the
:class:`PatternRewriter` puts the affected ops (new ops, users of replaced
values, producers of erased operands) back on the worklist, so the driver
reaches a fixpoint without rescanning the module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kdsl.ir.core import IRError, Operation, Pure, Value
from kdsl.ir.rewriter import PatternRewriter, RewriteListener, RewritePattern

# fold(op) -> replacement value or None; a folder may create ops through the rewriter.
Folder = Callable[[Operation, PatternRewriter], "Value | None"]


class _Worklist(RewriteListener):
    """FIFO worklist with membership test; also the rewriter's listener."""

    def __init__(self) -> None:
        self.items: list[Operation] = []
        self.members: set[int] = set()
        self.head = 0

    def push(self, op: Operation) -> None:
        if id(op) not in self.members:
            self.members.add(id(op))
            self.items.append(op)

    def pop(self) -> Operation | None:
        while self.head < len(self.items):
            op = self.items[self.head]
            self.head += 1
            self.members.discard(id(op))
            if self.head > 4096 and self.head * 2 > len(self.items):
                self.items = self.items[self.head :]
                self.head = 0
            return op
        return None

    # -- listener: every change re-queues what it may have enabled -------------
    def notify_inserted(self, op: Operation) -> None:
        for inner in op.walk():
            self.push(inner)

    def notify_modified(self, op: Operation) -> None:
        self.push(op)

    def notify_replaced(self, old: Value, new: Value) -> None:
        for user, _ in old.uses:
            self.push(user)
        owner = old.owner_op
        if owner is not None:
            self.push(owner)

    def notify_erased(self, op: Operation) -> None:
        for inner in op.walk():
            for v in inner.operands:
                owner = v.owner_op
                if owner is not None:
                    self.push(owner)


def is_attached(op: Operation, root: Operation) -> bool:
    """Whether ``op`` is still nested under ``root`` (not erased, not detached)."""
    cur: Operation | None = op
    while cur is not None and cur is not root:
        block = cur.parent
        if block is None or block.parent is None:
            return False
        cur = block.parent.parent
    return cur is root


def is_trivially_dead(op: Operation) -> bool:
    return op.has_trait(Pure) and not op.regions and all(not r.uses for r in op.results)


def apply_patterns_greedily(
    root: Operation,
    patterns: Sequence[RewritePattern],
    folder: Folder | None = None,
    *,
    max_rewrites: int | None = None,
) -> bool:
    """Rewrite everything nested in ``root`` to a fixpoint; True if anything changed.

    Raises :class:`IRError` if the patterns do not converge (a pattern pair
    undoing each other), which is a bug in the patterns, never silently ignored.
    """
    by_name: dict[str, list[RewritePattern]] = {}
    generic: list[RewritePattern] = []
    for p in patterns:
        if not p.OPS:
            generic.append(p)
        for name in p.OPS:
            by_name.setdefault(name, []).append(p)

    wl = _Worklist()
    for nested in root.walk():
        if nested is not root:
            wl.push(nested)
    limit = max_rewrites if max_rewrites is not None else 64 * len(wl.items) + 1024
    rewriter = PatternRewriter(wl)
    changed = False
    rewrites = 0
    while (op := wl.pop()) is not None:
        if not is_attached(op, root):
            continue
        if _process(op, rewriter, by_name.get(op.NAME, []) + generic, folder):
            changed = True
            rewrites += 1
            if rewrites > limit:
                raise IRError(f"pattern rewriting did not converge after {limit} rewrites (last op {op.NAME})", op.loc)
    return changed


def _process(
    op: Operation,
    rewriter: PatternRewriter,
    patterns: list[RewritePattern],
    folder: Folder | None,
) -> bool:
    if is_trivially_dead(op):
        rewriter.erase_op(op)
        return True
    rewriter.set_insertion_point(op)
    if folder is not None:
        value = folder(op, rewriter)
        if value is not None:
            rewriter.replace_op(op, [value])
            return True
    for p in patterns:
        rewriter.set_insertion_point(op)
        if p.match_and_rewrite(op, rewriter):
            return True
    return False
