"""The machinery of the tile -> work-item lowering (ops live in ``ops_*.py``).

The :class:`Lowerer` walks one ``tile.func`` and builds one ``wi.func``. It
keeps, per tile-IR value, either a wi scalar or a tile representation
(:mod:`kdsl.lowering.reps`), and emits code at three kinds of place:

* the function entry (``hoist``): allocations, constants, ids -- so they
  dominate everything and ``__local`` buffers sit at kernel scope;
* the current region level (``top``): uniform scalar code, loops/branches,
  barriers -- identical in every work-item of the group;
* the open *element loop* (a :class:`Nest`): one iteration per owned slot of
  the layout, where elementwise work happens.

Consecutive element-wise ops over tiles with the same number of elements go
into the same element loop (loop fusion) unless one of them reads a tile
produced in that loop at another element, or a load would follow a store
(which would reorder memory accesses across lanes). Pure scalar code met
while a loop is open is emitted before it, so the loop stays open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kdsl.errors import CompilationError
from kdsl.ir import core
from kdsl.ir.core import Block, Builder, Operation, Region, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.types import MemRefType, ScalarType, Type
from kdsl.lowering.index import Index
from kdsl.lowering.layout import Layout
from kdsl.lowering.reps import Elem, Lazy, Mat, Rep, leaves_of, merge_leaves, numel
from kdsl.lowering.stream_stores import streamed_params
from kdsl.transforms.provenance import Provenance
from kdsl.transforms.utils import attr_key

I32 = ScalarType("i32")
I1 = ScalarType("i1")

LowerFn = Callable[["Lowerer", Operation], None]
LOWERINGS: dict[str, LowerFn] = {}


def lowers(*names: str) -> Callable[[LowerFn], LowerFn]:
    """Decorator registering the lowering of tile-IR ops named ``names``."""

    def deco(fn: LowerFn) -> LowerFn:
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return deco


@dataclass(eq=False)
class Nest:
    """An open element loop over ``numel`` elements."""

    numel: int
    outer: Operation
    body: Builder
    flat: Value
    slot: Value
    cur: dict[int, Value] = field(default_factory=dict)
    indices: dict[tuple[int, ...], Index] = field(default_factory=dict)
    memo: dict[tuple[int, int, int], tuple[Value, object, object]] = field(default_factory=dict)
    has_store: bool = False
    sealed: bool = False


class Lowerer:
    """Builds the ``wi.func`` for one ``tile.func`` (see module doc)."""

    def __init__(self, func: Operation, layout: Layout, noalias: bool = True) -> None:
        self.func = func
        self.noalias = noalias
        self.loads_pending = False  # global loads since the last barrier
        self.stores_pending = False  # global stores since the last barrier
        self.layout = layout
        self.asserts: list[tuple[str, str, int, int]] = []
        body = Block([a.type for a in func.regions[0].block.args])
        attrs: dict[str, Any] = {
            "sym_name": func.attributes["sym_name"],
            "arg_names": tuple(func.attributes.get("arg_names") or (f"arg{i}" for i in range(len(body.args)))),
            "num_threads": layout.num_threads,
        }
        if noalias:
            attrs["noalias"] = True
        if func.attributes.get("divisibility") is not None:
            attrs["divisibility"] = func.attributes["divisibility"]
        self.wfunc = wi.FuncOp(attributes=attrs, regions=[Region([body])], loc=func.loc)
        self.hoist = Builder(body)
        self.hoist.index = 0
        self.top = Builder(body)
        self.eb: Builder = self.top
        self.nest: Nest | None = None
        self.vals: dict[Value, Value] = dict(zip(func.regions[0].block.args, body.args))
        self.reps: dict[Value, Rep] = {}
        self.consts: dict[tuple[Type, Any], Value] = {}
        self.cval: dict[int, int] = {}
        self.scopes: list[list[Mat]] = [[]]
        self.ids: dict[tuple[str, int], Value] = {}
        self.tid = self.iconst(0) if layout.num_threads == 1 else self._id(wi.LocalIdOp, 0)
        # parameters whose stores may stream (lowering/stream_stores.py), and the provenance analysis
        # that names the parameter a store writes through
        self.streamed = streamed_params(func) if layout.stream_stores else frozenset()
        self.provenance = Provenance(func.regions[0].block)

    # --- driver -------------------------------------------------------------------
    def run(self) -> Operation:
        self.lower_block(self.func.regions[0].block)
        self.close_nest()
        self.top.create(wi.ReturnOp, loc=self.func.loc)
        if self.asserts:
            self.wfunc.attributes["asserts"] = tuple(self.asserts)
        return self.wfunc

    def lower_block(self, block: Block) -> None:
        for op in block.ops:
            if op.IS_TERMINATOR:
                continue
            fn = LOWERINGS.get(op.NAME)
            if fn is None:
                raise CompilationError(f"opencl lowering: unsupported op '{op.NAME}'", op.loc)
            self.top.loc = self.eb.loc = op.loc
            fn(self, op)

    # --- values --------------------------------------------------------------------
    def scalar(self, v: Value) -> Value:
        return self.vals[v]

    def rep(self, v: Value) -> Rep:
        return self.reps[v]

    def define(self, v: Value, rep: Rep) -> None:
        """Bind tile value ``v``; store expensive expressions that are read often."""
        # with one work-item a tile with an affine/bounds form stays lazy: block copies read the
        # form, elementwise reads recompute a few integer ops (several work-items: stored as before)
        keep = rep.form is not None and self.layout.num_threads == 1 if isinstance(rep, Lazy) else False
        if isinstance(rep, Lazy) and rep.cost > 3 and not keep:
            parent = v.owner_op.parent if v.owner_op else None
            nested = any(u.parent is not parent for u, _ in v.uses)
            if len(v.uses) > 1 or nested:
                rep = self.materialise(rep)
        self.reps[v] = rep

    def error(self, op: Operation, msg: str) -> CompilationError:
        return CompilationError(f"opencl lowering: {msg}", op.loc)

    # --- emission helpers -------------------------------------------------------------
    def sb(self) -> Builder:
        """Where pure uniform scalar code goes: before the open element loop, if any."""
        if self.nest is None:
            return self.top
        b = Builder()
        b.set_insertion_point_before(self.nest.outer)
        b.loc = self.top.loc
        return b

    @contextmanager
    def at(self, b: Builder) -> Iterator[None]:
        saved = self.eb
        self.eb = b
        try:
            yield
        finally:
            self.eb = saved

    def const(self, value: Any, t: Type) -> Value:
        key = (t, attr_key(value))  # by bits: 0.0 and -0.0 are different constants
        v = self.consts.get(key)
        if v is None:
            v = self.hoist.create(arith.ConstantOp, [], [t], {"value": value}).result
            self.consts[key] = v
            if isinstance(value, int) and not isinstance(value, bool):
                self.cval[id(v)] = value
        return v

    def iconst(self, value: int) -> Value:
        return self.const(value, I32)

    def _id(self, cls: type[Operation], axis: int) -> Value:
        key = (cls.NAME, axis)
        if key not in self.ids:
            attrs = {"axis": axis} if cls is not wi.LocalIdOp else {}
            self.ids[key] = self.hoist.create(cls, [], [I32], attrs).result
        return self.ids[key]

    def program_id(self, axis: int) -> Value:
        return self._id(wi.ProgramIdOp, axis)

    def num_programs(self, axis: int) -> Value:
        return self._id(wi.NumProgramsOp, axis)

    def emit(self, cls: type[Operation], operands: list[Value], t: Type | None, attrs: dict[str, Any] | None = None) -> Value:
        op = self.eb.create(cls, operands, [t] if t is not None else [], attrs)
        return op.result if t is not None else operands[0]

    def _fold(self, a: Value, b: Value, fn: Callable[[int, int], int]) -> Value | None:
        ca, cb = self.cval.get(id(a)), self.cval.get(id(b))
        if ca is not None and cb is not None:
            return self.iconst(fn(ca, cb))
        return None

    def iadd(self, a: Value, b: Value | int) -> Value:
        bv = self.iconst(b) if isinstance(b, int) else b
        if self.cval.get(id(bv)) == 0:
            return a
        if self.cval.get(id(a)) == 0:
            return bv
        return self._fold(a, bv, lambda x, y: x + y) or self.emit(arith.AddOp, [a, bv], I32)

    def imul(self, a: Value, b: int) -> Value:
        if b == 1:
            return a
        if b == 0 or self.cval.get(id(a)) == 0:
            return self.iconst(0)
        return self._fold(a, self.iconst(b), lambda x, y: x * y) or self.emit(arith.MulOp, [a, self.iconst(b)], I32)

    def idiv(self, a: Value, b: int) -> Value:
        if b == 1:
            return a
        return self._fold(a, self.iconst(b), lambda x, y: x // y) or self.emit(arith.DivOp, [a, self.iconst(b)], I32)

    def irem(self, a: Value, b: int) -> Value:
        if b == 1:
            return self.iconst(0)
        return self._fold(a, self.iconst(b), lambda x, y: x % y) or self.emit(arith.RemOp, [a, self.iconst(b)], I32)

    def icmp(self, pred: str, a: Value, b: Value) -> Value:
        return self.emit(arith.CmpOp, [a, b], I1, {"predicate": pred})

    # --- memory ------------------------------------------------------------------------
    def alloc(self, size: int, elem: Elem, space: str) -> Value:
        return self.hoist.create(wi.AllocOp, [], [MemRefType(max(size, 1), elem, space)]).result

    def new_mat(self, shape: tuple[int, ...], elem: Elem) -> Mat:
        priv = self.alloc(self.layout.slots(numel(shape)), elem, "private")
        return Mat(shape, elem, priv, priv if self.layout.num_threads == 1 else None)

    def barrier(self) -> None:
        """A work-group barrier (nothing with one work-item, but loops still split)."""
        self.close_nest()
        self.loads_pending = self.stores_pending = False
        if self.layout.num_threads > 1:
            self.top.create(wi.BarrierOp)

    # --- element loops ------------------------------------------------------------------
    def close_nest(self) -> None:
        self.nest = None

    def open_nest(self, n: int) -> Nest:
        self.close_nest()
        lay = self.layout
        slots = lay.slots(n)
        loop = self.top.create(
            scf.ForOp,
            [self.iconst(0), self.iconst(slots), self.iconst(1)],
            [],
            regions=[Region([Block([I32])])],
        )
        block = loop.regions[0].block
        yield_op = block.append(scf.YieldOp(loc=self.top.loc))
        b = Builder()
        b.set_insertion_point_before(yield_op)
        b.loc = self.top.loc
        slot = block.args[0]
        with self.at(b):
            flat = self.owned_flat(slot)
            if not lay.exact(n):
                cond = self.icmp("lt", flat, self.iconst(n))
                guard = b.create(scf.IfOp, [cond], [], regions=[Region([Block()]), Region([Block()])])
                for r in guard.regions:
                    r.block.append(scf.YieldOp(loc=b.loc))
                b = Builder()
                b.set_insertion_point_before(guard.regions[0].block.ops[-1])
                b.loc = self.top.loc
        self.nest = Nest(n, loop, b, flat, slot)
        return self.nest

    def owned_flat(self, slot: Value) -> Value:
        """The flat index of this work-item's element in private-array ``slot`` (the blocked
        layout, ``layout.py``), emitted at ``eb``."""
        lay = self.layout
        chunk_i, lane = self.idiv(slot, lay.chunk), self.irem(slot, lay.chunk)
        return self.iadd(self.imul(self.iadd(self.imul(chunk_i, lay.num_threads), self.tid), lay.chunk), lane)

    def index_for(self, shape: tuple[int, ...]) -> Index:
        nest = self.nest
        assert nest is not None
        idx = nest.indices.get(shape)
        if idx is None:
            idx = Index(self, shape, flat=nest.flat, slot=nest.slot)
            nest.indices[shape] = idx
        return idx

    def prepare(self, leaves: dict[int, tuple[Mat, bool]]) -> None:
        """Make foreign reads possible: ``__local`` copies, and no fusion with the producer."""
        nest = self.nest
        need = [m for m, ident in leaves.values() if not ident and m.shared is None]
        clash = nest is not None and any(not ident and id(m) in nest.cur for m, ident in leaves.values())
        if need or clash:
            self.close_nest()
        for m in need:
            self.to_shared(m)

    def elementwise(
        self,
        shape: tuple[int, ...],
        reads: list[Rep],
        body: Callable[[Index], None],
        *,
        mem: str | None = None,
        alone: bool = False,
        foreign: bool = False,
    ) -> None:
        """Run ``body`` for each owned element of a tile of ``shape``.

        ``reads`` are the tiles the body reads (at its own index unless
        ``foreign``); ``mem`` is "load"/"store" for global memory effects;
        ``alone`` gives the body an element loop of its own (atomics, asserts).
        """
        self.prepare(merge_leaves(*(leaves_of(r, not foreign) for r in reads)))
        n = numel(shape)
        nest = self.nest
        if nest is not None and (nest.numel != n or nest.sealed or alone or (mem == "load" and nest.has_store)):
            self.close_nest()
        self.order_memory(mem)
        if self.nest is None:
            self.open_nest(n)
        nest = self.nest
        assert nest is not None
        with self.at(nest.body):
            body(self.index_for(shape))
        nest.has_store = nest.has_store or mem == "store"
        if alone:
            self.close_nest()

    def order_memory(self, mem: str | None, uniform: bool = False) -> None:
        """Keep the tile program's memory order across lanes and work-items.

        A tile op completes for all lanes before the next starts: a load sees
        earlier stores of other work-items (barrier when several share a
        group), and with possibly aliased parameters -- or a uniform store,
        which every work-item's earlier load may target -- a store waits for
        all earlier loads (closing the fused loop, and a barrier).
        """
        if mem == "load":
            if self.stores_pending and self.layout.num_threads > 1:
                self.barrier()
            self.loads_pending = True
        elif mem == "store":
            if self.loads_pending and (not self.noalias or uniform):
                self.close_nest()
                self.barrier()
            self.stores_pending = True

    def elem(self, rep: Rep, idx: Index) -> Value:
        """The value of one element of ``rep`` at ``idx``, emitted at ``eb``."""
        if isinstance(rep, Lazy):
            if self.nest is None or rep.cost == 0:
                return rep.fn(idx)
            # one evaluation per element, index and block (values must dominate their uses)
            key = (id(rep), id(idx), id(self.eb.block))
            hit = self.nest.memo.get(key)
            if hit is None:
                # keep rep and idx alive so their ids are not reused while the loop is open
                hit = (rep.fn(idx), rep, idx)
                self.nest.memo[key] = hit
            return hit[0]
        if idx.slot is not None and numel(idx.shape) == rep.numel:
            if self.nest is not None and id(rep) in self.nest.cur:
                return self.nest.cur[id(rep)]
            return self.emit(wi.LoadOp, [rep.priv, idx.slot], rep.elem)
        if rep.shared is None:
            raise CompilationError("opencl lowering: internal error: foreign read of an unshared tile", self.eb.loc)
        return self.emit(wi.LoadOp, [rep.shared, idx.with_shape(rep.shape).flat()], rep.elem)

    def put(self, mat: Mat, idx: Index, v: Value) -> None:
        """Store the element at the loop's own index ``idx`` of a tile produced in this loop."""
        assert idx.slot is not None and self.nest is not None
        self.eb.create(wi.StoreOp, [v, mat.priv, idx.slot])
        self.nest.cur[id(mat)] = v

    def materialise(self, rep: Rep, elem: ScalarType | None = None) -> Mat:
        """``rep`` in a private array (itself if it is one); ``elem``: a lazy value's elements are
        converted to that type as they are stored."""
        if isinstance(rep, Mat):
            return rep
        to = elem or rep.elem
        m = self.new_mat(rep.shape, to)

        def store(idx: Index) -> None:
            v = self.elem(rep, idx)
            self.put(m, idx, v if to == rep.elem else self.emit(arith.CastOp, [v], to))

        self.elementwise(rep.shape, [rep], store)
        return m

    def to_shared(self, m: Mat) -> None:
        """Copy a distributed tile whole into ``__local`` memory (between barriers)."""
        buf = self.alloc(m.numel, m.elem, "local")
        self.barrier()

        def body(idx: Index) -> None:
            self.eb.create(wi.StoreOp, [self.elem(m, idx), buf, idx.flat()])

        self.elementwise(m.shape, [m], body, alone=True)
        self.barrier()
        m.shared = buf
        self.scopes[-1].append(m)

    @contextmanager
    def region(self, block: Block) -> Iterator[None]:
        """Emit into ``block`` (a nested region); ``__local`` copies made inside stay inside."""
        saved = (self.top, self.eb, self.nest)
        self.close_nest()
        self.top = Builder(block)
        self.top.loc = saved[0].loc
        self.eb = self.top
        self.scopes.append([])
        # accesses of the previous iteration (or before a branch) may need ordering
        self.loads_pending = self.loads_pending or not self.noalias
        self.stores_pending = self.stores_pending or self.layout.num_threads > 1
        try:
            yield
        finally:
            self.close_nest()
            for m in self.scopes.pop():
                m.shared = None
            self.top, self.eb, self.nest = saved

    def assign(self, targets: list[Mat], reps: list[Rep]) -> None:
        """Copy ``reps`` into the stored tiles ``targets`` (loop-carried values),
        safely even when a value reads a target (swaps, shifts)."""
        target_ids = {id(t) for t in targets}
        staged: list[Rep] = []
        for t, r in zip(targets, reps):
            # reading one's own target at one's own element is safe (acc = acc + x)
            hazard = any(k in target_ids and (k != id(t) or not ident) for k, (_, ident) in leaves_of(r).items())
            if r is t or not hazard:
                staged.append(r)
            elif isinstance(r, Mat):
                staged.append(self.copy_of(r))
            else:
                staged.append(self.materialise(r))
        self.close_nest()
        for t, r in zip(targets, staged):
            if r is not t:
                self.copy_into(t, r)
        self.close_nest()
        for t in targets:
            if self.layout.num_threads > 1:
                t.shared = None

    def copy_of(self, m: Mat) -> Mat:
        out = self.new_mat(m.shape, m.elem)
        self.copy_into(out, m)
        return out

    def copy_into(self, target: Mat, r: Rep) -> None:
        def body(idx: Index) -> None:
            self.put(target, idx, self.elem(r, idx))

        self.elementwise(target.shape, [r], body)

    def uniform_once(self, compute: Callable[[], Value], t: Elem) -> Value:
        """Run side-effecting scalar ``compute`` in work-item 0 only and share its result."""
        self.close_nest()
        if self.layout.num_threads == 1:
            with self.at(self.top):
                return compute()
        buf = self.alloc(1, t, "local")
        self.barrier()
        cond = self.top.create(arith.CmpOp, [self.tid, self.iconst(0)], [I1], {"predicate": "eq"}).result
        branch = self.top.create(scf.IfOp, [cond], [], regions=[Region([Block()]), Region([Block()])])
        then = branch.regions[0].block
        b = Builder(then)
        b.loc = self.top.loc
        with self.at(b):
            v = compute()
            b.create(wi.StoreOp, [v, buf, self.iconst(0)])
        then.append(scf.YieldOp(loc=self.top.loc))
        branch.regions[1].block.append(scf.YieldOp(loc=self.top.loc))
        self.barrier()
        return self.top.create(wi.LoadOp, [buf, self.iconst(0)], [t]).result


def lower_scalar_region(lw: Lowerer, block: Block, args: list[Value], b: Builder) -> list[Value]:
    """Inline a scalar-only region (a reduce/scan combiner) at ``b``; return its yields."""
    for a, v in zip(block.args, args):
        lw.vals[a] = v
    saved = (lw.top, lw.eb, lw.nest)
    lw.top, lw.eb, lw.nest = b, b, None
    try:
        lw.lower_block(block)
    finally:
        lw.top, lw.eb, lw.nest = saved
    term = block.terminator
    assert term is not None
    return [lw.scalar(v) for v in term.operands]


__all__ = ["LOWERINGS", "Lowerer", "core", "lowers"]
