"""Shape manipulation: broadcasting, reshapes, permutations, join/split."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, _shape_args, builtin, tensor

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


@builtin
def broadcast_to(input: Any, *shape: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Broadcast ``input`` to ``shape`` (numpy rules: size-1 dims stretch, leading dims are added)."""
    return _semantic.broadcast_to(input, _shape_args(shape))


@builtin
def broadcast(input: Any, other: Any, _semantic: Semantic = NO_SEMANTIC) -> tuple[tensor, tensor]:
    """Broadcast two values to their common shape."""
    return _semantic.broadcast_pair(input, other)


@builtin
def expand_dims(input: Any, axis: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Insert size-1 dimensions at ``axis`` (an int or a tuple of ints)."""
    return _semantic.expand_dims(input, axis)


@builtin
def reshape(input: Any, *shape: Any, can_reorder: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Row-major reshape to ``shape`` (same element count)."""
    return _semantic.reshape(input, _shape_args(shape))


@builtin
def view(input: Any, *shape: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Alias of :func:`reshape` (kdsl never reorders elements)."""
    return _semantic.reshape(input, _shape_args(shape))


@builtin
def ravel(x: Any, can_reorder: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Flatten to 1-D in row-major order."""
    t = _semantic.to_tensor(x)
    return _semantic.reshape(t, (t.numel,))


@builtin
def trans(input: Any, *dims: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Swap the last two dims (a batched 2-D transpose), or permute by ``dims`` if given."""
    return _semantic.trans(input, _shape_args(dims))


@builtin
def permute(input: Any, *dims: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Permute dimensions: result dim ``i`` is input dim ``dims[i]``."""
    return _semantic.permute(input, _shape_args(dims))


@builtin
def join(a: Any, b: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Stack ``a`` and ``b`` (broadcast together) along a new last dimension of size 2."""
    return _semantic.join(a, b)


@builtin
def split(a: Any, _semantic: Semantic = NO_SEMANTIC) -> tuple[tensor, tensor]:
    """Split a tile whose last dimension is 2 into its two halves."""
    return _semantic.split(a)


@builtin
def interleave(a: Any, b: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Interleave the last dimensions of ``a`` and ``b``: ``[a0, b0, a1, b1, ...]``."""
    return _semantic.interleave(a, b)
