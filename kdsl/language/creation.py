"""Program indexing and tile creation: ``program_id``, ``arange``, ``full``, ``zeros``, ``cast``, ``cdiv``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, builtin, constexpr, tensor, unwrap_constexpr

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


@builtin
def program_id(axis: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Index (i32) of the running program along launch-grid ``axis`` (0, 1 or 2)."""
    return _semantic.program_id(axis)


@builtin
def num_programs(axis: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Number of programs (i32) along launch-grid ``axis``."""
    return _semantic.num_programs(axis)


@builtin
def arange(start: Any, end: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """The i32 tile ``[start, ..., end - 1]``; bounds are constexpr and
    ``end - start`` must be a power of two."""
    return _semantic.arange(start, end)


@builtin
def full(shape: Any, value: Any, dtype: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """A tile of constexpr ``shape`` filled with ``value`` converted to ``dtype``."""
    return _semantic.full(shape, value, dtype)


@builtin
def zeros(shape: Any, dtype: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """A tile of ``shape`` filled with zeros of ``dtype``."""
    return _semantic.full(shape, 0, dtype)


@builtin
def zeros_like(input: Any, dtype: Any = None, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Zeros with the shape (and, unless ``dtype`` is given, the dtype) of ``input``."""
    x = _semantic.to_tensor(input)
    dt = x.dtype if unwrap_constexpr(dtype) is None else dtype
    return _semantic.full(x.shape, 0, dt)


@builtin
def full_like(input: Any, value: Any, dtype: Any = None, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """``value`` with the shape (and, unless ``dtype`` is given, the dtype) of ``input``."""
    x = _semantic.to_tensor(input)
    dt = x.dtype if unwrap_constexpr(dtype) is None else dtype
    return _semantic.full(x.shape, value, dt)


@builtin
def cast(input: Any, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False,
         _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Convert ``input`` to ``dtype`` (``bitcast=True`` reinterprets the bits).
    Pointer casts: to another pointer type, to/from ``int64``. ``fp_downcast_rounding`` ("rtne",
    the default, or "rtz") rounds a float downcast to nearest even or toward zero."""
    return _semantic.cast(input, dtype, bitcast=bool(unwrap_constexpr(bitcast)),
                          fp_downcast_rounding=unwrap_constexpr(fp_downcast_rounding))


@builtin
def cdiv(x: Any, div: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """Ceiling division ``(x + div - 1) // div``; folds to a constexpr when both are."""
    if not isinstance(x, tensor) and not isinstance(div, tensor):
        a, b = unwrap_constexpr(x), unwrap_constexpr(div)
        return constexpr((a + b - 1) // b)
    return _semantic.binary("floordiv", _semantic.binary("sub", _semantic.binary("add", x, div), 1), div)


@builtin
def to_tensor(x: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """A Python number as a typed scalar (ints -> int32/uint32/int64/uint64, floats -> float32)."""
    return _semantic.to_tensor(x)
