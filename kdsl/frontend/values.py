"""Classification of the values the frontend juggles.

At compile time a Python name can hold a *runtime* value (``kl.tensor``,
wrapping an IR ``Value``), a *compile-time* value (``kl.constexpr`` or any
plain Python object: dtypes, modules, functions, tuples of those), or a tuple
mixing both. Control flow only carries runtime values, so this module also
flattens values into IR leaves and rebuilds them (``flatten``/``rebuild``).
"""

from __future__ import annotations

from typing import Any

import kdsl.language as kl
from kdsl.ir.core import Value
from kdsl.ir.types import Type

NUMBER_TYPES = (bool, int, float)


def is_tensor(x: Any) -> bool:
    return isinstance(x, kl.tensor)


def is_constexpr(x: Any) -> bool:
    return isinstance(x, kl.constexpr)


def unwrap(x: Any) -> Any:
    """The Python value behind a constexpr (other values unchanged)."""
    while isinstance(x, kl.constexpr):
        x = x.value
    return x


def is_static(x: Any) -> bool:
    """True if ``x`` holds no runtime value (tuples are checked element-wise)."""
    if is_tensor(x):
        return False
    if isinstance(x, (tuple, list)):
        return all(is_static(e) for e in x)
    return True


def wrap_static(x: Any) -> Any:
    """Python scalars/strings/None become constexprs; other objects stay as they are."""
    if is_tensor(x) or isinstance(x, kl.constexpr):
        return x
    if x is None or isinstance(x, (*NUMBER_TYPES, str)):
        return kl.constexpr(x)
    return x


def static_items(x: Any) -> Any:
    """A Python iterable for a compile-time iterable (``kl.static_range`` becomes ``range``)."""
    raw = unwrap(x)
    if isinstance(raw, kl.static_range):
        return range(unwrap(raw.start), unwrap(raw.end), unwrap(raw.step))
    return raw


def make_tensor(handle: Value, sem: Any) -> Any:
    """Wrap an IR value as a ``kl.tensor`` bound to ``sem``."""
    return kl.tensor(handle, sem)


def is_number(x: Any) -> bool:
    v = unwrap(x)
    return isinstance(v, NUMBER_TYPES)


def type_name(x: Any) -> str:
    """A short human description of a value's type for error messages."""
    if is_tensor(x):
        return str(x.type)
    v = unwrap(x)
    if isinstance(v, tuple):
        return "tuple(" + ", ".join(type_name(e) for e in v) + ")"
    if isinstance(v, NUMBER_TYPES):
        return f"constexpr {type(v).__name__}"
    return type(v).__name__


# --- flattening for control flow ------------------------------------------------
# A "tree" describes the structure of a carried value: "leaf" (one IR value) or a
# tuple of trees.
Tree = Any


def carryable(x: Any) -> bool:
    """Can ``x`` flow through region boundaries (after number promotion)?"""
    if is_tensor(x) or is_number(x):
        return True
    v = unwrap(x)
    return isinstance(v, tuple) and len(v) > 0 and all(carryable(e) for e in v)


def flatten(x: Any, sem: Any) -> tuple[list[Any], Tree]:
    """Tensors of ``x`` (numbers promoted with ``sem.to_tensor``) plus its tree."""
    if is_tensor(x):
        return [x], "leaf"
    v = unwrap(x)
    if isinstance(v, tuple):
        leaves: list[Any] = []
        trees = []
        for e in v:
            sub, t = flatten(e, sem)
            leaves += sub
            trees.append(t)
        return leaves, tuple(trees)
    return [sem.to_tensor(x)], "leaf"


def rebuild(tree: Tree, handles: list[Value], sem: Any) -> Any:
    """Inverse of :func:`flatten` over fresh IR values."""
    it = iter(handles)

    def go(t: Tree) -> Any:
        if t == "leaf":
            return make_tensor(next(it), sem)
        return tuple(go(s) for s in t)

    return go(tree)


def leaf_types(leaves: list[Any]) -> list[Type]:
    return [t.type for t in leaves]
