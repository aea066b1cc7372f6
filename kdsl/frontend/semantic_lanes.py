"""The semantic of a function traced in lane mode (the body of ``kl.map_elementwise``).

In lane mode (``frontend/lanes.py``) every element of the mapped tensors is a lane and
the generator tracks which lanes are *active*: those whose own control flow reaches the
code being emitted. Pure operations run on every lane and the inactive lanes' results
are discarded by the merges, but an operation with an effect must not happen for a lane
that, in Triton's per-element execution, never gets there. So:

* ``load``/``store``/``atomic_*`` are masked with the active lanes (and-ed with any mask
  the user gives): an inactive lane never touches memory, so a pointer that is only
  valid on the taken branch cannot fault on the other one;
* ``device_assert`` checks only the active lanes;
* ``atomic_cas`` (Triton's takes no mask) and ``device_print`` (prints every element of
  a tile) cannot be restricted to the active lanes: they are compile errors here.

A uniform (scalar) pointer is broadcast to the lanes first, as each lane of Triton's
scalar function would access it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kdsl.frontend.semantic import Semantic
from kdsl.frontend.semantic_base import unwrap
from kdsl.ir.types import i1
from kdsl.language.core import tensor


class LaneSemantic(Semantic):
    """:class:`Semantic` with effects restricted to the active lanes."""

    lane_mask: Callable[[], tensor]  # set by the generator: the mask of the active lanes

    def _in_lanes(self, pointer: Any, mask: Any, what: str) -> tuple[Any, tensor]:
        active = self.lane_mask()
        ptr = pointer
        if isinstance(ptr, tensor):
            if active.shape and not ptr.shape:
                ptr = self.broadcast_to(ptr, active.shape)
            if ptr.shape != active.shape:
                raise self.error(f"{what} inside a kl.map_elementwise function takes one pointer per element, "
                                 f"got a tile of shape {ptr.shape}")
        if unwrap(mask) is None:
            return ptr, active
        m = self.to_tensor(mask)
        if m.dtype != i1:
            m = self.cast(m, i1)
        return ptr, self.logical_and(m, active)

    def load(self, pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (),
             padding_option: Any = "", cache_modifier: Any = "", eviction_policy: Any = "",
             volatile: Any = False) -> tensor:
        if unwrap(mask) is None and unwrap(other) is not None:
            raise self.error("kl.load: `other` cannot be given without `mask`")
        ptr, m = self._in_lanes(pointer, mask, "kl.load")
        return super().load(ptr, m, other, boundary_check, padding_option, cache_modifier, eviction_policy,
                            volatile)

    def store(self, pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (),
              cache_modifier: Any = "", eviction_policy: Any = "") -> None:
        ptr, m = self._in_lanes(pointer, mask, "kl.store")
        super().store(ptr, value, m, boundary_check, cache_modifier, eviction_policy)

    def atomic_rmw(self, kind: str, pointer: Any, val: Any, mask: Any = None, sem: Any = None,
                   scope: Any = None) -> tensor:
        ptr, m = self._in_lanes(pointer, mask, f"kl.atomic_{kind}")
        return super().atomic_rmw(kind, ptr, val, m, sem, scope)

    def atomic_cas(self, pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> tensor:
        raise self.error("kl.atomic_cas cannot be used inside a kl.map_elementwise function: it has no mask, so "
                         "it cannot be limited to the elements whose control flow reaches it")

    def device_print(self, prefix: Any, args: tuple[Any, ...], hex: Any = False) -> None:
        raise self.error("kl.device_print/print cannot be used inside a kl.map_elementwise function: it would "
                         "print every element, also those whose control flow does not reach it; print the "
                         "mapped results instead")

    def device_assert(self, cond: Any, msg: Any = "") -> None:
        c = self.to_tensor(cond)
        if c.dtype != i1:
            c = self.cast(c, i1)
        super().device_assert(self.logical_or(c, self.invert(self.lane_mask())), msg)
