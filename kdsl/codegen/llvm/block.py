"""LLVM IR for ``wi.block_load`` / ``wi.block_store``: block copies, whole rows as vectors.

A valid full row moves as ``<VW x T>`` vector loads and stores (``VW`` the
widest power of two dividing the row that fits this host's vector register);
a partial row (the edge of a masked tile) moves element by element over its
valid prefix, and a load fills the rest of the block with ``other``. Rows are
addressed ``base + r * stride`` in 64 bits. A load whose array is only the ``b``
operand of ``wi.mma`` is stored panel-major (:mod:`kdsl.codegen.packing`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm import streaming
from kdsl.codegen.llvm.dot import loop
from kdsl.codegen.llvm.types import I32, I64, bf16_to_f32, memref, reg, storage
from kdsl.codegen.packing import b_panel
from kdsl.ir.core import Operation, Value
from kdsl.ir.types import MemRefType, PointerType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer


def _width(cols: int, itemsize: int, vector_bytes: int) -> int:
    vw = 1
    while cols % (vw * 2) == 0 and (vw * 2) * itemsize <= max(vector_bytes, 16):
        vw *= 2
    return vw


def _extent(fr: FuncRenderer, v: Value, hi: int) -> ir.Value:
    """``clamp(v, 0, hi)`` as an i32."""
    b = fr.b
    x = fr.index(v.type, fr.v(v))
    x = b.select(b.icmp_signed("<", x, ir.Constant(I64, 0)), ir.Constant(I64, 0), x)
    x = b.select(b.icmp_signed(">", x, ir.Constant(I64, hi)), ir.Constant(I64, hi), x)
    return b.trunc(x, I32)


class _Block:
    """Shapes, types and address helpers of one block op."""

    def __init__(self, fr: FuncRenderer, op: Operation) -> None:
        self.fr, self.op = fr, op
        self.load = op.NAME == "wi.block_load"
        shape = tuple(int(d) for d in op.attributes["shape"])
        self.rows, self.cols = (1, shape[0]) if len(shape) == 1 else shape
        pt, mt = op.base.type, op.operands[0].type
        assert isinstance(pt, PointerType) and isinstance(mt, MemRefType) and isinstance(pt.pointee, ScalarType)
        self.e, self.mt = pt.pointee, mt
        dims = list(op.operands)[3 if self.load else 2 :]
        rank = len(shape)
        self.stride = fr.index(dims[0].type, fr.v(dims[0])) if rank == 2 else ir.Constant(I64, 0)
        exts = dims[rank - 1 : 2 * rank - 1]
        self.er = _extent(fr, exts[0], self.rows) if rank == 2 else ir.Constant(I32, 1)
        self.ec = _extent(fr, exts[-1], self.cols)
        # lower bounds (tensor descriptors): rows before sr and columns before sc are invalid
        starts = dims[2 * rank - 1 :] if op.attributes.get("starts", False) else []
        self.sr: ir.Value | None = None
        self.sc: ir.Value | None = None
        if starts:
            self.sr = _extent(fr, starts[0], self.rows) if rank == 2 else ir.Constant(I32, 0)
            self.sc = _extent(fr, starts[-1], self.cols)
        # panel-major private array (the b of a wi.mma only): pw columns per panel
        self.pw = b_panel(op.operands[0]) if self.load and len(shape) == 2 else 0
        self.vw = _width(math.gcd(self.cols, self.pw) if self.pw else self.cols, self.e.itemsize, fr.vector_bytes)
        self.align = self.e.itemsize
        # a widening copy (f16/bf16 memory into an f32 array, for a dot that accumulates in f32)
        de = mt.element
        assert isinstance(de, ScalarType)
        self.de, self.widen = de, self.load and de != self.e

    def widened(self, x: ir.Value, width: int) -> ir.Value:
        """Storage values of the source type as the destination's floats."""
        b = self.fr.b
        if self.e.name == "bf16":
            return bf16_to_f32(b, x)
        return b.fpext(x, reg(self.de) if width == 1 else ir.VectorType(reg(self.de), width))

    def fill_value(self) -> ir.Value:
        """``other`` as the destination array stores it."""
        fr = self.fr
        other = fr.v(self.op.operands[2])
        if not self.widen:
            return fr.to_mem(self.e, other)
        return other if other.type == reg(self.de) else fr.b.fpext(other, reg(self.de))

    def flat(self, row: ir.Value, col: ir.Value) -> ir.Value:
        """Index of element (row, col) in the private array (row-major or panel-major)."""
        b = self.fr.b
        if not self.pw:
            return b.add(b.mul(row, ir.Constant(I32, self.cols)), col)
        pw = ir.Constant(I32, self.pw)
        panel = b.mul(b.udiv(col, pw), ir.Constant(I32, self.rows * self.pw))
        return b.add(b.add(panel, b.mul(row, pw)), b.urem(col, pw))

    def glob(self, row: ir.Value, col: ir.Value) -> ir.Value:
        b = self.fr.b
        off = b.add(b.mul(b.sext(row, I64), self.stride), b.sext(col, I64))
        return b.gep(self.fr.v(self.op.base), [off], source_etype=storage(self.e))

    def priv(self, flat: ir.Value) -> ir.Value:
        b = self.fr.b
        mem = self.fr.v(self.op.operands[0])
        return b.gep(mem, [ir.Constant(I64, 0), b.sext(flat, I64)], inbounds=True, source_etype=memref(self.mt))

    def move(self, row: ir.Value, col: ir.Value, width: int) -> None:
        """``width`` elements at (row, col) from source to destination."""
        b = self.fr.b
        flat = self.flat(row, col)
        src, dst = (self.glob(row, col), self.priv(flat)) if self.load else (self.priv(flat), self.glob(row, col))
        t = storage(self.e) if width == 1 else ir.VectorType(storage(self.e), width)
        value = b.load(src, typ=t, align=self.align)
        if self.widen:
            b.store(self.widened(value, width), dst, align=self.de.itemsize)
        elif self.load or not streaming.wanted(self.op):
            b.store(value, dst, align=self.align)
        elif width == 1:
            streaming.mark(self.fr.module, b.store(value, dst, align=self.align))
        else:
            streaming.vector_store(self.fr.module, b, value, dst, self.align)


def render_block(fr: FuncRenderer, op: Operation) -> None:
    """One ``wi.block_load`` or ``wi.block_store`` (see the module docstring)."""
    blk = _Block(fr, op)
    b = fr.b
    full_cols = b.icmp_signed("==", blk.ec, ir.Constant(I32, blk.cols))
    if blk.sc is not None:
        full_cols = b.and_(full_cols, b.icmp_signed("==", blk.sc, ir.Constant(I32, 0)))

    def one(c: ir.Value, carried: list[ir.Value], r: ir.Value) -> list[ir.Value]:
        blk.move(r, c, 1)
        return []

    def row(r: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        row_ok = b.icmp_signed(">=", r, blk.sr) if blk.sr is not None else None
        full = full_cols if row_ok is None else b.and_(full_cols, row_ok)
        with b.if_else(full) as (whole, part):
            with whole:
                for c in range(0, blk.cols, blk.vw):
                    blk.move(r, ir.Constant(I32, c), blk.vw)
            with part:
                if row_ok is not None:
                    _partial_window(fr, blk, r, row_ok, one)
                else:
                    _partial_prefix(fr, blk, r, one)
        return []

    loop(fr, ir.Constant(I32, 0), blk.er, 1, [], row)
    if blk.load and blk.pw:  # rows past the extent hold ``other``

        def past(r: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            _fill_cols(fr, blk, r, ir.Constant(I32, 0))
            return []

        loop(fr, blk.er, ir.Constant(I32, blk.rows), 1, [], past)
    elif blk.load:  # rows past the extent hold ``other``
        _fill(fr, blk, b.mul(blk.er, ir.Constant(I32, blk.cols)), ir.Constant(I32, blk.rows * blk.cols))


Move = Callable[[ir.Value, list[ir.Value], ir.Value], list[ir.Value]]


def _partial_prefix(fr: FuncRenderer, blk: _Block, r: ir.Value, one: Move) -> None:
    """A partial row without lower bounds: columns ``0..ec`` move, a load fills the rest."""
    b = fr.b
    loop(fr, ir.Constant(I32, 0), blk.ec, 1, [], lambda c, cs: one(c, cs, r))
    if blk.load and blk.pw:
        _fill_cols(fr, blk, r, blk.ec)
    elif blk.load:
        lo = b.add(b.mul(r, ir.Constant(I32, blk.cols)), blk.ec)
        hi = b.add(b.mul(r, ir.Constant(I32, blk.cols)), ir.Constant(I32, blk.cols))
        _fill(fr, blk, lo, hi)


def _partial_window(fr: FuncRenderer, blk: _Block, r: ir.Value, row_ok: ir.Value, one: Move) -> None:
    """A row with lower bounds: a load fills it with ``other``, then the valid window
    ``sc..ec`` of a valid row (``r >= sr``) moves."""
    assert blk.sc is not None
    if blk.load:
        _fill_cols(fr, blk, r, ir.Constant(I32, 0))
    with fr.b.if_then(row_ok):
        loop(fr, blk.sc, blk.ec, 1, [], lambda c, cs: one(c, cs, r))


def _fill(fr: FuncRenderer, blk: _Block, lo: ir.Value, hi: ir.Value) -> None:
    other = blk.fill_value()

    def body(i: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        fr.b.store(other, blk.priv(i), align=blk.de.itemsize)
        return []

    loop(fr, lo, hi, 1, [], body)


def _fill_cols(fr: FuncRenderer, blk: _Block, r: ir.Value, lo: ir.Value) -> None:
    """Columns ``lo..cols`` of row ``r`` hold ``other`` (any layout)."""
    other = blk.fill_value()

    def body(c: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
        fr.b.store(other, blk.priv(blk.flat(r, c)), align=blk.de.itemsize)
        return []

    loop(fr, lo, ir.Constant(I32, blk.cols), 1, [], body)
