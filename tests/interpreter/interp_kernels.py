"""Helpers building small kernels as IR text for the interpreter tests."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from kdsl.interpreter import InterpreterBackend
from kdsl.interpreter.executor import InterpreterKernel
from kdsl.ir.parser import parse_module
from kdsl.ir.types import ScalarType
from kdsl.runtime.backend import LaunchOptions

NP_OF = {t: ScalarType(t).np_dtype for t in ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64")}
INT_TYPES = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")


def compile_text(text: str, entry: str = "k", budget: int | None = None) -> InterpreterKernel:
    extra: tuple[tuple[str, Any], ...] = (("interp_budget", budget),) if budget else ()
    return InterpreterBackend().compile(parse_module(text), entry, LaunchOptions(extra=extra))


def module(func_body: str, params: str, name: str = "k") -> str:
    return f"builtin.module {{\n  tile.func @{name}({params}) attributes {{kernel = true}} {{\n{func_body}\n    tile.return\n  }}\n}}\n"


def offsets_prelude(n: int) -> str:
    """Defines %offs : tile<n x i32> = program_id(0) * n + arange(n)."""
    return f"""
    %pid = tile.program_id {{axis = 0}} : i32
    %bs = arith.constant {{value = {n}}} : i32
    %start = arith.mul %pid, %bs : i32
    %ar = tile.arange {{end = {n}, start = 0}} : tile<{n}xi32>
    %sp = tile.splat %start : (i32) -> tile<{n}xi32>
    %offs = arith.add %sp, %ar : tile<{n}xi32>"""


def load_tile(i: int, n: int, t: str) -> str:
    tp = f"tile<{n}xptr<{t}>>"
    return f"""
    %pp{i} = tile.splat %p{i} : (ptr<{t}>) -> {tp}
    %q{i} = tile.addptr %pp{i}, %offs : ({tp}, tile<{n}xi32>) -> {tp}
    %a{i} = tile.load %q{i} : ({tp}) -> tile<{n}x{t}>"""


def store_tile(n: int, t: str, value: str = "%res") -> str:
    tp = f"tile<{n}xptr<{t}>>"
    return f"""
    %po = tile.splat %out : (ptr<{t}>) -> {tp}
    %qo = tile.addptr %po, %offs : ({tp}, tile<{n}xi32>) -> {tp}
    tile.store %qo, {value} : {tp}, tile<{n}x{t}>"""


@functools.cache
def elementwise_kernel(body: str, in_types: tuple[str, ...], out_type: str, n: int) -> InterpreterKernel:
    """Kernel loading one n-tile per input (%a0, %a1, ...), running ``body``
    (which must define %res; ``{T}`` / ``{O}`` expand to the first input's /
    the output's tile type) and storing %res."""
    params = ", ".join([f"%p{i}: ptr<{t}>" for i, t in enumerate(in_types)] + [f"%out: ptr<{out_type}>"])
    loads = "".join(load_tile(i, n, t) for i, t in enumerate(in_types))
    text_body = body.replace("{T}", f"tile<{n}x{in_types[0]}>").replace("{O}", f"tile<{n}x{out_type}>")
    src = offsets_prelude(n) + loads + "\n    " + text_body + store_tile(n, out_type)
    return compile_text(module(src, params))


def run_elementwise(body: str, inputs: Sequence[np.ndarray], in_types: Sequence[str], out_type: str, n: int = 8) -> np.ndarray:
    """Run ``body`` over equally long inputs (padded to a multiple of n; grid = len / n)."""
    size = len(inputs[0])
    padded = -(-size // n) * n
    arrays = []
    for a, t in zip(inputs, in_types):
        buf = np.zeros(padded, dtype=NP_OF[t])
        buf[:size] = a
        arrays.append(buf)
    out = np.zeros(padded, dtype=NP_OF[out_type])
    kernel = elementwise_kernel(body, tuple(in_types), out_type, n)
    kernel.launch((padded // n, 1, 1), [*arrays, out])
    return out[:size]


def binary(op: str, t: str, a: np.ndarray, b: np.ndarray, attrs: str = "") -> np.ndarray:
    attr = f" {{{attrs}}}" if attrs else ""
    return run_elementwise(f"%res = {op} %a0, %a1{attr} : {{T}}", [a, b], [t, t], t)


def unary(op: str, t: str, a: np.ndarray) -> np.ndarray:
    return run_elementwise(f"%res = {op} %a0 : {{T}}", [a], [t], t)
