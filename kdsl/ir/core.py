"""The dialect-agnostic core of the kdsl IR: values, operations, blocks, regions.

The structure follows MLIR: an ``Operation`` has operands (SSA ``Value``s),
results, a dict of attributes, nested ``Region``s of ``Block``s and a source
``Location``. Nothing here knows about any particular op: dialect modules
declare op classes (see :class:`Operation` for the declaration fields) and
list them in a :class:`Dialect`. A new IR level (a graph dialect above the tile
IR, a work-item dialect below it) is therefore a new module, not an edit here.

Use lists are maintained eagerly so rewrites (``replace_all_uses_with``,
``erase``) stay O(uses) and DCE can ask ``value.has_uses`` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, TypeVar

from kdsl.ir.types import Type


@dataclass(frozen=True)
class Location:
    """A position in user source (1-based line and column), or unknown."""

    file: str = "<unknown>"
    line: int = 0
    col: int = 0

    def text(self) -> str:
        return f'loc("{self.file}":{self.line}:{self.col})'

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    @property
    def known(self) -> bool:
        return self.line > 0


UNKNOWN_LOC = Location()


@dataclass(frozen=True)
class SymbolRef:
    """A reference to a symbol (function) by name; prints as ``@name``."""

    name: str

    def __str__(self) -> str:
        return "@" + self.name


# Attribute values are plain immutable Python data: bool, int, float, str,
# Type, SymbolRef, and tuples of those. (Lists are normalised to tuples.)
AttrValue = Any


class IRError(Exception):
    """An internal-consistency error in IR (verifier failures, bad rewrites)."""

    def __init__(self, message: str, loc: Location = UNKNOWN_LOC) -> None:
        super().__init__(f"{loc}: {message}" if loc.known else message)
        self.message = message
        self.loc = loc


class Value:
    """An SSA value: the result of an operation or an argument of a block."""

    __slots__ = ("name_hint", "type", "uses")

    def __init__(self, type: Type, name_hint: str | None = None) -> None:
        self.type = type
        self.uses: list[tuple[Operation, int]] = []
        self.name_hint = name_hint

    @property
    def has_uses(self) -> bool:
        return bool(self.uses)

    @property
    def owner_op(self) -> Operation | None:
        return None

    def replace_all_uses_with(self, new: Value) -> None:
        for op, idx in list(self.uses):
            op.set_operand(idx, new)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name_hint or ''}: {self.type}>"


class OpResult(Value):
    __slots__ = ("index", "op")

    def __init__(self, type: Type, op: Operation, index: int) -> None:
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner_op(self) -> Operation | None:
        return self.op


class BlockArgument(Value):
    __slots__ = ("block", "index")

    def __init__(self, type: Type, block: Block, index: int, name_hint: str | None = None) -> None:
        super().__init__(type, name_hint)
        self.block = block
        self.index = index


class Block:
    """A straight-line list of operations with typed arguments."""

    def __init__(self, arg_types: Sequence[Type] = ()) -> None:
        self.args: list[BlockArgument] = [BlockArgument(t, self, i) for i, t in enumerate(arg_types)]
        self.ops: list[Operation] = []
        self.parent: Region | None = None

    def add_arg(self, type: Type, name_hint: str | None = None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.args), name_hint)
        self.args.append(arg)
        return arg

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def insert(self, index: int, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(index, op)
        return op

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops and self.ops[-1].IS_TERMINATOR else None

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent if self.parent else None


class Region:
    """An ordered list of blocks owned by an operation (kdsl uses one block per region)."""

    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.parent: Operation | None = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def block(self) -> Block:
        """The single block of a single-block region."""
        if len(self.blocks) != 1:
            raise IRError(f"region has {len(self.blocks)} blocks, expected 1")
        return self.blocks[0]

    def walk(self) -> Iterator[Operation]:
        for b in self.blocks:
            for op in list(b.ops):
                yield from op.walk()


class Trait:
    """Marker base for op traits (``Pure``, ``Elementwise``, ...)."""


class Pure(Trait):
    """No side effects: removable when unused, CSE-able."""


class Commutative(Trait):
    """Operands may be swapped (canonicalisation puts constants on the right)."""


class Elementwise(Trait):
    """Applies per element; all operands and results have the same shape."""


class SameOperandsAndResultType(Trait):
    """All operands and results have exactly the same type."""


class Terminator(Trait):
    """Must be the last op in its block."""


class IsolatedFromAbove(Trait):
    """Regions may not use values defined outside the op (functions)."""


class Symbol(Trait):
    """Defines a symbol named by its ``sym_name`` attribute (functions)."""


OpT = TypeVar("OpT", bound="Operation")


class Operation:
    """Base class of every op. A dialect declares an op as a subclass with:

    * ``NAME`` -- ``"dialect.op"``;
    * ``OPERANDS`` -- operand names in order; a trailing ``"?"`` marks an
      optional operand, a leading ``"*"`` a variadic group (only the last
      group may be optional or variadic; presence is read from the count);
    * ``RESULTS`` -- result names the same way (``"*results"`` for variadic);
    * ``ATTRS`` -- attribute name -> Python type(s) it must hold; names ending
      in ``"?"`` are optional;
    * ``REGIONS`` -- number of regions;
    * ``TRAITS`` -- a tuple of :class:`Trait` subclasses;
    * ``verify_`` -- op-specific checks (raise :class:`IRError`);
    * ``fold`` -- optional constant folding hook used by canonicalisation.

    Named operands/results/attributes are reachable as attributes
    (``op.lhs``, ``op.result``, ``op.axis``) through ``__getattr__``.
    """

    NAME: ClassVar[str] = ""
    OPERANDS: ClassVar[tuple[str, ...]] = ()
    RESULTS: ClassVar[tuple[str, ...]] = ("result",)
    ATTRS: ClassVar[dict[str, Any]] = {}
    REGIONS: ClassVar[int] = 0
    TRAITS: ClassVar[tuple[type[Trait], ...]] = ()
    IS_TERMINATOR: ClassVar[bool] = False

    def __init__(
        self,
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: dict[str, AttrValue] | None = None,
        regions: Sequence[Region] = (),
        loc: Location = UNKNOWN_LOC,
    ) -> None:
        self.operands: list[Value] = []
        for i, v in enumerate(operands):
            self.operands.append(v)
            v.uses.append((self, i))
        self.results: list[OpResult] = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, AttrValue] = {k: _freeze(v) for k, v in (attributes or {}).items()}
        self.regions: list[Region] = []
        for r in regions:
            r.parent = self
            self.regions.append(r)
        self.loc = loc
        self.parent: Block | None = None

    # --- declarative accessors -------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        cls = type(self)
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _spec_names(cls.OPERANDS):
            return _select(cls.OPERANDS, self.__dict__.get("operands", []), name)
        if name in _spec_names(cls.RESULTS):
            return _select(cls.RESULTS, self.__dict__.get("results", []), name)
        attrs = self.__dict__.get("attributes", {})
        if name in attrs:
            return attrs[name]
        if name in {k.rstrip("?") for k in cls.ATTRS}:
            return None
        raise AttributeError(f"{cls.NAME or cls.__name__} has no field {name!r}")

    @property
    def result(self) -> OpResult:
        if len(self.results) != 1:
            raise IRError(f"{self.NAME} has {len(self.results)} results, not 1", self.loc)
        return self.results[0]

    @classmethod
    def has_trait(cls, trait: type[Trait]) -> bool:
        key = (cls, trait)  # asked per op by the verifier and every pass: remember per class
        known = _HAS_TRAIT.get(key)
        if known is None:
            known = _HAS_TRAIT[key] = any(issubclass(t, trait) for t in cls.TRAITS)
        return known

    # --- structure -------------------------------------------------------------
    def set_operand(self, index: int, value: Value) -> None:
        old = self.operands[index]
        old.uses.remove((self, index))
        self.operands[index] = value
        value.uses.append((self, index))

    def drop_operands(self) -> None:
        for i, v in enumerate(self.operands):
            v.uses.remove((self, i))
        self.operands = []

    def walk(self) -> Iterator[Operation]:
        """Pre-order walk of this op and everything nested in it."""
        yield self
        for r in self.regions:
            yield from r.walk()

    @property
    def parent_op(self) -> Operation | None:
        return self.parent.parent_op if self.parent else None

    def is_ancestor(self, other: Operation) -> bool:
        """Is ``other`` this op or nested (at any depth) in one of its regions?"""
        cur: Operation | None = other
        while cur is not None:
            if cur is self:
                return True
            cur = cur.parent_op
        return False

    def erase(self) -> None:
        """Remove from the parent block; results must be unused."""
        for r in self.results:
            if r.uses:
                raise IRError(f"erasing {self.NAME} whose result is still used", self.loc)
        for op in list(self.walk())[1:]:
            op.drop_operands()
        self.drop_operands()
        if self.parent is not None:
            self.parent.ops.remove(self)
            self.parent = None

    def verify_(self) -> None:
        """Op-specific verification; raise :class:`IRError` on failure."""

    def fold(self, constants: Sequence[AttrValue | None]) -> AttrValue | None:
        """Return the constant value of the single result if foldable, else None.

        ``constants`` holds, per operand, its constant attribute or None.
        """
        return None

    def error(self, message: str) -> IRError:
        return IRError(f"'{self.NAME}' op {message}", self.loc)

    def __repr__(self) -> str:
        return f"<{self.NAME} at {self.loc}>"


_HAS_TRAIT: dict[tuple[type[Operation], type[Trait]], bool] = {}


def _freeze(v: AttrValue) -> AttrValue:
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_freeze(x) for x in v)
    return v


# Specs are class constants read on every named access (``op.lhs``) and every
# verification (~10 per compile): digest each spec once.
@cache
def _spec_names(spec: tuple[str, ...]) -> frozenset[str]:
    return frozenset(s.strip("*?") for s in spec)


@cache
def _spec_slot(spec: tuple[str, ...], name: str) -> tuple[int, str]:
    """(index, "*" variadic / "?" optional / "" plain) of ``name`` in ``spec``."""
    for i, s in enumerate(spec):
        if s.strip("*?") == name:
            return i, "*" if s.startswith("*") else "?" if s.endswith("?") else ""
    raise AttributeError(name)


def _select(spec: tuple[str, ...], values: Sequence[Value], name: str) -> Any:
    """Resolve a named operand/result against the declared spec."""
    i, kind = _spec_slot(spec, name)
    if kind == "*":
        return list(values[i:])
    if kind == "?":
        return values[i] if i < len(values) else None
    return values[i]


@cache
def spec_arity(spec: tuple[str, ...]) -> tuple[int, int | None]:
    """(minimum, maximum or None for unbounded) count allowed by a spec."""
    lo = sum(1 for s in spec if not s.startswith("*") and not s.endswith("?"))
    hi: int | None = None if any(s.startswith("*") for s in spec) else len(spec)
    return lo, hi


@dataclass
class Dialect:
    """A named collection of op classes; the unit a registry is built from."""

    name: str
    ops: Sequence[type[Operation]]
    by_name: dict[str, type[Operation]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_name = {op.NAME: op for op in self.ops}
        for n in self.by_name:
            if not n.startswith(self.name + "."):
                raise ValueError(f"op {n} does not belong to dialect {self.name}")


class ModuleOp(Operation):
    """``builtin.module``: the top-level container of functions."""

    NAME = "builtin.module"
    RESULTS = ()
    REGIONS = 1
    ATTRS = {"sym_name?": str}

    @classmethod
    def empty(cls, loc: Location = UNKNOWN_LOC) -> ModuleOp:
        return cls(regions=[Region([Block()])], loc=loc)

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def lookup(self, name: str) -> Operation | None:
        for op in self.body.ops:
            if op.attributes.get("sym_name") == name:
                return op
        return None


BUILTIN = Dialect("builtin", [ModuleOp])


class Builder:
    """Creates ops at an insertion point (end of a block, or before an op)."""

    def __init__(self, block: Block | None = None) -> None:
        self.block = block
        self.index: int | None = None  # None: append at end
        self.loc: Location = UNKNOWN_LOC

    def set_insertion_point_to_end(self, block: Block) -> None:
        self.block, self.index = block, None

    def set_insertion_point_before(self, op: Operation) -> None:
        assert op.parent is not None
        self.block, self.index = op.parent, op.parent.ops.index(op)

    def insert(self, op: OpT) -> OpT:
        if self.block is None:
            raise IRError("builder has no insertion point")
        if self.index is None:
            self.block.append(op)
        else:
            self.block.insert(self.index, op)
            self.index += 1
        return op

    def create(
        self,
        op_cls: type[OpT],
        operands: Sequence[Value] = (),
        result_types: Sequence[Type] = (),
        attributes: dict[str, AttrValue] | None = None,
        regions: Sequence[Region] = (),
        loc: Location | None = None,
    ) -> OpT:
        op = op_cls(operands, result_types, attributes, regions, loc or self.loc)
        return self.insert(op)

    def at_block(self, block: Block) -> Builder:
        """A new builder appending to ``block`` with the same location."""
        b = Builder(block)
        b.loc = self.loc
        return b


def walk_ops(root: Operation, fn: Callable[[Operation], None]) -> None:
    for op in list(root.walk()):
        fn(op)
