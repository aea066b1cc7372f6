"""``if``/``for``/``while`` and conditional expressions -> ``scf`` ops.

Region values follow Triton's rules:

* runtime ``if``: the op's results are the variables that existed before the
  ``if`` and were re-bound in a branch, plus those bound in both branches;
  both branches must give them the same type;
* ``for``/``while``: every variable bound in the body that existed before the
  loop is carried (block arguments + ``scf.yield``) and must keep its type;
* compile-time conditions and ``kl.static_range`` generate only the taken
  branch / the unrolled iterations, with the induction variable a constexpr.

Compile-time numbers flowing into regions are promoted to runtime scalars
(``Semantic.to_tensor``), as Triton's assignment rule does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import kdsl.language as kl
from kdsl.frontend.assigned import assigned_names
from kdsl.frontend.base import GeneratorBase, Ret
from kdsl.frontend.early_return import contains_return, first_return
from kdsl.frontend.readonly import inherit
from kdsl.frontend.values import (
    carryable,
    flatten,
    flatten_as,
    generalize,
    is_static,
    is_tensor,
    make_tensor,
    rebuild,
    static_items,
    tree_size,
    type_name,
    unwrap,
    wrap_static,
)
from kdsl.ir.core import Block, Region, Value
from kdsl.ir.dialects.scf import ConditionOp, ForOp, IfOp, WhileOp, YieldOp
from kdsl.ir.types import ScalarType, Type
from kdsl.language.aggregate import Aggregate

_CONDITION_TYPES = (bool, int, type(None))


class ControlFlowMixin(GeneratorBase):
    # --- helpers ----------------------------------------------------------------
    def cond_handle(self, cond: Any, node: ast.AST, what: str) -> Value:
        """A scalar i1 IR value for a runtime condition."""
        if cond.type.shape:
            raise self.error(f"the condition of {what} must be a scalar, got {cond.type} (use kl.where for tiles)", node)
        if cond.type != kl.int1:
            cond = self.sem.cast(cond, kl.int1)
        handle: Value = cond.handle
        return handle

    def static_condition(self, cond: Any, node: ast.AST, what: str) -> bool:
        raw = unwrap(cond)
        if isinstance(raw, kl.condition):
            raise self.error("kl.condition(...) can only be the test of a `while` loop", node)
        if type(raw) not in _CONDITION_TYPES:
            raise self.error(
                f"{what} conditions must be bool, int or None at compile time, not {type(raw).__name__}", node
            )
        return bool(raw)

    def flatten_in(self, block: Block, values: list[Any], as_trees: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
        """Flatten ``values`` (laid out as ``as_trees`` if given) with any promotions
        emitted at the end of ``block``."""
        saved = self.in_block(block)
        try:
            leaves: list[Any] = []
            trees: list[Any] = []
            for i, v in enumerate(values):
                if as_trees is not None:
                    leaves += flatten_as(v, as_trees[i], self.sem)
                    trees.append(as_trees[i])
                    continue
                sub, tree = flatten(v, self.sem)
                leaves += sub
                trees.append(tree)
            return leaves, trees
        finally:
            self.restore(saved)

    def flatten_branches(self, blocks: tuple[Block, Block], a: list[Any], b: list[Any]) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """Flatten the two branches' values of an ``if``; where only compile-time
        fields differ (e.g. a block pointer's shape), both take the general tree."""
        la, ta = self.flatten_in(blocks[0], a)
        lb, tb = self.flatten_in(blocks[1], b)
        if ta == tb:
            return la, ta, lb, tb
        merged = [generalize(x, y) for x, y in zip(ta, tb)]
        la, ta = self.flatten_in(blocks[0], a, [m if m is not None else x for m, x in zip(merged, ta)])
        lb, tb = self.flatten_in(blocks[1], b, [m if m is not None else y for m, y in zip(merged, tb)])
        return la, ta, lb, tb

    def yield_in(self, block: Block, leaves: list[Any]) -> None:
        block.append(YieldOp([t.handle for t in leaves], [], loc=self.builder.loc))

    def bind_results(self, names: list[str], trees: list[Any], values: list[Value]) -> None:
        pos = 0
        for name, tree in zip(names, trees):
            n = tree_size(tree)
            chunk = values[pos : pos + n]
            pos += n
            if n == 1 and chunk[0].name_hint is None:
                chunk[0].name_hint = name
            self.scope[name] = rebuild(tree, chunk, self.sem)

    # --- if ---------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> Ret | None:
        return self.if_on(self.visit(node.test), node)

    def if_on(self, cond: Any, node: ast.If) -> Ret | None:
        """The ``if`` statement ``node`` on its visited condition ``cond``."""
        if is_static(cond):
            taken = node.body if self.static_condition(cond, node.test, "`if`") else node.orelse
            return self.visit_stmts(taken)  # type: ignore[attr-defined, no-any-return]
        if contains_return(node):
            if self.loop_depth:
                ret = first_return(node)
                raise self.unsupported(ret if ret is not None else node, "'return' inside a loop")
            return self.tail_if(cond, node)
        self.runtime_if(cond, node)
        return None

    def visit_branch(self, block: Block, stmts: list[ast.stmt], live: dict[str, Any]) -> tuple[dict[str, Any], Ret | None]:
        self.scope = dict(live)
        saved = self.in_block(block)
        try:
            ret = self.visit_stmts(stmts)  # type: ignore[attr-defined]
        finally:
            self.restore(saved)
        return self.scope, ret

    def runtime_if(self, cond: Any, node: ast.If) -> None:
        c = self.cond_handle(cond, node.test, "`if`")
        live = self.scope
        then_block, else_block = Block(), Block()
        then_scope, _ = self.visit_branch(then_block, node.body, live)
        else_scope, _ = self.visit_branch(else_block, node.orelse, live)
        self.scope = dict(live)
        names = [n for n in live if then_scope[n] is not live[n] or else_scope[n] is not live[n]]
        names += [n for n in then_scope if n not in live and n in else_scope]
        carried: list[str] = []
        for n in names:
            tv, ev = then_scope[n], else_scope[n]
            if tv is ev or (is_static(tv) and is_static(ev) and _same_static(tv, ev)):
                self.scope[n] = tv
            elif carryable(tv) and carryable(ev):
                carried.append(n)
            else:
                raise self.error(_mismatch(n, tv, ev), node)
        then_leaves, then_trees, else_leaves, else_trees = self.flatten_branches(
            (then_block, else_block), [then_scope[n] for n in carried], [else_scope[n] for n in carried]
        )
        for n, tt, et, tv, ev in zip(carried, then_trees, else_trees, *_split(then_leaves, else_leaves, then_trees)):
            if tt != et or [t.type for t in tv] != [t.type for t in ev]:
                raise self.error(_mismatch(n, then_scope[n], else_scope[n], tv, ev), node)
        self.yield_in(then_block, then_leaves)
        self.yield_in(else_block, else_leaves)
        types = [t.type for t in then_leaves]
        op = self.builder.create(IfOp, [c], types, regions=[Region([then_block]), Region([else_block])])
        self.bind_results(carried, then_trees, list(op.results))

    def tail_if(self, cond: Any, node: ast.If) -> Ret:
        c = self.cond_handle(cond, node.test, "`if`")
        live = self.scope
        then_block, else_block = Block(), Block()
        _, r1 = self.visit_branch(then_block, node.body, live)
        _, r2 = self.visit_branch(else_block, node.orelse, live)
        self.scope = live
        v1 = r1.value if r1 is not None else None
        v2 = r2.value if r2 is not None else None
        if (v1 is None) != (v2 is None):
            # Triton returns ``ub.poison`` (an undefined value) on the path that falls off the
            # end; any value is a valid poison, so that path returns zeros of the other's type.
            block = then_block if v1 is None else else_block
            saved = self.in_block(block)
            try:
                filler = self.poison_like(v2 if v1 is None else v1, node)
            finally:
                self.restore(saved)
            v1, v2 = (filler, v2) if v1 is None else (v1, filler)
        if v1 is None:
            self.yield_in(then_block, [])
            self.yield_in(else_block, [])
            self.builder.create(IfOp, [c], [], regions=[Region([then_block]), Region([else_block])])
            return Ret(None)
        l1, t1, l2, t2 = self.flatten_branches((then_block, else_block), [v1], [v2])
        if t1 != t2 or [x.type for x in l1] != [x.type for x in l2]:
            raise self.error(f"inconsistent return types: {_value_text(v1, l1)} and {_value_text(v2, l2)}", node)
        self.yield_in(then_block, l1)
        self.yield_in(else_block, l2)
        op = self.builder.create(IfOp, [c], [x.type for x in l1], regions=[Region([then_block]), Region([else_block])])
        return Ret(rebuild(t1[0], list(op.results), self.sem))

    def poison_like(self, value: Any, node: ast.AST) -> Any:
        """A stand-in for Triton's ``ub.poison``: zeros shaped and typed like ``value``
        (a tensor or a tuple of them), for a return path that returns nothing."""
        if isinstance(value, tuple):
            return tuple(self.poison_like(v, node) for v in value)
        if is_static(value) and isinstance(unwrap(value), (bool, int, float)):
            value = self.sem.to_tensor(value)  # a returned constant decays to a tensor
        if not isinstance(value, kl.tensor):
            raise self.error("inconsistent return types: one path returns a value and another returns nothing", node)
        dtype = value.dtype
        if not isinstance(dtype, ScalarType):  # a pointer: the null address of that type
            return self.sem.cast(kl.full(value.shape, 0, kl.int64, _semantic=self.sem), dtype)
        return kl.full(value.shape, 0, dtype, _semantic=self.sem)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        return self.ifexp_on(self.visit(node.test), node)

    def ifexp_on(self, cond: Any, node: ast.IfExp) -> Any:
        """The conditional expression ``node`` on its visited condition ``cond``."""
        if is_static(cond):
            return self.visit(node.body if self.static_condition(cond, node.test, "conditional expression") else node.orelse)
        if cond.type.shape:
            return kl.where(cond, self.visit(node.body), self.visit(node.orelse), _semantic=self.sem)
        c = self.cond_handle(cond, node.test, "a conditional expression")
        blocks = (Block(), Block())
        values = []
        for block, expr in zip(blocks, (node.body, node.orelse)):
            saved = self.in_block(block)
            try:
                values.append(self.visit(expr))
            finally:
                self.restore(saved)
        v1, v2 = values
        if v1 is None and v2 is None:  # both arms are calls without a value (Triton's void ternary)
            self.yield_in(blocks[0], [])
            self.yield_in(blocks[1], [])
            self.builder.create(IfOp, [c], [], regions=[Region([blocks[0]]), Region([blocks[1]])])
            return None
        l1, t1, l2, t2 = self.flatten_branches(blocks, [v1], [v2])
        if t1 != t2 or [x.type for x in l1] != [x.type for x in l2]:
            raise self.error(
                "Ternary expression with dynamic condition has inconsistent types "
                f"{_value_text(v1, l1)} and {_value_text(v2, l2)}",
                node,
            )
        self.yield_in(blocks[0], l1)
        self.yield_in(blocks[1], l2)
        op = self.builder.create(IfOp, [c], [x.type for x in l1], regions=[Region([blocks[0]]), Region([blocks[1]])])
        return rebuild(t1[0], list(op.results), self.sem)

    # --- for ----------------------------------------------------------------------
    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.unsupported(node, "'for ... else'")
        it = node.iter
        if isinstance(it, ast.Call):
            fn = unwrap(self.visit(it.func))
            args = self.visit_elements(it.args)  # type: ignore[attr-defined]
            kwargs = {kw.arg: self.visit(kw.value) for kw in it.keywords if kw.arg is not None}
            if fn is range or fn is kl.range or fn is kl.static_range:
                lb, ub, step, no_licm = self.range_bounds(fn, args, kwargs, it)
                if fn is kl.static_range:
                    self.unrolled_for(node, _static_range(self, lb, ub, step, it))
                else:
                    self.scf_for(node, lb, ub, step, no_licm)
                return
            iterable = self.call(fn, args, kwargs, it)  # type: ignore[attr-defined]
        else:
            iterable = self.visit(it)
        raw = static_items(iterable)
        if is_tensor(raw):
            raise self.error("cannot iterate over a tensor; use range(...) or kl.static_range(...)", it)
        try:
            items = list(raw)
        except TypeError as exc:
            raise self.error(f"cannot iterate over {type(raw).__name__}", it) from exc
        self.unrolled_for(node, items)

    def range_bounds(self, fn: Any, args: list[Any], kwargs: dict[str, Any],
                     node: ast.AST) -> tuple[Any, Any, Any, bool]:
        """(start, end, step, disable_licm) of a ``range``/``kl.range``/``kl.static_range`` call."""
        if fn is range:
            if kwargs or not 1 <= len(args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", node)
            if len(args) == 1:
                return wrap_static(0), args[0], wrap_static(1), False
            return args[0], args[1], args[2] if len(args) == 3 else wrap_static(1), False
        try:
            obj = fn(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"bad call to kl.{fn.__name__}: {exc}", node) from exc
        end = getattr(obj, "end", getattr(obj, "stop", None))
        return obj.start, end, obj.step, bool(getattr(obj, "disable_licm", False))

    def unrolled_for(self, node: ast.For, items: list[Any]) -> None:
        self.loop_depth += 1
        try:
            for item in items:
                self._bind_loop_target(node.target, wrap_static(item))  # type: ignore[attr-defined]
                self.visit_stmts(node.body)  # type: ignore[attr-defined]
        finally:
            self.loop_depth -= 1

    def scf_for(self, node: ast.For, lb: Any, ub: Any, step: Any, disable_licm: bool = False) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node.target, "tuple targets in a range loop")
        if is_static(step) and unwrap(step) == 0:
            raise self.error("range() step must not be zero", node.iter)
        bounds = [self.sem.to_tensor(b) for b in (lb, ub, step)]
        for b in bounds:
            if b.type.shape or not isinstance(b.type, ScalarType) or not b.type.is_integer:
                raise self.error(f"for-loop bounds and step must be integer scalars, got {b.type}", node.iter)
        iv_t = _promote(_promote(bounds[0].type, bounds[1].type), bounds[2].type)
        bounds = [b if b.type == iv_t else self.sem.cast(b, iv_t) for b in bounds]
        target = node.target.id
        names, init_leaves, trees, fixed = self.loop_carried(node.body, exclude=target)
        body = Block([iv_t, *[t.type for t in init_leaves]])
        body.args[0].name_hint = target
        live = self.scope
        self.scope = dict(live)
        self.scope[target] = make_tensor(body.args[0], self.sem)
        self.bind_block_args(names, trees, body.args[1:])
        inherit(self.sem.read_only, list(body.args[1:]), [t.handle for t in init_leaves])
        self.loop_body(node, body, names, init_leaves, trees, fixed, live)
        op = self.builder.create(
            ForOp, [b.handle for b in bounds] + [t.handle for t in init_leaves], [t.type for t in init_leaves],
            _loop_attrs(disable_licm), regions=[Region([body])],
        )
        self.bind_results(names, trees, list(op.results))

    def loop_carried(self, body: list[ast.stmt], exclude: str | None = None) -> tuple[list[str], list[Any], list[Any], dict[str, Any]]:
        """(carried names, their initial leaves, trees, non-carryable names -> value)."""
        names: list[str] = []
        fixed: dict[str, Any] = {}
        for n in assigned_names(body):
            if n == exclude or n not in self.scope:
                continue
            if carryable(self.scope[n]):
                names.append(n)
            else:
                fixed[n] = self.scope[n]
        leaves: list[Any] = []
        trees: list[Any] = []
        for n in names:
            sub, tree = flatten(self.scope[n], self.sem)
            leaves += sub
            trees.append(tree)
        return names, leaves, trees, fixed

    def bind_block_args(self, names: list[str], trees: list[Any], args: list[Any]) -> None:
        pos = 0
        for name, tree in zip(names, trees):
            n = tree_size(tree)
            chunk = args[pos : pos + n]
            pos += n
            if n == 1:
                chunk[0].name_hint = name
            self.scope[name] = rebuild(tree, chunk, self.sem)

    def loop_body(
        self,
        node: ast.For | ast.While,
        body: Block,
        names: list[str],
        init_leaves: list[Any],
        trees: list[Any],
        fixed: dict[str, Any],
        live: dict[str, Any],
        merge: Callable[[list[Any]], list[Any]] | None = None,
    ) -> None:
        """Visit the body into ``body``, check carried types, add the yield; restore scope.

        ``merge``, if given, maps the body's final leaves to the yielded ones (emitted at
        the end of ``body``; lane mode keeps finished lanes' values with it)."""
        saved = self.in_block(body)
        self.loop_depth += 1
        try:
            self.visit_stmts(node.body)  # type: ignore[attr-defined]
        finally:
            self.loop_depth -= 1
            self.restore(saved)
        for n, v in fixed.items():
            if self.scope[n] is not v and not (is_static(self.scope[n]) and _same_static(self.scope[n], v)):
                raise self.error(f"variable {n} of type {_kind(v)} cannot be re-assigned inside a loop", node)
        end_leaves, end_trees = self.flatten_in(body, [self.scope[n] for n in names])
        pos = 0
        for n, t0, t1 in zip(names, trees, end_trees):
            k = tree_size(t0)
            before = init_leaves[pos : pos + k]
            after = end_leaves[pos : pos + tree_size(t1)]
            pos += k
            if t0 != t1 or [x.type for x in before] != [x.type for x in after]:
                raise self.error(
                    f"Loop-carried variable {n} has initial type {_value_text(live[n], before)} but is re-assigned "
                    f"to {_value_text(self.scope[n], after)} in loop; its type must stay the same",
                    node,
                )
        if merge is not None:
            saved = self.in_block(body)
            try:
                end_leaves = merge(end_leaves)
            finally:
                self.restore(saved)
        self.yield_in(body, end_leaves)
        self.scope = dict(live)

    # --- while ----------------------------------------------------------------------
    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.unsupported(node, "'while ... else'")
        names, init_leaves, trees, fixed = self.loop_carried(node.body)
        types = [t.type for t in init_leaves]
        live = self.scope
        before = Block(types)
        self.scope = dict(live)
        self.bind_block_args(names, trees, before.args)
        inherit(self.sem.read_only, list(before.args), [t.handle for t in init_leaves])
        saved = self.in_block(before)
        disable_licm = False
        try:
            cond = self.visit(node.test)
            if isinstance(cond, kl.condition):
                disable_licm, cond = cond.disable_licm, cond.condition
            if is_static(cond):
                if not self.static_condition(cond, node.test, "`while`"):
                    self.scope = dict(live)
                    _discard(before)
                    return
                cond = self.sem.to_tensor(True)
            c = self.cond_handle(cond, node.test, "`while`")
            before.append(ConditionOp([c, *before.args], [], loc=self.builder.loc))
        finally:
            self.restore(saved)
        after = Block(types)
        self.scope = dict(live)
        self.bind_block_args(names, trees, after.args)
        inherit(self.sem.read_only, list(after.args), [t.handle for t in init_leaves])
        self.loop_body(node, after, names, init_leaves, trees, fixed, live)
        op = self.builder.create(
            WhileOp, [t.handle for t in init_leaves], types, _loop_attrs(disable_licm),
            regions=[Region([before]), Region([after])],
        )
        self.bind_results(names, trees, list(op.results))


def _loop_attrs(disable_licm: bool) -> dict[str, Any]:
    """Attributes of a loop op: Triton's per-loop ``disable_licm`` option when set."""
    return {"disable_licm": True} if disable_licm else {}


def _split(a: list[Any], b: list[Any], trees: list[Any]) -> tuple[list[list[Any]], list[list[Any]]]:
    out_a, out_b, pos = [], [], 0
    for t in trees:
        n = tree_size(t)
        out_a.append(a[pos : pos + n])
        out_b.append(b[pos : pos + n])
        pos += n
    return out_a, out_b


def _same_static(a: Any, b: Any) -> bool:
    ua, ub = unwrap(a), unwrap(b)
    try:
        return type(ua) is type(ub) and bool(ua == ub)
    except Exception:
        return ua is ub


def _kind(v: Any) -> str:
    if is_tensor(v):
        return str(v.type)
    raw = unwrap(v)
    if isinstance(raw, Aggregate):
        return type_name(raw)
    if isinstance(raw, (bool, int, float)):
        return f"constexpr {type(raw).__name__}"
    return type(raw).__name__


def _types_text(leaves: list[Any]) -> str:
    if len(leaves) == 1:
        return str(leaves[0].type)
    return "(" + ", ".join(str(x.type) for x in leaves) + ")"


def _value_text(value: Any, leaves: list[Any]) -> str:
    """An aggregate by its description (its static parts matter), anything else by its leaf types."""
    if isinstance(unwrap(value), Aggregate):
        return type_name(value)
    return _types_text(leaves)


def _mismatch(name: str, tv: Any, ev: Any, tl: list[Any] | None = None, el: list[Any] | None = None) -> str:
    t1 = _value_text(tv, tl) if tl else _kind(tv)
    t2 = _value_text(ev, el) if el else _kind(ev)
    return f"Mismatched type for {name} between then block ({t1}) and else block ({t2})"


def _promote(a: Type, b: Type) -> ScalarType:
    """Triton's integer promotion for loop bounds."""
    assert isinstance(a, ScalarType) and isinstance(b, ScalarType)
    if a.is_unsigned == b.is_unsigned:
        return a if a.bitwidth > b.bitwidth else b
    if a.is_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth >= a.bitwidth else a


def _static_range(gen: Any, lb: Any, ub: Any, step: Any, node: ast.AST) -> list[int]:
    vals = [unwrap(v) for v in (lb, ub, step)]
    if not all(isinstance(v, int) for v in vals):
        raise gen.error("kl.static_range bounds must be compile-time integers", node)
    if vals[2] == 0:
        raise gen.error("kl.static_range step must not be zero", node)
    return list(range(vals[0], vals[1], vals[2]))


def _discard(block: Block) -> None:
    for op in reversed(block.ops):
        for inner in reversed(list(op.walk())):
            inner.drop_operands()
    block.ops.clear()
