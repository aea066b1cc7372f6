"""Block pointers and tensor descriptors (Triton's ``make_block_ptr`` / ``advance``
and ``make_tensor_descriptor``).

Both describe a strided N-d tensor in global memory (base pointer, shape,
strides) and a compile-time ``block_shape``; a block pointer also carries the
block's ``offsets``, a descriptor takes them per access. Neither exists in the
IR: the semantic layer (:mod:`kdsl.frontend.semantic_blockptr`) turns each
access into an ordinary pointer tile plus bounds mask, so the optimiser and
every backend see plain ``tile.load`` / ``tile.store``.

Fields hold either runtime scalars (``kl.tensor``) or Python ints (shape and
strides known at compile time, e.g. a stride specialised to 1, stay ints so
the access stays provably contiguous even inside loops). As
:class:`~kdsl.language.aggregate.Aggregate` subclasses they flow through
``if``/``for``/``while``, tuples and calls between kernels.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdsl.ir.types import PointerType, ScalarType, TileType
from kdsl.language.aggregate import Aggregate
from kdsl.language.constexpr_function import must_use_result
from kdsl.language.core import NO_SEMANTIC, builtin, constexpr, tensor

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

Index = Any  # a scalar integer ``tensor`` or a Python int

_ADVANCE_NOTE = ("Note that kl.advance does not have any side effects. To move the block pointer, you need to assign "
                 "the result of kl.advance to a variable.")


def _raw(xs: Any) -> tuple[Index, ...]:
    """Fields rebuilt from a tree hold constexprs where the original held ints."""
    return tuple(x.value if isinstance(x, constexpr) else x for x in xs)


def _field_text(x: Index) -> str:
    return str(x.type) if isinstance(x, tensor) else str(x)


def _fields_text(xs: tuple[Index, ...]) -> str:
    return "(" + ", ".join(_field_text(x) for x in xs) + ("," if len(xs) == 1 else "") + ")"


def _pointee(base: tensor) -> ScalarType | PointerType:
    ty = base.dtype
    assert isinstance(ty, PointerType)
    return ty.pointee


@dataclass(frozen=True)
class block_pointer_type:
    """What ``block_ptr.dtype`` is in Triton: ``pointer_type(block_type(elem, block_shape))``, so
    ``block_ptr.dtype.element_ty`` is the block's tile type (``x.to(block_ptr.dtype.element_ty)``
    casts to the element type, as in Triton). Only a type object of the language: no IR value has it,
    accesses through a block pointer become ordinary pointer tiles."""

    element_ty: TileType
    address_space: int = 1

    @property
    def scalar(self) -> block_pointer_type:
        return self

    def is_ptr(self) -> bool:
        return True

    def is_block(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"pointer<{self.element_ty.text()}>"


class block_pointer(Aggregate):
    """What ``kl.make_block_ptr`` returns: a pointer to one ``block_shape`` block
    of a strided tensor, at ``offsets`` (i32 scalars).

    ``order`` is Triton's layout hint (fastest-varying dimension first); kdsl
    only checks it is a permutation.
    """

    def __init__(self, base: tensor, shape: tuple[Index, ...], strides: tuple[Index, ...],
                 offsets: tuple[tensor, ...], block_shape: tuple[int, ...], order: tuple[int, ...]) -> None:
        self.base = base
        self.shape = shape
        self.strides = strides
        self.offsets = offsets
        self.block_shape = block_shape
        self.order = order

    @property
    def dtype(self) -> block_pointer_type:
        """Triton's type of the block pointer: a pointer to the block (``.element_ty`` is the tile
        type; its ``.element_ty`` again, the element type)."""
        return block_pointer_type(TileType(self.block_shape, _pointee(self.base)))

    def aggregate_static(self) -> Hashable:
        return (self.block_shape, self.order)

    def aggregate_fields(self) -> tuple[Any, ...]:
        return (self.base, self.shape, self.strides, self.offsets)

    @classmethod
    def aggregate_rebuild(cls, static: Any, fields: tuple[Any, ...]) -> block_pointer:
        block_shape, order = static
        base, shape, strides, offsets = fields
        return cls(base, _raw(shape), _raw(strides), _raw(offsets), block_shape, order)

    def describe(self) -> str:
        return (f"block_ptr<{_pointee(self.base)}, block_shape={self.block_shape}, order={self.order}, "
                f"shape={_fields_text(self.shape)}, strides={_fields_text(self.strides)}>")

    @must_use_result(_ADVANCE_NOTE)
    @builtin
    def advance(self, offsets: Any, _semantic: Semantic = NO_SEMANTIC) -> block_pointer:
        """``kl.advance(self, offsets)``."""
        return _semantic.advance(self, offsets)


class tensor_descriptor(Aggregate):
    """What ``kl.make_tensor_descriptor`` returns: a strided tensor plus the
    ``block_shape`` every ``load``/``store`` through it moves.

    Out-of-bounds elements of an access (in any dimension) read as the
    padding (zero, or NaN with ``padding_option="nan"``) and are not written.
    """

    def __init__(self, base: tensor, shape: tuple[Index, ...], strides: tuple[Index, ...],
                 block_shape: tuple[int, ...], padding: str) -> None:
        self.base = base
        self.shape = shape
        self.strides = strides
        self.block_shape = block_shape
        self.padding = padding

    @property
    def dtype(self) -> ScalarType | PointerType:
        """The element type of the described tensor."""
        return _pointee(self.base)

    def aggregate_static(self) -> Hashable:
        return (self.block_shape, self.padding)

    def aggregate_fields(self) -> tuple[Any, ...]:
        return (self.base, self.shape, self.strides)

    @classmethod
    def aggregate_rebuild(cls, static: Any, fields: tuple[Any, ...]) -> tensor_descriptor:
        block_shape, padding = static
        base, shape, strides = fields
        return cls(base, _raw(shape), _raw(strides), block_shape, padding)

    def describe(self) -> str:
        return (f"tensor_descriptor<{self.dtype}, block_shape={self.block_shape}, "
                f"shape={_fields_text(self.shape)}, strides={_fields_text(self.strides)}>")

    @builtin
    def load(self, offsets: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
        """The ``block_shape`` tile at ``offsets`` (out-of-bounds elements: padding)."""
        return _semantic.descriptor_load(self, offsets)

    @builtin
    def store(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Write ``value`` (broadcast to ``block_shape``) at ``offsets``; out-of-bounds elements are skipped."""
        _semantic.descriptor_store(self, offsets, value)

    # Triton's descriptor reductions: every in-bounds element of the block at ``offsets`` is
    # combined atomically with ``value`` (which has the block's shape); nothing is returned.
    @builtin
    def atomic_add(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomically add ``value`` to the in-bounds elements of the block at ``offsets``."""
        _semantic.descriptor_atomic("add", self, offsets, value)

    @builtin
    def atomic_min(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomic elementwise minimum with ``value`` over the in-bounds block at ``offsets``."""
        _semantic.descriptor_atomic("min", self, offsets, value)

    @builtin
    def atomic_max(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomic elementwise maximum with ``value`` over the in-bounds block at ``offsets``."""
        _semantic.descriptor_atomic("max", self, offsets, value)

    @builtin
    def atomic_and(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomic bitwise and with ``value`` over the in-bounds block at ``offsets``."""
        _semantic.descriptor_atomic("and", self, offsets, value)

    @builtin
    def atomic_or(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomic bitwise or with ``value`` over the in-bounds block at ``offsets``."""
        _semantic.descriptor_atomic("or", self, offsets, value)

    @builtin
    def atomic_xor(self, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
        """Atomic bitwise xor with ``value`` over the in-bounds block at ``offsets``."""
        _semantic.descriptor_atomic("xor", self, offsets, value)


@builtin
def make_block_ptr(base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any,
                   _semantic: Semantic = NO_SEMANTIC) -> block_pointer:
    """A pointer to the ``block_shape`` block at ``offsets`` of the tensor at ``base``
    with ``shape`` and ``strides`` (in elements).

    ``kl.load``/``kl.store`` through it move the whole block; ``boundary_check``
    names the dimensions whose out-of-range elements are skipped (padding on load).
    """
    return _semantic.make_block_ptr(base, shape, strides, offsets, block_shape, order)


@must_use_result(_ADVANCE_NOTE)
@builtin
def advance(base: Any, offsets: Any, _semantic: Semantic = NO_SEMANTIC) -> block_pointer:
    """A copy of block pointer ``base`` moved by ``offsets`` (one per dimension, may be negative)."""
    return _semantic.advance(base, offsets)


@builtin
def make_tensor_descriptor(base: Any, shape: Any, strides: Any, block_shape: Any, padding_option: Any = "zero",
                           _semantic: Semantic = NO_SEMANTIC) -> tensor_descriptor:
    """A descriptor of the tensor at ``base`` (``shape``, ``strides`` in elements) for
    ``block_shape`` tiles; ``padding_option`` ("zero" or "nan") fills out-of-bounds loads."""
    return _semantic.make_tensor_descriptor(base, shape, strides, block_shape, padding_option)


@builtin
def load_tensor_descriptor(desc: Any, offsets: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """``desc.load(offsets)``."""
    return _semantic.descriptor_load(desc, offsets)


@builtin
def store_tensor_descriptor(desc: Any, offsets: Any, value: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
    """``desc.store(offsets, value)``."""
    _semantic.descriptor_store(desc, offsets, value)
