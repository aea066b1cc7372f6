"""Lane mode: the function of ``kl.map_elementwise`` traced as masked (SIMT) execution.

Triton runs ``map_elementwise``'s scalar function once per element, with real branches.
kdsl's IR is tile-level and has no per-element region, so the frontend generates the
scalar function once, over whole tiles, in *lane mode*: each element of the mapped
(broadcast) arguments is a lane, and the generator tracks ``active``, the i1 mask of
the lanes whose own control flow reaches the code being emitted (the function's first
parameter, all true at the ``map_elementwise`` call). Why this design: it needs no new
IR op, so the interpreter, the optimiser, the work-item lowering and all three renderers
run it unchanged, and every construct keeps Triton's per-element meaning:

* ``if``/``elif``/``else`` on a per-lane condition ``c`` is if-converted: both branches
  are emitted, with ``active & c`` and ``active & ~c``; a variable bound in them is
  merged with ``where(c, then, else)`` (the rules of which variables survive, and the
  type checks, are those of a runtime ``if``). A conditional expression likewise.
* early ``return``: ``early_return.py`` already makes every returning ``if`` the tail
  of its block, so the two branches' returned values merge with ``where(c, ...)``.
* ``while`` on a per-lane condition becomes an ``scf.while`` that carries the mask of
  the lanes still looping (``active & cond``, and-ed with the previous mask, so a lane
  that stopped never restarts) and runs while any lane does (a ``max`` reduction); the
  body runs with that mask, and a lane that has stopped keeps its values
  (``where(mask, new, old)`` on every carried value).
* ``for i in range(lo, hi, step)`` with a per-lane bound is the same loop over a
  per-lane induction variable (``step > 0: i < hi``, ``step < 0: i > hi``; a lane whose
  step is 0 runs no iteration, where Python would raise).
* a uniform (scalar) condition keeps the ordinary ``scf.if``/``scf.for``/``scf.while``.
* calls to other ``@jit`` functions are generated in lane mode too and receive the
  active mask, so nested code masks its effects the same way.

A scalar value and a per-lane one are the same Triton type (both are scalars in the
scalar function), so values crossing a branch or loop boundary are broadcast to the
lanes' shape first (``lane_value``). Effects are restricted to the active lanes by
:class:`~kdsl.frontend.semantic_lanes.LaneSemantic`; operations that work across
elements (reductions, reshapes, ``dot``, ...) have no meaning on a scalar and are
compile errors here. An inactive lane still computes its (discarded) values: nothing
there can trap, since integer division by zero is defined (it gives 0) on every
backend, loads are masked and loops stop for inactive lanes. ``break``/``continue`` and
``return`` inside a loop are not supported, as in ordinary kdsl functions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from kdsl.frontend.assigned import assigned_names
from kdsl.frontend.base import Ret
from kdsl.frontend.calls import CallMixin
from kdsl.frontend.control_flow import ControlFlowMixin, _discard, _mismatch, _promote, _same_static
from kdsl.frontend.early_return import contains_return, first_return
from kdsl.frontend.values import NUMBER_TYPES, carryable, flatten, is_static, is_tensor, make_tensor, rebuild, unwrap
from kdsl.ir.core import Block, Region
from kdsl.ir.dialects.scf import ConditionOp, WhileOp
from kdsl.ir.types import ScalarType, i1
from kdsl.language.core import is_builtin

# kl functions (and tensor methods) that combine or rearrange elements: meaningless on
# the scalars of a mapped function.
CROSS_ELEMENT = frozenset({
    "reduce", "associative_scan", "sum", "max", "min", "argmax", "argmin", "xor_sum", "cumsum", "cumprod",
    "dot", "dot_scaled", "arange", "reshape", "view", "ravel", "trans", "permute", "broadcast", "broadcast_to",
    "expand_dims", "join", "split", "interleave", "cat", "sort", "topk", "flip", "gather", "histogram",
    "softmax", "bitonic_merge", "make_block_ptr", "make_tensor_descriptor", "advance", "load_tensor_descriptor",
    "store_tensor_descriptor", "map_elementwise", "debug_barrier",
})


class LaneMixin(CallMixin, ControlFlowMixin):
    """Lane-mode overrides of calls and control flow; plain behaviour when ``lanes`` is None."""

    # --- the map_elementwise entry -------------------------------------------------------
    def map_function(self, fn: Any, args: list[Any], mask: Any, n_inputs: int, pack: int) -> Any:
        """``Semantic.map_function``: call ``fn`` in lane mode on the per-lane ``args``."""
        from kdsl.runtime.jit import KernelFunction

        f = unwrap(fn)
        if not isinstance(f, KernelFunction):
            shown = getattr(f, "__name__", type(f).__name__)
            raise self.error(f"kl.map_elementwise: the mapped function must be a @kdsl.jit function, got {shown!r}")
        try:
            f.signature.bind(*args)
        except TypeError as exc:
            how = f"{n_inputs} input(s) x pack={pack}" if pack > 1 else f"{n_inputs} input(s)"
            raise self.error(
                f"kl.map_elementwise: '{f.__name__}' cannot take the {len(args)} scalar arguments it is mapped "
                f"with ({how}): {exc}"
            ) from None
        return self.call_kernel(f, list(args), {}, None, lanes=mask)

    # --- calls ------------------------------------------------------------------------------
    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if self.lanes is None:
            return super().call(fn, args, kwargs, node)
        raw = unwrap(fn)
        name = getattr(raw, "__name__", "")
        kl_function = is_builtin(raw) and str(getattr(raw, "__module__", "")).startswith("kdsl.language")
        method = callable(raw) and is_tensor(getattr(raw, "__self__", None))
        if name in CROSS_ELEMENT and (kl_function or method):
            raise self.error(
                f"kl.{name} cannot be used inside a kl.map_elementwise function: its values are scalars "
                f"(one element each), and kl.{name} works across the elements of a tile",
                node,
            )
        result = super().call(fn, args, kwargs, node)
        for t in _tensors(result):
            if t.shape not in ((), self.lanes):
                raise self.error(
                    f"inside a kl.map_elementwise function values are scalars, but this makes a tile of shape "
                    f"{t.shape}", node
                )
        return result

    def call_kernel(
        self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST | None = None, lanes: Any = None
    ) -> Any:
        if lanes is None and self.lanes is not None:
            lanes = self.active
        return super().call_kernel(fn, args, kwargs, node, lanes)

    # --- values ------------------------------------------------------------------------------
    def lane_value(self, value: Any) -> Any:
        """``value`` with its scalar leaves broadcast to the lanes (numbers become tensors)."""
        if not self.lanes:
            return value
        if is_tensor(value):
            return self.sem.broadcast_to(value, self.lanes) if not value.shape else value
        raw = unwrap(value)
        if isinstance(raw, NUMBER_TYPES):
            return self.sem.broadcast_to(self.sem.to_tensor(raw), self.lanes)
        if isinstance(raw, tuple):
            return tuple(self.lane_value(v) for v in raw)
        return value

    def lane_cond(self, cond: Any, node: ast.AST, what: str) -> Any:
        """The per-lane i1 condition, or None if ``cond`` is uniform (compile-time or scalar)."""
        if self.lanes is None or is_static(cond) or not is_tensor(cond) or not cond.shape:
            return None
        if cond.shape != self.lanes:
            raise self.error(
                f"the condition of {what} has shape {cond.shape}; inside a kl.map_elementwise function it must be "
                f"a scalar", node
            )
        return cond if cond.dtype == i1 else self.sem.cast(cond, i1)

    def select(self, c: Any, a: Any, b: Any, mismatch: Callable[[list[Any], list[Any]], str], node: ast.AST) -> Any:
        """``where(c, a, b)`` leaf by leaf (same structure and types required)."""
        la, ta = flatten(self.lane_value(a), self.sem)
        lb, tb = flatten(self.lane_value(b), self.sem)
        if ta != tb or [x.type for x in la] != [x.type for x in lb]:
            raise self.error(mismatch(la, lb), node)
        merged = [self.sem.where(c, x, y).handle for x, y in zip(la, lb)]
        return rebuild(ta, merged, self.sem)

    def flatten_in(self, block: Block, values: list[Any], as_trees: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
        if self.lanes:
            saved = self.in_block(block)
            try:
                values = [self.lane_value(v) for v in values]
            finally:
                self.restore(saved)
        return super().flatten_in(block, values, as_trees)

    def loop_carried(self, body: list[ast.stmt], exclude: str | None = None) -> tuple[list[str], list[Any], list[Any], dict[str, Any]]:
        if self.lanes:
            for n in assigned_names(body):
                if n != exclude and n in self.scope and carryable(self.scope[n]):
                    self.scope[n] = self.lane_value(self.scope[n])
        return super().loop_carried(body, exclude)

    def any_lane(self, mask: Any) -> Any:
        """Scalar i1: is any lane of ``mask`` set?"""
        as_int = self.sem.where(mask, 1, 0)
        return self.sem.compare("ne", self.sem.reduce_minmax(as_int, "max"), 0)

    # --- if ------------------------------------------------------------------------------------
    def if_on(self, cond: Any, node: ast.If) -> Ret | None:
        c = self.lane_cond(cond, node.test, "`if`")
        if c is None:
            return super().if_on(cond, node)
        if contains_return(node):
            if self.loop_depth:
                ret = first_return(node)
                raise self.unsupported(ret if ret is not None else node, "'return' inside a loop")
            (_, r1), (_, r2) = self.lane_branches(c, node)
            v1 = r1.value if r1 is not None else None
            v2 = r2.value if r2 is not None else None
            if (v1 is None) != (v2 is None):  # Triton's poison for the path without a value
                v1, v2 = (self.poison_like(v2, node), v2) if v1 is None else (v1, self.poison_like(v1, node))
            if v1 is None:
                return Ret(None)
            text = lambda la, lb: f"inconsistent return types: {_scalar_text(la)} and {_scalar_text(lb)}"  # noqa: E731
            return Ret(self.select(c, v1, v2, text, node))
        self.lane_if(c, node)
        return None

    def lane_branches(self, c: Any, node: ast.If) -> list[tuple[dict[str, Any], Ret | None]]:
        """Visit both branches (in the current block) with their lanes; restore the scope."""
        live, outer = self.scope, self.active
        out: list[tuple[dict[str, Any], Ret | None]] = []
        for stmts, invert in ((node.body, False), (node.orelse, True)):
            if not stmts:
                out.append((dict(live), None))
                continue
            lanes = self.sem.invert(c) if invert else c
            self.active = self.sem.logical_and(outer, lanes)
            self.scope = dict(live)
            try:
                ret = self.visit_stmts(stmts)  # type: ignore[attr-defined]
            finally:
                self.active = outer
            out.append((self.scope, ret))
        self.scope = live
        return out

    def lane_if(self, c: Any, node: ast.If) -> None:
        (then_scope, _), (else_scope, _) = self.lane_branches(c, node)
        live = self.scope
        self.scope = dict(live)
        names = [n for n in live if then_scope[n] is not live[n] or else_scope[n] is not live[n]]
        names += [n for n in then_scope if n not in live and n in else_scope]
        for n in names:
            tv, ev = then_scope[n], else_scope[n]
            if tv is ev or (is_static(tv) and is_static(ev) and _same_static(tv, ev)):
                self.scope[n] = tv
                continue
            if not (carryable(tv) and carryable(ev)):
                raise self.error(_mismatch(n, tv, ev), node)
            text = lambda la, lb, n=n: (  # noqa: E731
                f"Mismatched type for {n} between then block ({_scalar_text(la)}) and else block ({_scalar_text(lb)})"
            )
            self.scope[n] = self.select(c, tv, ev, text, node)

    def ifexp_on(self, cond: Any, node: ast.IfExp) -> Any:
        c = self.lane_cond(cond, node.test, "a conditional expression")
        if c is None:
            return super().ifexp_on(cond, node)
        outer = self.active
        values = []
        for expr, lanes in ((node.body, c), (node.orelse, self.sem.invert(c))):
            self.active = self.sem.logical_and(outer, lanes)
            try:
                values.append(self.visit(expr))
            finally:
                self.active = outer
        a, b = values
        if a is None and b is None:  # void arms: their effects already ran under their lanes
            return None
        text = lambda la, lb: (  # noqa: E731
            "Ternary expression with dynamic condition has inconsistent types "
            f"{_scalar_text(la)} and {_scalar_text(lb)}"
        )
        return self.select(c, a, b, text, node)

    # --- while -----------------------------------------------------------------------------------
    def visit_While(self, node: ast.While) -> None:
        if not self.lanes or node.orelse or not self.lane_test(node):
            super().visit_While(node)
            return
        names, init_leaves, trees, fixed = self.loop_carried(node.body)
        live = self.scope

        def condition(args: list[Any]) -> Any:
            self.bind_block_args(names, trees, args)
            cond = self.visit(node.test)
            c = self.lane_cond(cond, node.test, "`while`")
            return c if c is not None else self.lane_value(self.sem.cast(cond, i1))

        results = self.lane_loop(node, init_leaves, [], condition, lambda extra: [], names, trees, fixed, live)
        self.bind_results(names, trees, results)

    def lane_test(self, node: ast.While) -> bool:
        """Is the loop's condition per-lane? (visited once in a discarded block to find out)."""
        names, leaves, trees, _ = self.loop_carried(node.body)
        probe = Block([t.type for t in leaves])
        live = self.scope
        self.scope = dict(live)
        self.bind_block_args(names, trees, list(probe.args))
        saved = self.in_block(probe)
        try:
            cond = self.visit(node.test)
            lane = self.lane_cond(cond, node.test, "`while`") is not None
        finally:
            self.restore(saved)
            self.scope = live
            _discard(probe)
        return lane

    def lane_loop(
        self,
        node: ast.For | ast.While,
        init_leaves: list[Any],
        extra_init: list[Any],
        condition: Callable[[list[Any]], Any],
        step: Callable[[list[Any]], list[Any]],
        names: list[str],
        trees: list[Any],
        fixed: dict[str, Any],
        live: dict[str, Any],
    ) -> list[Any]:
        """An ``scf.while`` carrying (still-running mask, ``extra`` values, carried leaves).

        ``condition(args)`` binds the carried names to ``args`` in the scope and gives the
        per-lane condition; ``step(extra)`` the next ``extra`` values (e.g. ``i + step``).
        Returns the loop's results for the carried leaves."""
        k = len(extra_init)
        types = [self.active.type, *[t.type for t in extra_init], *[t.type for t in init_leaves]]
        before = Block(types)
        self.scope = dict(live)
        saved = self.in_block(before)
        outer = self.active
        self.active = running = make_tensor(before.args[0], self.sem)  # a condition's loads: running lanes only
        try:
            self.bind_extra(node, [make_tensor(a, self.sem) for a in before.args[1 : 1 + k]])
            still = self.sem.logical_and(running, condition(list(before.args[1 + k :])))
            before.append(ConditionOp([self.any_lane(still).handle, still.handle, *before.args[1:]], [],
                                      loc=self.builder.loc))
        finally:
            self.active = outer
            self.restore(saved)
        after = Block(types)
        self.scope = dict(live)
        self.bind_block_args(names, trees, list(after.args[1 + k :]))
        mask = make_tensor(after.args[0], self.sem)
        extra = [make_tensor(a, self.sem) for a in after.args[1 : 1 + k]]
        self.bind_extra(node, extra)
        old = [make_tensor(a, self.sem) for a in after.args[1 + k :]]

        def merge(leaves: list[Any]) -> list[Any]:
            kept = [self.sem.where(mask, new, prev) for new, prev in zip(leaves, old)]
            return [mask, *step(extra), *kept]

        self.active = mask
        try:
            self.loop_body(node, after, names, init_leaves, trees, fixed, live, merge)
        finally:
            self.active = outer
        inits = [outer.handle, *[t.handle for t in extra_init], *[t.handle for t in init_leaves]]
        op = self.builder.create(WhileOp, inits, types, regions=[Region([before]), Region([after])])
        return list(op.results)[1 + k :]

    def bind_extra(self, node: ast.For | ast.While, extra: list[Any]) -> None:
        """A lane ``for`` carries its induction variable: bind it to the loop target."""
        if extra and isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            extra[0].handle.name_hint = node.target.id
            self.scope[node.target.id] = extra[0]

    # --- for -----------------------------------------------------------------------------------
    def scf_for(self, node: ast.For, lb: Any, ub: Any, step: Any, disable_licm: bool = False) -> None:
        per_lane = [b for b in (lb, ub, step) if is_tensor(b) and b.shape]
        if not self.lanes or not per_lane:
            super().scf_for(node, lb, ub, step, disable_licm)
            return
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node.target, "tuple targets in a range loop")
        bounds = [self.sem.to_tensor(b) for b in (lb, ub, step)]
        for b in bounds:
            if b.shape not in ((), self.lanes) or not isinstance(b.dtype, ScalarType) or not b.dtype.is_integer:
                raise self.error(f"for-loop bounds and step must be integer scalars, got {b.type}", node.iter)
        iv_t = _promote(_promote(bounds[0].dtype, bounds[1].dtype), bounds[2].dtype)
        lo, hi, st = [b if b.dtype == iv_t else self.sem.cast(b, iv_t) for b in bounds]
        fixed_step = unwrap(step) if is_static(step) else None
        if fixed_step == 0:
            raise self.error("range() step must not be zero", node.iter)
        target = node.target.id
        names, init_leaves, trees, fixed = self.loop_carried(node.body, exclude=target)
        live = self.scope
        sem = self.sem

        def in_range(args: list[Any]) -> Any:
            self.bind_block_args(names, trees, args)
            i = self.scope[target]
            if fixed_step is not None:
                return sem.compare("lt" if fixed_step > 0 else "gt", i, hi)
            up = sem.logical_and(sem.compare("gt", st, 0), sem.compare("lt", i, hi))
            down = sem.logical_and(sem.compare("lt", st, 0), sem.compare("gt", i, hi))
            return self.lane_value(sem.logical_or(up, down))

        results = self.lane_loop(node, init_leaves, [sem.broadcast_to(lo, self.lanes)], in_range,
                                 lambda extra: [sem.add(extra[0], st)], names, trees, fixed, live)
        self.bind_results(names, trees, results)


def _scalar_text(leaves: list[Any]) -> str:
    """The element types of per-lane values (what they are in Triton's scalar function)."""
    if len(leaves) == 1:
        return str(leaves[0].dtype)
    return "(" + ", ".join(str(x.dtype) for x in leaves) + ")"


def _tensors(value: Any) -> list[Any]:
    if is_tensor(value):
        return [value]
    raw = unwrap(value)
    if isinstance(raw, (tuple, list)):
        return [t for v in raw for t in _tensors(v)]
    return []

