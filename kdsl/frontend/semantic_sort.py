"""Sorting networks for ``kl.sort``/``kl.topk``/``kl.bitonic_merge``, composed
from existing tile ops (as Triton's ``standard.py`` does): every step is a
reshape/permute/split, a compare and two selects, then join/permute/reshape.

The network runs on integer *keys* whose signed (or unsigned) order is the
sort order, so float values are never compared as floats and move bit for
bit. Float keys follow IEEE 754 totalOrder (``-0.0 < +0.0``), rotated so that
every NaN sorts after ``+inf``: positive NaNs by payload, then negative NaNs
by payload. Ints are their own keys.

A row of ``2**m`` keys is sorted by ``m (m + 1) / 2`` compare-and-swap steps
(bitonic sort), each ``O(n)``: the lowering keeps each step an index remap
and stores one tile per step.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.frontend.semantic_shape import ShapeSemantic
from kdsl.ir.core import Operation
from kdsl.ir.dialects import arith
from kdsl.ir.types import ScalarType, i1, i8
from kdsl.language.core import tensor

# mantissa bits per float type: the size of each NaN block of totalOrder
_MANTISSA = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}

# the direction of one merge: a constant (True = descending) or "alternate"
# (blocks of 2**(s+1) elements alternate ascending / descending, by position)
Direction = bool | str


def _elem(t: tensor) -> ScalarType:
    e = t.dtype
    assert isinstance(e, ScalarType)
    return e


class SortNetwork:
    """The bitonic steps, emitted through a semantic (shape ops, arange, casts)."""

    def __init__(self, sem: ShapeSemantic) -> None:
        self.sem = sem

    # --- one-op helpers -----------------------------------------------------------------
    def _op(self, cls: type[Operation], *xs: tensor, elem: ScalarType | None = None, **attrs: object) -> tensor:
        ty = xs[0].type if elem is None else xs[0].type.with_element(elem)
        return self.sem.emit1(cls, [x.handle for x in xs], ty, **attrs)

    def _const(self, value: int, like: tensor) -> tensor:
        return self.sem.constant(value, like.type)

    # --- keys -----------------------------------------------------------------------------
    def keys(self, x: tensor) -> tuple[tensor, Callable[[tensor], tensor]]:
        """Integer keys of ``x`` and the function turning sorted keys back into values."""
        e = _elem(x)
        if e == i1:
            return self.sem.cast(x, i8), lambda k: self.sem.cast(k, i1)
        if e.is_integer:
            return x, lambda k: k
        w = e.bitwidth
        ity = ScalarType(f"i{w}")
        rot = (1 << _MANTISSA[e.name]) - 1

        def flip_negatives(s: tensor) -> tensor:
            # negative floats: reverse their order (all bits but the sign flipped)
            sign = self._op(arith.ShrOp, s, self._const(w - 1, s))
            return self._op(arith.XorOp, s, self._op(arith.AndOp, sign, self._const((1 << (w - 1)) - 1, s)))

        def back(k: tensor) -> tensor:
            s = flip_negatives(self._op(arith.AddOp, k, self._const(rot, k)))
            return self.sem.bitcast(s, e)

        key = flip_negatives(self.sem.bitcast(x, ity))
        # rotate: the negative-NaN block (the lowest keys) wraps to the top
        return self._op(arith.SubOp, key, self._const(rot, key)), back

    # --- steps ------------------------------------------------------------------------------
    def _alternating(self, q: int, shift: int, shape: tuple[int, ...]) -> tensor:
        """i1 ``(bit shift of the group number)`` over groups ``0..q-1``, broadcast to ``shape``."""
        g = self.sem.arange(0, q)
        if shift:
            g = self._op(arith.ShrOp, g, self.sem.constant(shift, g.type))
        bit = self._op(arith.AndOp, g, self.sem.constant(1, g.type))
        flag = self._op(arith.CmpOp, bit, self.sem.constant(0, g.type), elem=i1, predicate="ne")
        return self.sem.broadcast_to(self.sem.reshape(flag, (1, q, 1)), shape)

    def compare_and_swap(self, k: tensor, j: int, s: int, direction: Direction) -> tensor:
        """Order the pairs ``2**j`` apart within each row of ``k`` (shape ``(M, L)``)."""
        m, n = k.shape
        d = 1 << j
        q = n // (2 * d)
        y = self.sem.permute(self.sem.reshape(k, (m, q, 2, d)), (0, 1, 3, 2))
        lo, hi = self.sem.split(y)
        if direction == "alternate":
            swap = self._op(arith.CmpOp, lo, hi, elem=i1, predicate="gt")
            swap = self._op(arith.XorOp, swap, self._alternating(q, s - j, lo.shape))
        else:
            swap = self._op(arith.CmpOp, lo, hi, elem=i1, predicate="lt" if direction else "gt")
        new_lo = self._op(arith.SelectOp, swap, hi, lo, elem=_elem(lo))
        new_hi = self._op(arith.SelectOp, swap, lo, hi, elem=_elem(lo))
        y = self.sem.permute(self.sem.join(new_lo, new_hi), (0, 1, 3, 2))
        return self.sem.reshape(y, (m, n))

    def merge(self, k: tensor, s: int, direction: Direction) -> tensor:
        """Merge bitonic blocks of ``2**(s+1)`` keys (``s + 1`` steps)."""
        for j in range(s, -1, -1):
            k = self.compare_and_swap(k, j, s, direction)
        return k

    def sort(self, k: tensor, descending: bool) -> tensor:
        """Sort each row of ``k`` (shape ``(M, 2**m)``)."""
        m = k.shape[1].bit_length() - 1
        for s in range(m):
            k = self.merge(k, s, "alternate" if s < m - 1 else descending)
        return k

    def topk(self, k: tensor, log_k: int, descending: bool) -> tensor:
        """The ``2**log_k`` largest (``descending``) or smallest keys of each row, sorted:
        sort blocks of that size in alternating directions, then repeatedly keep
        the larger half of each pair of blocks (a bitonic half-cleaner) and merge it."""
        rows, n = k.shape
        log_n = n.bit_length() - 1
        for s in range(log_k):
            k = self.merge(k, s, "alternate" if s < log_n - 1 else descending)
        size = 1 << log_k
        for level in range(log_k + 1, log_n + 1):
            q = k.shape[1] // (2 * size)
            a, b = self.sem.split(self.sem.permute(self.sem.reshape(k, (rows, q, 2, size)), (0, 1, 3, 2)))
            pred = "gt" if descending else "lt"
            take_a = self._op(arith.CmpOp, a, b, elem=i1, predicate=pred)
            k = self.sem.reshape(self._op(arith.SelectOp, take_a, a, b, elem=_elem(a)), (rows, q * size))
            k = self.merge(k, log_k - 1, "alternate" if level < log_n else descending)
        return k


__all__ = ["Direction", "SortNetwork"]
