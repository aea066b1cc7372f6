"""Element indices during lowering: a multi-index and/or a flat index.

An :class:`Index` names one element of a tile of a given shape. It is built
either from the flat row-major index (an element loop's own index) or from
per-dimension indices (after a broadcast or permute); the other form is
computed on demand with ``arith`` ops at the builder's insertion point.
``slot`` is set only on an element loop's own index: it is the private-array
slot of that element in any stored tile with the same number of elements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdsl.ir.core import Value

if TYPE_CHECKING:
    from kdsl.lowering.lowerer import Lowerer


class Index:
    def __init__(
        self,
        lw: Lowerer,
        shape: tuple[int, ...],
        *,
        dims: list[Value] | None = None,
        flat: Value | None = None,
        slot: Value | None = None,
    ) -> None:
        assert dims is not None or flat is not None or not shape
        self.lw = lw
        self.shape = shape
        self._dims = dims
        self._flat = flat
        self.slot = slot

    def dims(self) -> list[Value]:
        if self._dims is None:
            lw, flat = self.lw, self._flat
            assert flat is not None
            out: list[Value] = []
            stride = 1
            for k, d in enumerate(reversed(self.shape)):
                q = lw.idiv(flat, stride)
                # flat < numel, so the outermost quotient needs no remainder
                out.append(q if k == len(self.shape) - 1 else lw.irem(q, d))
                stride *= d
            self._dims = list(reversed(out))
        return self._dims

    def flat(self) -> Value:
        if self._flat is None:
            lw = self.lw
            assert self._dims is not None
            acc = lw.iconst(0)
            for v, d in zip(self._dims, self.shape):
                acc = lw.iadd(lw.imul(acc, d), v)
            self._flat = acc
        return self._flat

    def with_shape(self, shape: tuple[int, ...]) -> Index:
        """The same flat position in a tile of another shape with as many elements."""
        if shape == self.shape:
            return self
        return Index(self.lw, shape, flat=self.flat() if shape else self.lw.iconst(0), slot=self.slot)

    def with_dims(self, shape: tuple[int, ...], dims: list[Value]) -> Index:
        """A foreign index (a different element than this loop's own)."""
        return Index(self.lw, shape, dims=dims)
