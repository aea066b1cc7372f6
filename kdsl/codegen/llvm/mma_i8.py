"""LLVM IR for an int8 x int8 -> int32 ``wi.mma`` with AVX-512 VNNI (``vpdpbusd``).

The same method as the OpenCL renderer's (:mod:`kdsl.codegen.opencl.mma_i8`, whose docstring
derives it): ``vpdpbusd`` adds four unsigned x signed byte products into each int32 lane, so
``b`` is repacked once per mma -- four consecutive ``k`` of a column per lane, 16 columns per
vector, each byte XOR ``0x80`` -- four bytes of a row of ``a`` are broadcast, and every
accumulator starts ``128 * rowsum(a)`` lower. Exact: everything wraps in 32 bits, as the
generic loop's ``mul``/``add``. Used when the host has ``avx512vnni`` (``Host.int8_dot``: the
whole module is compiled for the host's features, which are part of the cache key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm.dot import loop
from kdsl.codegen.llvm.types import I32, I64, PTR, intrinsic
from kdsl.codegen.llvm.vector import splat
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer

I8 = ir.IntType(8)
V16 = ir.VectorType(I32, 16)
B16 = ir.VectorType(I8, 16)


def applies(op: Operation, vector_bytes: int) -> bool:
    """int8 ``a``/``b`` with int32 accumulators in private arrays, 64-byte vectors, ``k`` and the
    column blocks multiples of 16 (whole byte rows for the row sums, whole vectors for the repack)."""
    types = [x.type for x in (op.a, op.b, op.c)]
    if not all(isinstance(t, MemRefType) and isinstance(t.element, ScalarType) for t in types):
        return False
    names = tuple(t.element.name for t in types)  # type: ignore[union-attr]
    attrs = op.attributes
    shape_ok = all(int(attrs[x]) % 16 == 0 for x in ("k", "n", "block_n"))
    return names == ("i8", "i8", "i32") and vector_bytes == 64 and shape_ok


class _Kernel:
    def __init__(self, fr: FuncRenderer, op: Operation) -> None:
        self.fr, self.b = fr, fr.b
        self.m, self.n, self.k = (int(op.attributes[x]) for x in ("m", "n", "k"))
        self.bm, self.nv = int(op.attributes["block_m"]), int(op.attributes["block_n"]) // 16
        self.k4 = self.k // 4
        self.a, self.bmem, self.c = fr.v(op.a), fr.v(op.b), fr.v(op.c)
        self.src = fr.v(op.init) if op.init is not None else self.c

    def c32(self, x: int) -> ir.Constant:
        return ir.Constant(I32, x)

    def at(self, base: ir.Value, elem: ir.Type, index: ir.Value) -> ir.Value:
        return self.b.gep(base, [self.b.sext(index, I64)], inbounds=True, source_etype=elem)

    def lin(self, *terms: tuple[ir.Value | int, int]) -> ir.Value:
        """``sum(x * scale)`` in i32 (``x`` an i32 value or a constant)."""
        out: ir.Value = self.c32(0)
        for x, scale in terms:
            xv = self.c32(x) if isinstance(x, int) else x
            out = self.b.add(out, xv if scale == 1 else self.b.mul(xv, self.c32(scale)))
        return out

    def alloca(self, count: int) -> ir.Value:
        slot = self.fr.alloca_b.alloca(ir.ArrayType(I32, count))
        slot.type = PTR
        slot.align = 64
        return slot

    def repack(self, pb: ir.Value) -> None:
        """pb[(g * k4 + q) * 16 + l] = bytes b[4q..4q+3, 16g + l] ^ 0x80, packed little-endian."""
        b, n, k4 = self.b, self.n, self.k4

        def groups(g: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            def steps(q: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
                word: ir.Value = ir.Constant(V16, 0)
                for t in range(4):
                    p = self.at(self.bmem, I8, self.lin((q, 4 * n), (t * n, 1), (g, 16)))
                    x = b.zext(b.load(p, typ=B16, align=1), V16)
                    word = b.or_(word, b.shl(x, ir.Constant(V16, [8 * t] * 16)) if t else x)
                word = b.xor(word, ir.Constant(V16, [0x80808080] * 16))
                b.store(word, self.at(pb, I32, self.lin((g, 16 * k4), (q, 16))), align=64)
                return []

            loop(self.fr, self.c32(0), self.c32(k4), 1, [], steps)
            return []

        loop(self.fr, self.c32(0), self.c32(n // 16), 1, [], groups)

    def row_sums(self, rs: ir.Value) -> None:
        """rs[r] = 128 * sum(a[r, :]) (wrapping)."""
        b, k = self.b, self.k
        reduce = intrinsic(self.fr.module, "llvm.vector.reduce.add", I32, [V16], [V16])

        def rows(r: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            def cols(t: ir.Value, acc: list[ir.Value]) -> list[ir.Value]:
                x = b.load(self.at(self.a, I8, self.lin((r, k), (t, 1))), typ=B16, align=1)
                return [b.add(acc[0], b.sext(x, V16))]

            (total,) = loop(self.fr, self.c32(0), self.c32(k), 16, [ir.Constant(V16, 0)], cols)
            b.store(b.mul(b.call(reduce, [total]), self.c32(128)), self.at(rs, I32, r))
            return []

        loop(self.fr, self.c32(0), self.c32(self.m), 1, [], rows)

    def blocks(self, pb: ir.Value, rs: ir.Value) -> None:
        b, n, k, k4, nv, bm = self.b, self.n, self.k, self.k4, self.nv, self.bm
        dp = intrinsic(self.fr.module, "llvm.x86.avx512.vpdpbusd.512", V16, [V16, V16, V16], [])

        def block(i0: ir.Value, j0: ir.Value) -> list[ir.Value]:
            rows = [b.add(i0, self.c32(r)) for r in range(bm)]
            outs = [self.lin((row, n), (j0, 1), (16 * s, 1)) for row in rows for s in range(nv)]
            accs = []
            for r, row in enumerate(rows):
                bias = splat(b, b.load(self.at(rs, I32, row), typ=I32), 16)
                for s in range(nv):
                    x = b.load(self.at(self.src, I32, outs[r * nv + s]), typ=V16, align=4)
                    accs.append(b.sub(x, bias))
            group = b.sdiv(j0, self.c32(16))

            def step(q: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
                bv = [b.load(self.at(pb, I32, self.lin((group, 16 * k4), (s * 16 * k4, 1), (q, 16))), typ=V16, align=64)
                      for s in range(nv)]  # fmt: skip
                out: list[ir.Value] = []
                for r, row in enumerate(rows):
                    word = b.load(self.at(self.a, I8, self.lin((row, k), (q, 4))), typ=I32, align=1)
                    av = splat(b, word, 16)
                    out.extend(b.call(dp, [carried[r * nv + s], bv[s], av]) for s in range(nv))
                return out

            final = loop(self.fr, self.c32(0), self.c32(k4), 1, accs, step)
            for off, x in zip(outs, final):
                b.store(x, self.at(self.c, I32, off), align=4)
            return []

        def cols(j0: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            loop(self.fr, self.c32(0), self.c32(self.m), bm, [], lambda i0, _: block(i0, j0))
            return []

        loop(self.fr, self.c32(0), self.c32(n), nv * 16, [], cols)


def render(fr: FuncRenderer, op: Operation) -> None:
    """The VNNI micro-kernel for ``op`` (module doc); the caller checked :func:`applies`."""
    kern = _Kernel(fr, op)
    pb, rs = kern.alloca(kern.k4 * kern.n), kern.alloca(kern.m)
    kern.repack(pb)
    kern.row_sums(rs)
    kern.blocks(pb, rs)


__all__ = ["applies", "render"]
