"""Simple statements: assignments, expression statements, return, assert, pass.

Assignment follows Triton: a plain ``x = <number>`` makes ``x`` a runtime
scalar (so it can be updated in loops and branches); only ``x: kl.constexpr =
...``, parameters and ``static_range`` variables stay compile-time constants.
Statement lists stop at ``return``; an ``if`` that returns is made the tail of
its block by moving the statements after it into its branches (see
``early_return.py``), so returns never need unstructured control flow.
"""

from __future__ import annotations

import ast
from typing import Any

import kdsl.language as kl
from kdsl.frontend.base import GeneratorBase, Ret
from kdsl.frontend.early_return import contains_return, make_tail_if
from kdsl.frontend.values import NUMBER_TYPES, is_constexpr, is_static, is_tensor, retuple, unwrap


class StmtMixin(GeneratorBase):
    def visit_stmts(self, stmts: list[ast.stmt]) -> Ret | None:
        """Visit a block; return :class:`Ret` if it ended by returning."""
        for i, stmt in enumerate(stmts):
            tail = False
            if isinstance(stmt, ast.If) and i + 1 < len(stmts) and contains_return(stmt):
                stmt = make_tail_if(stmt, stmts[i + 1 :])
                tail = True
            result = self.visit(stmt)
            if isinstance(result, Ret):
                return result
            if tail:
                return None
        return None

    # --- expression statements ------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring or a bare string
        if isinstance(node.value, ast.Call):
            node.value.kdsl_result_unused = True  # type: ignore[attr-defined]  # read by visit_Call (must_use_result)
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Break(self, node: ast.Break) -> None:
        raise self.unsupported(node, "'break'")

    def visit_Continue(self, node: ast.Continue) -> None:
        raise self.unsupported(node, "'continue'")

    # --- assignment -------------------------------------------------------------
    def sanitize(self, value: Any) -> Any:
        """Triton's assignment rule: numbers become runtime scalars, tuples element-wise."""
        if isinstance(value, tuple):
            return retuple(value, (self.sanitize(v) for v in value))
        raw = unwrap(value)
        if isinstance(raw, NUMBER_TYPES) and not is_tensor(value):
            return self.sem.to_tensor(raw)
        return value

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.sanitize(self.visit(node.value))
        for target in node.targets:
            self.assign_target(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return
        annotation = self.visit(node.annotation)
        value = self.visit(node.value)
        if annotation is kl.constexpr or is_constexpr_annotation(node.annotation):
            if not is_static(value):
                raise self.error(f"cannot assign a runtime value of type {value.type} to a constexpr", node.value)
            self.assign_target(node.target, value if is_constexpr(value) else kl.constexpr(unwrap(value)))
            return
        self.assign_target(node.target, self.sanitize(value))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node.target, "augmented assignment to anything but a name")
        load = ast.copy_location(ast.Name(id=node.target.id, ctx=ast.Load()), node.target)
        binop = ast.copy_location(ast.BinOp(left=load, op=node.op, right=node.value), node)
        value = self.sanitize(self.visit(binop))
        self.assign_target(node.target, value)

    def assign_target(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            items = unwrap(value)
            if is_tensor(items) or not isinstance(items, (tuple, list)):
                raise self.error(f"cannot unpack a value of type {_kind(value)}", target)
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise self.unsupported(target, "starred assignment")
            if len(items) != len(target.elts):
                raise self.error(f"cannot unpack {len(items)} values into {len(target.elts)} names", target)
            for elt, item in zip(target.elts, items):
                self.assign_target(elt, item)
            return
        raise self.unsupported(target, f"assignment to {type(target).__name__.lower()}")

    def bind(self, name: str, value: Any) -> None:
        if is_tensor(value) and value.handle.name_hint is None:
            value.handle.name_hint = name
        self.scope[name] = value

    # --- return / assert --------------------------------------------------------------
    def visit_Return(self, node: ast.Return) -> Ret:
        if self.loop_depth:
            raise self.unsupported(node, "'return' inside a loop")
        value = self.visit(node.value) if node.value is not None else None
        if value is not None and unwrap(value) is None:
            value = None
        return Ret(value)

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        msg = unwrap(self.visit(node.msg)) if node.msg is not None else ""
        if not isinstance(msg, str):
            msg = str(msg)
        if is_static(cond):
            if not unwrap(cond):
                raise self.error(f"static assertion failed{': ' + msg if msg else ''}", node)
            return
        # Emitted whatever the debug flag, as kl.device_assert is (Triton drops both unless debug).
        kl.device_assert(cond, msg, _semantic=self.sem)


def is_constexpr_annotation(node: ast.expr | None) -> bool:
    """``kl.constexpr`` / ``tl.constexpr`` / ``constexpr`` / string forms."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(".")[-1] == "constexpr"
    if isinstance(node, ast.Attribute):
        return node.attr == "constexpr"
    return isinstance(node, ast.Name) and node.id == "constexpr"


def _kind(value: Any) -> str:
    if is_tensor(value):
        return str(value.type)
    if is_constexpr(value):
        return f"constexpr {type(value.value).__name__}"
    return type(value).__name__
