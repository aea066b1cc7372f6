"""OpenCL C for ``wi.block_load`` / ``wi.block_store``: block copies, whole rows as vectors.

A valid full row moves as ``C / N`` vector load/store pairs (:mod:`.vmem`; ``N`` the
widest power of two <= 16 dividing the row length); a partial row (the edge
of a masked tile) moves element by element, masked lanes getting ``other``
(loads) or left untouched (stores). PoCL does not vectorise loops inside a
work-item by itself (``/work/shared/PLATFORM.md``), so the vectors are
explicit. Row addresses are ``base + (long)r * stride``: exact for any row.

A load whose array is the ``b`` operand of ``wi.mma`` only is stored panel-major
(:mod:`kdsl.codegen.packing`): row ``r`` of column panel ``p`` (``P`` columns wide)
lands at ``p * R * P + r * P``, so the micro-kernel reads each panel contiguously.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kdsl.codegen.opencl import ctypes as ct
from kdsl.codegen.opencl import streaming, vmem
from kdsl.codegen.opencl.prelude import FIXED
from kdsl.codegen.packing import b_panel
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, PointerType, ScalarType, VectorType

Emit = Callable[[str], None]


def _width(cols: int) -> int:
    vw = 1
    while vw < 16 and cols % (vw * 2) == 0:
        vw *= 2
    return vw


def _clamp(x: str, hi: int) -> str:
    return f"(({x}) <= 0 ? 0 : ({x}) >= {hi} ? {hi} : (int)({x}))"


@dataclass(frozen=True)
class _Side:
    """One end of a row copy: its C pointer and the IR memory space it points into."""

    ptr: str
    space: str


def _widen(helper: vmem.Helper, elem: ScalarType, vw: int, ptr: str) -> str:
    """``vw`` f16/bf16 elements at global ``ptr`` (``ushort`` storage) as floats: a block load of a
    16-bit float tile fills a private ``float`` array. ``vload_halfN`` is core OpenCL C (no
    ``cl_khr_fp16`` needed); bf16 is the high half of an f32."""
    if elem.name == "f16":
        helper("kd_half", FIXED["kd_half"])
        return f"kd_h2f(({ptr})[0])" if vw == 1 else f"vload_half{vw}(0, (__global const half*)({ptr}))"
    helper("kd_rbf", FIXED["kd_rbf"])
    if vw == 1:
        return f"kd_bffrom(({ptr})[0])"
    bits = vmem.load(helper, "ushort", vw, "global", ptr)
    return f"as_float{vw}(convert_uint{vw}({bits}) << (uint{vw})16)"


def _copy_rows(
    vw: int,
    cols: int,
    elem: ScalarType,
    src: _Side,
    dst: _Side,
    out: tuple[Emit, vmem.Helper],
    indent: str,
    nt: bool,
    dst_off: Callable[[int], int],
) -> None:
    """``cols`` contiguous ``elem`` from ``src`` to ``dst`` in ``vw``-wide vector load/store
    pairs (:mod:`.vmem`; streaming stores when ``nt``, :mod:`.streaming`); column ``c``
    goes to ``dst + dst_off(c)`` (``vw`` consecutive columns stay consecutive)."""
    emit, helper = out
    ce = ct.storage(elem)
    narrow = elem.name in ("f16", "bf16") and src.space == "global"
    for c in range(0, cols, vw):
        d = dst_off(c)
        if narrow:
            value = _widen(helper, elem, vw, f"{src.ptr} + {c}")
            emit(indent + (f"{dst.ptr}[{d}] = {value};" if vw == 1
                           else vmem.store(helper, "float", vw, dst.space, f"{dst.ptr} + {d}", value)))
            continue
        if vw == 1:
            emit(indent + (streaming.scalar(f"{src.ptr}[{c}]", f"{dst.ptr} + {d}") if nt
                           else f"{dst.ptr}[{d}] = {src.ptr}[{c}];"))
            continue
        value = vmem.load(helper, ce, vw, src.space, f"{src.ptr} + {c}")
        plain = vmem.store(helper, ce, vw, dst.space, f"{dst.ptr} + {d}", value)
        if nt:
            vt = ct.reg(VectorType(vw, elem))
            emit(indent + streaming.vector(vt, vw, elem.itemsize, value, f"{dst.ptr} + {d}", plain))
        else:
            emit(indent + plain)


def render_block(op: Operation, names: list[str], uid: int, emit: Emit, helper: vmem.Helper) -> None:
    """Emit one ``wi.block_load`` or ``wi.block_store`` (``names``: C names of its operands;
    ``helper`` registers prelude text)."""
    load = op.NAME == "wi.block_load"
    shape = tuple(int(d) for d in op.attributes["shape"])
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    mem, base = names[0], names[1]
    other = names[2] if load else ""
    dims = names[3:] if load else names[2:]
    rank = len(shape)
    stride = dims[0] if rank == 2 else "0"
    exts = dims[rank - 1 : 2 * rank - 1]
    starts = dims[2 * rank - 1 :] if op.attributes.get("starts", False) else []
    ext_r, ext_c = (exts[0], exts[1]) if rank == 2 else ("1", exts[0])
    st_r, st_c = ((starts[0], starts[1]) if rank == 2 else ("0", starts[0])) if starts else ("", "")
    pt, mt = op.base.type, op.operands[0].type
    assert isinstance(pt, PointerType) and isinstance(mt, MemRefType)
    p = f"bk{uid}_"
    r, er, ec, g, q, c, pp = p + "r", p + "er", p + "ec", p + "g", p + "p", p + "c", p + "pp"
    # panel-major private array (the b of a wi.mma only): P columns per panel
    pw = b_panel(op.operands[0]) if load and len(shape) == 2 else 0
    vw = _width(math.gcd(cols, pw) if pw else cols)
    row_len = pw or cols

    def off(col: int) -> int:
        return (col // pw) * rows * pw + col % pw if pw else col

    nt = not load and bool(op.attributes.get("nontemporal", False))
    elem = pt.pointee if load else mt.element  # a widening load keeps f16/bf16 as its source
    assert isinstance(elem, ScalarType)
    emit("{")
    emit(f"  const int {er} = {_clamp(ext_r, rows)};")
    emit(f"  const int {ec} = {_clamp(ext_c, cols)};")
    sr, sc = p + "sr", p + "sc"
    if starts:  # lower bounds (tensor descriptors): rows before sr / columns before sc are invalid
        emit(f"  const int {sr} = {_clamp(st_r, rows)};")
        emit(f"  const int {sc} = {_clamp(st_c, cols)};")
    emit(f"  for (int {r} = 0; {r} < {er}; {r} += 1) {{")
    emit(f"    {ct.reg(pt)} const {g} = {base} + (long){r} * {stride};")
    emit(f"    {ct.reg(mt.element)}* const {q} = {mem} + {r} * {row_len};")
    src, dst = (_Side(g, "global"), _Side(q, mt.space)) if load else (_Side(q, mt.space), _Side(g, "global"))
    # bitwise &: the clamps of constant extents fold, and clang warns about `&&` with a constant
    full = f"({ec} == {cols}) & ({sc} == 0) & ({r} >= {sr})" if starts else f"{ec} == {cols}"
    emit(f"    if ({full}) {{")
    _copy_rows(vw, cols, elem, src, dst, (emit, helper), "      ", nt, off if load else lambda col: col)
    emit("    } else {")
    if load:
        at = f"({c} / {pw}) * {rows * pw} + {c} % {pw}" if pw else c
        one = _widen(helper, elem, 1, f"{g} + {c}") if elem.name in ("f16", "bf16") else f"{g}[{c}]"
        valid = f"(({r} >= {sr}) & ({c} >= {sc}) & ({c} < {ec}))" if starts else f"{c} < {ec}"
        emit(f"      for (int {c} = 0; {c} < {cols}; {c} += 1) {q}[{at}] = {valid} ? {one} : {other};")
    else:
        st = streaming.scalar(f"{q}[{c}]", f"{g} + {c}") if nt else f"{g}[{c}] = {q}[{c}];"
        if starts:
            emit(f"      if ({r} >= {sr}) for (int {c} = {sc}; {c} < {ec}; {c} += 1) {st}")
        else:
            emit(f"      for (int {c} = 0; {c} < {ec}; {c} += 1) {st}")
    emit("    }")
    emit("  }")
    if load and pw:  # rows past the extent hold ``other``, in every panel
        emit(f"  for (int {pp} = 0; {pp} < {rows * cols}; {pp} += {rows * pw})")
        emit(f"    for (int {c} = {er} * {pw}; {c} < {rows * pw}; {c} += 1) {mem}[{pp} + {c}] = {other};")
    elif load:  # rows past the extent hold ``other``
        emit(f"  for (int {c} = {er} * {cols}; {c} < {rows * cols}; {c} += 1) {mem}[{c}] = {other};")
    emit("}")
