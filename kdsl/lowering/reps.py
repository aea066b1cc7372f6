"""What a tile value of the tile IR becomes during lowering.

* :class:`Mat` -- *materialised*: stored, one private array per work-item in
  the blocked layout (``priv``); optionally also whole in a ``__local``
  buffer (``shared``) so any work-item can read any element. With one
  work-item per group both are the same array.
* :class:`Lazy` -- *an expression of the element index*: ``arange``,
  ``splat``, constants, elementwise ops, ``broadcast``/``permute``/``reshape``
  of other tiles. It emits scalar code for one element wherever a consumer
  needs that element, so chains of elementwise ops fuse into the consumer's
  element loop and index shuffles of such chains cost nothing.

``Lazy.leaves`` records which stored tiles an expression reads and whether
every read is at the consumer's own flat index (``identity``) -- the lowering
uses it to decide when a ``__local`` copy is needed and when an element loop
may not be fused with the previous one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdsl.ir.core import Value
from kdsl.ir.types import PointerType, ScalarType

if TYPE_CHECKING:
    from kdsl.lowering.affine import Affine, Bounds
    from kdsl.lowering.index import Index

Elem = ScalarType | PointerType


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@dataclass(eq=False)
class Mat:
    """A stored tile (see module doc)."""

    shape: tuple[int, ...]
    elem: Elem
    priv: Value
    shared: Value | None = None

    @property
    def numel(self) -> int:
        return numel(self.shape)


@dataclass(eq=False)
class Lazy:
    """A tile computed on demand, element by element (see module doc)."""

    shape: tuple[int, ...]
    elem: Elem
    fn: Callable[[Index], Value]
    leaves: dict[int, tuple[Mat, bool]] = field(default_factory=dict)
    cost: int = 1
    # all elements at once, when known (kdsl/lowering/affine.py): lets loads and
    # stores of affine pointer tiles become block copies, and keeps such tiles lazy
    form: Affine | Bounds | None = None

    @property
    def numel(self) -> int:
        return numel(self.shape)


Rep = Mat | Lazy


def leaves_of(rep: Rep, identity: bool = True) -> dict[int, tuple[Mat, bool]]:
    """Stored tiles read by ``rep``; ``identity`` False marks every read foreign."""
    if isinstance(rep, Mat):
        return {id(rep): (rep, identity)}
    if identity:
        return dict(rep.leaves)
    return {k: (m, False) for k, (m, _) in rep.leaves.items()}


def merge_leaves(*parts: dict[int, tuple[Mat, bool]]) -> dict[int, tuple[Mat, bool]]:
    out: dict[int, tuple[Mat, bool]] = {}
    for p in parts:
        for k, (m, ident) in p.items():
            prev = out.get(k)
            out[k] = (m, ident and (prev is None or prev[1]))
    return out


def cost_of(rep: Rep) -> int:
    return 1 if isinstance(rep, Mat) else rep.cost
