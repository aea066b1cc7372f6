"""Register-blocked rendering of the ``tile.dot`` loop nest (CPU micro-kernel).

The lowering (one work-item per program) emits a dot as, per output element
``i`` of a ``M x C`` tile (row-major, ``n = i % C``, ``m = i / C``)::

    scf.for %i = 0 to M*C step 1 {
      ...                                   # index math of i (rem/div by C)
      %r = scf.for %k = lo to hi iter(%s = init(i)) {
        ...                                 # x = a[m, k], y = b[k, n]
        scf.yield (%s + x * y)
      }
      wi.store %r, %out, %i
    }

Rendered literally, every output element runs a k-reduction whose ``b``
reads are strided: LLVM can only vectorise it with gathers. This module
recognises the nest and renders it the way a BLAS micro-kernel is written
instead: ``out`` is first filled with ``init``, then for blocks of ``MR``
rows and ``NV`` vectors of ``VW`` lanes along ``n`` the ``MR x NV``
accumulators stay in vector registers across the whole k loop, each k step
doing ``NV`` contiguous vector loads of ``b``, ``MR`` broadcasts of ``a``
and ``MR * NV`` fused multiply-adds (``llvm.fmuladd``; integer dots use
``mul``/``add``, exact).

The k order of every output element is unchanged (k = lo, lo+1, ...), so the
only numerical difference from the literal loop is the fused rounding of
each multiply-add, which Triton's ``dot`` also allows.

Which body ops qualify is decided by a dry run over *lane kinds*: each value
of the nest is uniform across the ``VW`` lanes of one vector (``"u"``), an
integer/pointer affine in the lane with a constant stride (``("a", s)``),
or a genuine vector (``"v"``). Loads are vectorised only when their index is
affine with stride 1 (contiguous) and scalar when uniform; anything else --
side effects, nested regions, strided or masked vector accesses, narrow or
bf16 floats -- rejects the match and the nest is rendered literally.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm import scalar as sc
from kdsl.codegen.llvm.types import I32, I64, reg, storage
from kdsl.ir.core import BlockArgument, Operation, Value
from kdsl.ir.types import MemRefType, PointerType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer

Kind = str | tuple[str, int]  # "u" | "v" | ("a", stride)
_VEC_ELEMS = ("f32", "f64", "i32", "i64")  # accumulators and arithmetic
_LOAD_ELEMS = (*_VEC_ELEMS, "f16", "i8", "u8", "i16", "u16")  # loadable, then widened by a cast
_INT_AFFINE = ("arith.add", "arith.sub", "arith.mul")
_FLOAT_VEC = ("arith.add", "arith.sub", "arith.mul")
_MAX_ACCUMULATORS = 24  # of 32 AVX-512 registers; leaves room for b vectors and broadcasts


def _const_int(v: Value) -> int | None:
    op = v.owner_op
    if op is None or op.NAME != "arith.constant" or isinstance(op.attributes["value"], float):
        return None
    return int(op.attributes["value"])


def _inside(v: Value, op: Operation) -> bool:
    """True when ``v`` is defined in a region of ``op`` (at any depth)."""
    owner = v.owner_op
    parent = owner.parent_op if owner is not None else v.block.parent_op if isinstance(v, BlockArgument) else None
    while parent is not None:
        if parent is op:
            return True
        parent = parent.parent_op
    return False


@dataclass
class DotNest:
    """A matched dot nest and the plan for rendering it."""

    outer: Operation
    inner: Operation
    store: Operation
    out: Value
    rows: int  # M
    cols: int  # C
    elem: ScalarType
    x: Value
    y: Value
    outer_deps: list[Operation]  # ops of the outer body the k loop needs, in order
    inner_deps: list[Operation]  # ops of the k body computing x and y, in order
    init_deps: list[Operation]
    kinds: dict[int, Kind] = field(default_factory=dict)
    vw: int = 16
    nv: int = 1
    mr: int = 1


def _deps(roots: list[Value], body_ops: list[Operation]) -> list[Operation] | None:
    """Ops of ``body_ops`` that ``roots`` depend on (body order); None if one has regions."""
    index = {id(op): op for op in body_ops}
    need: set[int] = set()
    stack = [r.owner_op for r in roots]
    while stack:
        op = stack.pop()
        if op is None or id(op) not in index or id(op) in need:
            continue
        if op.regions:
            return None
        need.add(id(op))
        stack.extend(x.owner_op for x in op.operands)
    return [op for op in body_ops if id(op) in need]


def match(op: Operation, vector_bytes: int) -> DotNest | None:
    """The plan for rendering ``op`` (an ``scf.for``) as a micro-kernel, or None."""
    if len(op.operands) != 3 or op.results or _const_int(op.operands[0]) != 0 or _const_int(op.operands[2]) != 1:
        return None
    total = _const_int(op.operands[1])
    body = op.regions[0].block
    ops = [o for o in body.ops if not o.IS_TERMINATOR]
    if total is None or total <= 0 or len(ops) < 2:
        return None
    store, inner = ops[-1], ops[-2]
    iv = body.args[0]
    if store.NAME != "wi.store" or inner.NAME != "scf.for" or len(inner.results) != 1:
        return None
    if store.value is not inner.results[0] or store.index is not iv or not isinstance(store.mem.type, MemRefType):
        return None
    if any(o.regions or _effectful(o) for o in ops[:-2]):
        return None
    elem = inner.results[0].type
    if not isinstance(elem, ScalarType) or elem.name not in _VEC_ELEMS:
        return None
    step = _const_int(inner.operands[2])
    if step is None or step <= 0 or any(_inside(v, op) for v in inner.operands[:2]):
        return None
    kb = inner.regions[0].block
    s = kb.args[1]
    term = kb.terminator
    assert term is not None
    add = term.operands[0].owner_op
    if add is None or add.NAME != "arith.add" or s not in add.operands or len(s.uses) != 1:
        return None
    prod = add.operands[1] if add.operands[0] is s else add.operands[0]
    mul = prod.owner_op
    if mul is None or mul.NAME != "arith.mul" or len(prod.uses) != 1 or mul.parent_op is not inner:
        return None
    k_ops = [o for o in kb.ops if not o.IS_TERMINATOR and o is not add and o is not mul]
    if any(_effectful(o) for o in k_ops):
        return None
    inner_deps = _deps(list(mul.operands), k_ops)
    if inner_deps is None:
        return None
    outer_deps = _deps([x for o in inner_deps for x in o.operands] + list(mul.operands), ops[:-2])
    init_deps = _deps([inner.operands[3]], ops[:-2])
    if inner_deps is None or outer_deps is None or init_deps is None:
        return None
    if _reads(inner_deps + outer_deps, store.mem, None) or _reads(init_deps, store.mem, iv):
        return None  # the fill loop / k loop would see partly written output
    nest = DotNest(
        op, inner, store, store.mem, 0, 0, elem, mul.operands[0], mul.operands[1], outer_deps, inner_deps, init_deps
    )
    if not _plan_shape(nest, iv, total, vector_bytes):
        return None
    return nest if _classify(nest, iv, kb.args[0]) else None


def _reads(ops: list[Operation], mem: Value, allowed_index: Value | None) -> bool:
    """True when one of ``ops`` loads ``mem`` at an index other than ``allowed_index``."""
    return any(o.NAME == "wi.load" and o.mem is mem and o.index is not allowed_index for o in ops)


def _effectful(op: Operation) -> bool:
    return op.NAME in (
        "wi.gstore",
        "wi.store",
        "wi.block_load",
        "wi.block_store",
        "wi.atomic_rmw",
        "wi.atomic_cas",
        "wi.print",
        "wi.assert",
        "wi.barrier",
        "wi.alloc",
    )


def _plan_shape(nest: DotNest, iv: Value, total: int, vector_bytes: int) -> bool:
    """Find the row length ``C`` (the constant of rem/div of the iv) and the blocking."""
    consts = set()
    for user, pos in iv.uses:
        if user.NAME in ("arith.rem", "arith.div") and pos == 0:
            c = _const_int(user.operands[1])
            if c is None:
                return False
            consts.add(c)
    if len(consts) != 1:
        return False
    cols = consts.pop()
    if cols <= 0 or total % cols:
        return False
    vw = max(1, vector_bytes // nest.elem.itemsize)
    while vw >= 4 and cols % vw:
        vw //= 2
    if vw < 4:
        return False
    nv = next(n for n in (4, 2, 1) if cols % (n * vw) == 0)
    rows = total // cols
    cap = max(1, _MAX_ACCUMULATORS // nv)
    mr = max(d for d in range(1, min(cap, rows) + 1) if rows % d == 0)
    nest.rows, nest.cols, nest.vw, nest.nv, nest.mr = rows, cols, vw, nv, mr
    return True


def _classify(nest: DotNest, iv: Value, k: Value) -> bool:
    kinds = nest.kinds
    kinds[id(iv)] = ("a", 1)
    kinds[id(k)] = "u"

    def kind(v: Value) -> Kind:
        return kinds.get(id(v), "u")  # defined outside the nest: uniform

    for op in nest.outer_deps + nest.inner_deps:
        ks = [kind(x) for x in op.operands]
        got = _kind_of(op, ks, iv, nest.cols)
        if got is None:
            return False
        kinds[id(op.result)] = got
    return all(kind(v) in ("u", "v") for v in (nest.x, nest.y))


def _kind_of(op: Operation, ks: list[Kind], iv: Value, cols: int) -> Kind | None:
    """The lane kind of ``op``'s result, or None when the op cannot be rendered per lane."""
    n = op.NAME
    if n == "wi.gload" and len(op.operands) != 1:
        return None  # masked: only the literal rendering guards the access
    if n in ("arith.rem", "arith.div") and op.operands[0] is iv:
        return ("a", 1) if n == "arith.rem" else "u"  # column / row of the flat index
    if all(k == "u" for k in ks):
        pure = n.startswith(("arith.", "math.")) or n in ("wi.load", "wi.gload", "wi.addptr")
        return "u" if pure else None
    if "v" not in ks:
        return _affine_kind(op, ks)
    return _vector_kind(op, ks)


def _affine_kind(op: Operation, ks: list[Kind]) -> Kind | None:
    """Index arithmetic on lane-affine integers/pointers, and contiguous loads."""
    n, t = op.NAME, op.result.type
    if n == "wi.addptr":
        return _affine_sum(ks[0], ks[1], 1)
    if n in ("wi.load", "wi.gload"):
        ok = ks[-1] == ("a", 1) and isinstance(t, ScalarType) and t.name in _LOAD_ELEMS
        return "v" if ok else None
    if not isinstance(t, ScalarType) or t.is_float or n not in _INT_AFFINE:
        return None
    if n != "arith.mul":
        return _affine_sum(ks[0], ks[1], -1 if n == "arith.sub" else 1)
    c = [_const_int(x) for x in op.operands]
    if ks[0] != "u" and ks[1] == "u" and c[1] is not None:
        return _scale(ks[0], c[1])
    if ks[1] != "u" and ks[0] == "u" and c[0] is not None:
        return _scale(ks[1], c[0])
    return None


def _vector_kind(op: Operation, ks: list[Kind]) -> Kind | None:
    """Arithmetic with a vector operand: add/sub/mul and widening casts."""
    n, t = op.NAME, op.result.type
    if not isinstance(t, ScalarType) or t.name not in _VEC_ELEMS or any(isinstance(k, tuple) for k in ks):
        return None
    if n == "arith.cast":
        return "v" if _vector_cast_ok(op) else None
    if not all(isinstance(x.type, ScalarType) and x.type.name in _VEC_ELEMS for x in op.operands):
        return None
    return "v" if n in _INT_AFFINE or (n in _FLOAT_VEC and t.is_float) else None


def _vector_cast_ok(op: Operation) -> bool:
    src, dst = op.operands[0].type, op.result.type
    if not isinstance(src, ScalarType) or not isinstance(dst, ScalarType) or src.name not in _LOAD_ELEMS:
        return False
    return src.is_float == dst.is_float and src.bitwidth <= dst.bitwidth


def _scale(k: Kind, c: int) -> Kind:
    assert isinstance(k, tuple)
    return ("a", k[1] * c) if c else "u"


def _affine_sum(a: Kind, b: Kind, sign: int) -> Kind | None:
    sa = a[1] if isinstance(a, tuple) else 0
    sb = b[1] if isinstance(b, tuple) else 0
    if (a not in ("u",) and not isinstance(a, tuple)) or (b not in ("u",) and not isinstance(b, tuple)):
        return None
    s = sa + sign * sb
    return ("a", s) if s else "u"


# --- rendering -------------------------------------------------------------------------------
def loop(
    fr: FuncRenderer,
    lo: ir.Value,
    hi: ir.Value,
    step: int,
    inits: list[ir.Value],
    body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]],
) -> list[ir.Value]:
    """A counted i32 loop ``for iv = lo; iv < hi; iv += step`` carrying ``inits``."""
    b = fr.b
    pre = b.block
    head, blk, done = fr.new_block("mk.head"), fr.new_block("mk.body"), fr.new_block("mk.end")
    b.branch(head)
    b.position_at_end(head)
    iv = b.phi(I32)
    iv.add_incoming(lo, pre)
    phis = []
    for x in inits:
        p = b.phi(x.type)
        p.add_incoming(x, pre)
        phis.append(p)
    b.cbranch(b.icmp_signed("<", iv, hi), blk, done)
    b.position_at_end(blk)
    nxt = body(iv, list(phis))
    latch = b.block
    iv.add_incoming(b.add(iv, ir.Constant(I32, step)), latch)
    for p, x in zip(phis, nxt):
        p.add_incoming(x, latch)
    b.branch(head)
    b.position_at_end(done)
    return list(phis)


class _Lanes:
    """Renders nest ops for the ``VW`` lanes starting at flat element ``first`` (an i32)."""

    def __init__(self, fr: FuncRenderer, nest: DotNest, row: ir.Value, col: ir.Value) -> None:
        self.fr, self.nest, self.b = fr, nest, fr.b
        first = fr.b.add(fr.b.mul(row, ir.Constant(I32, nest.cols)), col)
        iv = nest.outer.regions[0].block.args[0]
        self.vals: dict[int, ir.Value] = {id(iv): first}
        self.row, self.col = row, col

    def v(self, x: Value) -> ir.Value:
        got = self.vals.get(id(x))
        return got if got is not None else self.fr.v(x)

    def kind(self, x: Value) -> Kind:
        return self.nest.kinds.get(id(x), "u")

    def vec_type(self, e: ScalarType) -> ir.VectorType:
        return ir.VectorType(reg(e), self.nest.vw)

    def splat(self, x: ir.Value, e: ScalarType) -> ir.Value:
        vt = self.vec_type(e)
        one = self.b.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(I32, 0))
        return self.b.shuffle_vector(
            one, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(I32, self.nest.vw), None)
        )

    def as_vec(self, x: Value) -> ir.Value:
        e = x.type
        assert isinstance(e, ScalarType)
        return self.v(x) if self.kind(x) == "v" else self.splat(self.v(x), e)

    def render(self, ops: list[Operation]) -> None:
        for op in ops:
            self.vals[id(op.result)] = self.one(op)

    def one(self, op: Operation) -> ir.Value:
        fr, n = self.fr, op.NAME
        if n in ("arith.rem", "arith.div") and op.operands[0] is self.nest.outer.regions[0].block.args[0]:
            return self.col if n == "arith.rem" else self.row
        args = [self.v(x) for x in op.operands]
        k = self.kind(op.result)
        if n == "arith.constant":
            return fr_const(op)
        if n == "wi.addptr":
            return fr.gep(op.ptr.type, args[0], op.offset.type, args[1])
        if n in ("wi.load", "wi.gload"):
            return self.load(op, args, k == "v")
        if k == "v":
            return self.vector_op(op)
        return sc.emit(fr, op, args)

    def load(self, op: Operation, args: list[ir.Value], vector: bool) -> ir.Value:
        fr, b = self.fr, self.b
        if op.NAME == "wi.gload":
            ptr = args[0]
            e = op.result.type
        else:
            mt = op.mem.type
            assert isinstance(mt, MemRefType)
            idx = fr.index(op.index.type, args[1])
            ptr = b.gep(args[0], [ir.Constant(I64, 0), idx], inbounds=True, source_etype=_memref(mt))
            e = mt.element
        assert isinstance(e, ScalarType)
        if not vector:
            return fr.from_mem(e, b.load(ptr, typ=storage(e), align=e.itemsize))
        return b.load(ptr, typ=self.vec_type(e), align=e.itemsize)

    def vector_op(self, op: Operation) -> ir.Value:
        b = self.b
        t = op.result.type
        assert isinstance(t, ScalarType)
        if op.NAME == "arith.cast":
            src = op.operands[0].type
            assert isinstance(src, ScalarType)
            x = self.as_vec(op.operands[0])
            if src == t:
                return x
            if t.is_float:
                return b.fpext(x, self.vec_type(t))
            return b.sext(x, self.vec_type(t)) if src.is_signed else b.zext(x, self.vec_type(t))
        x, y = (self.as_vec(v) for v in op.operands)
        names = {"arith.add": ("fadd", "add"), "arith.sub": ("fsub", "sub"), "arith.mul": ("fmul", "mul")}
        fname, iname = names[op.NAME]
        return getattr(b, fname if t.is_float else iname)(x, y)


def fr_const(op: Operation) -> ir.Value:
    from kdsl.codegen.llvm.types import const

    return const(op.result.type, op.attributes["value"])


def _memref(t: MemRefType) -> ir.ArrayType:
    from kdsl.codegen.llvm.types import memref

    return memref(t)


def render(fr: FuncRenderer, nest: DotNest) -> None:
    """Emit the fill loop and the blocked multiply-accumulate loops for ``nest``."""
    _fill(fr, nest)
    _row_blocks(fr, nest, ir.Constant(I32, 0), ir.Constant(I32, nest.rows), nest.mr)


def _fill(fr: FuncRenderer, nest: DotNest) -> None:
    """``out[i] = init(i)`` for every element (LLVM vectorises this plain loop)."""
    iv_arg = nest.outer.regions[0].block.args[0]
    total = ir.Constant(I32, nest.rows * nest.cols)

    def body(i: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        fr.set(iv_arg, i)
        for op in nest.init_deps:
            fr.op(op)
        mt = nest.out.type
        assert isinstance(mt, MemRefType)
        ptr = fr.b.gep(
            fr.v(nest.out), [ir.Constant(I64, 0), fr.b.sext(i, I64)], inbounds=True, source_etype=_memref(mt)
        )
        fr.b.store(fr.to_mem(mt.element, fr.v(nest.inner.operands[3])), ptr)
        return []

    loop(fr, ir.Constant(I32, 0), total, 1, [], body)


def _row_blocks(fr: FuncRenderer, nest: DotNest, lo: ir.Value, hi: ir.Value, mr: int) -> None:
    vw, nv = nest.vw, nest.nv
    width = vw * nv
    kb = nest.inner.regions[0].block
    k_lo, k_hi = fr.v(nest.inner.operands[0]), fr.v(nest.inner.operands[1])
    k_step = _const_int(nest.inner.operands[2])
    assert k_step is not None
    mt = nest.out.type
    assert isinstance(mt, MemRefType)
    vt = ir.VectorType(reg(nest.elem), vw)

    def out_ptr(row: ir.Value, col: ir.Value) -> ir.Value:
        flat = fr.b.add(fr.b.mul(row, ir.Constant(I32, nest.cols)), col)
        return fr.b.gep(
            fr.v(nest.out), [ir.Constant(I64, 0), fr.b.sext(flat, I64)], inbounds=True, source_etype=_memref(mt)
        )

    def rows_body(m0: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        def cols_body(n0: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            b = fr.b
            lanes: list[_Lanes] = []
            accs: list[ir.Value] = []
            for r in range(mr):
                row = b.add(m0, ir.Constant(I32, r))
                for j in range(nv):
                    col = b.add(n0, ir.Constant(I32, j * vw))
                    ln = _Lanes(fr, nest, row, col)
                    ln.render(nest.outer_deps)
                    lanes.append(ln)
                    accs.append(b.load(out_ptr(row, col), typ=vt, align=nest.elem.itemsize))

            def k_body(k: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
                out = []
                for ln, acc in zip(lanes, carried):
                    ln.vals[id(kb.args[0])] = k
                    ln.render(nest.inner_deps)
                    out.append(_mac(fr, nest, ln.as_vec(nest.x), ln.as_vec(nest.y), acc, vt))
                return out

            final = loop(fr, k_lo, k_hi, k_step, accs, k_body)
            i = 0
            for r in range(mr):
                row = fr.b.add(m0, ir.Constant(I32, r))
                for j in range(nv):
                    col = fr.b.add(n0, ir.Constant(I32, j * vw))
                    fr.b.store(final[i], out_ptr(row, col), align=nest.elem.itemsize)
                    i += 1
            return []

        loop(fr, ir.Constant(I32, 0), ir.Constant(I32, nest.cols), width, [], cols_body)
        return []

    loop(fr, lo, hi, mr, [], rows_body)


def _mac(fr: FuncRenderer, nest: DotNest, x: ir.Value, y: ir.Value, acc: ir.Value, vt: ir.VectorType) -> ir.Value:
    if nest.elem.is_float:
        suffix = f"v{vt.count}{vt.element.intrinsic_name}"
        fma = fr.module.globals.get(f"llvm.fmuladd.{suffix}")
        if not isinstance(fma, ir.Function):
            fma = ir.Function(fr.module, ir.FunctionType(vt, [vt, vt, vt]), f"llvm.fmuladd.{suffix}")
        return fr.b.call(fma, [x, y, acc])
    return fr.b.add(acc, fr.b.mul(x, y))


__all__ = ["DotNest", "PointerType", "match", "render"]


# --- wi.mma: rendered by kdsl/codegen/llvm/mma.py (same micro-kernel, on private arrays) -----
def render_mma(fr: FuncRenderer, op: Operation) -> None:
    """``c += a @ b`` on private arrays (``wi.MmaOp``): see :mod:`kdsl.codegen.llvm.mma`."""
    from kdsl.codegen.llvm.mma import render_mma as render  # mma.py imports this module

    render(fr, op)


def _fmuladd(fr: FuncRenderer, vt: ir.VectorType, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
    suffix = f"v{vt.count}{vt.element.intrinsic_name}"
    fma = fr.module.globals.get(f"llvm.fmuladd.{suffix}")
    if not isinstance(fma, ir.Function):
        fma = ir.Function(fr.module, ir.FunctionType(vt, [vt, vt, vt]), f"llvm.fmuladd.{suffix}")
    return fr.b.call(fma, [x, y, acc])
