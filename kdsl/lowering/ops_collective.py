"""Lowering of the ops that combine elements across a tile: reduce, scan, dot.

Each owned *output* element is computed by its owner with a sequential loop
over the combined axis, reading the inputs at foreign indices (from the
``__local`` copy when the group has several work-items). Reductions to a
scalar run in every work-item, so the scalar stays uniform; with several
work-items each first folds a contiguous segment and all fold the partials
(:func:`_reduce_in_segments`).

Orders: a reduce folds ``acc = combine(acc, x[r])`` for r = 1..n-1 from
``acc = x[0]`` (``acc`` always from lower indices, so a tie-keeping combiner
keeps the lowest index, as the interpreter's tree does); a scan is the same
prefix fold (reversed: from the end); ``dot`` sums k = 0..K-1 into the
accumulator element. Float results may differ from the interpreter's tree
order by rounding; integer results are exact.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.ir.core import Block, Builder, Commutative, Operation, Region, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.types import ScalarType
from kdsl.lowering.index import Index
from kdsl.lowering.inplace import dot_in_place
from kdsl.lowering.lowerer import I32, Lowerer, lower_scalar_region, lowers
from kdsl.lowering.reps import Mat, Rep, cost_of, leaves_of, merge_leaves


def _for(lw: Lowerer, lo: Value, hi: Value, inits: list[Value],
         body: Callable[[Value, list[Value]], list[Value]]) -> list[Value]:
    """Emit ``scf.for iv = lo..hi`` at ``eb`` carrying scalars; return the results."""
    blk = Block([I32, *(v.type for v in inits)])
    loop = lw.eb.create(scf.ForOp, [lo, hi, lw.iconst(1), *inits], [v.type for v in inits],
                        regions=[Region([blk])])
    b = Builder(blk)
    b.loc = lw.eb.loc
    with lw.at(b):
        out = body(blk.args[0], list(blk.args[1:]))
    blk.append(scf.YieldOp(out, loc=lw.eb.loc))
    return list(loop.results)


def _stored_inputs(lw: Lowerer, vals: list[Value]) -> list[Rep]:
    """Input reps, storing expressions that are costly to evaluate at every foreign read."""
    reps = [lw.rep(v) for v in vals]
    return [lw.materialise(r) if cost_of(r) > 2 else r for r in reps]


def _combine(lw: Lowerer, op: Operation, acc: list[Value], new: list[Value]) -> list[Value]:
    return lower_scalar_region(lw, op.regions[0].block, [*acc, *new], lw.eb)


@lowers("tile.reduce")
def lower_reduce(lw: Lowerer, op: Operation) -> None:
    axis = op.attributes["axis"]
    shape = op.inputs[0].type.shape
    n = shape[axis]
    reps = _stored_inputs(lw, list(op.inputs))
    if len(shape) == 1 and _owned_order_ok(lw, op, n):
        values = _reduce_owned(lw, op, reps, n)
        for res, v in zip(op.results, values):
            lw.vals[res] = v
        return
    lw.prepare(merge_leaves(*(leaves_of(r, False) for r in reps)))

    def reduce_at(outer: list[Value]) -> list[Value]:
        def at(r: Value) -> Index:
            return Index(lw, shape, dims=[*outer[:axis], r, *outer[axis:]])

        first = [lw.elem(x, at(lw.iconst(0))) for x in reps]
        if n == 1:
            return first

        def step(r: Value, acc: list[Value]) -> list[Value]:
            return _combine(lw, op, acc, [lw.elem(x, at(r)) for x in reps])

        return _for(lw, lw.iconst(1), lw.iconst(n), first, step)

    out_shape = shape[:axis] + shape[axis + 1:]
    if not out_shape:
        lw.close_nest()
        threads = lw.layout.num_threads
        if threads > 1 and n % threads == 0 and n >= 2 * threads:
            values = _reduce_in_segments(lw, op, reps, n, threads)
        else:
            with lw.at(lw.top):
                values = reduce_at([])
        for res, v in zip(op.results, values):
            lw.vals[res] = v
        return
    mats = [lw.new_mat(out_shape, r.type.scalar) for r in op.results]

    def body(idx: Index) -> None:
        for m, v in zip(mats, reduce_at(idx.dims())):
            lw.put(m, idx, v)

    # a row reduction's element loop holds the reduction loop, so the vectoriser leaves it scalar:
    # with vectors, other ops of the same shape get a loop of their own (alone) that it can vectorise
    alone = n > 1 and lw.layout.vector_width > 1 and lw.layout.num_threads == 1
    lw.elementwise(out_shape, [], body, alone=alone)
    for res, m in zip(op.results, mats):
        lw.reps[res] = m


def _reduce_in_segments(lw: Lowerer, op: Operation, reps: list[Rep], n: int, threads: int) -> list[Value]:
    """A 1-D reduction to a scalar with several work-items: work-item ``t`` folds the contiguous
    segment ``[t * n/T, (t + 1) * n/T)``, the partials meet in ``__local`` memory, and every
    work-item folds the ``T`` partials in order -- ``n/T + T`` combines each instead of ``n``.

    WHY: the per-work-item loop over the whole axis made each work-item of a 64-wide group read
    all ``n`` elements (1024 for a softmax row): 64x the work, and on lavapipe enough loop
    iterations for a persistent kernel (Triton's tutorial 02) to hit the driver's 65535-iteration
    cut. Segments are contiguous and folded left to right, so the combine order is still the
    sequential one up to associativity, which a reduction's combiner must have anyway.
    """
    shape = (n,)
    seg = n // threads

    def at(r: Value) -> Index:
        return Index(lw, shape, dims=[r])

    with lw.at(lw.top):
        lo = lw.imul(lw.tid, seg)
        first = [lw.elem(x, at(lo)) for x in reps]

        def step(r: Value, acc: list[Value]) -> list[Value]:
            return _combine(lw, op, acc, [lw.elem(x, at(r)) for x in reps])

        partial = _for(lw, lw.iadd(lo, 1), lw.iadd(lo, seg), first, step)
    return _fold_partials(lw, op, reps, partial, threads)


def _owned_order_ok(lw: Lowerer, op: Operation, n: int) -> bool:
    """Several work-items, every one owning as many elements (no guard), and a combiner that is
    one commutative op (sum, max, min, and, or, xor, product): see :func:`_reduce_owned`."""
    lay = lw.layout
    if lay.num_threads == 1 or n % lay.group or len(op.results) != 1:
        return False
    body = [o for o in op.regions[0].block.ops if not o.IS_TERMINATOR]
    return len(body) == 1 and body[0].has_trait(Commutative) and len(body[0].operands) == 2


def _reduce_owned(lw: Lowerer, op: Operation, reps: list[Rep], n: int) -> list[Value]:
    """A 1-D reduction to a scalar where each work-item first folds the elements it owns, in slot
    order, then every work-item folds the partials in work-item order.

    WHY: the general path copies the whole axis into ``__local`` memory so any work-item may
    read any element. A softmax or LayerNorm row of 8192 f32 is 32 KiB: past lavapipe's limit
    (32,768 bytes with the partials), so Triton's tutorials 02 and 05 at their own widths did
    not compile on vulkan, and every ``__local`` access is a loop over lavapipe's 8 lanes.
    Owned elements need no copy. The combine order then interleaves the axis, which a
    commutative and associative combiner (one op: the built-in reductions) does not see
    beyond float rounding; tie-keeping combiners (argmin/argmax) keep the general path."""
    lay = lw.layout
    shape = (n,)
    lw.prepare(merge_leaves(*(leaves_of(r, True) for r in reps)))
    lw.close_nest()

    def own(slot: Value) -> Index:
        return Index(lw, shape, flat=lw.owned_flat(slot), slot=slot)

    with lw.at(lw.top):
        first = [lw.elem(x, own(lw.iconst(0))) for x in reps]

        def step(slot: Value, acc: list[Value]) -> list[Value]:
            return _combine(lw, op, acc, [lw.elem(x, own(slot)) for x in reps])

        partial = _for(lw, lw.iconst(1), lw.iconst(lay.slots(n)), first, step)
    return _fold_partials(lw, op, reps, partial, lay.num_threads)


def _fold_partials(lw: Lowerer, op: Operation, reps: list[Rep], partial: list[Value], threads: int) -> list[Value]:
    """Every work-item's ``partial`` meets in ``__local`` memory; all fold them in work-item order."""
    with lw.at(lw.top):
        bufs = [lw.alloc(threads, r.elem, "local") for r in reps]
        for buf, v in zip(bufs, partial):
            lw.top.create(wi.StoreOp, [v, buf, lw.tid])
    lw.barrier()
    with lw.at(lw.top):
        def partials(r: Value) -> list[Value]:
            return [lw.emit(wi.LoadOp, [buf, r], x.elem) for buf, x in zip(bufs, reps)]

        def gather(r: Value, acc: list[Value]) -> list[Value]:
            return _combine(lw, op, acc, partials(r))

        total = _for(lw, lw.iconst(1), lw.iconst(threads), partials(lw.iconst(0)), gather)
    lw.barrier()  # every work-item has read the partials before the buffers can be reused
    return total


@lowers("tile.scan")
def lower_scan(lw: Lowerer, op: Operation) -> None:
    axis = op.attributes["axis"]
    reverse = bool(op.attributes["reverse"])
    shape = op.inputs[0].type.shape
    n = shape[axis]
    reps = _stored_inputs(lw, list(op.inputs))
    lw.prepare(merge_leaves(*(leaves_of(r, False) for r in reps)))
    mats = [lw.new_mat(shape, r.type.scalar) for r in op.results]

    def pos(r: Value) -> Value:
        return lw.emit(arith.SubOp, [lw.iconst(n - 1), r], I32) if reverse else r

    if lw.layout.num_threads == 1:
        # one pass per row: the private array is the whole tile
        row_shape = shape[:axis] + shape[axis + 1:]

        def row(idx: Index) -> None:
            outer = idx.dims() if row_shape else []

            def at(r: Value) -> Index:
                return Index(lw, shape, dims=[*outer[:axis], pos(r), *outer[axis:]])

            def write(i: Index, vals: list[Value]) -> None:
                for m, v in zip(mats, vals):
                    lw.eb.create(_store_op(), [v, m.priv, i.flat()])

            first = [lw.elem(x, at(lw.iconst(0))) for x in reps]
            write(at(lw.iconst(0)), first)

            def step(r: Value, acc: list[Value]) -> list[Value]:
                i = at(r)
                out = _combine(lw, op, acc, [lw.elem(x, i) for x in reps])
                write(i, out)
                return out

            _for(lw, lw.iconst(1), lw.iconst(n), first, step)

        lw.elementwise(row_shape or (1,), [], row, alone=True)
    else:
        def body(idx: Index) -> None:
            dims = idx.dims()
            end = pos(dims[axis]) if reverse else dims[axis]

            def at(r: Value) -> Index:
                return Index(lw, shape, dims=[*dims[:axis], pos(r), *dims[axis + 1:]])

            first = [lw.elem(x, at(lw.iconst(0))) for x in reps]
            stop = lw.iadd(end, 1)

            def step(r: Value, acc: list[Value]) -> list[Value]:
                return _combine(lw, op, acc, [lw.elem(x, at(r)) for x in reps])

            for m, v in zip(mats, _for(lw, lw.iconst(1), stop, first, step)):
                lw.put(m, idx, v)

        lw.elementwise(shape, [], body, alone=True)
    for res, m in zip(op.results, mats):
        lw.reps[res] = m


def _store_op() -> type[Operation]:
    from kdsl.ir.dialects.wi import StoreOp

    return StoreOp


def _divisor_at_most(n: int, cap: int, step: int = 1) -> int:
    """The largest multiple of ``step`` that divides ``n`` and is at most ``cap`` (0: none)."""
    for d in range(min(cap, n) // step * step, 0, -step):
        if n % d == 0:
            return d
    return 0


def _mma_types(acc: ScalarType, a: ScalarType, b: ScalarType) -> bool:
    """Element types the micro-kernels take: floats into a float accumulator at least as wide, or
    integers into a 32/64-bit integer accumulator at least as wide (int8 x int8 -> int32; the
    renderers widen each operand by its own signedness and wrap as the scalar loops do)."""
    if acc.is_float:
        return a.is_float and b.is_float and acc.itemsize >= max(a.itemsize, b.itemsize)
    ints = bool(acc.is_int and a.is_int and b.is_int) and acc.itemsize >= 4
    return ints and acc.itemsize >= max(a.itemsize, b.itemsize) and "i1" not in (a.name, b.name)


def _mma_blocking(lw: Lowerer, op: Operation) -> dict[str, int] | None:
    """Blocking of a ``wi.mma`` for this dot, or None when the scalar lowering must be used."""
    lay = lw.layout
    a_t, b_t, c_t = op.a.type, op.b.type, op.acc.type
    acc_e, in_e = c_t.scalar, a_t.scalar
    if lay.vector_width < 2 or lay.num_threads != 1 or len(c_t.shape) != 2:
        return None
    if not _mma_types(acc_e, in_e, b_t.scalar):
        return None
    m, n = c_t.shape
    k = a_t.shape[-1]
    vw = 1
    while vw * 2 <= lay.vector_width and n % (vw * 2) == 0:
        vw *= 2
    bn = _divisor_at_most(n, max(lay.dot_block_n, vw), vw)
    rows = lay.dot_block_m
    if bn < lay.dot_block_n:  # n is narrower than the block: as many accumulators in more rows
        rows = rows * lay.dot_block_n // bn
    bm = _divisor_at_most(m, rows)
    return {"m": m, "n": n, "k": k, "block_m": bm, "block_n": bn, "vector_width": vw}


def _mma_operand(lw: Lowerer, v: Value, acc_e: ScalarType) -> Mat:
    """``v`` in a private array. A computed f16/bf16 operand of an f32-accumulating dot (attention's
    ``p.to(f16)``) is stored widened to f32 -- exactly the values the micro-kernel would widen at
    every one of its ``block_m``/``block_n`` re-reads, converted once instead."""
    rep = lw.rep(v)
    narrow = isinstance(rep.elem, ScalarType) and rep.elem.name in ("f16", "bf16")
    return lw.materialise(rep, acc_e if narrow and acc_e.name == "f32" else None)


def _lower_mma(lw: Lowerer, op: Operation, blocking: dict[str, int]) -> None:
    acc_e = op.acc.type.scalar
    a = _mma_operand(lw, op.a, acc_e)
    b = _mma_operand(lw, op.b, acc_e)
    out = dot_in_place(lw, op.acc)
    init: list[Value] = []
    if out is None:
        c_t = op.acc.type
        out = lw.new_mat(c_t.shape, c_t.scalar)
        acc = lw.rep(op.acc)
        if isinstance(acc, Mat) and acc.priv.type == out.priv.type and acc.shape == out.shape:
            init = [acc.priv]  # the micro-kernel starts from acc's array: no copy into out
        else:
            lw.copy_into(out, acc)
    lw.close_nest()
    lw.top.create(wi.MmaOp, [a.priv, b.priv, out.priv, *init], [], dict(blocking))
    lw.reps[op.result] = out


@lowers("tile.dot")
def lower_dot(lw: Lowerer, op: Operation) -> None:
    a_t, c_t = op.a.type, op.acc.type
    acc_e = c_t.scalar
    assert isinstance(acc_e, ScalarType)
    blocking = _mma_blocking(lw, op)
    if blocking is not None:
        _lower_mma(lw, op, blocking)
        return
    a, b = _stored_inputs(lw, [op.a, op.b])
    acc = lw.rep(op.acc)
    k_dim = a_t.shape[-1]
    lw.prepare(merge_leaves(leaves_of(a, False), leaves_of(b, False)))
    out = lw.new_mat(c_t.shape, acc_e)
    a_shape, b_shape = a_t.shape, op.b.type.shape

    def widen(v: Value) -> Value:
        if v.type == acc_e:
            return v
        return lw.emit(arith.CastOp, [v], acc_e)

    def body(idx: Index) -> None:
        dims = idx.dims()
        *batch, m, n = dims

        def step(k: Value, s: list[Value]) -> list[Value]:
            x = widen(lw.elem(a, Index(lw, a_shape, dims=[*batch, m, k])))
            y = widen(lw.elem(b, Index(lw, b_shape, dims=[*batch, k, n])))
            p = lw.emit(arith.MulOp, [x, y], acc_e)
            return [lw.emit(arith.AddOp, [s[0], p], acc_e)]

        init = lw.elem(acc, idx)
        (total,) = _for(lw, lw.iconst(0), lw.iconst(k_dim), [init], step)
        lw.put(out, idx, total)

    lw.elementwise(c_t.shape, [acc], body)
    lw.reps[op.result] = out


__all__ = ["Mat"]
