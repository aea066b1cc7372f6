"""Expressions: names, constants, operators, attributes, subscripts, literals.

The visitor only handles Python structure. Operations on two compile-time
values fold in Python (with Python semantics, as Triton's ``constexpr``
dunders do); anything involving a runtime value goes to ``Semantic``, which
owns typing, promotion and broadcasting.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from kdsl.frontend.base import GeneratorBase
from kdsl.frontend.scope import MISSING
from kdsl.frontend.values import is_static, is_tensor, static_items, unwrap, wrap_static

BINARY: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("add", operator.add),
    ast.Sub: ("sub", operator.sub),
    ast.Mult: ("mul", operator.mul),
    ast.Div: ("truediv", operator.truediv),
    ast.FloorDiv: ("floordiv", operator.floordiv),
    ast.Mod: ("mod", operator.mod),
    ast.Pow: ("pow", operator.pow),
    ast.LShift: ("lshift", operator.lshift),
    ast.RShift: ("rshift", operator.rshift),
    ast.BitAnd: ("and_", operator.and_),
    ast.BitOr: ("or_", operator.or_),
    ast.BitXor: ("xor", operator.xor),
}

COMPARE: dict[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Eq: ("eq", operator.eq),
    ast.NotEq: ("ne", operator.ne),
    ast.Lt: ("lt", operator.lt),
    ast.LtE: ("le", operator.le),
    ast.Gt: ("gt", operator.gt),
    ast.GtE: ("ge", operator.ge),
}

def _as_items(v: Any) -> Any:
    """A plain list or tuple as a tuple of its (unwrapped) items, for equality; other values as they are."""
    if type(v) in (list, tuple):
        return tuple(_as_items(unwrap(x)) for x in v)
    return v


UNARY: dict[type[ast.unaryop], tuple[str, Callable[[Any], Any]]] = {
    ast.USub: ("neg", operator.neg),
    ast.UAdd: ("pos", operator.pos),
    ast.Invert: ("invert", operator.invert),
    ast.Not: ("not_", operator.not_),
}


class ExprMixin(GeneratorBase):
    # --- leaves -------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> Any:
        return wrap_static(node.value)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.scope:
            return self.scope[node.id]
        value, err = self.resolver.lookup(node.id)
        if value is MISSING:
            raise self.error(err or f"name '{node.id}' is not defined", node)
        return wrap_static(value)

    # --- operators ----------------------------------------------------------------
    def binary(self, name: str, fn: Callable[[Any, Any], Any], lhs: Any, rhs: Any) -> Any:
        if is_static(lhs) and is_static(rhs):
            return wrap_static(fn(unwrap(lhs), unwrap(rhs)))
        return self.sem.binary(name, lhs, rhs)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        entry = BINARY.get(type(node.op))
        if entry is None:
            raise self.unsupported(node, f"binary operator '{type(node.op).__name__}'")
        lhs = self.visit(node.left)
        rhs = self.visit(node.right)
        return self.binary(entry[0], entry[1], lhs, rhs)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        name, fn = UNARY[type(node.op)]
        operand = self.visit(node.operand)
        if is_static(operand):
            return wrap_static(fn(unwrap(operand)))
        return self.sem.unary(name, operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        result = self.visit(node.values[0])
        for value_node in node.values[1:]:
            if is_static(result):
                # Python short-circuit on compile-time values.
                if bool(unwrap(result)) != is_and:
                    return result
                result = self.visit(value_node)
                continue
            rhs = self.visit(value_node)
            result = self.sem.binary("logical_and" if is_and else "logical_or", result, rhs)
        return result

    def visit_Compare(self, node: ast.Compare) -> Any:
        lhs = self.visit(node.left)
        result: Any = None
        for op, right in zip(node.ops, node.comparators):
            rhs = self.visit(right)
            part = self.compare(op, lhs, rhs, node)
            if result is None:
                result = part
            elif is_static(result) and is_static(part):
                result = wrap_static(bool(unwrap(result)) and bool(unwrap(part)))
            elif is_static(result):
                result = part if unwrap(result) else result
            else:
                result = self.sem.binary("logical_and", result, part)
            lhs = rhs
        return result

    def compare(self, op: ast.cmpop, lhs: Any, rhs: Any, node: ast.AST) -> Any:
        if isinstance(op, (ast.Is, ast.IsNot)):
            same = unwrap(lhs) is unwrap(rhs)
            return wrap_static(same if isinstance(op, ast.Is) else not same)
        if isinstance(op, (ast.In, ast.NotIn)):
            if not (is_static(lhs) and is_static(rhs)):
                raise self.error("'in' needs compile-time operands", node)
            inside = unwrap(lhs) in unwrap(rhs)
            return wrap_static(inside if isinstance(op, ast.In) else not inside)
        if isinstance(op, (ast.Eq, ast.NotEq)) and is_static(lhs) and is_static(rhs):
            # Triton compares tuples and lists by their items (``x.shape == [BLOCK]`` holds)
            same = _as_items(unwrap(lhs)) == _as_items(unwrap(rhs))
            return wrap_static(same if isinstance(op, ast.Eq) else not same)
        name, fn = COMPARE[type(op)]
        return self.binary(name, fn, lhs, rhs)

    # --- attributes and subscripts -------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        target = base if is_tensor(base) else unwrap(base)
        try:
            return wrap_static(getattr(target, node.attr))
        except AttributeError as exc:
            kind = str(base.type) if is_tensor(base) else type(target).__name__
            raise self.error(f"'{kind}' object has no attribute '{node.attr}'", node) from exc

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base = self.visit(node.value)
        index = self.visit(node.slice)
        if is_tensor(base):
            return base[_unwrap_index(index)]
        if not is_static(index):
            raise self.error("cannot index a compile-time value with a runtime value", node.slice)
        return wrap_static(unwrap(base)[_unwrap_index(index)])

    def visit_Slice(self, node: ast.Slice) -> slice:
        parts = [None if p is None else unwrap(self.visit(p)) for p in (node.lower, node.upper, node.step)]
        for p, sub in zip(parts, (node.lower, node.upper, node.step)):
            if sub is not None and is_tensor(p):
                raise self.error("slice bounds must be compile-time constants", sub)
        return slice(*parts)

    # --- literals ---------------------------------------------------------------------
    def visit_elements(self, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                items = unwrap(self.visit(elt.value))
                if is_tensor(items) or not isinstance(items, (tuple, list)):
                    raise self.error("only tuples and lists can be unpacked with '*'", elt)
                out.extend(items)
            else:
                out.append(self.visit(elt))
        return out

    def visit_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.visit_elements(node.elts))

    def visit_List(self, node: ast.List) -> list[Any]:
        return self.visit_elements(node.elts)

    def visit_Dict(self, node: ast.Dict) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.unsupported(node, "'**' in dict literal")
            key = self.visit(k)
            if not is_static(key):
                raise self.error("dict keys must be compile-time constants", k)
            out[unwrap(key)] = self.visit(v)
        return out

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            assert isinstance(value, ast.FormattedValue)
            v = self.visit(value.value)
            if not is_static(v):
                raise self.error("f-strings can only format compile-time values", value)
            raw = unwrap(v)
            if value.conversion == ord("r"):
                raw = repr(raw)
            elif value.conversion == ord("s"):
                raw = str(raw)
            elif value.conversion == ord("a"):
                raw = ascii(raw)
            spec = unwrap(self.visit(value.format_spec)) if value.format_spec is not None else ""
            parts.append(format(raw, spec))
        return wrap_static("".join(parts))

    # --- comprehensions over compile-time iterables --------------------------------------
    def visit_ListComp(self, node: ast.ListComp) -> list[Any]:
        return self.comprehension(node.elt, node.generators)

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> tuple[Any, ...]:
        return tuple(self.comprehension(node.elt, node.generators))

    def comprehension(self, elt: ast.expr, generators: list[ast.comprehension]) -> list[Any]:
        saved = dict(self.scope)
        out: list[Any] = []
        try:
            self._comp_level(elt, generators, 0, out)
        finally:
            self.scope = saved
        return out

    def _comp_level(self, elt: ast.expr, gens: list[ast.comprehension], i: int, out: list[Any]) -> None:
        if i == len(gens):
            out.append(self.visit(elt))
            return
        gen = gens[i]
        iterable = static_items(self.visit(gen.iter))
        if is_tensor(iterable):
            raise self.error("comprehensions can only iterate over compile-time values", gen.iter)
        for item in iterable:
            self._bind_loop_target(gen.target, wrap_static(item))
            conds = [self.visit(c) for c in gen.ifs]
            if any(not is_static(c) for c in conds):
                raise self.error("comprehension conditions must be compile-time constants", gen)
            if all(unwrap(c) for c in conds):
                self._comp_level(elt, gens, i + 1, out)

    def _bind_loop_target(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            items = unwrap(value)
            if not isinstance(items, (tuple, list)) or len(items) != len(target.elts):
                raise self.error("cannot unpack loop value", target)
            for t, v in zip(target.elts, items):
                self._bind_loop_target(t, wrap_static(v))
            return
        raise self.unsupported(target, "this loop target")


def _unwrap_index(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(_unwrap_index(i) for i in index)
    return index if is_tensor(index) else unwrap(index)
