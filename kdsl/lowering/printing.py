"""Lowering of ``tile.print`` to ``wi.print`` (OpenCL ``printf``).

Lines follow the interpreter's format, ``pid (x, y, z) idx (i, j) <prefix><value>``,
one per element (``(operand k)`` appended when several operands are printed).
Floats print with ``%.9g``/``%.17g`` (round-trippable, not Python's shortest
``repr``); ``hex`` prints the bit pattern. With several work-items per group
the order of lines between work-items is unspecified; scalars print once.
"""

from __future__ import annotations

from kdsl.ir.core import Block, Builder, Operation, Region, Value
from kdsl.ir.dialects import arith, scf, wi
from kdsl.ir.types import PointerType, ScalarType, Type
from kdsl.lowering.index import Index
from kdsl.lowering.lowerer import I1, Lowerer

_INT_CONV = {8: "hh", 16: "h", 32: "", 64: "l"}


def _conv(lw: Lowerer, v: Value, t: Type, hex_: bool) -> tuple[str, Value]:
    e = t.scalar
    if isinstance(e, PointerType):
        return "%#lx", lw.emit(arith.CastOp, [v], ScalarType("u64"))
    assert isinstance(e, ScalarType)
    bits = max(8, e.bitwidth)
    if hex_:
        ut = ScalarType(f"u{bits}")
        if e.is_float:
            v = lw.emit(arith.BitcastOp, [v], ut)
        return f"0x%0{bits // 4}{_INT_CONV[bits]}x", v
    if e.is_float:
        return ("%.17g" if e.name == "f64" else "%.9g"), v
    return "%" + _INT_CONV[bits] + ("d" if e.is_signed else "u"), v


def _line(lw: Lowerer, prefix: str, dims: list[Value], value: tuple[str, Value] | None, tail: str) -> None:
    pid = [lw.program_id(a) for a in range(3)]
    idx_txt = ", ".join("%d" for _ in dims)
    fmt = "pid (%d, %d, %d) " + (f"idx ({idx_txt}) " if value is not None else "") + _escape(prefix)
    args = [*pid, *dims]
    if value is not None:
        fmt += value[0]
        args.append(value[1])
    lw.eb.create(wi.PrintOp, args, [], {"format": fmt + _escape(tail) + "\n"})


def _escape(s: str) -> str:
    return s.replace("%", "%%")


def once(lw: Lowerer, fn: object) -> None:
    """Run ``fn`` (emitting at ``eb``) in work-item 0 only."""
    assert callable(fn)
    lw.close_nest()
    if lw.layout.num_threads == 1:
        with lw.at(lw.top):
            fn()
        return
    cond = lw.top.create(arith.CmpOp, [lw.tid, lw.iconst(0)], [I1], {"predicate": "eq"}).result
    branch = lw.top.create(scf.IfOp, [cond], [], regions=[Region([Block()]), Region([Block()])])
    b = Builder(branch.regions[0].block)
    b.loc = lw.top.loc
    with lw.at(b):
        fn()
    for r in branch.regions:
        r.block.append(scf.YieldOp(loc=lw.top.loc))


def lower_print_op(lw: Lowerer, op: Operation) -> None:
    prefix = op.attributes["prefix"]
    hex_ = bool(op.attributes.get("hex", False))
    args = list(op.operands)
    if not args:
        once(lw, lambda: _line(lw, prefix, [], None, ""))
        return
    for k, a in enumerate(args):
        tail = f" (operand {k})" if len(args) > 1 else ""
        if not a.type.shape:
            s = lw.scalar(a)
            once(lw, lambda s=s, a=a, tail=tail: _line(lw, prefix, [], _conv(lw, s, a.type, hex_), tail))
            continue
        rep = lw.rep(a)

        def body(idx: Index, rep: object = rep, a: Value = a, tail: str = tail) -> None:
            v = lw.elem(rep, idx)  # type: ignore[arg-type]
            _line(lw, prefix, idx.dims(), _conv(lw, v, a.type, hex_), tail)

        lw.elementwise(a.type.shape, [rep], body, alone=True)
