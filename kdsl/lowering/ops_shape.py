"""Lowering of pure ops: elementwise ``arith``/``math``, ids, pointer offsets
and the shape ops. None of them emits code by itself on tiles: they become
:class:`~kdsl.lowering.reps.Lazy` expressions evaluated inside consumers'
element loops (``broadcast``/``permute``/``join``/``split`` only remap the
element index, ``gather`` remaps it by a value read from its index tile).
Scalars are cloned as uniform scalar code.
"""

from __future__ import annotations

from kdsl.ir.core import Elementwise, Operation, Value
from kdsl.ir.dialects import arith, math, tile, wi
from kdsl.ir.types import ScalarType
from kdsl.lowering import affine
from kdsl.lowering.index import Index
from kdsl.lowering.lowerer import Lowerer, lowers
from kdsl.lowering.reps import Lazy, Rep, cost_of, leaves_of, merge_leaves

_EXPENSIVE = {"math.exp", "math.exp2", "math.log", "math.log2", "math.sin", "math.cos", "math.tanh",
              "math.erf", "math.pow", "math.sqrt", "math.rsqrt", "arith.div", "arith.rem"}

ELEMENTWISE = [op.NAME for d in (arith.ARITH, math.MATH) for op in d.ops if op.has_trait(Elementwise)]


def _clone_scalar(lw: Lowerer, op: Operation, operands: list[Value]) -> Value:
    cls = wi.AddPtrOp if op.NAME == "tile.addptr" else type(op)
    res_t = op.results[0].type.scalar
    return lw.emit(cls, operands, res_t, dict(op.attributes))


@lowers(*ELEMENTWISE, "tile.addptr", "arith.constant")
def lower_elementwise(lw: Lowerer, op: Operation) -> None:
    res = op.results[0]
    if not res.type.shape:
        with lw.at(lw.sb()):
            if op.NAME == "arith.constant":
                lw.vals[res] = lw.const(op.attributes["value"], res.type)
                return
            lw.vals[res] = _clone_scalar(lw, op, [lw.scalar(v) for v in op.operands])
        return
    if op.NAME == "arith.constant":
        c = lw.const(op.attributes["value"], res.type.scalar)
        f = affine.of_constant(lw, op.attributes["value"], res.type.scalar, len(res.type.shape))
        lw.define(res, Lazy(res.type.shape, res.type.scalar, lambda idx: c, {}, 0, f))
        return
    reps = [lw.rep(v) for v in op.operands]
    extra = 5 if op.NAME in _EXPENSIVE else 1

    def fn(idx: Index) -> Value:
        return _clone_scalar(lw, op, [lw.elem(r, idx) for r in reps])

    lazy = Lazy(res.type.shape, res.type.scalar, fn, merge_leaves(*(leaves_of(r) for r in reps)),
                extra + sum(cost_of(r) for r in reps), affine.of_elementwise(lw, op, reps))
    lw.define(res, lazy)


@lowers("tile.program_id", "tile.num_programs")
def lower_ids(lw: Lowerer, op: Operation) -> None:
    axis = op.attributes["axis"]
    lw.vals[op.result] = lw.program_id(axis) if op.NAME == "tile.program_id" else lw.num_programs(axis)


@lowers("tile.hint")
def lower_hint(lw: Lowerer, op: Operation) -> None:
    if op.result.type.shape:
        lw.reps[op.result] = lw.rep(op.operand)
    else:
        lw.vals[op.result] = lw.scalar(op.operand)


@lowers("tile.arange")
def lower_arange(lw: Lowerer, op: Operation) -> None:
    start = op.attributes["start"]
    f = affine.Affine(lw.const(start, op.result.type.scalar), (1,))
    lw.define(op.result, Lazy(op.result.type.shape, op.result.type.scalar,
                              lambda idx: lw.iadd(idx.dims()[0], start), {}, 1, f))


@lowers("tile.splat")
def lower_splat(lw: Lowerer, op: Operation) -> None:
    v = lw.scalar(op.operand)
    f = affine.of_splat(v, len(op.result.type.shape))
    lw.define(op.result, Lazy(op.result.type.shape, op.result.type.scalar, lambda idx: v, {}, 0, f))


def _remap(lw: Lowerer, res: Value, src: Rep, fn_idx: object, identity: bool, extra: int = 0,
           form: affine.Form | None = None) -> None:
    assert callable(fn_idx)

    def fn(idx: Index) -> Value:
        return lw.elem(src, fn_idx(idx))

    # the source's element type: a widened block copy (lowering/block.py _widens) stays f32 through a transpose
    lw.define(res, Lazy(res.type.shape, src.elem, fn, leaves_of(src, identity), cost_of(src) + extra, form))


def _scalar_or_rep(lw: Lowerer, v: Value) -> Rep:
    """A tile view of ``v``; scalars become a 1-element constant expression."""
    if v.type.shape:
        return lw.rep(v)
    s = lw.scalar(v)
    return Lazy((1,), v.type.scalar, lambda idx: s, {}, 0)


@lowers("tile.broadcast")
def lower_broadcast(lw: Lowerer, op: Operation) -> None:
    src_shape = op.operand.type.shape
    dst_shape = op.result.type.shape
    src = lw.rep(op.operand)
    if src_shape == dst_shape:
        lw.reps[op.result] = src
        return

    def idx_fn(idx: Index) -> Index:
        dims = [lw.iconst(0) if s == 1 else v for s, v in zip(src_shape, idx.dims())]
        return idx.with_dims(src_shape, dims)

    _remap(lw, op.result, src, idx_fn, identity=False,
           form=affine.broadcast(lw, affine.form(src), src_shape, dst_shape))


@lowers("tile.expand_dims", "tile.reshape")
def lower_reshape(lw: Lowerer, op: Operation) -> None:
    src_shape = op.operand.type.shape
    if not op.result.type.shape:  # 1-element tile -> scalar
        src = lw.rep(op.operand)
        lw.prepare(leaves_of(src, False))
        with lw.at(lw.sb()):
            lw.vals[op.result] = lw.elem(src, Index(lw, src_shape, flat=lw.iconst(0)))
        return
    src = _scalar_or_rep(lw, op.operand)
    shape = src_shape or (1,)
    f = affine.expand_dims(affine.form(src), op.attributes["axis"]) if op.NAME == "tile.expand_dims" else None
    _remap(lw, op.result, src, lambda idx: idx.with_shape(shape), identity=True, form=f if src_shape else None)


@lowers("tile.permute")
def lower_permute(lw: Lowerer, op: Operation) -> None:
    order = tuple(op.attributes["order"])
    src_shape = op.operand.type.shape
    src = lw.rep(op.operand)
    if order == tuple(range(len(order))):
        lw.reps[op.result] = src
        return

    def idx_fn(idx: Index) -> Index:
        dims = idx.dims()
        src_dims: list[Value] = [dims[0]] * len(order)
        for i, o in enumerate(order):
            src_dims[o] = dims[i]
        return idx.with_dims(src_shape, src_dims)

    _remap(lw, op.result, src, idx_fn, identity=False, form=affine.permute(affine.form(src), order))


@lowers("tile.join")
def lower_join(lw: Lowerer, op: Operation) -> None:
    a, b = lw.rep(op.lhs), lw.rep(op.rhs)
    src_shape = op.lhs.type.shape
    res = op.result

    def fn(idx: Index) -> Value:
        dims = idx.dims()
        inner = idx.with_dims(src_shape, dims[:-1])
        last = lw.cval.get(id(dims[-1]))
        if last is not None:
            return lw.elem(a if last == 0 else b, inner)
        va, vb = lw.elem(a, inner), lw.elem(b, inner)
        is0 = lw.icmp("eq", dims[-1], lw.iconst(0))
        return lw.emit(arith.SelectOp, [is0, va, vb], res.type.scalar)

    leaves = merge_leaves(leaves_of(a, False), leaves_of(b, False))
    lw.define(res, Lazy(res.type.shape, res.type.scalar, fn, leaves, cost_of(a) + cost_of(b) + 2))


@lowers("tile.split")
def lower_split(lw: Lowerer, op: Operation) -> None:
    src = lw.rep(op.operand)
    src_shape = op.operand.type.shape
    for half, res in enumerate(op.results):
        def idx_fn(idx: Index, half: int = half) -> Index:
            return idx.with_dims(src_shape, [*idx.dims(), lw.iconst(half)])

        if not res.type.shape:
            lw.prepare(leaves_of(src, False))
            with lw.at(lw.sb()):
                lw.vals[res] = lw.elem(src, Index(lw, src_shape, dims=[lw.iconst(half)]))
            continue
        _remap(lw, res, src, idx_fn, identity=False)


@lowers("tile.gather")
def lower_gather(lw: Lowerer, op: Operation) -> None:
    """Each element reads ``src`` where its index says: a foreign read, like a
    permute whose source coordinate is data. The range check is one unsigned
    compare (a negative index becomes a huge unsigned one); out of range reads
    element 0 of the row and yields 0."""
    axis = op.attributes["axis"]
    src_shape = op.src.type.shape
    src = lw.rep(op.src)
    if cost_of(src) > 2:  # read at foreign indices: store it rather than recompute
        src = lw.materialise(src)
    ind = lw.rep(op.index)
    ity = op.index.type.scalar
    elem = op.result.type.scalar
    assert isinstance(ity, ScalarType) and isinstance(elem, ScalarType)
    wide = ScalarType("u64" if ity.bitwidth > 32 else "u32")
    bound = lw.const(src_shape[axis], wide)
    zero = lw.const(0.0 if elem.is_float else 0, elem)

    def fn(idx: Index) -> Value:
        k = lw.elem(ind, idx)
        u = k if ity == wide else lw.emit(arith.CastOp, [k], wide)
        ok = lw.emit(arith.CmpOp, [u, bound], ScalarType("i1"), {"predicate": "lt"})
        pos = lw.emit(arith.CastOp, [u], ScalarType("i32"))
        dims = list(idx.dims())
        dims[axis] = lw.emit(arith.SelectOp, [ok, pos, lw.iconst(0)], ScalarType("i32"))
        v = lw.elem(src, idx.with_dims(src_shape, dims))
        return lw.emit(arith.SelectOp, [ok, v, zero], elem)

    leaves = merge_leaves(leaves_of(src, False), leaves_of(ind, True))
    lw.define(op.result, Lazy(op.result.type.shape, elem, fn, leaves, cost_of(src) + cost_of(ind) + 5))


__all__ = ["ELEMENTWISE", "tile"]
