"""Factories for ``tile`` ops without memory effects: program ids, arange,
shape manipulation, pointer arithmetic and ``dot``. Every array carries the
batch axis first, so a tile axis ``a`` is numpy axis ``a + 1``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import Frame, OpFn
from kdsl.interpreter.values import Array, broadcast_lead, round_to_bf16
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType


@register("tile.program_id")
def _program_id(op: Operation, c: Compiler) -> OpFn:
    axis = op.attributes["axis"]
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = fr.batch.pid(axis)

    return run


@register("tile.num_programs")
def _num_programs(op: Operation, c: Compiler) -> OpFn:
    axis = op.attributes["axis"]
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = np.array([fr.batch.state.grid[axis]], dtype=np.int32)

    return run


@register("tile.arange")
def _arange(op: Operation, c: Compiler) -> OpFn:
    value = np.arange(op.attributes["start"], op.attributes["end"], dtype=np.int32)[None]
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = value

    return run


def _unary(op: Operation, fn: Callable[[Array], Array]) -> OpFn:
    x = op.operands[0]
    r = op.result

    def run(fr: Frame) -> None:
        fr.vals[r] = fn(fr.get(x))

    return run


@register("tile.splat")
def _splat(op: Operation, c: Compiler) -> OpFn:
    shape = op.result.type.shape
    ones = (1,) * len(shape)

    def splat(x: Array) -> Array:
        return np.broadcast_to(x.reshape(x.shape[0], *ones), (x.shape[0], *shape))

    return _unary(op, splat)


@register("tile.broadcast")
def _broadcast(op: Operation, c: Compiler) -> OpFn:
    shape = op.result.type.shape
    return _unary(op, lambda x: np.broadcast_to(x, (x.shape[0], *shape)))


@register("tile.expand_dims")
def _expand_dims(op: Operation, c: Compiler) -> OpFn:
    axis = op.attributes["axis"] + 1
    return _unary(op, lambda x: np.expand_dims(x, axis))


@register("tile.reshape")
def _reshape(op: Operation, c: Compiler) -> OpFn:
    shape = op.result.type.shape
    return _unary(op, lambda x: x.reshape(x.shape[0], *shape))


@register("tile.permute")
def _permute(op: Operation, c: Compiler) -> OpFn:
    order = (0, *(o + 1 for o in op.attributes["order"]))
    return _unary(op, lambda x: x.transpose(order))


@register("tile.hint")
def _hint(op: Operation, c: Compiler) -> OpFn:
    return _unary(op, lambda x: x)


@register("tile.join")
def _join(op: Operation, c: Compiler) -> OpFn:
    a, b = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        x, y = fr.get(a), fr.get(b)
        n = max(x.shape[0], y.shape[0])
        fr.vals[r] = np.stack([broadcast_lead(x, n), broadcast_lead(y, n)], axis=-1)

    return run


@register("tile.split")
def _split(op: Operation, c: Compiler) -> OpFn:
    x = op.operand
    lo, hi = op.results

    def run(fr: Frame) -> None:
        v = fr.get(x)
        fr.vals[lo] = v[..., 0]
        fr.vals[hi] = v[..., 1]

    return run


@register("tile.addptr")
def _addptr(op: Operation, c: Compiler) -> OpFn:
    pt = op.ptr.type.scalar
    assert isinstance(pt, PointerType)
    size = pt.pointee.itemsize
    p, off = op.operands
    r = op.result
    key = (off, size)

    def run(fr: Frame) -> None:
        # the same offsets often index several arrays (x + offs, y + offs, ...):
        # convert and scale them once per frame
        scaled = fr.memo.get(key)
        if scaled is None:
            scaled = fr.get(off).astype(np.int64)
            if size != 1:
                scaled *= size
            fr.memo[key] = scaled
        fr.vals[r] = fr.get(p) + scaled

    return run


@register("tile.dot")
def _dot(op: Operation, c: Compiler) -> OpFn:
    ein = op.a.type.scalar
    eacc = op.acc.type.scalar
    assert isinstance(ein, ScalarType) and isinstance(eacc, ScalarType)
    a, b, acc = op.operands
    r = op.result
    if ein.is_integer:
        wide: np.dtype[np.generic] = np.dtype(np.int64)
    elif ein.name == "f64":
        wide = np.dtype(np.float64)
    else:
        wide = np.dtype(np.float32)
    out_dtype = eacc.np_dtype if eacc.name != "bf16" else np.dtype(np.float32)

    def run(fr: Frame) -> None:
        prod = np.matmul(fr.get(a).astype(wide), fr.get(b).astype(wide))
        total = prod + fr.get(acc).astype(wide)
        if eacc.name == "bf16":
            total = round_to_bf16(total)
        fr.vals[r] = total.astype(out_dtype)

    return run


@register("tile.gather")
def _gather(op: Operation, c: Compiler) -> OpFn:
    axis = op.attributes["axis"] + 1
    size = op.src.type.shape[op.attributes["axis"]]
    src, index = op.operands
    r = op.result

    def run(fr: Frame) -> None:
        x, i = fr.get(src), fr.get(index)
        n = max(x.shape[0], i.shape[0])
        x, i = broadcast_lead(x, n), broadcast_lead(i, n)
        # an index is in range by its value in its own type; uint64 values
        # >= 2**63 become negative int64 here, out of range as they should be
        k = i.astype(np.int64)
        ok = (k >= 0) & (k < size)
        picked = np.take_along_axis(x, np.where(ok, k, 0), axis=axis)
        fr.vals[r] = np.where(ok, picked, np.zeros((), dtype=picked.dtype))

    return run
