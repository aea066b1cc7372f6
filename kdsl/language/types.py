"""Triton's type objects that are not dtypes of values: ``void``, ``pi32_t``, ``block_type``,
``constexpr_type``, ``const``, ``slice``, ``tuple`` and ``TRITON_MAX_TENSOR_NUMEL``.

kdsl's IR types already are the language's types (``x.type`` is a ``ScalarType``,
``PointerType`` or ``TileType``; Python tuples and slices are kdsl's tuples and slices), so
these names are views onto them rather than parallel classes: ``kl.block_type(kl.float32,
[16, 32])`` *is* the ``TileType`` a 16x32 float tile has, so ``x.type == kl.block_type(...)``
and ``isinstance(x.type, kl.block_type)`` give Triton's answers; ``isinstance(t, kl.tuple)``
is true for the tuples kernels build and receive.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

from kdsl.ir.types import PointerType, ScalarType, TileType, i32

# Triton's limit on the elements of one tensor (``triton.language.TRITON_MAX_TENSOR_NUMEL``).
# The semantic refuses a tile above it where it is created (``kl.arange``, ``kl.full``,
# broadcasting, ``kl.join``...), with Triton's rule and a kdsl error at the user's line.
TRITON_MAX_TENSOR_NUMEL = 1048576


@dataclass(frozen=True)
class VoidType(ScalarType):
    """Triton's ``tl.void``: the dtype of no value (what a call without results returns).

    A ``kl.dtype`` (so ``isinstance(kl.void, kl.dtype)`` holds) with bit width 0; nothing can
    be created or cast with it: the semantic refuses it as a tensor dtype."""

    name: str = "void"

    def __post_init__(self) -> None:
        if self.name != "void":
            raise ValueError(f"VoidType is only 'void', got {self.name!r}")

    @property
    def bitwidth(self) -> int:
        return 0

    @property
    def itemsize(self) -> int:
        return 0

    def is_void(self) -> bool:
        return True


void = VoidType()
pi32_t = PointerType(i32)


def check_numel(shape: builtins.tuple[int, ...]) -> str | None:
    """Why a tile of ``shape`` is not allowed (Triton's limit), or None."""
    n = 1
    for d in shape:
        n *= d
    if n > TRITON_MAX_TENSOR_NUMEL:
        return (f"a tile of shape {builtins.tuple(shape)} has {n} elements, more than Triton's maximum of "
                f"{TRITON_MAX_TENSOR_NUMEL} (kl.TRITON_MAX_TENSOR_NUMEL)")
    return None


class _BlockTypeMeta(type):
    """``kl.block_type(elem, shape)`` builds the IR ``TileType``; ``isinstance`` recognises every tile type."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, TileType)

    def __call__(cls, element_ty: Any, shape: Any) -> TileType:
        from kdsl.language.core import unwrap_constexpr as _u

        elem = _u(element_ty)
        if not isinstance(elem, (ScalarType, PointerType)) or isinstance(elem, VoidType):
            raise TypeError(f"block_type needs a kl dtype or pointer type, got {elem!r}")
        dims = builtins.tuple(int(_u(d)) for d in _u(shape))
        if not dims:
            raise TypeError("0d block_type is forbidden")
        if any(d <= 0 for d in dims):
            raise ValueError(f"block_type dimensions must be positive, got {dims}")
        why = check_numel(dims)
        if why is not None:
            raise ValueError(why)
        return TileType(dims, elem)


class block_type(metaclass=_BlockTypeMeta):
    """Triton's ``tl.block_type(element_ty, shape)``: the type of a tile (``x.type`` of a tensor
    with a shape). Calling it returns kdsl's ``TileType``; ``element_ty``, ``shape``, ``numel``,
    ``scalar``, ``nbytes``, ``get_block_shapes()`` and ``is_block()`` read as in Triton."""


class constexpr_type:
    """Triton's ``tl.constexpr_type(value)``: the type of ``kl.constexpr(value)`` (its ``.type``);
    two are equal when their values are."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        from kdsl.language.core import unwrap_constexpr

        self.value = unwrap_constexpr(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, constexpr_type) and bool(self.value == other.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"constexpr_type[{self.value}]"

    def mangle(self) -> str:
        m = getattr(self.value, "mangle", None)
        return f"c{m() if callable(m) else repr(self.value)}"


class const:
    """Annotation ``ptr: kl.const``: the kernel only reads through ``ptr``.

    A ``kl.store`` or atomic through a pointer derived from it (pointer arithmetic, ``kl.where``,
    loops, calls to other kernels) is a compile error, as Triton's "Cannot store to a constant
    pointer"."""


class _SliceMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, builtins.slice)

    def __call__(cls, start: Any, stop: Any, step: Any) -> builtins.slice:
        from kdsl.language.core import unwrap_constexpr as _u

        return builtins.slice(_u(start), _u(stop), _u(step))


class slice(metaclass=_SliceMeta):
    """Triton's ``tl.slice(start, stop, step)``: what ``t[a:b:c]`` builds; slices a tuple at
    compile time. kdsl's slices are Python slices, so this returns one."""


class _TupleMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, builtins.tuple)

    def __call__(cls, args: Any, type: Any = None) -> builtins.tuple[Any, ...]:
        return builtins.tuple(args)


class tuple(metaclass=_TupleMeta):
    """Triton's ``tl.tuple``: kernels' tuples (of tensors, constexprs, nested tuples) are
    Python tuples, so ``isinstance(x, kl.tuple)`` tests for one and ``kl.tuple(values)`` makes one
    (also from runtime values inside a kernel)."""


__all__ = ["TRITON_MAX_TENSOR_NUMEL", "VoidType", "block_type", "check_numel", "const", "constexpr_type", "pi32_t",
           "slice", "tuple", "void"]
