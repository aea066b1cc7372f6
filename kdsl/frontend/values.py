"""Classification of the values the frontend juggles.

At compile time a Python name can hold a *runtime* value (``kl.tensor``,
wrapping an IR ``Value``), a *compile-time* value (``kl.constexpr`` or any
plain Python object: dtypes, modules, functions, tuples of those), or a tuple
mixing both, or an :class:`~kdsl.language.aggregate.Aggregate` (block
pointers, tensor descriptors). Control flow and calls between kernels only
carry runtime values, so this module also flattens values into IR leaves and
rebuilds them (``flatten``/``rebuild``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import kdsl.language as kl
from kdsl.ir.core import Value
from kdsl.ir.types import Type
from kdsl.language.aggregate import Aggregate

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
    if isinstance(x, Aggregate):
        return is_static(x.aggregate_fields())
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
    if isinstance(v, Aggregate):
        return v.describe()
    if isinstance(v, tuple):
        return "tuple(" + ", ".join(type_name(e) for e in v) + ")"
    if isinstance(v, NUMBER_TYPES):
        return f"constexpr {type(v).__name__}"
    return type(v).__name__


# --- flattening for control flow ------------------------------------------------
# A "tree" describes the structure of a carried value: "leaf" (one IR value), a
# tuple of trees, an AggregateTree, or (inside aggregates and call arguments) a
# StaticTree holding a compile-time field that never becomes IR.
Tree = Any


@dataclass(frozen=True)
class StaticTree:
    """A compile-time field kept out of the IR (its type name keeps ``1`` and ``True`` apart)."""

    kind: str
    value: Any


@dataclass(frozen=True)
class ListTree:
    """A list (only in call arguments and aggregates: lists are compile-time containers)."""

    items: tuple[Tree, ...]


@dataclass(frozen=True)
class NamedTupleTree:
    """A ``typing.NamedTuple`` (Triton passes them to kernels and between functions): its class
    and the trees of its fields, so the rebuilt value keeps its field names."""

    cls: type
    fields: tuple[Tree, ...]


@dataclass(frozen=True)
class AggregateTree:
    """An :class:`Aggregate`: its class, static part and the trees of its fields."""

    cls: type[Aggregate]
    static: Hashable
    fields: tuple[Tree, ...]


def carryable(x: Any) -> bool:
    """Can ``x`` flow through region boundaries (after number promotion)?"""
    if is_tensor(x) or is_number(x):
        return True
    v = unwrap(x)
    if isinstance(v, Aggregate):
        return True
    return isinstance(v, tuple) and len(v) > 0 and all(carryable(e) for e in v)


def flatten(x: Any, sem: Any, keep_static: bool = False) -> tuple[list[Any], Tree]:
    """Tensors of ``x`` plus its tree.

    Compile-time numbers are promoted with ``sem.to_tensor`` (Triton's rule for
    values entering regions) unless ``keep_static``; fields of aggregates are
    always flattened with ``keep_static``, so e.g. a stride of 1 stays a
    constant of the block pointer instead of becoming a loop-carried value.
    """
    if is_tensor(x):
        return [x], "leaf"
    v = unwrap(x)
    if isinstance(v, Aggregate):
        leaves, trees = _flatten_all(v.aggregate_fields(), sem, True)
        return leaves, AggregateTree(type(v), v.aggregate_static(), trees)
    if isinstance(v, tuple):
        leaves, trees = _flatten_all(v, sem, keep_static)
        return leaves, (NamedTupleTree(type(v), trees) if is_namedtuple(v) else trees)
    if isinstance(v, list) and keep_static and not is_static(v):
        leaves, trees = _flatten_all(tuple(v), sem, keep_static)
        return leaves, ListTree(trees)
    if keep_static:
        return [], StaticTree(type(v).__name__, v)
    return [sem.to_tensor(x)], "leaf"


def _flatten_all(values: tuple[Any, ...], sem: Any, keep_static: bool) -> tuple[list[Any], tuple[Tree, ...]]:
    leaves: list[Any] = []
    trees = []
    for e in values:
        sub, t = flatten(e, sem, keep_static)
        leaves += sub
        trees.append(t)
    return leaves, tuple(trees)


def rebuild(tree: Tree, handles: Sequence[Value], sem: Any) -> Any:
    """Inverse of :func:`flatten` over fresh IR values."""
    it = iter(handles)

    def go(t: Tree) -> Any:
        if isinstance(t, StaticTree):
            return wrap_static(t.value)
        if isinstance(t, AggregateTree):
            return t.cls.aggregate_rebuild(t.static, tuple(go(s) for s in t.fields))
        if isinstance(t, ListTree):
            return [go(s) for s in t.items]
        if isinstance(t, NamedTupleTree):
            return t.cls(*(go(s) for s in t.fields))  # a NamedTuple class
        if t == "leaf":
            return make_tensor(next(it), sem)
        return tuple(go(s) for s in t)

    return go(tree)


def is_namedtuple_class(cls: Any) -> bool:
    """A ``typing.NamedTuple``/``collections.namedtuple`` class."""
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_namedtuple(v: Any) -> bool:
    """A NamedTuple instance (kept as its class, not a plain tuple)."""
    return is_namedtuple_class(type(v))


def retuple(like: tuple[Any, ...], items: Iterable[Any]) -> tuple[Any, ...]:
    """``items`` as a tuple of ``like``'s kind: a NamedTuple keeps its class, anything else is a tuple."""
    return type(like)(*items) if is_namedtuple(like) else tuple(items)


def generalize(a: Tree, b: Tree) -> Tree | None:
    """A tree both ``a`` and ``b`` can be flattened as (see :func:`flatten_as`):
    compile-time numbers that differ, or that are runtime on the other side,
    become leaves. None if the structures (or aggregates' static parts) differ.

    Two block pointers with compile-time shapes 16 and 32 thus merge into one
    with a runtime shape, as Triton's (always runtime) shapes would.
    """
    if a == b:
        return a
    if isinstance(a, StaticTree) or isinstance(b, StaticTree):
        numbers = all(not isinstance(t, StaticTree) or t.kind in ("int", "float") for t in (a, b))
        other = b if isinstance(a, StaticTree) else a
        return "leaf" if numbers and (other == "leaf" or isinstance(other, StaticTree)) else None
    if isinstance(a, AggregateTree) and isinstance(b, AggregateTree):
        if a.cls is not b.cls or a.static != b.static:
            return None
        fields = _generalize_all(a.fields, b.fields)
        return None if fields is None else AggregateTree(a.cls, a.static, fields)
    if isinstance(a, ListTree) and isinstance(b, ListTree):
        items = _generalize_all(a.items, b.items)
        return None if items is None else ListTree(items)
    if isinstance(a, NamedTupleTree) and isinstance(b, NamedTupleTree):
        if a.cls is not b.cls:
            return None
        fields = _generalize_all(a.fields, b.fields)
        return None if fields is None else NamedTupleTree(a.cls, fields)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return _generalize_all(a, b)
    return None


def _generalize_all(a: tuple[Tree, ...], b: tuple[Tree, ...]) -> tuple[Tree, ...] | None:
    if len(a) != len(b):
        return None
    out = tuple(generalize(x, y) for x, y in zip(a, b))
    return None if any(t is None for t in out) else out


def flatten_as(x: Any, tree: Tree, sem: Any) -> list[Any]:
    """The leaves of ``x`` laid out as ``tree``, a :func:`generalize` of its own tree
    (compile-time numbers where ``tree`` has a leaf become tensors)."""
    if tree == "leaf":
        return [x if is_tensor(x) else sem.to_tensor(x)]
    if isinstance(tree, StaticTree):
        return []
    v = unwrap(x)
    if isinstance(tree, AggregateTree):
        pairs = zip(v.aggregate_fields(), tree.fields)
    elif isinstance(tree, ListTree):
        pairs = zip(v, tree.items)
    elif isinstance(tree, NamedTupleTree):
        pairs = zip(v, tree.fields)
    else:
        pairs = zip(v, tree)
    return [leaf for e, t in pairs for leaf in flatten_as(e, t, sem)]


def tree_size(tree: Tree) -> int:
    """How many IR values a tree holds."""
    if isinstance(tree, StaticTree):
        return 0
    if isinstance(tree, AggregateTree):
        return sum(tree_size(t) for t in tree.fields)
    if isinstance(tree, ListTree):
        return sum(tree_size(t) for t in tree.items)
    if isinstance(tree, NamedTupleTree):
        return sum(tree_size(t) for t in tree.fields)
    if tree == "leaf":
        return 1
    return sum(tree_size(t) for t in tree)


def leaf_types(leaves: list[Any]) -> list[Type]:
    return [t.type for t in leaves]
