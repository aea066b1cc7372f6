"""Vectorise element loops of the work-item IR (``vector<NxT>`` ops, see ``wi_vector.py``).

Why: a CPU OpenCL device (PoCL) never vectorises a loop inside a work-item,
and with one work-item per program every tile op is such a loop, so
memory-bound kernels ran scalar at a tenth of the copy bandwidth
(``PLATFORM.md``). This pass does it explicitly, once, for every renderer
with ``Layout.vector_width > 1``.

An innermost ``scf.for s in [lo, hi) step 1`` is rewritten when every op of
its body is one of (classified while walking the body in order):

* **uniform** -- defined outside the loop, or a pure op of uniform operands
  (also a ``wi.load``/``wi.gload`` at a uniform place the loop never stores to);
* **affine** -- ``s``, ``u + s``, ``s + u``, ``s - u`` (the index type, stride 1);
* **contiguous pointer** -- ``addptr(uniform, affine)``, ``addptr(contiguous, uniform)``;
* **lane-true mask** -- ``affine < u``, ``affine <= u``, ``u > affine``,
  ``u >= affine``, and conjunctions of them: the vector loop's trip count is
  cut so that they hold for every lane it runs (the *remainder* loop, the
  original scalar loop, runs the rest with its masks);
* **vector** -- ``wi.gload``/``wi.gstore`` through contiguous pointers (masks
  lane-true, or chunk-uniform: see *guards*), ``wi.load``/``wi.store`` of
  private/local arrays at affine slots, elementwise ``arith``/``math`` ops, compares, selects and casts on
  32/64-bit element types (``f32 f64 i32 u32 i64 u64``; ``i1`` lane masks);
* **reduction** -- a loop-carried value whose only use is ``acc = acc op x``
  (``add mul max min and or xor``) yielded back: the vector loop keeps ``N``
  partial results, folded by ``wi.vreduce`` at its exit (float ``add``/``mul``
  are thus reassociated, as Triton allows: its reductions have no specified
  order; ``max``/``min``/bitwise results are exact).

**Columns.** ``(s % C) * k + u`` (``k`` a constant, ``u`` chunk-uniform) steps by ``k`` per
lane: a ``wi.load`` of a private/local array there becomes a strided ``wi.vload`` (the read side
of a transpose of a row-major tile, whose writes are then whole vectors).

**Guards.** A load/store mask that is the same on every lane of a chunk (built
from ``s / C`` of a 2-D element loop and uniforms, possibly ``&`` a lane-true
bound) becomes the scalar mask operand of ``wi.gvload``/``wi.gvstore``: one test
per vector, so a padded convolution's ``(pixels, channels)`` tile whose pixel
row may lie outside the image still moves whole channel vectors.

Anything else (other element types, strided global or gathered accesses, nested
regions, atomics...) leaves the loop scalar: correct first. The vector loop
covers ``[lo, vend)`` with ``vend = lo + (L - lo) // N * N`` and
``L = max(lo, min(hi, bounds...))``; the *lane-count iteration*
(:mod:`kdsl.lowering.vector_tail`) runs ``[vend, L)`` as one vector whose lanes
past ``L`` do nothing; the original loop then starts at ``L`` with the reduced
values as its inits (the elements where some bound mask is false), and is
deleted when it is provably empty: no bounds, or the masked-off region starts
at ``L`` (below). Bounds are computed in the index type (``u - c`` of a
mask ``s + c < u`` must not overflow, as in any i32 index arithmetic).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kdsl.ir.core import AttrValue, Block, Builder, Operation, Pure, Region, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.dialects.wi_vector import BroadcastOp, GVLoadOp, GVStoreOp, LaneIdsOp, VLoadOp, VReduceOp, VStoreOp
from kdsl.ir.rewriter import clone_op
from kdsl.ir.types import PointerType, ScalarType, Type, VectorType
from kdsl.lowering.fuse_loops import fuse_loops
from kdsl.lowering.vector_tail import emit_tail
from kdsl.lowering.vector_unroll import cheap, unroll_reductions
from kdsl.transforms.utils import attr_key

VECTOR_ELEMS = frozenset({"f32", "f64", "i32", "u32", "i64", "u64"})
FLOAT_OPS = frozenset({
    "arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem", "arith.max", "arith.min", "arith.neg",
    "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.sqrt_rn", "math.rsqrt", "math.sin",
    "math.cos", "math.tanh", "math.erf", "math.floor", "math.ceil", "math.abs", "math.fma", "math.div_rn",
})  # fmt: skip
INT_OPS = frozenset({"arith.add", "arith.sub", "arith.mul", "arith.and", "arith.or", "arith.xor", "arith.max",
                     "arith.min", "arith.neg", "math.abs", "math.umulhi"})  # fmt: skip
BOOL_OPS = frozenset({"arith.and", "arith.or", "arith.xor"})
REDUCE = {"arith.add": "add", "arith.mul": "mul", "arith.max": "max", "arith.min": "min", "arith.and": "and",
          "arith.or": "or", "arith.xor": "xor"}  # fmt: skip
IDEMPOTENT = frozenset({"max", "min", "and", "or"})
UNROLL = 4  # independent accumulators of a cheap vector reduction loop (``vector_unroll.py``)

# value kinds inside the loop body
U, A, P, M, V, R = "uniform", "affine", "pointer", "mask", "vector", "reduction"
CU, CA = "chunk-uniform", "chunk-affine"  # the same on every lane of a chunk / lane 0 + lane number
CS = "chunk-strided"  # lane 0 + lane number * a constant stride (``self.strides``), within a chunk
F = "false"  # a bound mask in the masked-off region (``masked_off``): false on every lane


class Reject(Exception):
    """The loop is not vectorisable (left scalar)."""


def vector_width(requested: int) -> int:
    """The largest power of two <= ``requested`` (vreduce trees halve the lanes)."""
    vw = 1
    while vw * 2 <= requested:
        vw *= 2
    return vw


def vectorize(func: Operation, width: int, fuse: bool = True, unroll: int = UNROLL, tail: bool = True) -> int:
    """Vectorise the innermost element loops of ``func`` by ``width`` lanes; return how many.

    ``fuse``: first fuse sibling element loops (:mod:`kdsl.lowering.fuse_loops`), so
    reductions run in their producer's loop; False vectorises the loops as they are.
    ``unroll``: vector reduction loops without transcendentals get that many
    independent accumulators (:mod:`kdsl.lowering.vector_unroll`); 1 = off.
    ``tail``: the last partial vector runs as one lane-count iteration
    (:mod:`kdsl.lowering.vector_tail`); False leaves it to the scalar remainder loop."""
    vw = vector_width(width)
    if vw < 2:
        return 0
    if fuse:
        fuse_loops(func)
    loops = [op for op in func.walk() if isinstance(op, scf.ForOp)]
    done = 0
    for loop in loops:
        body = loop.regions[0].block
        if any(o.regions for o in body.ops) or not _unit_step(loop) or body.args[0].type != ScalarType("i32"):
            continue
        if _trip_count(loop) is not None and _trip_count(loop) < vw:  # type: ignore[operator]
            continue
        v = _Vectorizer(loop, vw, unroll, tail=tail)
        try:
            v.run()
        except Reject:
            continue
        done += 1
        if v.off_start is not None:
            _vectorize_masked_off(loop, v.off_start, vw, unroll, tail)
    return done


def _vectorize_masked_off(loop: Operation, start: Value, vw: int, unroll: int, tail: bool) -> None:
    """Split the remainder ``loop`` at ``start`` (every bound mask false from there on) and
    vectorise ``[start, hi)`` with those masks false: its loads are ``other``, its stores vanish.

    Why: a tile padded to a power of two (Triton's ``BLOCK = next_power_of_2(n)``) leaves up to
    half its elements masked off, and the scalar remainder ran them one by one -- a softmax over
    513 columns took 19x the time of one over 512 on PoCL. When that region has no effect (no
    reductions, every store masked off) it is deleted instead."""
    off = clone_op(loop)
    loop.parent.insert(loop.parent.ops.index(loop) + 1, off)  # type: ignore[union-attr]
    for old, new in zip(loop.results, off.results):
        old.replace_all_uses_with(new)
    off.set_operand(0, start)
    for i, r in enumerate(loop.results):
        off.set_operand(3 + i, r)
    loop.set_operand(1, start)
    if loop.operands[0] is start:  # the lane-count iteration ended at the masked-off region
        _erase_empty(loop)
    with contextlib.suppress(Reject):  # the scalar copy is correct as it is
        _Vectorizer(off, vw, unroll, masked_off=True, tail=tail).run()


def _erase_empty(loop: Operation) -> None:
    """Delete a loop that runs no iteration: its results are its inits."""
    for r, init in zip(loop.results, loop.operands[3:]):
        r.replace_all_uses_with(init)
    loop.erase()


def _const(v: Value) -> Any:
    op = v.owner_op
    return op.attributes["value"] if isinstance(op, arith.ConstantOp) else None


def _unit_step(loop: Operation) -> bool:
    return bool(_const(loop.operands[2]) == 1)


def _trip_count(loop: Operation) -> int | None:
    lo, hi = _const(loop.operands[0]), _const(loop.operands[1])
    return max(0, hi - lo) if isinstance(lo, int) and isinstance(hi, int) else None


def _vectorisable(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.name in VECTOR_ELEMS


_NARROW_INTS = frozenset({"i8", "u8", "i16", "u16"})


def _storable(t: Type) -> bool:
    """Element types whose vectors may only be moved and converted, never computed with: f16 lanes
    go between f32 math and f16 memory (``p.to(tl.float16)`` before a dot, fp16 rows of a
    LayerNorm); 8/16-bit integer lanes are widened (int8 weights dequantised for a dot)."""
    return _vectorisable(t) or (isinstance(t, ScalarType) and (t.name == "f16" or t.name in _NARROW_INTS))


def _widening(src: Type, dst: Type) -> bool:
    """A conversion of narrow integer lanes to a computable type (exact for every value)."""
    return isinstance(src, ScalarType) and src.name in _NARROW_INTS and _vectorisable(dst)


@dataclass(eq=False)
class _Vectorizer:
    """Builds the vector loop of one scalar loop (raises :class:`Reject` before touching the IR)."""

    loop: Operation
    vw: int
    unroll: int = 1
    kind: dict[Value, str] = field(default_factory=dict)
    new: dict[Value, Value] = field(default_factory=dict)  # lane-0 scalar, vector, or uniform value
    hoistable: set[Value] = field(default_factory=set)
    bounds: list[tuple[Value, Value, int]] = field(default_factory=list)  # (affine, bound, +1 for <=)
    reductions: dict[int, tuple[Operation, str]] = field(default_factory=dict)
    stored: set[Value] = field(default_factory=set)  # memrefs stored to in the loop
    gstores: bool = False
    splats: dict[Value, Value] = field(default_factory=dict)
    consts: dict[tuple[Type, object], Value] = field(default_factory=dict)
    strides: dict[Value, int] = field(default_factory=dict)  # of the chunk-strided values
    indices: dict[Value, Value] = field(default_factory=dict)  # affine indices as vectors (lanes_of)
    lane_ids: Value | None = None  # ``wi.lane_ids``, made before the loop on first use
    masked_off: bool = False  # the loop runs where every bound mask is false (``_vectorize_masked_off``)
    tail: bool = True  # the last partial vector as a lane-count iteration (``vector_tail.py``)
    off_start: Value | None = None  # set by ``_emit_loop``: where the masked-off region begins

    def __post_init__(self) -> None:
        self.body = self.loop.regions[0].block
        self.iv = self.body.args[0]
        self.vblock = Block([self.iv.type])
        self.b = Builder(self.vblock)
        self.b.loc = self.loop.loc
        self.pre = Builder()
        self.pre.set_insertion_point_before(self.loop)
        self.pre.loc = self.loop.loc
        for o in self.body.ops:
            if isinstance(o, (wi.StoreOp, VStoreOp)):
                self.stored.add(o.mem)
            self.gstores = self.gstores or isinstance(o, (wi.GStoreOp, wi.AtomicRMWOp, wi.AtomicCASOp))

    # --- driver -----------------------------------------------------------------------
    def run(self) -> None:
        self.kind[self.iv] = A
        self.new[self.iv] = self.vblock.args[0]
        self._reductions()
        try:
            for op in self.body.ops:
                if isinstance(op, scf.YieldOp):
                    continue
                self.visit(op)
            yields = self._yields()
        except Reject:
            self._discard()
            raise
        self.vblock.append(scf.YieldOp(yields, loc=self.loop.loc))
        if self.masked_off:
            _drop_unused(self.vblock)  # the addresses of loads and stores that vanished
        if self.masked_off and not self.reductions and all(o.has_trait(Pure) for o in self.vblock.ops[:-1]):
            self._discard()  # no effect at all: the region is dead
            self.loop.erase()
            return
        self._emit_loop()

    def _discard(self) -> None:
        """Drop the vector body built so far and what it made before the loop."""
        for o in list(self.vblock.ops):
            for inner in o.walk():
                inner.drop_operands()
        made = [*self.splats.values(), *([self.lane_ids] if self.lane_ids is not None else []), *self.consts.values()]
        for v in made:
            if v.owner_op is not None and v.owner_op.parent is not None and not v.uses:
                v.owner_op.erase()

    def _reductions(self) -> None:
        term = self.body.terminator
        assert term is not None
        for i, arg in enumerate(self.body.args[1:]):
            if len(arg.uses) != 1:
                raise Reject
            op, _ = arg.uses[0]
            red = REDUCE.get(op.NAME)
            if red is None or op.parent is not self.body or not _vectorisable(arg.type):
                raise Reject
            if [(u, k) for u, k in op.result.uses] != [(term, i)]:
                raise Reject
            e = arg.type
            assert isinstance(e, ScalarType)
            if red in ("and", "or", "xor") and not e.is_integer:
                raise Reject
            self.kind[arg] = R
            self.reductions[i] = (op, red)
            self.vblock.add_arg(VectorType(self.vw, e))
            self.new[arg] = self.vblock.args[1 + i]

    def _yields(self) -> list[Value]:
        return [self.new[op.result] for op, _ in (self.reductions[i] for i in range(len(self.reductions)))]

    # --- classification ----------------------------------------------------------------
    def k(self, v: Value) -> str:
        if v in self.kind:
            return self.kind[v]
        if not self._inside(v):
            self.hoistable.add(v)
            self.new[v] = v
            return U
        raise Reject  # defined in a nested region or later (cannot happen in SSA order)

    def _inside(self, v: Value) -> bool:
        op = v.owner_op
        block = op.parent if op is not None else getattr(v, "block", None)
        return block is self.body

    def set(self, v: Value, kind: str, new: Value | None) -> None:
        self.kind[v] = kind
        if new is not None:
            self.new[v] = new

    def vec(self, v: Value) -> Value:
        """``v`` as a vector: uniform values are splat, an index that counts up by one per lane
        (affine, or chunk-affine within the chunk) is its lane-0 value splat plus ``0 .. N-1``
        (a causal mask's ``col <= row``, an index converted to data)."""
        kind = self.k(v)
        if kind in (V, R):
            return self.new[v]
        if kind in (A, CA):
            return self.lanes_of(v)
        if kind not in (U, CU):
            raise Reject  # pointers / strided indices / lane-true masks as data: left scalar
        return self.splat(v)

    def lanes_of(self, v: Value) -> Value:
        if v in self.indices:
            return self.indices[v]
        t = v.type
        if t != ScalarType("i32"):
            raise Reject
        if self.lane_ids is None:
            self.lane_ids = self.pre.create(LaneIdsOp, [], [VectorType(self.vw, t)]).result
        base = self.b.create(BroadcastOp, [self.new[v]], [VectorType(self.vw, t)]).result
        out = self.b.create(arith.AddOp, [base, self.lane_ids], [VectorType(self.vw, t)]).result
        self.indices[v] = out
        return out

    def splat(self, v: Value) -> Value:
        if v in self.splats:
            return self.splats[v]
        if not _vectorisable(v.type) and v.type != ScalarType("i1"):
            raise Reject
        b = self.pre if not self._inside(v) else self.b
        t = v.type
        assert isinstance(t, ScalarType)
        s = b.create(BroadcastOp, [self.new[v]], [VectorType(self.vw, t)]).result
        self.splats[v] = s
        return s

    def clone(self, op: Operation, operands: list[Value], t: Type | None) -> Value:
        res = self.b.create(type(op), operands, [t] if t is not None else [], dict(op.attributes))
        return res.result if t is not None else operands[0]

    # --- ops ----------------------------------------------------------------------------
    def visit(self, op: Operation) -> None:
        kinds = [self.k(v) for v in op.operands]
        if op.results and all(k == U for k in kinds) and self._uniform_ok(op):
            r = op.result
            self.set(r, U, self.clone(op, [self.new[v] for v in op.operands], r.type))
            if op.has_trait(Pure) and all(v in self.hoistable for v in op.operands):
                self.hoistable.add(r)
            return
        if op.NAME in ("arith.div", "arith.rem") and kinds == [A, U] and self._chunked_by(op):
            # s / C is the same on every lane of an aligned chunk, s % C counts up by one
            self.set(
                op.result,
                CU if op.NAME == "arith.div" else CA,
                self.clone(op, [self.new[v] for v in op.operands], op.result.type),
            )
            return
        if len(op.results) == 1 and CU in kinds and set(kinds) <= {U, CU} and self._uniform_ok(op):
            r = op.result  # a pure op of chunk-uniform values: computed once per chunk, as a scalar
            self.set(r, CU, self.clone(op, [self.new[v] for v in op.operands], r.type))
            return
        if self._strided(op, kinds):
            return
        handler = _HANDLERS.get(op.NAME)
        if handler is None:
            if op.NAME in FLOAT_OPS | INT_OPS:
                self.elementwise(op, kinds)
                return
            raise Reject
        handler(self, op, kinds)

    def _strided(self, op: Operation, kinds: list[str]) -> bool:
        """Index arithmetic of a column walk: ``CA * c`` (a constant ``c``) counts up by ``c`` per
        lane, and adding anything chunk-uniform keeps that; only ``wi.load`` consumes it."""
        if op.results and op.result.type != self.iv.type:
            return False
        name, ops = op.NAME, op.operands
        stride: int | None = None
        if name == "arith.mul" and kinds in ([CA, U], [U, CA]):
            c = _const(ops[1] if kinds[0] == CA else ops[0])
            stride = c if isinstance(c, int) and c > 1 else None
        elif name in ("arith.add", "arith.sub") and kinds[0] == CS and kinds[1] in (U, CU):
            stride = self.strides[ops[0]]
        elif name == "arith.add" and kinds[1] == CS and kinds[0] in (U, CU):
            stride = self.strides[ops[1]]
        if stride is None:
            return False
        self.set(op.result, CS, self.clone(op, [self.new[v] for v in ops], op.result.type))
        self.strides[op.result] = stride
        return True

    def _chunked_by(self, op: Operation) -> bool:
        """``op`` is ``s / C`` or ``s % C`` of the loop index itself with a constant ``C`` that the
        vector width divides, and every chunk starts at a multiple of the width (``lo`` is a
        non-negative constant multiple): the 2-D element loops' row and column indices."""
        lo, c = _const(self.loop.operands[0]), _const(op.operands[1])
        return (
            op.operands[0] is self.iv
            and isinstance(lo, int) and lo >= 0 and lo % self.vw == 0
            and isinstance(c, int) and c > 0 and c % self.vw == 0
        )  # fmt: skip

    def _uniform_ok(self, op: Operation) -> bool:
        if op.has_trait(Pure) or len(op.results) != 1:
            return op.has_trait(Pure)
        if isinstance(op, wi.LoadOp):
            return op.mem not in self.stored
        return isinstance(op, wi.GLoadOp) and not self.gstores

    def elementwise(self, op: Operation, kinds: list[str]) -> None:
        e = op.result.type
        assert isinstance(e, ScalarType)
        allowed = FLOAT_OPS if e.is_float else BOOL_OPS if e.name == "i1" else INT_OPS
        if op.NAME not in allowed or (e.name != "i1" and not _vectorisable(e)):
            raise Reject
        for idx, (v, kd) in enumerate(zip(op.operands, kinds)):
            if kd == R:
                red = self.reductions.get(getattr(v, "index", 0) - 1)
                if red is None or red[0] is not op or idx > 1:
                    raise Reject
        self.set(op.result, V, self.clone(op, [self.vec(v) for v in op.operands], VectorType(self.vw, e)))

    def index_add(self, op: Operation, kinds: list[str]) -> None:
        r = op.result
        ok_t = r.type == self.iv.type
        if ok_t and _chunk_affine_sum(op.NAME, kinds[0], kinds[1]):
            self.set(r, CA, self.clone(op, [self.new[v] for v in op.operands], r.type))
            return
        pairs = {(A, U): 1, (U, A): 0} if op.NAME == "arith.add" else {(A, U): 1}
        other = pairs.get((kinds[0], kinds[1])) if ok_t else None
        if other is None:
            self.elementwise(op, kinds)
            return
        if op.operands[other] not in self.hoistable:
            raise Reject
        self.set(r, A, self.clone(op, [self.new[v] for v in op.operands], r.type))

    def addptr(self, op: Operation, kinds: list[str]) -> None:
        if (kinds[0], kinds[1]) not in ((U, A), (P, U), (U, CA), (CU, A), (CU, CA), (P, CU)):
            raise Reject
        self.set(op.result, P, self.clone(op, [self.new[v] for v in op.operands], op.result.type))

    def cmp(self, op: Operation, kinds: list[str]) -> None:
        if A in kinds and self._bound(op, kinds):
            return
        if not _vectorisable(op.lhs.type) or not set(kinds) <= {U, V, CU, A, CA}:
            raise Reject
        res = self.clone(op, [self.vec(v) for v in op.operands], VectorType(self.vw, ScalarType("i1")))
        self.set(op.result, V, res)

    def _bound(self, op: Operation, kinds: list[str]) -> bool:
        """``affine < u`` and its mirror images with a hoistable ``u``: a lane-true mask (the trip
        count is cut for it). False for any other compare of an affine index (a lane mask)."""
        pred = op.attributes["predicate"]
        flip = {"gt": "lt", "ge": "le"}
        if kinds == [A, U] and pred in ("lt", "le"):
            a, bound = op.operands
        elif kinds == [U, A] and pred in flip:
            bound, a = op.operands
            pred = flip[pred]
        else:
            return False
        if bound not in self.hoistable or op.lhs.type != self.iv.type:
            return False
        if self.masked_off:
            self.set(op.result, F, None)
            return True
        self.bounds.append((a, bound, 1 if pred == "le" else 0))
        self.set(op.result, M, None)
        return True

    def logic_and(self, op: Operation, kinds: list[str]) -> None:
        if F in kinds:
            self.set(op.result, F, None)
            return
        if M not in kinds:
            self.elementwise(op, kinds)
            return
        other = kinds[1] if kinds[0] == M else kinds[0]
        v = op.operands[1] if kinds[0] == M else op.operands[0]
        if other == M:
            self.set(op.result, M, None)
        elif other in (V, CU):
            self.set(op.result, other, self.new[v])
        elif other == U:  # lane-true and uniform: a chunk guard (``wi.gvload``'s mask)
            self.set(op.result, CU, self.new[v])
        else:
            raise Reject

    def select(self, op: Operation, kinds: list[str]) -> None:
        kc = kinds[0]
        if kc in (M, F):  # lanes in bounds: the true value; masked off: the false one
            v = op.true_value if kc == M else op.false_value
            self.set(op.result, self.k(v), self.new.get(v))
            return
        if kc not in (V, CU) or not _vectorisable(op.result.type):
            raise Reject
        vals = [self.vec(op.cond), self.vec(op.true_value), self.vec(op.false_value)]
        self.set(op.result, V, self.clone(op, vals, VectorType(self.vw, _scalar(op.result.type))))

    def cast(self, op: Operation, kinds: list[str]) -> None:
        src, dst = op.operand.type, op.result.type
        narrow = {_scalar(src).name, _scalar(dst).name} == {"f16", "f32"} if _storable(src) and _storable(dst) else False
        narrow = narrow or _widening(src, dst)
        if kinds[0] not in (V, A, CA) or not (narrow or (_vectorisable(src) and _vectorisable(dst))):
            raise Reject
        self.set(op.result, V, self.clone(op, [self.vec(op.operand)], VectorType(self.vw, _scalar(op.result.type))))

    def shift(self, op: Operation, kinds: list[str]) -> None:
        """Shifts by a constant amount below the bit width: plain lane shifts (other amounts have
        kdsl's saturating semantics, which the scalar renderers spell out; the loop stays scalar)."""
        e, c = op.result.type, _const(op.operands[1])
        if not isinstance(e, ScalarType) or not _vectorisable(e) or not e.is_integer:
            raise Reject
        if kinds[0] not in (V, U, CU, A, CA) or not (isinstance(c, int) and 0 <= c < e.bitwidth):
            raise Reject
        vt = VectorType(self.vw, e)
        self.set(op.result, V, self.clone(op, [self.vec(op.operands[0]), self.splat(op.operands[1])], vt))

    def bitcast(self, op: Operation, kinds: list[str]) -> None:
        """Same-width reinterpretation (``f32 <-> i32/u32``, ``f64 <-> i64/u64``: the RNG's bits
        to floats): the same lanes under another element type."""
        src, dst = op.operand.type, op.result.type
        if not (_vectorisable(src) and _vectorisable(dst)) or _scalar(src).bitwidth != _scalar(dst).bitwidth:
            raise Reject
        self.set(op.result, V, self.clone(op, [self.vec(op.operand)], VectorType(self.vw, _scalar(dst))))

    def gload(self, op: Operation, kinds: list[str]) -> None:
        if kinds[0] != P or not _storable(_pointee(op.ptr.type)):
            raise Reject
        if op.mask is not None and kinds[1] == F:  # no memory touched: ``other`` (0 when absent)
            other = op.other if op.other is not None else self._c(0.0 if _pointee(op.ptr.type).is_float else 0,
                                                                  _pointee(op.ptr.type))
            self.set(op.result, V, self.vec(other))
            return
        operands = [self.new[op.ptr], *self._guard(op.mask, kinds[1:2])]
        if len(operands) > 1 and op.other is not None:
            if self.k(op.other) not in (U, CU):
                raise Reject
            operands.append(self.new[op.other])
        t = VectorType(self.vw, _pointee(op.ptr.type))
        self.set(op.result, V, self.b.create(GVLoadOp, operands, [t]).result)

    def gstore(self, op: Operation, kinds: list[str]) -> None:
        if kinds[0] != P or not _storable(_pointee(op.ptr.type)):
            raise Reject
        if op.mask is not None and kinds[2] == F:
            return  # masked off on every lane: nothing is written
        operands = [self.new[op.ptr], self.vec(op.value), *self._guard(op.mask, kinds[2:])]
        self.b.create(GVStoreOp, operands, [], dict(op.attributes))

    def _guard(self, mask: Value | None, kinds: list[str]) -> list[Value]:
        """The scalar guard of a vector access: none for no mask or a lane-true one (the trip count
        was cut for it), the mask itself when it is the same on every lane of a chunk (one test per
        vector: a pixel row of an ``(pixels, channels)`` tile inside or outside the image); a
        lane-varying mask keeps the loop scalar."""
        if mask is None or kinds[0] == M:
            return []
        if kinds[0] not in (U, CU):
            raise Reject
        return [self.new[mask]]

    def load(self, op: Operation, kinds: list[str]) -> None:
        if kinds[1] not in (A, CA, CS) or not _storable(op.result.type):
            raise Reject
        t = VectorType(self.vw, _scalar(op.result.type))
        attrs: dict[str, AttrValue] = {"stride": self.strides[op.index]} if kinds[1] == CS else {}
        self.set(op.result, V, self.b.create(VLoadOp, [self.new[op.mem], self.new[op.index]], [t], attrs).result)

    def store(self, op: Operation, kinds: list[str]) -> None:
        if kinds[2] not in (A, CA) or kinds[1] != U or not _storable(op.value.type):
            raise Reject
        self.b.create(VStoreOp, [self.vec(op.value), self.new[op.mem], self.new[op.index]])

    # --- the loops ------------------------------------------------------------------------
    def _emit_loop(self) -> None:
        loop, pre, vw = self.loop, self.pre, self.vw
        lo, hi = loop.operands[0], loop.operands[1]
        it = self.iv.type
        limit = hi
        lims: list[Value] = []
        for a, bound, inclusive in self.bounds:
            offset = self._offset(a)
            lim = bound if offset is None else self._arith(arith.SubOp, bound, offset)
            if inclusive:
                lim = self._arith(arith.AddOp, lim, self._c(1, it))
            limit = pre.create(arith.MinOp, [limit, lim], [it]).result
            lims.append(lim)
        count = _trip_count(loop)
        if count is not None and not self.bounds:
            vend = self._c(_const(lo) + count // vw * vw, it)
            partial = count % vw != 0
        else:
            limit = pre.create(arith.MaxOp, [limit, lo], [it]).result
            span = self._arith(arith.SubOp, limit, lo)
            whole = self._arith(arith.MulOp, self._arith(arith.DivOp, span, self._c(vw, it)), self._c(vw, it))
            vend = self._arith(arith.AddOp, lo, whole)
            partial = True
            if lims and count is not None and (self.tail or count >= 2 * vw):
                self.off_start = self._all_false_from(limit, lims, hi)
        inits = [self._vinit(loop.operands[3 + i], red) for i, (_, red) in sorted(self.reductions.items())]
        vloop = pre.create(scf.ForOp, [lo, vend, self._c(vw, it), *inits], [v.type for v in inits],
                           regions=[Region([self.vblock])])  # fmt: skip
        if self.reductions and self.unroll > 1 and cheap(vloop):
            unroll_reductions(vloop, self.unroll)
            pre.set_insertion_point_before(loop)  # ops were inserted before vloop: the index moved
        accs = list(vloop.results)
        rest = vend  # where the scalar remainder starts
        if self.tail and partial:  # [vend, limit): one vector whose lanes past limit do nothing
            accs = list(emit_tail(vloop, limit, pre).results)
            rest = limit
        finals = [self._final(loop.operands[3 + i], accs[i], op, red)
                  for i, (op, red) in sorted(self.reductions.items())]  # fmt: skip
        loop.set_operand(0, rest)
        for i, f in enumerate(finals):
            loop.set_operand(3 + i, f)
        if not partial or (self.tail and not self.bounds):  # nothing is left past the vectors
            _erase_empty(loop)

    def _all_false_from(self, limit: Value, lims: list[Value], hi: Value) -> Value:
        """Where every bound mask is false: ``max(limit, min(hi, max(lims)))``, ``limit`` itself
        when all bounds are one (``limit`` is ``max(lo, min(hi, lims...))``, so the region never
        starts before the loop does)."""
        if all(lim is lims[0] for lim in lims) or all(b == self.bounds[0] for b in self.bounds):
            return limit
        top = lims[0]
        for lim in lims[1:]:
            top = self.pre.create(arith.MaxOp, [top, lim], [top.type]).result
        top = self.pre.create(arith.MinOp, [hi, top], [top.type]).result
        return self.pre.create(arith.MaxOp, [limit, top], [top.type]).result

    def _c(self, value: int | float, t: Type) -> Value:
        key = (t, attr_key(value))  # by bits: 0.0 and -0.0 are different constants
        if key not in self.consts:
            self.consts[key] = self.pre.create(arith.ConstantOp, [], [t], {"value": value}).result
        return self.consts[key]

    def _arith(self, cls: type[Operation], a: Value, b: Value) -> Value:
        """``a op b`` in the index type before the loop (``x + 0``, ``x - 0``, ``0 + x`` folded)."""
        if _const(b) == 0 and cls in (arith.AddOp, arith.SubOp):
            return a
        if _const(a) == 0 and cls is arith.AddOp:
            return b
        return self.pre.create(cls, [a, b], [a.type]).result

    def _offset(self, a: Value) -> Value | None:
        """``c`` of the affine ``a = s + c``: ``a``'s ops cloned before the loop with ``s = 0``.

        Affine values are made of ``add``/``sub`` only, so ``s = 0`` just drops ``s``
        (``None`` stands for that zero)."""
        memo: dict[Value, Value | None] = {self.iv: None}

        def at0(v: Value) -> Value | None:
            if v in memo:
                return memo[v]
            if not self._inside(v):
                return v
            op = v.owner_op
            assert op is not None and isinstance(op, (arith.AddOp, arith.SubOp))
            x, y = (at0(o) for o in op.operands)
            if x is None or y is None:  # s + u, u + s, s - u (u - s is not affine)
                other = y if x is None else x
                assert other is not None
                out = other if x is not None or isinstance(op, arith.AddOp) else self._neg(other)
            else:
                out = self._arith(type(op), x, y)
            memo[v] = out
            return out

        return at0(a)  # None: a is s itself

    def _neg(self, v: Value) -> Value:
        return self.pre.create(arith.SubOp, [self._c(0, v.type), v], [v.type]).result

    def _vinit(self, init: Value, red: str) -> Value:
        e = _scalar(init.type)
        t = VectorType(self.vw, e)
        if red in IDEMPOTENT:
            return self.pre.create(BroadcastOp, [init], [t]).result
        ident: float | int = (1.0 if e.is_float else 1) if red == "mul" else (-0.0 if e.is_float else 0)
        return self.pre.create(BroadcastOp, [self._c(ident, e)], [t]).result

    def _final(self, init: Value, vacc: Value, op: Operation, red: str) -> Value:
        attrs: dict[str, AttrValue] = {"kind": red}
        if "propagate_nan" in op.attributes:
            attrs["propagate_nan"] = op.attributes["propagate_nan"]
        e = init.type
        folded = self.pre.create(VReduceOp, [vacc], [e], attrs).result
        if red in IDEMPOTENT:
            return folded
        return self.pre.create(type(op), [init, folded], [e], dict(op.attributes)).result


_READS = (VLoadOp, GVLoadOp, wi.LoadOp, wi.GLoadOp)


def _drop_unused(block: Block) -> None:
    """Erase pure ops and reads whose results nothing uses (a read has no effect to keep)."""
    for op in reversed(list(block.ops)):
        if (op.has_trait(Pure) or isinstance(op, _READS)) and op.results and not any(r.uses for r in op.results):
            op.erase()


def _chunk_affine_sum(name: str, a: str, b: str) -> bool:
    """Index sums that count up by one per lane within a chunk (not across chunks: never mask
    bounds): chunk-affine plus anything the same on every lane, or affine plus chunk-uniform."""
    same = (U, CU)
    if name == "arith.sub":
        return (a == CA and b in same) or (a == A and b == CU)
    return (a == CA and b in same) or (b == CA and a in same) or (a, b) in ((A, CU), (CU, A))


def _scalar(t: Type) -> ScalarType:
    assert isinstance(t, ScalarType), t
    return t


def _pointee(t: Type) -> ScalarType:
    assert isinstance(t, PointerType), t
    return t.scalar_pointee


_HANDLERS: dict[str, Callable[[_Vectorizer, Operation, list[str]], None]] = {
    "arith.add": _Vectorizer.index_add,
    "arith.sub": _Vectorizer.index_add,
    "arith.and": _Vectorizer.logic_and,
    "arith.cmp": _Vectorizer.cmp,
    "arith.select": _Vectorizer.select,
    "arith.cast": _Vectorizer.cast,
    "arith.bitcast": _Vectorizer.bitcast,
    "arith.shl": _Vectorizer.shift,
    "arith.shr": _Vectorizer.shift,
    "wi.addptr": _Vectorizer.addptr,
    "wi.gload": _Vectorizer.gload,
    "wi.gstore": _Vectorizer.gstore,
    "wi.load": _Vectorizer.load,
    "wi.store": _Vectorizer.store,
}
