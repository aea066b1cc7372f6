"""Fuse sibling element loops of the work-item IR, so a reduction reads its input as it is produced.

Why: the lowering stores a reduction's input tile in a private array and
reduces it in a loop of its own (``ops_collective.lower_reduce``), so a row
softmax makes five passes over 16 KiB private arrays per row (load, max, exp,
sum, divide) where three suffice; softmax is compute-bound on PoCL, and the
extra passes cost ~12 % (docs/OPTIMIZER.md "Softmax: where the time goes").
Three rewrites, on scalar loops before :mod:`vectorize` runs (``num_threads
== 1`` only: a work-item then owns its whole tile, so no other work-item reads
what a loop stores):

1. **Reductions start at slot 0** -- ``acc = M[b]; for s in [1, n): acc = acc op M[b + s]``
   (``b = 0`` for a whole tile, ``row * C`` for a row of a 2-D one) becomes
   ``acc = identity; for s in [0, n): ...``, which combines the same
   values in the same order with the same result (``-0.0 + x == x``, ``1 * x == x``,
   ``fmax(NaN, x) == x``, ``maximum(-inf, x) == x``, integer extremes), and no
   longer reads ``M`` before the loop.
2. **Loop fusion** -- two loops of one block with the same constant bounds and
   unit step become one when every private array both touch is accessed at the
   loop index itself (iteration ``s`` of the second loop then only needs
   iteration ``s`` of the first), the second does not use the first's results,
   neither stores to global memory the other accesses, and the ops between
   them are pure (those the second loop needs are moved above the first).
3. **Store-to-load forwarding** -- in one loop body, ``wi.load M[i]`` after
   ``wi.store v, M[i]`` (same index value, no store to ``M`` between) is ``v``.
4. **Reload instead of staging** -- an array whose only store is a global load
   ``M[s] = gload(p(s))`` (``p`` made of pure ops of ``s`` and loop-invariant
   values) and whose reads are ``M[s']`` in later loops of the same block with
   the same bounds is read again from global memory (the row is in cache: the
   loads cost what the private-array loads cost, and the staging stores go;
   ``PLATFORM.md``: a staged row copy runs at 0.8x of a direct one). Only when
   no global store between may write that memory: none at all, or, in a
   ``noalias`` kernel, stores through other pointer parameters.

An array then read by nobody is deleted by ``simplify``.

Results are unchanged bit for bit (the vectoriser's reassociation of float sums
is the only reordering, and it happens with or without fusion).
"""

from __future__ import annotations

import math

from kdsl.ir.core import Block, BlockArgument, Operation, Pure, Region, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.types import ScalarType
from kdsl.lowering.simplify import simplify

_KINDS = {"arith.add": "add", "arith.mul": "mul", "arith.max": "max", "arith.min": "min"}
_TYPES = frozenset({"f32", "f64", "i32", "u32", "i64", "u64"})


def fuse_loops(func: Operation) -> int:
    """Apply the three rewrites to ``func`` (a ``wi.func``); return how many loop pairs were fused."""
    if func.attributes.get("num_threads", 1) != 1:
        return 0
    for loop in [op for op in func.walk() if isinstance(op, scf.ForOp)]:
        start_reduction_at_zero(loop)
    simplify(func)  # the slot-0 loads before the loops are dead now
    fused = 0
    changed = True
    while changed:
        changed = False
        for op in func.walk():
            if isinstance(op, scf.ForOp):
                nxt = _next_loop(op)
                if nxt is not None and fuse_pair(op, nxt) is not None:
                    fused += 1
                    changed = True
                    break
    for op in [o for o in func.walk() if isinstance(o, scf.ForOp)]:
        forward_stores(op.regions[0].block)
    simplify(func)
    noalias = bool(func.attributes.get("noalias", False))
    for alloc in [o for o in func.walk() if isinstance(o, wi.AllocOp)]:
        reload_staged(alloc, noalias)
    simplify(func)
    return fused


# --- 1. reductions from slot 0 ------------------------------------------------------------


def _const(v: Value) -> object:
    op = v.owner_op
    return op.attributes["value"] if isinstance(op, arith.ConstantOp) else None


def identity(kind: str, t: ScalarType, propagate_nan: bool) -> float | int | None:
    """The value ``e`` with ``e op x == x`` for every ``x`` of ``t`` (bit for bit), or None."""
    if kind == "add":
        return -0.0 if t.is_float else 0
    if kind == "mul":
        return 1.0 if t.is_float else 1
    if t.is_float:  # fmax/fmin ignore a NaN operand; maximum/minimum propagate it
        if not propagate_nan:
            return math.nan
        return -math.inf if kind == "max" else math.inf
    bits = t.bitwidth
    if bits < 8:
        return None
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.is_signed else (0, (1 << bits) - 1)
    return lo if kind == "max" else hi


def start_reduction_at_zero(loop: Operation) -> bool:
    """Rewrite ``acc = M[0]; for s in [1, n): acc op= M[s]`` to start from the identity at 0."""
    body = loop.regions[0].block
    if _const(loop.operands[0]) != 1 or _const(loop.operands[2]) != 1 or len(body.args) < 2:
        return False
    iv, term = body.args[0], body.terminator
    news: list[float | int] = []
    for i, arg in enumerate(body.args[1:]):
        if len(arg.uses) != 1:
            return False
        op, _ = arg.uses[0]
        kind = _KINDS.get(op.NAME)
        if kind is None or op.parent is not body or [(u, k) for u, k in op.result.uses] != [(term, i)]:
            return False
        x = op.operands[1] if op.operands[0] is arg else op.operands[0]
        init = loop.operands[3 + i]
        xl, il = x.owner_op, init.owner_op
        if not (isinstance(xl, wi.LoadOp) and isinstance(il, wi.LoadOp)):
            return False
        if il.mem is not xl.mem or not _starts_at(xl.index, il.index, iv):
            return False
        if not isinstance(arg.type, ScalarType) or arg.type.name not in _TYPES:  # what the vectoriser takes
            return False
        if any(isinstance(o, wi.StoreOp) and o.mem is xl.mem for o in body.ops):
            return False
        e = identity(kind, arg.type, bool(op.attributes.get("propagate_nan")))
        if e is None:
            return False
        news.append(e)
    b_loc = loop.loc
    for i, e in enumerate(news):
        t = body.args[1 + i].type
        c = arith.ConstantOp([], [t], {"value": e}, loc=b_loc)
        _insert_before(loop, c)
        loop.set_operand(3 + i, c.result)
    zero = arith.ConstantOp([], [loop.operands[0].type], {"value": 0}, loc=b_loc)
    _insert_before(loop, zero)
    loop.set_operand(0, zero.result)
    return True


def _starts_at(index: Value, first: Value, iv: Value) -> bool:
    """Whether slot ``index`` (in the loop body) at ``iv == 0`` is slot ``first`` (the init's):
    ``index = iv`` with ``first = 0``, or ``index = b + iv`` / ``iv + b`` with ``b`` computing
    the same value as ``first`` from loop-invariant operands (a row reduction's ``row * C``)."""
    if index is iv:
        return _const(first) == 0
    op = index.owner_op
    if not isinstance(op, arith.AddOp) or iv not in op.operands:
        return False
    base = op.operands[1] if op.operands[0] is iv else op.operands[0]
    return base is not iv and _same_value(base, first)


def _same_value(a: Value, b: Value, depth: int = 4) -> bool:
    """``a`` and ``b`` compute the same value: :func:`_same` (one SSA value, equal constants), or
    the same pure op of operands that are (``a`` may be re-computed inside the loop body from
    values defined outside it)."""
    if _same(a, b):
        return True
    x, y = a.owner_op, b.owner_op
    if x is None or y is None or depth == 0 or a.type != b.type:
        return False
    if type(x) is not type(y) or not x.has_trait(Pure) or x.regions or len(x.results) != 1:
        return False
    if x.attributes != y.attributes or len(x.operands) != len(y.operands):
        return False
    return all(_same_value(p, q, depth - 1) for p, q in zip(x.operands, y.operands))


def _insert_before(anchor: Operation, op: Operation) -> None:
    block = anchor.parent
    assert block is not None
    block.insert(block.ops.index(anchor), op)


# --- 2. fusion ---------------------------------------------------------------------------


def _next_loop(loop: Operation) -> Operation | None:
    block = loop.parent
    if block is None:
        return None
    for op in block.ops[block.ops.index(loop) + 1 :]:
        if isinstance(op, scf.ForOp):
            return op
        if not op.has_trait(Pure):
            return None
    return None


def _same(a: Value, b: Value) -> bool:
    return a is b or (_const(a) is not None and _const(a) == _const(b) and a.type == b.type)


def _accesses(loop: Operation) -> tuple[dict[Value, bool], bool, bool] | None:
    """(private arrays -> all accessed at the loop index, global loads?, global stores?), or None
    if the body holds anything but pure ops, array and global accesses (no nested regions)."""
    body = loop.regions[0].block
    iv = body.args[0]
    arrays: dict[Value, bool] = {}
    gload = gstore = False
    for op in body.ops:
        if op.regions:
            return None
        if isinstance(op, (wi.LoadOp, wi.StoreOp)):
            arrays[op.mem] = arrays.get(op.mem, True) and op.index is iv
        elif isinstance(op, wi.GLoadOp):
            gload = True
        elif isinstance(op, wi.GStoreOp):
            gstore = True
        elif not (op.has_trait(Pure) or isinstance(op, scf.YieldOp)):
            return None
    return arrays, gload, gstore


def _stores(loop: Operation) -> set[Value]:
    return {op.mem for op in loop.regions[0].block.ops if isinstance(op, wi.StoreOp)}


def fuse_pair(first: Operation, second: Operation) -> Operation | None:
    """Fuse ``second`` (the next loop of the block, only pure ops between) into ``first``."""
    if not all(_same(a, b) for a, b in zip(first.operands[:3], second.operands[:3])):
        return None
    if _const(first.operands[2]) != 1 or _const(first.operands[0]) is None or _const(first.operands[1]) is None:
        return None
    a1, a2 = _accesses(first), _accesses(second)
    if a1 is None or a2 is None:
        return None
    (arr1, gl1, gs1), (arr2, gl2, gs2) = a1, a2
    if (gs1 and (gl2 or gs2)) or (gs2 and gl1):
        return None
    written = _stores(first) | _stores(second)
    for mem in set(arr1) & set(arr2):
        if mem in written and not (arr1[mem] and arr2[mem]):
            return None
    block = first.parent
    assert block is not None
    between = block.ops[block.ops.index(first) + 1 : block.ops.index(second)]
    after_first = set(first.results)
    stay: list[Operation] = []  # depend on the first loop's results: stay after the fused loop
    for op in between:
        if any(v in after_first for v in op.operands):
            after_first.update(op.results)
            stay.append(op)
    needed = [*second.operands, *(v for o in second.walk() for v in o.operands)]
    if any(v in after_first for v in needed):
        return None
    for op in between:  # the rest moves above the first loop
        if op not in stay:
            block.ops.remove(op)
            block.insert(block.ops.index(first), op)
    return _merge(first, second)


def _merge(first: Operation, second: Operation) -> Operation:
    b1, b2 = first.regions[0].block, second.regions[0].block
    n1, n2 = len(b1.args) - 1, len(b2.args) - 1
    inits = [*first.operands[3:], *second.operands[3:]]
    block = Block([b1.args[0].type, *(v.type for v in inits)])
    for arg, new_arg in zip([*b1.args, *b2.args[1:]], [*block.args, *block.args[n1 + 1 :]]):
        arg.replace_all_uses_with(new_arg)
    b2.args[0].replace_all_uses_with(block.args[0])
    y1, y2 = b1.terminator, b2.terminator
    assert y1 is not None and y2 is not None
    yields = [*y1.operands, *y2.operands]
    for src in (b1, b2):
        for op in list(src.ops):
            if op.IS_TERMINATOR:
                continue
            src.ops.remove(op)
            block.append(op)
    block.append(scf.YieldOp(yields, loc=y2.loc))
    y1.erase()
    y2.erase()
    loop = scf.ForOp([*first.operands[:3], *inits], [v.type for v in inits], regions=[Region([block])], loc=first.loc)
    _insert_before(first, loop)
    for old, new in zip([*first.results, *second.results], loop.results):
        old.replace_all_uses_with(new)
    assert n2 == len(second.results)
    first.erase()
    second.erase()
    return loop


# --- 3. forwarding -----------------------------------------------------------------------


def forward_stores(body: Block) -> int:
    """Replace each ``wi.load M[i]`` by the value last stored to ``M[i]`` earlier in ``body``."""
    last: dict[Value, tuple[Value, Value]] = {}  # mem -> (index, value) of its last store
    done = 0
    for op in list(body.ops):
        if isinstance(op, wi.StoreOp):
            last[op.mem] = (op.index, op.value)
        elif isinstance(op, wi.LoadOp) and op.mem in last and last[op.mem][0] is op.index:
            op.result.replace_all_uses_with(last[op.mem][1])
            op.erase()  # now, so that ``simplify`` sees arrays nobody reads any more
            done += 1
        elif op.regions or isinstance(op, (wi.BarrierOp,)):
            last.clear()
    return done


# --- 4. reload instead of staging ----------------------------------------------------------


def _root(ptr: Value) -> Value:
    while isinstance(ptr.owner_op, wi.AddPtrOp):
        ptr = ptr.owner_op.ptr
    return ptr


def _chain(v: Value, body: Block) -> list[Operation] | None:
    """The ops of ``body`` that ``v`` is computed from, in order, if they are pure or global loads."""
    need: set[Operation] = set()
    todo = [v]
    while todo:
        op = todo.pop().owner_op
        if op is None or op.parent is not body or op in need:
            continue
        if not (op.has_trait(Pure) or isinstance(op, wi.GLoadOp)) or op.regions:
            return None
        need.add(op)
        todo.extend(op.operands)
    return [op for op in body.ops if op in need]


def _global_writes(ops: list[Operation]) -> list[Operation] | None:
    """Global stores in ``ops`` (and nested), or None when an atomic or a call may write anywhere."""
    out: list[Operation] = []
    for top in ops:
        for op in top.walk():
            if isinstance(op, (wi.AtomicRMWOp, wi.AtomicCASOp)):
                return None
            if isinstance(op, wi.GStoreOp) or op.NAME in ("wi.gvstore", "wi.block_store"):
                out.append(op)
    return out


def reload_staged(alloc: Operation, noalias: bool) -> bool:
    """Replace the reads of an array staging a global load by the global load itself."""
    mem = alloc.result
    stores = [u for u, i in mem.uses if isinstance(u, wi.StoreOp) and i == 1]
    loads = [u for u, _ in mem.uses if isinstance(u, wi.LoadOp)]
    if len(stores) != 1 or len(stores) + len(loads) != len(mem.uses) or not loads:
        return False
    store = stores[0]
    first = store.parent.parent_op if store.parent is not None else None
    if not isinstance(first, scf.ForOp) or first.parent is None:
        return False
    body, block = first.regions[0].block, first.parent
    iv = body.args[0]
    chain = _chain(store.value, body)
    if store.index is not iv or chain is None or not isinstance(store.value.owner_op, wi.GLoadOp):
        return False
    roots = {_root(op.ptr) for op in chain if isinstance(op, wi.GLoadOp)}
    readers: list[Operation] = []
    for ld in loads:
        loop = ld.parent.parent_op if ld.parent is not None else None
        if not isinstance(loop, scf.ForOp) or loop.parent is not block or loop is first:
            return False
        if ld.index is not loop.regions[0].block.args[0] or block.ops.index(loop) < block.ops.index(first):
            return False
        if not all(_same(a, b) for a, b in zip(first.operands[:3], loop.operands[:3])):
            return False
        readers.append(loop)
    last = max(block.ops.index(r) for r in readers)
    writes = _global_writes(block.ops[block.ops.index(first) : last + 1])
    if writes is None or (writes and not noalias):
        return False
    if any(_root(w.operands[0]) in roots or not isinstance(_root(w.operands[0]), BlockArgument) for w in writes):
        return False
    if not all(isinstance(r, BlockArgument) and isinstance(r.block.parent_op, wi.FuncOp) for r in roots):
        return False
    for ld in loads:
        _clone_before(chain, iv, ld)
    return True


def _clone_before(chain: list[Operation], iv: Value, load: Operation) -> None:
    assert load.parent is not None
    new_iv = load.parent.args[0]
    vmap: dict[Value, Value] = {iv: new_iv}
    for op in chain:
        c = type(op)([vmap.get(v, v) for v in op.operands], [r.type for r in op.results], dict(op.attributes),
                     loc=op.loc)  # fmt: skip
        _insert_before(load, c)
        vmap.update(zip(op.results, c.results))
    load.result.replace_all_uses_with(vmap[chain[-1].result])
    load.erase()
