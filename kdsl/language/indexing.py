"""Indexing, sorting and reordering: Triton's ``gather``, ``histogram``,
``sort``, ``topk``, ``bitonic_merge``, ``flip``, ``cat`` and ``swizzle2d``.

Where Triton leaves a result undefined kdsl defines it, identically on every
backend: out-of-range gather indices give 0, NaNs have a sort position,
``cat`` never reorders. ``gather``, ``histogram``, ``sort``, ``topk`` and
``flip`` are also tensor methods (``x.sort()``), as in Triton.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, builtin, tensor, unwrap_constexpr

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

_u = unwrap_constexpr


@builtin
def gather(src: Any, index: Any, axis: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Gather from ``src`` along ``axis``: ``out[..., i, ...] = src[..., index[..., i, ...], ...]``.

    ``src`` and ``index`` (integers) have the same rank and the same size on
    every dimension but ``axis``; the result has ``index``'s shape and
    ``src``'s dtype, values copied bit for bit. An index outside
    ``[0, src.shape[axis])`` gives 0 (Triton: undefined).
    """
    return _semantic.gather(src, index, _u(axis))


@builtin
def histogram(input: Any, num_bins: Any, mask: Any = None, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """int32 histogram of the 1-D integer tile ``input`` with ``num_bins`` bins of width 1 from 0.

    Values outside ``[0, num_bins)`` are not counted (Triton: undefined);
    elements whose ``mask`` is false are excluded. ``num_bins`` is a
    power-of-two constexpr. Cost: ``len(input) * num_bins`` compares.
    """
    return _semantic.histogram(input, _u(num_bins), mask)


@builtin
def sort(x: Any, dim: Any = None, descending: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Sort ``x`` along ``dim`` (default: the last), ascending unless ``descending``.

    The length along ``dim`` must be a power of two. Triton supports only the
    last dimension; kdsl accepts any. Values move bit for bit. Floats are
    ordered by IEEE 754 totalOrder (``-0.0`` before ``+0.0``) except that every
    NaN comes after ``+inf`` (positive NaNs by payload, then negative NaNs);
    descending order is the exact reverse. Triton leaves NaN positions undefined.
    """
    return _semantic.sort(x, _u(dim), _u(descending))


@builtin
def topk(x: Any, k: Any, dim: Any = None, descending: Any = True, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """The ``k`` largest elements of ``x`` along ``dim`` (default: the last), largest first.

    ``k`` and the length along ``dim`` are powers of two; the result's ``dim``
    has size ``k``. ``descending=False`` gives the ``k`` smallest, smallest
    first. Order as in :func:`sort` (a NaN counts as larger than ``+inf``).
    """
    return _semantic.topk(x, _u(k), _u(dim), _u(descending))


@builtin
def bitonic_merge(x: Any, dim: Any = None, descending: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """One bitonic merge along ``dim``: sorts rows that are bitonic sequences
    (ascending then descending, or rotations of that), in ``log2(n)`` steps."""
    return _semantic.bitonic_merge(x, _u(dim), _u(descending))


@builtin
def flip(x: Any, dim: Any = None, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Reverse ``x`` along ``dim`` (default: the last; power-of-two length)."""
    return _semantic.flip(x, _u(dim))


@builtin
def cat(input: Any, other: Any, can_reorder: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Concatenate two tiles of one shape and dtype along dimension 0.

    Triton requires ``can_reorder=True`` and may then return the elements in
    any order; kdsl always returns the exact concatenation, for either value.
    """
    return _semantic.cat(input, other, _u(can_reorder))


@builtin
def swizzle2d(i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """Map row-major indices ``(i, j)`` of a ``size_i x size_j`` matrix to the
    column-major order inside each group of ``size_g`` rows (the last group may
    be shorter): Triton's grouped program ordering for matmul tiles. Returns
    ``(new_i, new_j)`` computed with the ``*``, ``//``, ``%`` and ``minimum``
    rules of the operands' types.
    """
    return _semantic.swizzle2d(i, j, size_i, size_j, size_g)
