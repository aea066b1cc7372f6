"""Indexing, sorting and reordering: ``gather``, ``histogram``, ``sort``,
``topk``, ``bitonic_merge``, ``flip``, ``cat``, ``swizzle2d``.

Only ``gather`` is an op of its own (``tile.gather``): data-dependent reads
cannot be expressed by the shape ops, and a one-hot expansion would hold
``len(src) * len(index)`` elements. The others are compositions that are
exact and linear in the tile size (``histogram``: ``O(n * num_bins)`` compares,
never stored as a tile by the lowering):

* ``flip`` = ``gather`` at ``n - 1 - i``;
* ``cat`` = ``join`` + ``permute`` + ``reshape`` (the exact concatenation);
* ``sort``/``topk``/``bitonic_merge`` = the bitonic networks of
  :mod:`kdsl.frontend.semantic_sort`;
* ``histogram`` = a masked compare against ``arange(num_bins)`` and ``sum``;
* ``swizzle2d`` = Triton's integer formula with the operators' own rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_reduce import ReduceSemantic
from kdsl.frontend.semantic_sort import SortNetwork
from kdsl.ir.dialects import tile
from kdsl.ir.types import PointerType, ScalarType, f32, i1
from kdsl.language.core import tensor


def _log2_exact(n: int) -> int | None:
    """log2(n) if n is a power of two, else None."""
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


class IndexingSemantic(ReduceSemantic):
    """Gather, histogram, sorting and concatenation."""

    def _tile(self, x: Any, what: str) -> tensor:
        t = self.to_tensor(x)
        if not t.shape:
            raise self.error(f"{what} needs a tensor, got a scalar of type {t.type}")
        if isinstance(t.dtype, PointerType):
            raise self.error(f"{what} does not support pointer tensors")
        return t

    # --- gather -----------------------------------------------------------------------
    def gather(self, src: Any, index: Any, axis: Any) -> tensor:
        """``out[i] = src[i with coordinate axis replaced by index[i]]``; out has index's shape."""
        s = self._tile(src, "kl.gather")
        i = self._tile(index, "kl.gather index")
        if not (isinstance(i.dtype, ScalarType) and i.dtype.is_integer and i.dtype != i1):
            raise self.error(f"kl.gather: index must be an integer tensor, got {i.type}")
        rank = len(s.shape)
        if len(i.shape) != rank:
            raise self.error(f"kl.gather: src and index must have the same rank, got shapes {s.shape} and {i.shape}")
        ax = self.norm_axis(axis, rank, "kl.gather axis")
        for d in range(rank):
            if d != ax and s.shape[d] != i.shape[d]:
                raise self.error(
                    f"kl.gather: index dimension {d} ({i.shape[d]}) must equal src dimension {d} "
                    f"({s.shape[d]}); only axis {ax} may differ"
                )
        return self.emit1(tile.GatherOp, [s.handle, i.handle], s.type.with_shape(i.shape), axis=ax)

    # --- flip / cat ---------------------------------------------------------------------
    def flip(self, x: Any, dim: Any = None) -> tensor:
        """Reverse ``x`` along ``dim`` (default: the last dimension)."""
        t = self._tile(x, "kl.flip")
        rank = len(t.shape)
        d = rank - 1 if unwrap(dim) is None else self.norm_axis(dim, rank, "kl.flip dim")
        n = t.shape[d]
        if _log2_exact(n) is None:
            raise self.error(f"kl.flip needs a power-of-two length along dim {d}, got {n}")
        if n == 1:
            return t
        view = [1] * rank
        view[d] = n
        rev = self.sub(n - 1, self.arange(0, n))
        return self.gather(t, self.broadcast_to(self.reshape(rev, tuple(view)), t.shape), d)

    def cat(self, a: Any, b: Any, can_reorder: Any = False) -> tensor:
        """``a`` followed by ``b`` along dimension 0 (exact for either ``can_reorder``)."""
        x, y = self._tile(a, "kl.cat"), self._tile(b, "kl.cat")
        if x.shape != y.shape:
            raise self.error(f"kl.cat needs operands of one shape, got {x.shape} and {y.shape}")
        if x.dtype != y.dtype:
            raise self.error(f"kl.cat needs operands of one dtype, got {x.dtype} and {y.dtype}")
        rank = len(x.shape)
        stacked = self.permute(self.join(x, y), (rank, *range(rank)))
        return self.reshape(stacked, (2 * x.shape[0], *x.shape[1:]))

    # --- histogram ----------------------------------------------------------------------
    def histogram(self, x: Any, num_bins: Any, mask: Any = None) -> tensor:
        """int32 counts of the values ``0 .. num_bins-1`` in the 1-D integer tile ``x``;
        values outside that range and elements whose ``mask`` is false are not counted."""
        t = self._tile(x, "kl.histogram")
        if len(t.shape) != 1:
            raise self.error(f"kl.histogram needs a 1-D tensor, got shape {t.shape}")
        if not (isinstance(t.dtype, ScalarType) and t.dtype.is_integer and t.dtype != i1):
            raise self.error(f"kl.histogram needs integer values, got {t.dtype}")
        bins = self.const_int(num_bins, "kl.histogram num_bins")
        if _log2_exact(bins) is None:
            raise self.error(f"kl.histogram num_bins must be a power of two, got {bins}")
        n = t.shape[0]
        m = None if unwrap(mask) is None else self.broadcast_to(self.cast(self.to_tensor(mask), i1), (n,))
        with self.large_tiles():  # the (bins, n) comparison is kdsl's; Triton's histogram is one op
            hit = self.compare("eq", self.reshape(t, (1, n)), self.reshape(self.arange(0, bins), (bins, 1)))
            if m is not None:
                hit = self.logical_and(hit, self.reshape(m, (1, n)))
            return self.reduce_sum(self.where(hit, 1, 0), axis=1)

    # --- sorting --------------------------------------------------------------------------
    def _rows(self, x: Any, dim: Any, what: str) -> tuple[tensor, int, int]:
        """``x`` with ``dim`` moved last (validated: power-of-two length), its dim and log2 length."""
        t = self._tile(x, what)
        rank = len(t.shape)
        d = rank - 1 if unwrap(dim) is None else self.norm_axis(dim, rank, f"{what} dim")
        log_n = _log2_exact(t.shape[d])
        if log_n is None:
            raise self.error(f"{what} needs a power-of-two length along dim {d}, got {t.shape[d]}")
        if d != rank - 1:
            t = self.permute(t, (*(i for i in range(rank) if i != d), d))
        return t, d, log_n

    def _unrows(self, t: tensor, d: int) -> tensor:
        """Undo :meth:`_rows`' move of ``d`` to the last position."""
        rank = len(t.shape)
        if d == rank - 1:
            return t
        return self.permute(t, (*range(d), rank - 1, *range(d, rank - 1)))

    def _network(self, t: tensor, run: Callable[[SortNetwork, tensor], tensor]) -> tensor:
        """Apply ``run(net, keys (M, n)) -> keys (M, n')`` to the rows of ``t`` (fp8 rows are sorted
        as their exact f32 values and converted back: the round trip is exact)."""
        if isinstance(t.dtype, ScalarType) and t.dtype.is_fp8():
            return self.cast(self._network(self.cast(t, f32), run), t.dtype)
        net = SortNetwork(self)
        keys, back = net.keys(t)
        n = t.shape[-1]
        out = run(net, self.reshape(keys, (t.numel // n, n)))
        return back(self.reshape(out, (*t.shape[:-1], out.shape[1])))

    def sort(self, x: Any, dim: Any = None, descending: Any = False) -> tensor:
        """Sort along ``dim`` (default last); floats by totalOrder with NaNs last."""
        t, d, _ = self._rows(x, dim, "kl.sort")
        desc = bool(unwrap(descending))
        return self._unrows(self._network(t, lambda net, k: net.sort(k, desc)), d)

    def topk(self, x: Any, k: Any, dim: Any = None, descending: Any = True) -> tensor:
        """The ``k`` largest elements along ``dim``, largest first (smallest first, ascending,
        with ``descending=False``); ``k`` a power of two."""
        t, d, log_n = self._rows(x, dim, "kl.topk")
        kk = self.const_int(k, "kl.topk k")
        log_k = _log2_exact(kk)
        if log_k is None or log_k > log_n:
            raise self.error(f"kl.topk k must be a power of two at most {t.shape[-1]}, got {kk}")
        desc = bool(unwrap(descending))
        return self._unrows(self._network(t, lambda net, keys: net.topk(keys, log_k, desc)), d)

    def bitonic_merge(self, x: Any, dim: Any = None, descending: Any = False) -> tensor:
        """Sort rows that are bitonic sequences along ``dim`` with one merge (other rows:
        the network's output, as in Triton)."""
        t, d, log_n = self._rows(x, dim, "kl.bitonic_merge")
        desc = bool(unwrap(descending))
        if log_n == 0:
            return self._unrows(t, d)
        return self._unrows(self._network(t, lambda net, k: net.merge(k, log_n - 1, desc)), d)

    # --- swizzle2d --------------------------------------------------------------------------
    def swizzle2d(self, i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any) -> tuple[tensor, tensor]:
        """Triton's grouped ordering: row-major ``(i, j)`` of a ``size_i x size_j`` matrix
        to the column-major order within each group of ``size_g`` rows."""
        ij = self.add(self.mul(i, size_j), j)
        size_gj = self.mul(size_g, size_j)
        off_i = self.mul(self.floordiv(ij, size_gj), size_g)
        group = self.minmax("min", self.sub(size_i, off_i), size_g)
        rest = self.mod(ij, size_gj)
        return self.add(off_i, self.mod(rest, group)), self.floordiv(rest, group)
