"""Factories for ``tile.load`` and ``tile.store`` (addresses -> ``Memory``).

Masked-off lanes never reach memory: only the addresses of active lanes are
gathered/scattered. A load without ``other`` yields 0 on masked lanes. When
every lane is active the mask costs one ``all()``.
"""

from __future__ import annotations

import numpy as np

from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import Frame, OpFn
from kdsl.interpreter.memory import AccessSite
from kdsl.interpreter.values import Array, from_storage, storage_dtype, to_storage, value_dtype
from kdsl.ir.core import Location, Operation
from kdsl.ir.types import PointerType, ScalarType


def pointee(op: Operation) -> ScalarType | PointerType:
    pt = op.operands[0].type.scalar
    assert isinstance(pt, PointerType)
    return pt.pointee


def scalar_pointee(op: Operation) -> ScalarType:
    """The pointee of an access only scalars can have (atomics)."""
    pt = op.operands[0].type.scalar
    assert isinstance(pt, PointerType)
    return pt.scalar_pointee


def make_site(fr: Frame, what: str, loc: Location, kernel: str, shape: tuple[int, ...], lanes: Array | None) -> AccessSite:
    return AccessSite(what, loc, kernel, shape, fr.batch.program_id, lanes)


@register("tile.load")
def _load(op: Operation, c: Compiler) -> OpFn:
    e = pointee(op)
    sd = storage_dtype(e)
    vd = value_dtype(e)
    ptr, mask, other = op.ptr, op.mask, op.other
    r = op.result
    loc, kernel = op.loc, c.kernel

    def run(fr: Frame) -> None:
        mem = fr.batch.state.memory
        p = fr.get(ptr)
        m = fr.get(mask) if mask is not None else None
        if m is not None and not m.all():
            o = fr.get(other) if other is not None else None
            parts = [p, m] if o is None else [p, m, o]
            shape = np.broadcast_shapes(*(x.shape for x in parts))
            p = np.broadcast_to(p, shape)
            m = np.broadcast_to(m, shape)
            out = np.zeros(shape, dtype=vd) if o is None else np.array(np.broadcast_to(o, shape))
            lanes = np.flatnonzero(m)
            site = make_site(fr, "load", loc, kernel, shape, lanes)
            out[m] = from_storage(mem.gather(p[m], sd, site), e)
            fr.vals[r] = out
            return
        if m is not None and m.shape[0] > p.shape[0]:
            p = np.broadcast_to(p, np.broadcast_shapes(p.shape, m.shape))
        site = make_site(fr, "load", loc, kernel, p.shape, None)
        raw = mem.gather(p.reshape(-1), sd, site)
        fr.vals[r] = from_storage(raw.reshape(p.shape), e)

    return run


@register("tile.store")
def _store(op: Operation, c: Compiler) -> OpFn:
    e = pointee(op)
    ptr, value, mask = op.ptr, op.value, op.mask
    loc, kernel = op.loc, c.kernel

    def run(fr: Frame) -> None:
        mem = fr.batch.state.memory
        p = fr.get(ptr)
        v = to_storage(fr.get(value), e)
        m = fr.get(mask) if mask is not None else None
        parts = [p, v] if m is None else [p, v, m]
        shape = np.broadcast_shapes(*(x.shape for x in parts))
        p = np.broadcast_to(p, shape)
        v = np.broadcast_to(v, shape)
        if m is not None and not m.all():
            m = np.broadcast_to(m, shape)
            site = make_site(fr, "store", loc, kernel, shape, np.flatnonzero(m))
            mem.scatter(p[m], v[m], site)
            return
        site = make_site(fr, "store", loc, kernel, shape, None)
        mem.scatter(p.reshape(-1), v.reshape(-1), site)

    return run
