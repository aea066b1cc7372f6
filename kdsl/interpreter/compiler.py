"""Turns a ``tile.func`` into closures, once per compiled kernel.

Each op kind has a *factory* (registered with :func:`register`) that inspects
the op's types and attributes at compile time and returns a closure
``fn(frame)`` doing only the numpy work at run time. Region-holding ops
compile their regions through the :class:`Compiler` they are given.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.errors import CompilationError
from kdsl.interpreter.frames import BlockCode, OpFn
from kdsl.ir.core import Block, Operation

Factory = Callable[[Operation, "Compiler"], OpFn]

FACTORIES: dict[str, Factory] = {}


def register(*names: str) -> Callable[[Factory], Factory]:
    """Decorator: ``factory`` builds the closure for ops named ``names``."""

    def deco(factory: Factory) -> Factory:
        for n in names:
            FACTORIES[n] = factory
        return factory

    return deco


class Compiler:
    """Compiles blocks of one kernel; ``kernel`` names it in error messages."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def block(self, block: Block) -> BlockCode:
        fns: list[OpFn] = []
        for op in block.ops:
            if op.IS_TERMINATOR:
                continue
            fns.append(self.op(op))
        return BlockCode(block, fns)

    def op(self, op: Operation) -> OpFn:
        if op.NAME == "tile.call":
            callee = op.attributes.get("callee")
            raise CompilationError(
                f"interpreter: 'tile.call' to {callee} remains in kernel '{self.kernel}'; "
                "run the 'inline' pass before compiling",
                op.loc,
            )
        factory = FACTORIES.get(op.NAME)
        if factory is None:
            raise CompilationError(f"interpreter: unsupported op '{op.NAME}' in kernel '{self.kernel}'", op.loc)
        return factory(op, self)

    def region(self, op: Operation, index: int) -> BlockCode:
        return self.block(op.regions[index].block)
