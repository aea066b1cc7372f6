"""Compile a kernel's tile IR once and run it on the cpu backend and on the interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
from kdsl.interpreter import InterpreterBackend
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.cpu import CPUBackend, CPUKernel


def entry_of(module: Any) -> str:
    for op in module.body.ops:
        if op.NAME == "tile.func" and op.attributes.get("kernel"):
            return str(op.attributes["sym_name"])
    raise AssertionError("no kernel tile.func in module")


def compile_cpu(kernel: Any, args: list[Any], threads: int = 2, **meta: Any) -> CPUKernel:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    return CPUBackend().compile(module, entry_of(module), LaunchOptions(extra=(("cpu_threads", threads),)))


def run_both(kernel: Any, grid: tuple[int, ...], args: list[Any], threads: int = 2, **meta: Any) -> tuple[list[Any], list[Any]]:
    """Run on cpu and on the interpreter with copies of ``args``; return both argument lists."""
    g = (*tuple(grid), 1, 1)[:3]
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    entry = entry_of(module)
    cpu_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    ref_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    CPUBackend().compile(module, entry, LaunchOptions(extra=(("cpu_threads", threads),))).launch(g, cpu_args)
    InterpreterBackend().compile(module, entry, LaunchOptions()).launch(g, ref_args)
    return cpu_args, ref_args
