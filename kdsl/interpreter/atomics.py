"""``tile.atomic_rmw`` and ``tile.atomic_cas``.

Kernels containing atomics run one program at a time in program order (see
the package docstring), so an atomic op only has to be atomic with respect to
its own lanes: lanes act in row-major lane order. When the active lanes'
addresses are distinct this is one vectorised gather/compute/scatter;
otherwise lanes are applied one by one so that every lane sees the effect
of the lanes before it (a histogram's repeated bins, a counter bumped by
every lane). Masked-off lanes return 0 and touch nothing.

Float ``max``/``min`` propagate NaN (any NaN operand gives NaN).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kdsl.interpreter import elementwise as ew
from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import Frame, OpFn
from kdsl.interpreter.memory import AccessSite, Memory
from kdsl.interpreter.memory_ops import make_site, scalar_pointee
from kdsl.interpreter.values import Array, from_storage, storage_dtype, to_storage, value_dtype
from kdsl.ir.core import Operation
from kdsl.ir.types import ScalarType

Step = Callable[[Array, Array, Array], tuple[Array, Array]]
"""(old values, operand a, operand b) -> (new values, lanes that write)."""


def _rmw_fn(kind: str, e: ScalarType) -> Callable[[Array, Array], Array]:
    if kind == "xchg":
        return lambda old, v: np.broadcast_to(v, old.shape)
    if e.is_float and kind in ("max", "min"):
        return _float_extremum(kind == "max", ew.binary(kind, e, {"propagate_nan": True}))
    return ew.binary(kind, e, {})


def _float_extremum(is_max: bool, fn: Callable[[Array, Array], Array]) -> Callable[[Array, Array], Array]:
    """NaN-propagating max/min that orders -0.0 below +0.0 (IEEE 754-2019 ``maximum``/
    ``minimum``; what Triton's sign-split integer atomics give for zeros)."""

    def run(old: Array, v: Array) -> Array:
        r = fn(old, v)
        tie = (old == v) & (np.signbit(old) != np.signbit(v))
        if not tie.any():
            return r
        pick_old = np.signbit(v) if is_max else np.signbit(old)
        return np.where(tie, np.where(pick_old, old, v), r)

    return run


def apply_atomic(
    mem: Memory, addrs: Array, a: Array, b: Array, step: Step, e: ScalarType, site: AccessSite
) -> Array:
    """Run ``step`` lane by lane semantics on memory; return the old values."""
    sd = storage_dtype(e)
    if np.unique(addrs).size == addrs.size:
        old = from_storage(mem.gather(addrs, sd, site), e)
        new, writes = step(old, a, b)
        if writes.any():
            mem.scatter(addrs[writes], to_storage(new[writes], e), _sub_site(site, writes))
        return old
    olds = np.empty(addrs.size, dtype=value_dtype(e))
    for i in range(addrs.size):
        one = slice(i, i + 1)
        lane_site = _sub_site(site, np.array([i]))
        old = from_storage(mem.gather(addrs[one], sd, lane_site), e)
        new, writes = step(old, a[one], b[one])
        if writes[0]:
            mem.scatter(addrs[one], to_storage(new, e), lane_site)
        olds[i] = old[0]
    return olds


def _sub_site(site: AccessSite, picked: Array) -> AccessSite:
    idx = np.flatnonzero(picked) if picked.dtype == bool else picked
    lanes = site.lanes[idx] if site.lanes is not None else idx
    return AccessSite(site.what, site.loc, site.kernel, site.shape, site.program_ids, lanes)


@register("tile.atomic_rmw")
def _atomic_rmw(op: Operation, c: Compiler) -> OpFn:
    e = scalar_pointee(op)
    fn = _rmw_fn(op.attributes["kind"], e)
    ptr, val, mask = op.ptr, op.val, op.mask
    r = op.result
    vd = value_dtype(e)
    what = f"atomic_{op.attributes['kind']}"
    loc, kernel = op.loc, c.kernel

    def step(old: Array, v: Array, _unused: Array) -> tuple[Array, Array]:
        return fn(old, v), np.ones(old.shape, dtype=bool)

    def run(fr: Frame) -> None:
        p, v = fr.get(ptr), fr.get(val)
        m = fr.get(mask) if mask is not None else np.ones((1,), dtype=bool)
        shape = np.broadcast_shapes(p.shape, v.shape, m.shape)
        p, v, m = (np.broadcast_to(x, shape) for x in (p, v, m))
        site = make_site(fr, what, loc, kernel, shape, np.flatnonzero(m))
        out = np.zeros(shape, dtype=vd)
        vals = v[m]
        out[m] = apply_atomic(fr.batch.state.memory, p[m], vals, vals, step, e, site)
        fr.vals[r] = out

    return run


@register("tile.atomic_cas")
def _atomic_cas(op: Operation, c: Compiler) -> OpFn:
    e = scalar_pointee(op)
    bits = np.dtype(f"u{max(1, e.itemsize)}")
    ptr, cmp, val = op.ptr, op.cmp, op.val
    r = op.result
    loc, kernel = op.loc, c.kernel

    def as_bits(x: Array) -> Array:
        return to_storage(x, e).view(bits) if e.name != "i1" else x

    def step(old: Array, want: Array, new: Array) -> tuple[Array, Array]:
        hit = as_bits(old) == as_bits(want)  # floats compare bitwise
        return new, hit

    def run(fr: Frame) -> None:
        p, cv, v = fr.get(ptr), fr.get(cmp), fr.get(val)
        shape = np.broadcast_shapes(p.shape, cv.shape, v.shape)
        p, cv, v = (np.broadcast_to(x, shape) for x in (p, cv, v))
        site = make_site(fr, "atomic_cas", loc, kernel, shape, None)
        old = apply_atomic(fr.batch.state.memory, p.reshape(-1), cv.reshape(-1), v.reshape(-1), step, e, site)
        fr.vals[r] = old.reshape(shape)

    return run
