"""LLVM IR for ``wi.mma``: the lowering's register-blocked dot on private arrays.

Split from :mod:`kdsl.codegen.llvm.dot` (which renders the scalar dot loop nest the same
way): blocks of ``block_m`` rows x ``block_n`` columns of ``c`` stay in vector registers
across the whole k loop; ``b`` may be stored panel-major (:mod:`kdsl.codegen.packing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm import mma_i8
from kdsl.codegen.llvm import scalar as sc
from kdsl.codegen.llvm.dot import _fmuladd, _memref, loop
from kdsl.codegen.llvm.types import I32, I64, bf16_to_f32, reg, storage
from kdsl.codegen.llvm.vector import splat
from kdsl.codegen.packing import b_panel
from kdsl.ir.core import Operation, Value
from kdsl.ir.types import MemRefType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer


def render_mma(fr: FuncRenderer, op: Operation) -> None:
    """``c += a @ b`` (or ``c = init + a @ b``) on private arrays (see ``wi.MmaOp``): the micro-kernel
    of :mod:`kdsl.codegen.llvm.dot`.

    Blocks of ``block_m`` rows x ``block_n`` columns of ``c`` stay in vector
    registers across the whole k loop; each k step loads ``block_n / VW``
    contiguous vectors of ``b`` (widened to the accumulator type), broadcasts
    one element of ``a`` per row and does one ``llvm.fmuladd`` per
    accumulator. ``VW`` is this host's vector width for the accumulator type
    (the op's ``vector_width`` only guarantees that ``block_n`` splits into
    vectors; a narrower host width is used when it does not divide).
    f16/bf16 accumulators take scalar i-k-j loops with exactly rounded fmas.
    """
    if fr.int8_dot and mma_i8.applies(op, fr.vector_bytes):
        mma_i8.render(fr, op)
        return
    mma = _Mma(fr, op)
    if mma.acc_e.name not in ("f32", "f64") and mma.acc_e.is_float:
        _mma_scalar(fr, op, mma.acc_e)
        return

    # column panels outer: one k x block_n panel of b stays in L1 while every row block uses it
    def cols(j0: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        loop(fr, ir.Constant(I32, 0), ir.Constant(I32, mma.m), mma.bm, [], lambda i0, _: mma.block(i0, j0))
        return []

    loop(fr, ir.Constant(I32, 0), ir.Constant(I32, mma.n), mma.bn, [], cols)


class _Mma:
    """Shapes, types and emit helpers of one ``wi.mma``."""

    def __init__(self, fr: FuncRenderer, op: Operation) -> None:
        self.fr, self.op = fr, op
        self.m, self.n, self.k = (int(op.attributes[x]) for x in ("m", "n", "k"))
        self.bm, self.bn = int(op.attributes["block_m"]), int(op.attributes["block_n"])
        types = [x.type for x in (op.a, op.b, op.c)]
        assert all(isinstance(t, MemRefType) for t in types)
        self.a_t, self.b_t, self.c_t = types
        self.acc_e = _elem(self.c_t)
        self.a_e, self.b_e = _elem(self.a_t), _elem(self.b_t)
        vw = max(1, (fr.vector_bytes or 16) // self.acc_e.itemsize)
        while vw > 1 and self.bn % vw:
            vw //= 2
        self.vw, self.nv = vw, self.bn // vw
        self.vt = ir.VectorType(reg(self.acc_e), vw)
        # b panel-major (kdsl/codegen/packing.py): the k x bn panel of column j0 starts at j0 * k
        self.panel = b_panel(op.b) == self.bn

    def ptr(self, mem: Value, t: MemRefType, row: ir.Value, width: int, col: ir.Value) -> ir.Value:
        b = self.fr.b
        flat = b.add(b.mul(row, ir.Constant(I32, width)), col)
        return b.gep(self.fr.v(mem), [ir.Constant(I64, 0), b.sext(flat, I64)], inbounds=True, source_etype=_memref(t))

    def load_a(self, row: ir.Value, kk: ir.Value) -> ir.Value:
        """a[row, kk] widened to the accumulator type, broadcast to all lanes."""
        fr, e = self.fr, self.a_e
        x = fr.from_mem(e, fr.b.load(self.ptr(self.op.a, self.a_t, row, self.k, kk), typ=storage(e), align=e.itemsize))
        return splat(fr.b, self.widen(e, x, reg(self.acc_e)), self.vw)

    def widen(self, e: ScalarType, x: ir.Value, to: ir.Type) -> ir.Value:
        """``x`` (elements of type ``e``) as the accumulator type: floats extend, integers extend by
        their own signedness."""
        if x.type == to:
            return x
        if e.is_float:
            return self.fr.b.fpext(x, to)
        return self.fr.b.sext(x, to) if e.is_signed else self.fr.b.zext(x, to)

    def mac(self, x: ir.Value, y: ir.Value, acc: ir.Value) -> ir.Value:
        """``acc + x * y``: a fused multiply-add for floats, wrapping integer arithmetic otherwise."""
        if self.acc_e.is_float:
            return _fmuladd(self.fr, self.vt, x, y, acc)
        return self.fr.b.add(self.fr.b.mul(x, y), acc)

    def load_b(self, kk: ir.Value, j0: ir.Value, v: int) -> ir.Value:
        """``vw`` contiguous elements of row ``kk`` of b from column ``j0 + v * vw``, widened."""
        b, e, vw = self.fr.b, self.b_e, self.vw
        if self.panel:
            base = b.add(b.mul(j0, ir.Constant(I32, self.k)), ir.Constant(I32, v * vw))
            p = self.ptr(self.op.b, self.b_t, kk, self.bn, base)
        else:
            p = self.ptr(self.op.b, self.b_t, kk, self.n, b.add(j0, ir.Constant(I32, v * vw)))
        if e.name == "bf16":  # i16 patterns -> float lanes
            x = bf16_to_f32(b, b.load(p, typ=ir.VectorType(storage(e), vw), align=2))
        else:
            x = b.load(p, typ=ir.VectorType(reg(e), vw), align=e.itemsize)
        return self.widen(e, x, self.vt)

    def block(self, i0: ir.Value, j0: ir.Value) -> list[ir.Value]:
        """One ``bm x bn`` block of c: load, k loop of vector FMAs, store."""
        fr, vw, nv = self.fr, self.vw, self.nv
        b = fr.b
        rows = [b.add(i0, ir.Constant(I32, r)) for r in range(self.bm)]
        cols = [b.add(j0, ir.Constant(I32, v * vw)) for v in range(nv)]
        ptrs = [self.ptr(self.op.c, self.c_t, row, self.n, col) for row in rows for col in cols]
        starts = [self.ptr(self.op.source, self.c_t, row, self.n, col) for row in rows for col in cols]
        accs = [b.load(p, typ=self.vt, align=self.acc_e.itemsize) for p in starts]

        def step(kk: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            bv = [self.load_b(kk, j0, v) for v in range(nv)]
            out: list[ir.Value] = []
            for r, row in enumerate(rows):
                av = self.load_a(row, kk)
                out.extend(self.mac(av, bv[v], carried[r * nv + v]) for v in range(nv))
            return out

        final = loop(fr, ir.Constant(I32, 0), ir.Constant(I32, self.k), 1, accs, step)
        for p, x in zip(ptrs, final):
            fr.b.store(x, p, align=self.acc_e.itemsize)
        return []


def _elem(t: object) -> ScalarType:
    assert isinstance(t, MemRefType) and isinstance(t.element, ScalarType)
    return t.element


def _mma_scalar(fr: FuncRenderer, op: Operation, acc_e: ScalarType) -> None:
    """Narrow (f16/bf16) accumulators: i-k-j scalar loops, one exactly rounded fma per step."""
    m, n, k = (int(op.attributes[x]) for x in ("m", "n", "k"))
    a_t, b_t, c_t = (x.type for x in (op.a, op.b, op.c))
    assert isinstance(a_t, MemRefType) and isinstance(b_t, MemRefType) and isinstance(c_t, MemRefType)

    def ptr(mem: Value, t: MemRefType, row: ir.Value, width: int, col: ir.Value) -> ir.Value:
        flat = fr.b.add(fr.b.mul(row, ir.Constant(I32, width)), col)
        return fr.b.gep(fr.v(mem), [ir.Constant(I64, 0), fr.b.sext(flat, I64)], inbounds=True, source_etype=_memref(t))

    def get(mem: Value, t: MemRefType, row: ir.Value, width: int, col: ir.Value) -> ir.Value:
        e = t.element
        assert isinstance(e, ScalarType)
        x = fr.from_mem(e, fr.b.load(ptr(mem, t, row, width, col), typ=storage(e), align=e.itemsize))
        return x if e == acc_e else sc._to_float(fr, e, acc_e, x)

    if op.init is not None:  # start from init: copy it into c first (this path is rare)

        def copy(idx: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            src = fr.b.load(ptr(op.init, c_t, idx, 1, ir.Constant(I32, 0)), typ=storage(acc_e), align=acc_e.itemsize)
            fr.b.store(src, ptr(op.c, c_t, idx, 1, ir.Constant(I32, 0)))
            return []

        loop(fr, ir.Constant(I32, 0), ir.Constant(I32, m * n), 1, [], copy)

    def rows(i: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        def ks(kk: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            x = get(op.a, a_t, i, k, kk)

            def cols(j: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
                y = get(op.b, b_t, kk, n, j)
                pc = ptr(op.c, c_t, i, n, j)
                c = fr.from_mem(acc_e, fr.b.load(pc, typ=storage(acc_e), align=acc_e.itemsize))
                fr.b.store(fr.to_mem(acc_e, sc.fma(fr, acc_e, [x, y, c])), pc)
                return []

            loop(fr, ir.Constant(I32, 0), ir.Constant(I32, n), 1, [], cols)
            return []

        loop(fr, ir.Constant(I32, 0), ir.Constant(I32, k), 1, [], ks)
        return []

    loop(fr, ir.Constant(I32, 0), ir.Constant(I32, m), 1, [], rows)
