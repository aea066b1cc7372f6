"""Generation of one ``tile.func`` from one kernel specialisation."""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdsl.errors import CompilationError
from kdsl.frontend.calls import CallMixin
from kdsl.frontend.control_flow import ControlFlowMixin
from kdsl.frontend.scope import NameResolver, closure_vars
from kdsl.frontend.semantic import Semantic
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


class FunctionGenerator(StmtMixin, ExprMixin, CallMixin, ControlFlowMixin):
    """Builds one ``tile.func``: binds parameters, visits the body, adds ``tile.return``."""

    def __init__(
        self, mod: ModuleGenerator, kfn: KernelFunction, specs: list[ParamSpec], name: str, is_kernel: bool
    ) -> None:
        self.mod = mod
        self.kfn = kfn
        self.specs = specs
        self.name = name
        self.is_kernel = is_kernel
        self.src = kfn.source_info
        self.builder = Builder()
        self.debug = mod.debug or bool(kfn.debug)
        self.sem = _make_semantic(self.builder, self.call_function_for_semantic, self.debug)
        self.resolver = NameResolver(kfn.fn.__globals__, closure_vars(kfn.fn), mod.used_globals)
        self.scope = {}
        self.loop_depth = 0

    def generate(self) -> FuncInfo:
        tree: ast.FunctionDef = self.src.tree
        self.builder.loc = self.loc(tree)
        _check_signature(self, tree)
        body = Block()
        arg_names: list[str] = []
        for spec in self.specs:
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
            attrs["kernel"] = True
        op = FuncOp([], [], attrs, [Region([body])], loc=self.loc(tree))
        return FuncInfo(self.name, tuple(t.type for t in leaves), ret_tree, op)


def _make_semantic(builder: Builder, call_function: Any, debug: bool) -> Any:
    sem: Any = Semantic(builder, call_function=call_function)
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
