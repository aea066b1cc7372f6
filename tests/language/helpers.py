"""Build IR through Semantic + Builder without the AST frontend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kdsl.frontend.semantic import Semantic
from kdsl.ir.core import Block, Builder, Location, ModuleOp, Region
from kdsl.ir.dialects.tile import FuncOp, ReturnOp
from kdsl.ir.types import Type
from kdsl.ir.verifier import verify
from kdsl.language.core import tensor

LOC = Location("kernel.py", 7, 5)


class Kernel:
    """A tile.func under construction: ``k.args`` are kl.tensors, ``k.sem`` the semantic."""

    def __init__(self, arg_types: Sequence[Type] = (), call_function: Callable[..., Any] | None = None) -> None:
        self.module = ModuleOp.empty()
        block = Block(list(arg_types))
        self.func = FuncOp(regions=[Region([block])], attributes={"sym_name": "k", "result_types": (),
                                                                   "kernel": True})
        self.module.body.append(self.func)
        self.builder = Builder(block)
        self.builder.loc = LOC
        self.sem = Semantic(self.builder, call_function=call_function)
        self.args = [tensor(a, self.sem) for a in block.args]

    def finish(self) -> ModuleOp:
        self.builder.create(ReturnOp, [], [])
        verify(self.module)
        return self.module

    def op_names(self) -> list[str]:
        return [op.NAME for op in self.func.walk()][1:]
