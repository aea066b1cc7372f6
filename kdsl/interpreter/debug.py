"""``tile.print`` and ``tile.assert``.

Print format (one line per program and element, programs in batch order,
elements row-major)::

    pid (x, y, z) idx (i, j) <prefix><value>

``idx ()`` for scalars; with several operands each line ends with
`` (operand k)``. ``hex`` prints the bit pattern as ``0x...`` of the element
width. Output goes to ``sys.stdout``, flushed per op.

A failing ``tile.assert`` raises :class:`~kdsl.errors.DeviceAssertionError`
with the message, the op's source location and the first failing program id
and element index.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from kdsl.errors import DeviceAssertionError
from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import Frame, OpFn
from kdsl.interpreter.values import Array, bf16_to_bits, broadcast_lead
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType, Type


def _formatter(t: Type, hex_: bool) -> tuple[int, object]:
    e = t.scalar
    if isinstance(e, PointerType):
        return 8, lambda v: f"{int(v):#x}"
    assert isinstance(e, ScalarType)
    if hex_:
        width = max(1, e.itemsize) * 2
        return width, lambda v: f"0x{int(v):0{width}x}"
    if e.name == "i1":
        return 0, lambda v: str(int(bool(v)))
    if e.is_integer:
        return 0, lambda v: str(int(v))
    return 0, lambda v: repr(float(v)) if e.name != "f16" else str(np.float16(v))


def _hex_bits(x: Array, t: Type) -> Array:
    e = t.scalar
    if isinstance(e, ScalarType) and e.name == "bf16":
        return bf16_to_bits(x)
    if isinstance(e, ScalarType) and e.name == "i1":
        return x.astype(np.uint8)
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


@register("tile.print")
def _print(op: Operation, c: Compiler) -> OpFn:
    prefix = op.attributes["prefix"]
    hex_ = bool(op.attributes.get("hex", False))
    args = list(op.operands)
    fmts = [_formatter(a.type, hex_)[1] for a in args]
    many = len(args) > 1

    def run(fr: Frame) -> None:
        n = fr.batch.size
        values = []
        for a in args:
            x = broadcast_lead(fr.get(a), n)
            values.append(_hex_bits(x, a.type) if hex_ else x)
        lines: list[str] = []
        for row in range(n):
            pid = fr.batch.program_id(row)
            for k, (x, fmt) in enumerate(zip(values, fmts)):
                tail = f" (operand {k})" if many else ""
                cell = x[row]
                for idx in itertools.product(*(range(d) for d in cell.shape)):
                    idx_txt = ", ".join(str(i) for i in idx)
                    lines.append(f"pid ({pid[0]}, {pid[1]}, {pid[2]}) idx ({idx_txt}) {prefix}{fmt(cell[idx])}{tail}")  # type: ignore[operator]
        if not args:
            lines = [f"pid {fr.batch.program_id(row)} {prefix}" for row in range(n)]
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()

    return run


@register("tile.assert")
def _assert(op: Operation, c: Compiler) -> OpFn:
    message = op.attributes["message"]
    cond = op.cond
    loc, kernel = op.loc, c.kernel

    def run(fr: Frame) -> None:
        cv = fr.get(cond)
        if cv.all():
            return
        first = int(np.argmin(cv.reshape(-1)))
        pos = np.unravel_index(first, cv.shape)
        pid = fr.batch.program_id(int(pos[0]))
        lane = tuple(int(p) for p in pos[1:])
        where = f"program id {pid}" + (f", index {lane}" if lane else "")
        raise DeviceAssertionError(f"device assertion failed in kernel '{kernel}': {message} ({where})", loc)

    return run
