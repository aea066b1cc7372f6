"""Generation of one ``tile.func`` from one kernel specialisation."""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdsl.errors import CompilationError
from kdsl.frontend.lanes import LaneMixin
from kdsl.frontend.scope import NameResolver, closure_cells
from kdsl.frontend.semantic import Semantic
from kdsl.frontend.semantic_lanes import LaneSemantic
from kdsl.frontend.specialization import ParamSpec
from kdsl.frontend.values import flatten, make_tensor, rebuild, wrap_static
from kdsl.frontend.visitor_expr import ExprMixin
from kdsl.frontend.visitor_stmt import StmtMixin
from kdsl.ir.core import Block, Builder, Region
from kdsl.ir.dialects.tile import FuncOp, ReturnOp
from kdsl.ir.types import Type

if TYPE_CHECKING:
    from kdsl.frontend.compiler import ModuleGenerator
    from kdsl.runtime.jit import KernelFunction


@dataclass
class FuncInfo:
    """A generated function: its symbol, result types and the shape of its return value."""

    name: str
    result_types: tuple[Type, ...]
    ret_tree: Any  # None (returns nothing), "leaf" or a tuple of trees
    op: FuncOp


class FunctionGenerator(StmtMixin, ExprMixin, LaneMixin):
    """Builds one ``tile.func``: binds parameters, visits the body, adds ``tile.return``.

    With ``lanes`` the function is generated in lane mode (``frontend/lanes.py``): its first
    parameter is the mask of the active lanes and tile conditions become masked execution."""

    def __init__(
        self, mod: ModuleGenerator, kfn: KernelFunction, specs: list[ParamSpec], name: str, is_kernel: bool,
        lanes: bool = False,
    ) -> None:
        self.mod = mod
        self.kfn = kfn
        self.specs = specs
        self.name = name
        self.is_kernel = is_kernel
        self.src = kfn.source_info
        self.builder = Builder()
        self.debug = mod.debug or bool(kfn.debug)
        self.lane_mode = lanes
        self.lanes = None
        self.active = None
        self.sem = _make_semantic(self.builder, self.call_function_for_semantic, self.debug, self if lanes else None)
        self.sem.map_function = self.map_function
        self.resolver = NameResolver(kfn.fn.__globals__, closure_cells(kfn.fn), mod.used_globals)
        self.scope = {}
        self.loop_depth = 0

    def generate(self) -> FuncInfo:
        tree: ast.FunctionDef = self.src.tree
        self.builder.loc = self.loc(tree)
        _check_signature(self, tree)
        body = Block()
        arg_names: list[str] = []
        specs = self.specs
        if self.lane_mode:  # the mask of the active lanes comes first
            mask = body.add_arg(specs[0].arg_types[0], specs[0].name)
            self.active = make_tensor(mask, self.sem)
            self.lanes = self.active.shape
            arg_names.append(specs[0].name)
            specs = specs[1:]
        for spec in specs:
            if spec.is_const:
                self.scope[spec.name] = wrap_static(spec.value)
                continue
            if spec.tree is not None:  # a tuple/aggregate: one argument per runtime leaf
                names = [f"{spec.name}_{i}" for i in range(len(spec.leaf_types))]
                args = [body.add_arg(t, n) for t, n in zip(spec.leaf_types, names)]
                self.scope[spec.name] = rebuild(spec.tree, args, self.sem)
                arg_names += names
                continue
            assert spec.type is not None
            arg = body.add_arg(spec.type, spec.name)
            self.scope[spec.name] = make_tensor(arg, self.sem)
            arg_names.append(spec.name)
            if spec.name in getattr(self.kfn, "const_names", ()):
                self.sem.read_only[arg] = f"parameter '{spec.name}', annotated kl.const"
            elif spec.read_only:
                self.sem.read_only[arg] = f"parameter '{spec.name}', passed a kl.const pointer"
        self.builder.set_insertion_point_to_end(body)
        ret = self.visit_stmts(tree.body)
        value = ret.value if ret is not None else None
        end_loc = self.loc(tree.body[-1]) if tree.body else self.loc(tree)
        leaves: list[Any] = []
        ret_tree: Any = None
        if value is not None:
            if self.is_kernel:
                raise CompilationError("a kernel launched from the host cannot return a value", end_loc)
            self.builder.loc = end_loc
            try:
                leaves, ret_tree = flatten(value, self.sem)
            except CompilationError:
                raise
            except Exception as exc:
                raise CompilationError(f"cannot return a value of this kind: {exc}", end_loc) from exc
        body.append(ReturnOp([t.handle for t in leaves], [], loc=end_loc))
        runtime = [s for s in self.specs if not s.is_const]
        attrs: dict[str, Any] = {
            "sym_name": self.name,
            "result_types": tuple(t.type for t in leaves),
            "arg_names": tuple(arg_names),
        }
        if self.is_kernel:
            attrs["divisibility"] = tuple(d for s in runtime for d in s.arg_divisibility)
            large = tuple(int(s.large) if s.tree is None else 0 for s in runtime for _ in s.arg_types)
            if any(large):  # only then: the IR of every other launch reads as before
                attrs["large"] = large
            attrs["kernel"] = True
        op = FuncOp([], [], attrs, [Region([body])], loc=self.loc(tree))
        return FuncInfo(self.name, tuple(t.type for t in leaves), ret_tree, op)


def _make_semantic(builder: Builder, call_function: Any, debug: bool, lanes_of: FunctionGenerator | None) -> Any:
    sem: Any
    if lanes_of is None:
        sem = Semantic(builder, call_function=call_function)
    else:
        sem = LaneSemantic(builder, call_function=call_function)
        sem.lane_mask = lambda: lanes_of.active
    with contextlib.suppress(AttributeError):
        sem.debug = debug
    return sem


def _check_signature(gen: FunctionGenerator, tree: ast.FunctionDef) -> None:
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:
        raise gen.unsupported(args.vararg or args.kwarg or tree, "'*args'/'**kwargs' parameters")
    if args.kwonlyargs or args.posonlyargs:
        node = (args.kwonlyargs or args.posonlyargs)[0]
        raise gen.unsupported(node, "keyword-only or positional-only parameters")
