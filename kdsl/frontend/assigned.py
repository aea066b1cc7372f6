"""Which names a block of statements may (re)bind -- the loop-carried candidates."""

from __future__ import annotations

import ast


class _Collector(ast.NodeVisitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def _add(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self._add(node.target.id)
        self.visit(node.value)

    # Scopes of their own: their bindings do not leak into the loop.
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return None

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return None

    def visit_ListComp(self, node: ast.ListComp) -> None:
        return None

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        return None

    def visit_SetComp(self, node: ast.SetComp) -> None:
        return None

    def visit_DictComp(self, node: ast.DictComp) -> None:
        return None


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names bound anywhere in ``stmts`` (first-binding order)."""
    c = _Collector()
    for s in stmts:
        c.visit(s)
    return c.names
