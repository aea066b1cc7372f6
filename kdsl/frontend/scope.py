"""Name resolution inside a kernel body.

Order (as Triton): local variables (including the kernel's parameters), then
closure cells, then the function's globals -- which must be compile-time things:
``kl.constexpr`` objects (or any value annotated ``NAME: kl.constexpr = ...``), modules, other
kernels, ``kl`` builtins/dtypes -- then a small allow-list of Python builtins. A global holding anything else
(say ``BLOCK = 128`` at module level) is rejected because its value would be
silently baked into the compiled code.
"""

from __future__ import annotations

import builtins
import types
from typing import Any

import kdsl.language as kl
from kdsl.ir.types import PointerType, ScalarType

_MISSING = object()

# Python builtins usable inside kernels. print/min/max/abs get kernel
# semantics in the call visitor (device_print, minimum/maximum, abs).
ALLOWED_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in (
        "range",
        "min",
        "max",
        "len",
        "int",
        "float",
        "bool",
        "str",
        "abs",
        "isinstance",
        "print",
        "tuple",
        "list",
        "enumerate",
        "zip",
        "getattr",
        "hasattr",
        "reversed",
        "type",
        "ValueError",
        "TypeError",
        "AssertionError",
    )
}


def _is_kernel(v: Any) -> bool:
    from kdsl.runtime.jit import KernelFunction

    return isinstance(v, KernelFunction)


def global_allowed(value: Any) -> bool:
    """Triton's rule for which globals a kernel may read."""
    from kdsl.language.core import is_builtin

    if isinstance(value, (kl.constexpr, types.ModuleType, ScalarType, PointerType)):
        return True
    if _is_kernel(value) or is_builtin(value):
        return True
    module = getattr(value, "__module__", None) or ""
    if module == "kdsl" or module.startswith(("kdsl.language", "kdsl.runtime.jit")):
        return True
    return isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")


def annotated_constexpr(globals_: dict[str, Any], name: str) -> bool:
    """``NAME: kl.constexpr = 42`` at module level: Triton reads such a global as a compile-time
    constant although its value is a plain Python object (the annotation is the declaration).
    Under ``from __future__ import annotations`` the annotation is the string ``"kl.constexpr"``."""
    ann = globals_.get("__annotations__")
    if not isinstance(ann, dict) or name not in ann:
        return False
    a = ann[name]
    if isinstance(a, str):
        return a.strip().split(".")[-1] == "constexpr"
    return a is kl.constexpr


class CellScope:
    """A closure cell seen as a one-name namespace (``get`` like a globals dict), so the JIT's
    dependency checks treat captured values like globals: a cell rebound (``nonlocal``) or a
    captured ``kl.constexpr`` whose value changed recompiles instead of running stale code."""

    def __init__(self, cell: types.CellType) -> None:
        self.cell = cell

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self.cell.cell_contents
        except ValueError:
            return default


class NameResolver:
    """Looks names up in closure cells, globals and builtins (locals are the caller's)."""

    def __init__(self, globals_: dict[str, Any], closure: dict[str, types.CellType],
                 used: dict[Any, Any] | None = None) -> None:  # fmt: skip
        self.globals = globals_
        self.closure = closure
        # (id(namespace), name) -> (namespace, name): what the compiled code depends on.
        self.used: dict[Any, Any] = {} if used is None else used

    def lookup(self, name: str) -> tuple[Any, str | None]:
        """(value, error message or None). Value is ``_MISSING`` if undefined. A closure cell
        shadows a global of the same name, as in Python (and Triton's capture scope)."""
        cell = self.closure.get(name)
        if cell is not None:
            scope = CellScope(cell)
            val = scope.get(name, _MISSING)
            if val is not _MISSING:
                self.used[(id(cell), name)] = (scope, name)
                return val, None
        val = self.globals.get(name, _MISSING)
        if val is not _MISSING:
            if global_allowed(val) or annotated_constexpr(self.globals, name):
                self.used[(id(self.globals), name)] = (self.globals, name)
                return val, None
            return _MISSING, (
                f"global {name} is not a constexpr: kernels may only read globals that are "
                f"kl.constexpr (write `{name} = kl.constexpr(...)` at module level), modules, kernels or kl objects"
            )
        if name in ALLOWED_BUILTINS:
            return ALLOWED_BUILTINS[name], None
        if hasattr(builtins, name):
            return _MISSING, f"Python builtin '{name}' is not supported inside kernels"
        return _MISSING, f"name '{name}' is not defined"


def closure_cells(fn: Any) -> dict[str, types.CellType]:
    """The function's closure cells by name."""
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    return {} if code is None else dict(zip(code.co_freevars, cells))


def closure_vars(fn: Any) -> dict[str, Any]:
    """The function's closure cells as a dict (empty cells are skipped)."""
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    out: dict[str, Any] = {}
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            continue
    return out


MISSING = _MISSING
