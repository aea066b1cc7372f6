"""OpenCL C for ``wi.mma``: the register-blocked matrix multiply-accumulate.

For each ``block_m x block_n`` block of ``c`` the accumulators live in
``block_m * block_n / vector_width`` vector registers (``floatN``) across the
whole ``k`` loop; each ``k`` step loads ``block_n / vector_width`` vectors of
one row of ``b`` (contiguous: one vector load, :mod:`.vmem`), broadcasts ``block_m`` scalars of
``a`` and issues one vector ``fma`` per accumulator. Blocks are visited column
panel by column panel (``j`` outer, ``i`` inner), so the ``k x block_n`` panel
of ``b`` (32 KiB at ``k = 256``) stays in L1 while every row block uses it; when
``b`` is stored panel-major (:mod:`kdsl.codegen.packing`) that panel is contiguous. This is the mapping
measured fastest on PoCL (``float16`` vectors, one AVX-512 register per
accumulator; 4 x 64 blocks by default, ``kdsl/lowering/layout.py``); PoCL does not
vectorise a loop inside a work-item by itself, so the vectors must be explicit.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.codegen.opencl import ctypes as ct
from kdsl.codegen.opencl import mma_i8, vmem
from kdsl.codegen.packing import b_panel
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, ScalarType


def render_mma(
    op: Operation, names: list[str], uid: int, emit: Callable[[str], None], helper: vmem.Helper, vnni: bool = False,
) -> None:  # fmt: skip
    """Emit the statements of one ``wi.mma`` (``names``: C names of a, b, c[, init]) through ``emit``
    (``helper`` registers prelude text). ``vnni``: the device runs on a CPU with AVX-512 VNNI, and
    an int8 mma calls :mod:`.mma_i8`'s micro-kernel instead."""
    if vnni and mma_i8.applies(op):
        mma_i8.render(op, names, emit, helper)
    else:
        _render(op, names, uid, emit, helper)


def _render(op: Operation, names: list[str], uid: int, emit: Callable[[str], None], helper: vmem.Helper) -> None:
    """The generic micro-kernel (module doc)."""
    a, b, c = names[:3]
    src = names[3] if len(names) > 3 else c  # wi.mma's init: where the accumulators start
    at = op.a.type
    bt = op.b.type
    cty = op.c.type
    assert isinstance(at, MemRefType) and isinstance(bt, MemRefType) and isinstance(cty, MemRefType)
    ce = cty.element
    assert isinstance(ce, ScalarType)
    attrs = op.attributes
    m, n, k = attrs["m"], attrs["n"], attrs["k"]
    bm, bn, vw = attrs["block_m"], attrs["block_n"], attrs["vector_width"]
    acc = ct.reg(ce)
    vt = acc if vw == 1 else f"{acc}{vw}"
    nv = bn // vw
    p = f"mm{uid}_"
    i, j, kk = p + "i", p + "j", p + "k"

    # integer accumulators add in unsigned lanes: signed overflow is undefined in C, and the
    # result must wrap as the scalar loops' ``(int)((uint)x * (uint)y)`` do
    wrap = not ce.is_float
    wt = (f"u{acc}" if wrap else acc) + ("" if vw == 1 else str(vw))

    def vload(mem: str, off: str, elem_reg: str, space: str) -> str:
        if vw == 1:
            x = f"{mem}[{off}]"
            x = x if elem_reg == acc else f"(({acc}){x})"
        else:
            x = vmem.load(helper, elem_reg, vw, space, f"{mem} + {off}")
            x = x if elem_reg == acc else f"convert_{vt}({x})"
        return f"as_{wt}({x})" if wrap and vw > 1 else f"(({wt}){x})" if wrap else x

    def mac(x: str, y: str, z: str) -> str:
        return f"{x} * {y} + {z}" if wrap else f"fma({x}, {y}, {z})"

    a_reg, b_reg = ct.reg(at.element), ct.reg(bt.element)
    # b panel-major (packing.py): the k x bn panel of column j starts at j * k, rows bn apart
    panel = b_panel(op.b) == bn
    # column panels outer: one k x block_n panel of b stays in L1 while every row block uses it
    emit(f"for (int {j} = 0; {j} < {n}; {j} += {bn}) {{")
    emit(f"  for (int {i} = 0; {i} < {m}; {i} += {bm}) {{")
    for r in range(bm):
        for q in range(nv):
            emit(f"    {wt} {p}c{r}_{q} = {vload(src, f'({i} + {r}) * {n} + {j} + {q * vw}', acc, cty.space)};")
    emit(f"    for (int {kk} = 0; {kk} < {k}; {kk} += 1) {{")
    for q in range(nv):
        b_off = f"{j} * {k} + {kk} * {bn} + {q * vw}" if panel else f"{kk} * {n} + {j} + {q * vw}"
        emit(f"      const {wt} {p}b{q} = {vload(b, b_off, b_reg, bt.space)};")
    for r in range(bm):
        x = f"{a}[({i} + {r}) * {k} + {kk}]"
        x = x if a_reg == acc else f"(({acc}){x})"
        emit(f"      const {wt} {p}a{r} = ({wt})({x});")
        for q in range(nv):
            emit(f"      {p}c{r}_{q} = {mac(f'{p}a{r}', f'{p}b{q}', f'{p}c{r}_{q}')};")
    emit("    }")
    for r in range(bm):
        for q in range(nv):
            off = f"({i} + {r}) * {n} + {j} + {q * vw}"
            x = f"{p}c{r}_{q}"
            if vw == 1:
                emit(f"    {c}[{off}] = {f'(({acc}){x})' if wrap else x};")
            else:
                emit("    " + vmem.store(helper, acc, vw, cty.space, f"{c} + {off}", f"as_{vt}({x})" if wrap else x))
    emit("  }")
    emit("}")
