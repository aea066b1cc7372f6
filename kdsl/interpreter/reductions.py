"""``tile.reduce`` and ``tile.scan``.

Fast paths: when the combiner body is one known op applied to (acc, new),
numpy's own reductions/accumulations are used wherever their result is
exact and order-independent (integer add/mul wrap in the element dtype,
and/or/xor, max/min); float add/mul reduce with the same balanced tree as the
generic path, and float scans accumulate sequentially in the element type.

Generic path: the body runs on whole arrays of elements. A reduce combines
adjacent pairs ``(2i, 2i+1)`` level by level (an odd last element is carried
up), so every combine sees ``acc`` from lower indices than ``new``; a scan is
Hillis-Steele (log2(n) steps) with the same ordering. Hence a combiner that
keeps its first argument on ties keeps the lowest index. A reverse scan flips
the axis, scans and flips back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from kdsl.interpreter import elementwise as ew
from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import BlockCode, Frame, OpFn
from kdsl.interpreter.values import Array, broadcast_lead
from kdsl.ir.core import Operation
from kdsl.ir.types import ScalarType

Combine = Callable[[list[Array], list[Array]], list[Array]]

_SIMPLE = {"arith.add", "arith.mul", "arith.max", "arith.min", "arith.and", "arith.or", "arith.xor"}


def _simple_kind(op: Operation) -> tuple[str, Operation] | None:
    """(short name, body op) if the body is ``yield op(acc, new)`` for a known op."""
    body = op.regions[0].block
    if len(op.operands) != 1 or len(body.ops) != 2:
        return None
    inner, term = body.ops
    if inner.NAME not in _SIMPLE or list(term.operands) != [inner.result]:
        return None
    if {id(v) for v in inner.operands} != {id(a) for a in body.args} or len(inner.operands) != 2:
        return None
    return inner.NAME.split(".")[1], inner


def _int_ufunc(kind: str, e: ScalarType) -> Any:
    if e.name == "i1":
        table: dict[str, Any] = {"add": np.logical_xor, "mul": np.logical_and, "max": np.logical_or, "min": np.logical_and,
                 "and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}  # fmt: skip
        return table[kind]
    table2: dict[str, Any] = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
             "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}  # fmt: skip
    return table2[kind]


def _fast(op: Operation) -> tuple[np.ufunc | None, Combine | None]:
    """(order-independent ufunc, or elementwise combine for the tree) for simple bodies."""
    found = _simple_kind(op)
    if found is None:
        return None, None
    kind, inner = found
    e = inner.result.type.scalar
    assert isinstance(e, ScalarType)
    if e.is_integer:
        return _int_ufunc(kind, e), None
    if kind in ("max", "min"):
        prop = bool(inner.attributes.get("propagate_nan", False))
        fn = (np.maximum if kind == "max" else np.minimum) if prop else (np.fmax if kind == "max" else np.fmin)
        return fn, None
    f = ew.float_binary(kind, e)
    return None, lambda accs, news: [f(accs[0], news[0])]


def _body_combine(code: BlockCode, fr: Frame, lift: int) -> Combine:
    def combine(accs: list[Array], news: list[Array]) -> list[Array]:
        sub = Frame(fr.batch, fr, lift=lift)
        outs = code.run(sub, [*accs, *news])
        shape = np.broadcast_shapes(accs[0].shape, news[0].shape)
        return [np.broadcast_to(o, shape) for o in outs]

    return combine


def _inputs(fr: Frame, op: Operation, full: bool) -> list[Array]:
    """The inputs with one common batch axis; ``full`` forces the batch size
    (the generic body may mix in per-program scalars from outside)."""
    xs = [fr.get(v) for v in op.operands]
    n = fr.batch.size if full else max(x.shape[0] for x in xs)
    return [broadcast_lead(x, n) for x in xs]


def tree_reduce(xs: list[Array], ax: int, combine: Combine) -> list[Array]:
    n = xs[0].shape[ax]
    while n > 1:
        half = n // 2
        lo = [_take(x, slice(0, 2 * half, 2), ax) for x in xs]
        hi = [_take(x, slice(1, 2 * half, 2), ax) for x in xs]
        out = combine(lo, hi)
        if n % 2:
            out = [np.concatenate([o, _take(x, slice(n - 1, n), ax)], axis=ax) for o, x in zip(out, xs)]
        xs = out
        n = half + n % 2
    return [np.take(x, 0, axis=ax) for x in xs]


def hillis_steele(xs: list[Array], ax: int, combine: Combine) -> list[Array]:
    n = xs[0].shape[ax]
    d = 1
    while d < n:
        acc = [_take(x, slice(0, n - d), ax) for x in xs]
        new = [_take(x, slice(d, n), ax) for x in xs]
        out = combine(acc, new)
        xs = [np.concatenate([_take(x, slice(0, d), ax), o], axis=ax) for x, o in zip(xs, out)]
        d *= 2
    return xs


def _take(x: Array, s: slice, ax: int) -> Array:
    idx: list[slice] = [slice(None)] * x.ndim
    idx[ax] = s
    return x[tuple(idx)]


@register("tile.reduce")
def _reduce(op: Operation, c: Compiler) -> OpFn:
    ax = op.attributes["axis"] + 1
    rank = len(op.operands[0].type.shape)
    results = list(op.results)
    ufunc, tree_fn = _fast(op)
    code = c.region(op, 0)

    def run(fr: Frame) -> None:
        xs = _inputs(fr, op, ufunc is None and tree_fn is None)
        if ufunc is not None:
            outs = [ufunc.reduce(xs[0], axis=ax, dtype=xs[0].dtype)]
        else:
            combine = tree_fn or _body_combine(code, fr, rank)
            outs = tree_reduce(xs, ax, combine)
        for r, o, x in zip(results, outs, xs):
            fr.vals[r] = o.astype(x.dtype, copy=False)

    return run


@register("tile.scan")
def _scan(op: Operation, c: Compiler) -> OpFn:
    ax = op.attributes["axis"] + 1
    rank = len(op.operands[0].type.shape)
    reverse = bool(op.attributes["reverse"])
    results = list(op.results)
    ufunc, tree_fn = _fast(op)
    e = op.operands[0].type.scalar
    sequential_float = tree_fn is not None and isinstance(e, ScalarType) and e.name in ("f16", "f32", "f64")
    found = _simple_kind(op)
    kind = found[0] if found else ""
    code = c.region(op, 0)

    def run(fr: Frame) -> None:
        xs = _inputs(fr, op, ufunc is None and tree_fn is None)
        if reverse:
            xs = [np.flip(x, axis=ax) for x in xs]
        if ufunc is not None:
            outs = [ufunc.accumulate(xs[0], axis=ax, dtype=xs[0].dtype)]
        elif sequential_float:
            acc = np.cumsum if kind == "add" else np.cumprod
            outs = [acc(xs[0], axis=ax, dtype=xs[0].dtype)]
        else:
            outs = hillis_steele(xs, ax, tree_fn or _body_combine(code, fr, rank))
        if reverse:
            outs = [np.flip(o, axis=ax) for o in outs]
        for r, o, x in zip(results, outs, xs):
            fr.vals[r] = o.astype(x.dtype, copy=False)

    return run
