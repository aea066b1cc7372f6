"""The ``interpreter`` backend object registered with the runtime."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kdsl.interpreter.executor import DEFAULT_BUDGET, InterpreterKernel, normalize_grid
from kdsl.ir.core import ModuleOp
from kdsl.runtime.backend import LaunchOptions


class InterpreterBackend:
    """numpy reference backend: always available, exact semantics, debuggable.

    ``LaunchOptions.extra`` may hold ``("interp_budget", n)``: the number of
    tile elements per batch of programs (see ``executor.DEFAULT_BUDGET``).
    """

    name = "interpreter"
    # Every access is bounds-checked already (kdsl.interpreter.memory), with the same
    # words as sanitiser mode's reports: the JIT does not instrument kernels for it.
    checks_bounds = True

    def availability(self) -> tuple[bool, str]:
        return True, ""

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> InterpreterKernel:
        budget = dict(options.extra).get("interp_budget", DEFAULT_BUDGET)
        return InterpreterKernel(module, entry, int(budget))


def run_module(
    module: ModuleOp, entry: str, grid: int | Sequence[int], args: Sequence[Any], options: LaunchOptions | None = None
) -> None:
    """Compile ``entry`` of ``module`` and launch it once (a test convenience)."""
    kernel = InterpreterBackend().compile(module, entry, options or LaunchOptions())
    kernel.launch(normalize_grid(grid), args)
