"""``kl.map_elementwise``: the typing half (broadcasting, ``pack`` grouping, results).

Triton 3.5's ``map_elementwise(scalar_fn, *args, pack=1)`` applies a scalar ``@jit``
function to every element of its (broadcast) arguments. Triton builds one region of
scalar code that each GPU thread runs on its own elements. kdsl has no per-element
region op: the frontend traces ``scalar_fn`` once over whole tiles in *lane mode*
(``frontend/lanes.py``), where each element is a lane and data-dependent control flow
becomes masked execution. This module owns what Triton's semantic owns:

* the arguments are converted to tensors (Python numbers as Triton's literals) and
  broadcast to one shape, numpy-style, without dtype promotion;
* with ``pack = p``, ``scalar_fn`` receives ``p`` consecutive elements (row-major order)
  per argument and returns ``p`` values per result, arguments and results grouped by
  input: ``f(a0, .., a(p-1), b0, .., b(p-1)) -> (r0, .., r(p-1), s0, .., s(p-1))``, as
  Triton orders them. ``p`` must be a power of two dividing the element count; the
  elements are regrouped with ``split``/``interleave`` (so a lane holds element
  ``p*g + j`` in its ``j``-th slot);
* a scalar function returning one value gives one tensor, one returning a tuple gives
  a tuple (with ``pack > 1`` always a tuple, as in Triton: ``map_elementwise(f, x,
  pack=4)[0]``).

The call of ``scalar_fn`` itself is the visitor's job: it hands in ``map_function``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_reduce import ReduceSemantic
from kdsl.ir.types import TileType, i1
from kdsl.language.core import tensor

# (scalar_fn, per-lane arguments, all-lanes mask, number of inputs, pack) -> what scalar_fn returned
MapFunction = Callable[[Any, list[tensor], tensor, int, int], Any]


class MapSemantic(ReduceSemantic):
    """``map_elementwise``'s argument and result rules."""

    map_function: MapFunction | None = None  # set by the frontend (lane-mode call of scalar_fn)

    def map_elementwise(self, scalar_fn: Any, args: tuple[Any, ...], pack: Any = 1) -> Any:
        p = self.const_int(pack, "kl.map_elementwise pack")
        if p < 1 or p & (p - 1):
            raise self.error(f"kl.map_elementwise: pack must be a positive power of two, got {p}")
        if not args:
            raise self.error("kl.map_elementwise needs at least one input tensor")
        if self.map_function is None:
            raise self.error("kl.map_elementwise needs the kernel frontend")
        ts = [self.to_tensor(a) for a in args]
        shape = self.broadcast_shapes(*(t.shape for t in ts))
        ts = [self.broadcast_to(t, shape) for t in ts]
        numel = ts[0].numel
        if numel % p:
            raise self.error(f"kl.map_elementwise: pack={p} does not divide the {numel} elements of shape {shape}")
        if p == 1:
            lanes, lane_args = shape, ts
        else:
            lanes = (numel // p,)
            lane_args = [part for t in ts for part in self._deinterleave(self.reshape(t, (numel,)), p)]
        mask = self.constant(True, TileType(lanes, i1) if lanes else i1)
        result = self.map_function(scalar_fn, lane_args, mask, len(ts), p)
        single = not isinstance(unwrap(result), tuple)
        values = [result] if single else list(unwrap(result))
        if not values or any(unwrap(v) is None for v in values):
            raise self.error("kl.map_elementwise: the mapped function must return one or more values")
        outs = [self._lane_result(v, lanes, i) for i, v in enumerate(values)]
        if p > 1:
            outs = self._regroup(outs, p, shape)
        return outs[0] if single else tuple(outs)

    # --- helpers ----------------------------------------------------------------------
    def _lane_result(self, value: Any, lanes: tuple[int, ...], index: int) -> tensor:
        """One returned value as a per-lane tensor (a uniform value is broadcast)."""
        if not isinstance(value, tensor) and not isinstance(unwrap(value), (bool, int, float)):
            raise self.error(f"kl.map_elementwise: result {index} of the mapped function is not a scalar "
                             f"value ({type(unwrap(value)).__name__})")
        t = self.to_tensor(value)
        if t.shape not in ((), lanes):
            raise self.error(f"kl.map_elementwise: result {index} of the mapped function has shape {t.shape}; "
                             "it must return scalars")
        return self.broadcast_to(t, lanes) if lanes else t

    def _regroup(self, outs: list[tensor], p: int, shape: tuple[int, ...]) -> list[tensor]:
        """``p`` values per result back to one tensor of ``shape`` per result."""
        if len(outs) % p:
            raise self.error(f"kl.map_elementwise: with pack={p} the mapped function must return a multiple "
                             f"of {p} values (pack values per result), got {len(outs)}")
        regrouped = []
        for k in range(0, len(outs), p):
            group = outs[k : k + p]
            kinds = {str(t.dtype) for t in group}
            if len(kinds) > 1:
                raise self.error(f"kl.map_elementwise: the {p} packed values of result {k // p} have different "
                                 f"types ({', '.join(str(t.dtype) for t in group)})")
            regrouped.append(self.reshape(self._interleave_all(group), shape))
        return regrouped

    def _deinterleave(self, x: tensor, p: int) -> list[tensor]:
        """``p`` tiles of ``n/p`` elements; part ``j`` holds ``x[p*g + j]`` (``x`` is 1-D)."""
        if p == 1:
            return [x]
        n = x.shape[0]
        even, odd = self.split(self.reshape(x, (n // 2, 2)))
        lo, hi = self._deinterleave(even, p // 2), self._deinterleave(odd, p // 2)
        return [part for pair in zip(lo, hi) for part in pair]

    def _interleave_all(self, parts: list[tensor]) -> tensor:
        """Inverse of :meth:`_deinterleave`."""
        if len(parts) == 1:
            return parts[0]
        return self.interleave(self._interleave_all(parts[0::2]), self._interleave_all(parts[1::2]))
