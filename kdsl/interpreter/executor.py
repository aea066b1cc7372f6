"""Compiling a kernel for the interpreter and launching it over a grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kdsl.errors import CompilationError, LaunchError

# importing the handler modules registers their factories
from kdsl.interpreter import atomics, control, debug, elementwise_ops, memory_ops, reductions, tileops  # noqa: F401
from kdsl.interpreter.compiler import Compiler
from kdsl.interpreter.frames import Batch, Frame, LaunchState
from kdsl.interpreter.memory import Memory
from kdsl.interpreter.values import Array, scalar_array
from kdsl.ir.core import ModuleOp, Operation
from kdsl.ir.types import PointerType
from kdsl.runtime.addresses import HOST_ADDRESSES, LaunchReach

DEFAULT_BUDGET = 1 << 16
"""Elements of the largest tile across a batch: programs run together until
their biggest tile reaches this many elements. Small enough that a batch's
working set stays in cache (faster than one huge batch), big enough to
amortise per-op Python overhead."""

ATOMIC_OPS = ("tile.atomic_rmw", "tile.atomic_cas")


def find_entry(module: ModuleOp, entry: str) -> Operation:
    func = module.lookup(entry)
    if func is None or func.NAME != "tile.func":
        names = [op.attributes.get("sym_name") for op in module.body.ops]
        raise CompilationError(f"interpreter: no tile.func '@{entry}' in module (has {names})", module.loc)
    return func


def _largest_tile(func: Operation) -> int:
    biggest = 1
    for op in func.walk():
        values = list(op.results) + [a for r in op.regions for b in r.blocks for a in b.args]
        for v in values:
            n = int(np.prod(v.type.shape)) if v.type.shape else 1
            biggest = max(biggest, n)
        if op.NAME == "tile.dot":  # matmul works on (M, K) x (K, N)
            m, k = op.a.type.shape[-2:]
            biggest = max(biggest, m * k, k * op.b.type.shape[-1])
    return biggest


def _makes_pointer_from_int(op: Operation) -> bool:
    """Does ``op`` turn an integer into a pointer (which may then point outside the arguments)?
    A pointer loaded from memory (through a pointer to pointers) is one too."""
    if op.NAME == "tile.load":
        return isinstance(op.result.type.scalar, PointerType)
    if op.NAME not in ("arith.cast", "arith.bitcast"):
        return False
    src, dst = op.operands[0].type.scalar, op.result.type.scalar
    return isinstance(dst, PointerType) and not isinstance(src, PointerType)


def _makes_int_from_pointer(op: Operation) -> bool:
    """Does ``op`` turn a pointer into an integer (an address a later launch may use)? Storing a
    pointer to memory does."""
    if op.NAME == "tile.store":
        return isinstance(op.operands[1].type.scalar, PointerType)
    if op.NAME != "arith.cast":
        return False
    src, dst = op.operands[0].type.scalar, op.result.type.scalar
    return isinstance(src, PointerType) and not isinstance(dst, PointerType)


def _may_misalign(op: Operation) -> bool:
    """Can ``op`` make a pointer that is not aligned to its pointee? (integer ->
    pointer casts, bitcasts to a wider pointee). Otherwise every pointer is an
    aligned argument plus whole elements and alignment checks can be skipped."""
    if _makes_pointer_from_int(op):
        return True
    if op.NAME not in ("arith.cast", "arith.bitcast"):
        return False
    src, dst = op.operands[0].type.scalar, op.result.type.scalar
    return isinstance(src, PointerType) and isinstance(dst, PointerType) and src.pointee.itemsize < dst.pointee.itemsize


class InterpreterKernel:
    """One compiled kernel; ``launch`` runs a grid of programs in batches."""

    def __init__(self, module: ModuleOp, entry: str, budget: int = DEFAULT_BUDGET) -> None:
        self.func = find_entry(module, entry)
        self.name = entry
        self.code = Compiler(entry).block(self.func.regions[0].block)
        self.params = list(self.func.regions[0].block.args)
        names = self.func.attributes.get("arg_names")
        self.param_names = list(names) if names else [f"arg{i}" for i in range(len(self.params))]
        ops = list(self.func.walk())
        self.sequential = any(op.NAME in ATOMIC_OPS for op in ops)
        self.may_misalign = any(_may_misalign(op) for op in ops)
        # pointers from integers may reach the live arrays whose addresses were handed out ...
        self.reachable = any(_makes_pointer_from_int(op) for op in ops)
        # ... by the host (data_ptr()) or by a kernel that turned an argument's pointer into an integer
        self.hands_out = any(_makes_int_from_pointer(op) for op in ops)
        self.batch_size = 1 if self.sequential else max(1, budget // _largest_tile(self.func))

    def _bind(self, args: Sequence[Any]) -> tuple[list[Array], Memory]:
        if len(args) != len(self.params):
            raise LaunchError(f"expected {len(self.params)} arguments, got {len(args)}", kernel=self.name)
        values: list[Array] = []
        arrays: list[tuple[str, Array]] = []
        misaligned = self.may_misalign
        for name, p, a in zip(self.param_names, self.params, args):
            if isinstance(p.type.scalar, PointerType):
                if not isinstance(a, np.ndarray):
                    raise LaunchError(f"expected a numpy array for {p.type}, got {type(a).__name__}", name, self.name)
                arrays.append((name, a))
                if self.hands_out:
                    HOST_ADDRESSES.record(a)
                values.append(np.array([a.ctypes.data], dtype=np.int64))
                misaligned = misaligned or a.ctypes.data % p.type.scalar.pointee.itemsize != 0
                continue
            try:
                values.append(scalar_array(a.item() if isinstance(a, np.generic) else a, p.type))
            except (TypeError, ValueError) as exc:
                raise LaunchError(f"cannot pass {a!r} as {p.type}: {exc}", name, self.name) from None
        return values, Memory(arrays, check_alignment=misaligned, reachable=LaunchReach() if self.reachable else None)

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        g = tuple(int(x) for x in grid)
        if len(g) != 3 or any(x < 0 for x in g):
            raise LaunchError(f"grid must be 3 non-negative ints, got {grid}", kernel=self.name)
        values, memory = self._bind(args)
        state = LaunchState(self.name, (g[0], g[1], g[2]), memory)
        total = g[0] * g[1] * g[2]
        step = self.batch_size
        with np.errstate(all="ignore"):
            for start in range(0, total, step):
                lin = np.arange(start, min(total, start + step), dtype=np.int64)
                frame = Frame(Batch(state, lin))
                self.code.run(frame, values)


def normalize_grid(grid: int | Sequence[int]) -> tuple[int, int, int]:
    g = [grid] if isinstance(grid, int) else list(grid)
    if not 1 <= len(g) <= 3:
        raise LaunchError(f"grid must have 1 to 3 dimensions, got {grid}")
    g += [1] * (3 - len(g))
    return int(g[0]), int(g[1]), int(g[2])
