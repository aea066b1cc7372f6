"""``inline``: replace every ``tile.call`` by a copy of the callee's body.

Backends only run single functions, so all calls are inlined before
lowering. Callees are processed before their callers (a post-order walk of
the call graph), so each callee body is copied once it is already call-free
and the work stays linear in the size of the result. Recursion cannot be
inlined and is reported as a :class:`CompilationError` naming the cycle at the
call's source location. Called functions that are not kernels (``kernel``
attribute false or absent) are erased afterwards: nothing refers to them.
"""

from __future__ import annotations

from kdsl.errors import CompilationError
from kdsl.ir.core import ModuleOp, Operation
from kdsl.ir.rewriter import clone_block_into
from kdsl.transforms.base import Pass


def _calls(func: Operation) -> list[Operation]:
    return [op for op in func.walk() if op.NAME == "tile.call"]


def _callee_first_order(module: ModuleOp, funcs: dict[str, Operation]) -> list[Operation]:
    """Functions in post-order of the call graph; raises on unknown callees and recursion."""
    order: list[Operation] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for call in _calls(funcs[name]):
            callee = call.attributes["callee"].name
            if callee not in funcs:
                raise CompilationError(f"call to unknown function '@{callee}'", call.loc)
            if state.get(callee) == 1:
                cycle = [*path[path.index(callee) :], callee]
                raise CompilationError(
                    "recursive call cannot be inlined: " + " -> ".join("@" + n for n in cycle), call.loc
                )
            if callee not in state:
                visit(callee)
        path.pop()
        state[name] = 2
        order.append(funcs[name])

    for name in funcs:
        if name not in state:
            visit(name)
    return order


def inline_call(call: Operation, callee: Operation) -> None:
    """Replace ``call`` by a copy of ``callee``'s body (``tile.return`` values become the results)."""
    block = call.parent
    if block is None:
        raise CompilationError("cannot inline a detached call", call.loc)
    results = clone_block_into(callee.regions[0].block, block, block.ops.index(call), list(call.operands))
    if len(results) != len(call.results):
        raise CompilationError(
            f"'@{callee.attributes['sym_name']}' returns {len(results)} values but the call expects {len(call.results)}",
            call.loc,
        )
    for old, new in zip(call.results, results):
        old.replace_all_uses_with(new)
    call.erase()


def inline_all(module: ModuleOp) -> int:
    """Inline every call in ``module``; returns the number of calls inlined."""
    funcs = {op.attributes["sym_name"]: op for op in module.body.ops if op.NAME == "tile.func"}
    called: set[str] = set()
    count = 0
    for func in _callee_first_order(module, funcs):
        for call in _calls(func):
            name = call.attributes["callee"].name
            inline_call(call, funcs[name])
            called.add(name)
            count += 1
    for name in called:
        func = funcs[name]
        if not func.attributes.get("kernel", False):
            func.erase()
    return count


class Inline(Pass):
    """Inline all ``tile.call`` ops and drop the helper functions they called."""

    name = "inline"
    summary = "inline every tile.call; erase called non-kernel functions"

    def run(self, module: ModuleOp) -> None:
        inline_all(module)
