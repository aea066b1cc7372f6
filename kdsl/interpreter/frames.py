"""Runtime state of the interpreter: the launch, a batch of programs, frames.

A :class:`Frame` maps IR values to arrays for one batch of programs. Nested
regions run in child frames that look values up in their parent; a frame for
a *sub-batch* (the programs that took one side of a divergent ``scf.if`` or
are still looping) selects its rows from the parent's arrays on first use and
caches them, so splitting never copies values a region does not read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kdsl.interpreter.values import Array
from kdsl.ir.core import Block, Value

if TYPE_CHECKING:
    from kdsl.interpreter.memory import Memory


@dataclass
class LaunchState:
    """What every program of one launch shares."""

    kernel: str
    grid: tuple[int, int, int]
    memory: Memory


class Batch:
    """A set of program instances executed together (their linear ids)."""

    __slots__ = ("lin", "size", "state")

    def __init__(self, state: LaunchState, lin: Array) -> None:
        self.state = state
        self.lin = lin
        self.size = int(lin.shape[0])

    def pid(self, axis: int) -> Array:
        g0, g1, _ = self.state.grid
        if axis == 0:
            v = self.lin % g0
        elif axis == 1:
            v = (self.lin // g0) % g1
        else:
            v = self.lin // (g0 * g1)
        return v.astype(np.int32)

    def program_id(self, row: int) -> tuple[int, int, int]:
        """(x, y, z) of the program in batch row ``row``."""
        g0, g1, _ = self.state.grid
        lin = int(self.lin[min(row, self.size - 1)])
        return lin % g0, (lin // g0) % g1, lin // (g0 * g1)

    def sub(self, sel: Array) -> Batch:
        return Batch(self.state, self.lin[sel])


class Frame:
    """Value bindings of one (sub-)batch inside one region activation.

    ``lift`` > 0 marks a combiner frame (reduce/scan bodies run on whole
    arrays of elements): scalars from outside get ``lift`` trailing unit axes
    so that they broadcast against those arrays.
    """

    __slots__ = ("batch", "lift", "memo", "parent", "sel", "vals")

    def __init__(self, batch: Batch, parent: Frame | None = None, sel: Array | None = None, lift: int = 0) -> None:
        self.batch = batch
        self.parent = parent
        self.sel = sel
        self.lift = lift
        self.vals: dict[Value, Array] = {}
        self.memo: dict[tuple[Value, int], Array] = {}  # per-frame derived values (scaled offsets)

    def get(self, v: Value) -> Array:
        x = self.vals.get(v)
        if x is not None:
            return x
        if self.parent is None:
            raise KeyError(f"interpreter: value {v!r} used before definition")
        x = self.parent.get(v)
        if self.sel is not None and x.shape[0] != 1:
            x = x[self.sel]
        if self.lift:
            x = x.reshape(x.shape + (1,) * self.lift)
        self.vals[v] = x
        return x

    def child(self) -> Frame:
        return Frame(self.batch, self)

    def subset(self, sel: Array) -> Frame:
        """A frame for the programs at rows ``sel`` of this frame's batch."""
        return Frame(self.batch.sub(sel), self, sel)


OpFn = Callable[[Frame], None]


class BlockCode:
    """A compiled block: one closure per op; the terminator's operands are the outputs."""

    __slots__ = ("args", "ops", "outs")

    def __init__(self, block: Block, ops: list[OpFn]) -> None:
        self.args = list(block.args)
        self.ops = ops
        term = block.terminator
        self.outs: list[Value] = list(term.operands) if term is not None else []

    def run(self, frame: Frame, args: list[Array]) -> list[Array]:
        vals = frame.vals
        for a, x in zip(self.args, args):
            vals[a] = x
        for fn in self.ops:
            fn(frame)
        return [frame.get(v) for v in self.outs]


def merge_rows(parts: list[tuple[Array, Array]], size: int) -> Array:
    """Assemble a (size, ...) array from (row indices, values) parts."""
    first = parts[0][1]
    out = np.empty((size, *first.shape[1:]), dtype=first.dtype)
    for rows, vals in parts:
        out[rows] = vals
    return out
