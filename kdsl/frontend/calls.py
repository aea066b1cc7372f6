"""Calls: ``kl`` builtins, other kernels, Python builtins and compile-time Python.

* ``@kdsl.kernel`` functions become a ``tile.call`` of a ``tile.func``
  specialised on the callee's compile-time arguments and argument types;
* ``kl`` builtins get ``_semantic=``;
* ``print``/``min``/``max``/``abs`` get kernel meaning on runtime values
  (Triton maps them to device_print/minimum/maximum);
* any other Python callable runs at compile time, on compile-time arguments only.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from typing import Any

import kdsl.language as kl
from kdsl.frontend.base import GeneratorBase
from kdsl.frontend.readonly import read_only_root
from kdsl.frontend.specialization import ParamSpec
from kdsl.frontend.values import (
    flatten,
    is_namedtuple_class,
    is_static,
    is_tensor,
    rebuild,
    retuple,
    static_items,
    unwrap,
    wrap_static,
)
from kdsl.ir.core import SymbolRef
from kdsl.ir.dialects.tile import CallOp
from kdsl.language.constexpr_function import MUST_USE_ATTR
from kdsl.language.core import is_builtin

LANES_PARAM = "lanes"  # the leading parameter of a function generated in lane mode


class CallMixin(GeneratorBase):
    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.visit(node.func)
        must_use = getattr(unwrap(fn), MUST_USE_ATTR, False)
        if must_use and getattr(node, "kdsl_result_unused", False):
            why = f" {must_use}" if isinstance(must_use, str) else ""
            raise self.error(f"The result of {ast.unparse(node.func)} is not being used.{why}", node)
        args = self.visit_elements(node.args)  # type: ignore[attr-defined]
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            value = self.visit(kw.value)
            if kw.arg is not None:
                kwargs[kw.arg] = value
                continue
            mapping = unwrap(value)
            if not isinstance(mapping, dict):
                raise self.error("'**' needs a compile-time dict", kw.value)
            kwargs.update(mapping)
        return self.call(fn, args, kwargs, node)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        from kdsl.runtime.jit import KernelFunction

        fn = unwrap(fn)
        if isinstance(fn, KernelFunction):
            return self.call_kernel(fn, args, kwargs, node)
        special = _SPECIAL.get(id(fn))
        if special is not None and fn is getattr(builtins, special):
            return getattr(self, "_py_" + special)(args, kwargs, node)
        if is_builtin(fn):
            return fn(*args, _semantic=self.sem, **kwargs)
        if _is_tensor_method(fn) or fn is kl.static_range or fn is kl.range or fn is kl.condition:
            return fn(*args, **kwargs)
        if is_namedtuple_class(fn):
            return fn(*args, **kwargs)  # a NamedTuple holds runtime values as they are (Triton's too)
        if any(fn is s for s in _STRUCTURAL):
            # Containers of runtime values are fine: these only rearrange them.
            return wrap_static(fn(*[static_items(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()}))
        if not (all(is_static(a) for a in args) and all(is_static(v) for v in kwargs.values())):
            name = getattr(fn, "__name__", type(fn).__name__)
            raise self.error(
                f"cannot call Python function '{name}' with runtime arguments (decorate it with @kdsl.kernel)",
                node,
            )
        if not callable(fn):
            raise self.error(f"'{type(fn).__name__}' object is not callable", node)
        result = fn(*[_deep_unwrap(a) for a in args], **{k: _deep_unwrap(v) for k, v in kwargs.items()})
        return wrap_static(result)

    # --- kernels calling kernels ---------------------------------------------------------
    def call_kernel(
        self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST | None = None, lanes: Any = None
    ) -> Any:
        """A ``tile.call`` of ``fn``; with ``lanes`` (a mask of active lanes) the callee is
        generated in lane mode and takes the mask as its first argument."""
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(f"bad call to kernel '{fn.__name__}': {exc}", node) from exc
        bound.apply_defaults()
        specs: list[ParamSpec] = []
        operands = []
        if lanes is not None:
            specs.append(ParamSpec.runtime(LANES_PARAM, lanes.type))
            operands.append(lanes.handle)
        # As in Triton, a callee's ``kl.constexpr`` annotations do not bind here: what is compile-time
        # is decided by the values passed (Triton's fused-attention tutorial passes tensors to
        # ``offs_m: tl.constexpr``), so a runtime value simply becomes a runtime argument.
        for name, value in bound.arguments.items():
            if is_tensor(value):
                ro = bool(self.sem.read_only) and read_only_root(value.handle, self.sem.read_only) is not None
                specs.append(ParamSpec.runtime(name, value.type, read_only=ro))
                operands.append(value.handle)
            elif is_static(value):
                specs.append(ParamSpec.const(name, _deep_unwrap(value)))
            else:  # a tuple or aggregate holding runtime values: its leaves become arguments
                leaves, tree = flatten(value, self.sem, keep_static=True)
                specs.append(ParamSpec.structured(name, tree, tuple(t.type for t in leaves)))
                operands += [t.handle for t in leaves]
        info = self.mod.function(fn, specs, node_loc=self.builder.loc, lanes=lanes is not None)
        op = self.builder.create(CallOp, operands, list(info.result_types), {"callee": SymbolRef(info.name)})
        if info.ret_tree is None:
            return None
        return rebuild(info.ret_tree, list(op.results), self.sem)

    def call_function_for_semantic(self, fn: Any, args: list[Any]) -> Any:
        """``call_function`` handed to Semantic (combine functions of reduce/scan)."""
        from kdsl.runtime.jit import KernelFunction

        if isinstance(fn, KernelFunction):
            return self.call_kernel(fn, list(args), {})
        return self.call(fn, list(args), {}, ast.Pass())

    # --- Python builtins with kernel meaning -------------------------------------------------
    def _py_print(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        prefix = ""
        if args and is_static(args[0]) and isinstance(unwrap(args[0]), str):
            prefix, args = unwrap(args[0]), args[1:]
        return kl.device_print(prefix, *args, _semantic=self.sem)

    def _minmax(self, which: str, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if all(is_static(a) for a in args) and not kwargs:
            pyfn = min if which == "min" else max
            return wrap_static(pyfn(*[_deep_unwrap(a) for a in args]))
        if len(args) < 2 or kwargs:
            raise self.error(f"{which}() on runtime values takes two or more positional arguments", node)
        kl_fn = kl.minimum if which == "min" else kl.maximum
        result = args[0]
        for other in args[1:]:
            result = kl_fn(result, other, _semantic=self.sem)
        return result

    def _py_min(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self._minmax("min", args, kwargs, node)

    def _py_max(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self._minmax("max", args, kwargs, node)

    def _py_abs(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if len(args) != 1 or kwargs:
            raise self.error("abs() takes exactly one argument", node)
        if is_static(args[0]):
            return wrap_static(abs(unwrap(args[0])))
        return kl.abs(args[0], _semantic=self.sem)

    def _py_conv(self, name: str, args: list[Any], node: ast.AST) -> Any:
        if any(is_tensor(a) for a in args):
            raise self.error(f"{name}() cannot convert a runtime value; use x.to(<dtype>)", node)
        return wrap_static(getattr(builtins, name)(*[unwrap(a) for a in args]))

    def _py_int(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self._py_conv("int", args, node)

    def _py_float(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self._py_conv("float", args, node)

    def _py_bool(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self._py_conv("bool", args, node)

    def _py_len(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if len(args) != 1 or is_tensor(args[0]):
            raise self.error("len() takes one compile-time tuple or list", node)
        return wrap_static(len(unwrap(args[0])))

    def _py_isinstance(self, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if len(args) != 2:
            raise self.error("isinstance() takes two arguments", node)
        obj, cls = args[0], _deep_unwrap(args[1])
        return wrap_static(isinstance(obj, cls) or isinstance(unwrap(obj), cls))


_SPECIAL: dict[int, str] = {
    id(getattr(builtins, n)): n for n in ("print", "min", "max", "abs", "int", "float", "bool", "len", "isinstance")
}


_STRUCTURAL = (zip, enumerate, tuple, list, reversed, getattr, hasattr, type, kl.tuple)


def _is_tensor_method(fn: Any) -> bool:
    return inspect.ismethod(fn) and is_tensor(fn.__self__)


def _deep_unwrap(x: Any) -> Any:
    if isinstance(x, tuple):
        return retuple(x, (_deep_unwrap(e) for e in x))
    if isinstance(x, list):
        return [_deep_unwrap(e) for e in x]
    return x if is_tensor(x) else unwrap(x)
