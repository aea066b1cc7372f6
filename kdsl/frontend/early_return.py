"""Rewriting of early returns into structured form.

``if c: return a`` followed by more statements is equivalent to
``if c: return a else: <rest>``. Applied recursively at every block, every
``if`` that contains a ``return`` becomes the last statement of a block that
is itself in tail position, so a return simply ends its region and the
``scf.if`` yields the returned values (Triton instead emits unstructured
branches; the result is the same).
"""

from __future__ import annotations

import ast


class _ReturnFinder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: ast.Return | None = None

    def visit_Return(self, node: ast.Return) -> None:
        if self.found is None:
            self.found = node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None  # nested definitions are rejected elsewhere

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return None


def first_return(node: ast.AST) -> ast.Return | None:
    finder = _ReturnFinder()
    finder.visit(node)
    return finder.found


def contains_return(node: ast.AST) -> bool:
    return first_return(node) is not None


def always_returns(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` end in a return?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return any(isinstance(s, ast.Return) for s in stmts)


def make_tail_if(node: ast.If, rest: list[ast.stmt]) -> ast.If:
    """A copy of ``node`` with ``rest`` appended to each branch that can fall through."""
    body = list(node.body) if always_returns(node.body) else [*node.body, *rest]
    orelse = list(node.orelse) if always_returns(node.orelse) else [*node.orelse, *rest]
    return ast.copy_location(ast.If(test=node.test, body=body, orelse=orelse), node)
