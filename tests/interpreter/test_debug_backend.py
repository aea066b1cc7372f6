"""tile.print / tile.assert, the backend object, compile-time errors."""

from __future__ import annotations

import numpy as np
import pytest

from kdsl.errors import CompilationError, DeviceAssertionError
from kdsl.interpreter import InterpreterBackend, run_module
from kdsl.ir.parser import parse_module
from kdsl.runtime.backend import LaunchOptions

from .interp_kernels import compile_text, module

PRINT = """
    %pid = tile.program_id {axis = 0} : i32
    %ar = tile.arange {end = 2, start = 0} : tile<2xi32>
    %s = tile.splat %pid : (i32) -> tile<2xi32>
    %v = arith.add %ar, %s : tile<2xi32>
    tile.print %v {prefix = "v: "} : tile<2xi32>
    tile.print %pid {prefix = "p=", hex = true} : i32"""


def test_print_per_program_and_element(capsys: pytest.CaptureFixture[str]) -> None:
    k = compile_text(module(PRINT, ""))
    k.launch((2, 1, 1), [])
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "pid (0, 0, 0) idx (0) v: 0",
        "pid (0, 0, 0) idx (1) v: 1",
        "pid (1, 0, 0) idx (0) v: 1",
        "pid (1, 0, 0) idx (1) v: 2",
        "pid (0, 0, 0) idx () p=0x00000000",
        "pid (1, 0, 0) idx () p=0x00000001",
    ]


def test_print_floats_and_several_operands(capsys: pytest.CaptureFixture[str]) -> None:
    body = """
    %a = arith.constant {value = 1.5} : f32
    %b = arith.constant {value = true} : i1
    tile.print %a, %b {prefix = "x "} : f32, i1"""
    compile_text(module(body, "")).launch((1, 1, 1), [])
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) idx () x 1.5 (operand 0)",
        "pid (0, 0, 0) idx () x 1 (operand 1)",
    ]


ASSERT = """
    %ar = tile.arange {end = 8, start = 0} : tile<8xi32>
    %pid = tile.program_id {axis = 0} : i32
    %s = tile.splat %pid : (i32) -> tile<8xi32>
    %v = arith.add %ar, %s : tile<8xi32>
    %lim = tile.splat %n : (i32) -> tile<8xi32>
    %ok = arith.cmp %v, %lim {predicate = "lt"} : (tile<8xi32>, tile<8xi32>) -> tile<8xi1>
    tile.assert %ok {message = "index out of range"} : tile<8xi1>"""


def test_assert_raises_with_message_location_and_program() -> None:
    m = parse_module(module(ASSERT, "%n: i32"), filename="assert.mlir")
    run_module(m, "k", 3, [10])  # max index 2 + 7 = 9 < 10: passes
    with pytest.raises(DeviceAssertionError) as info:
        run_module(m, "k", 3, [9])
    msg = str(info.value)
    assert "index out of range" in msg
    assert "assert.mlir:" in msg
    assert "program id (2, 0, 0)" in msg and "index (7,)" in msg


def test_backend_protocol() -> None:
    be = InterpreterBackend()
    assert be.name == "interpreter"
    assert be.availability() == (True, "")
    m = parse_module(module(ASSERT, "%n: i32"))
    kernel = be.compile(m, "k", LaunchOptions())
    kernel.launch((0, 1, 1), [0])  # empty grid runs nothing
    with pytest.raises(CompilationError, match=r"no tile\.func"):
        be.compile(m, "missing", LaunchOptions())


def test_remaining_tile_call_is_a_clear_error() -> None:
    text = """builtin.module {
  tile.func @helper(%a: i32) -> (i32) {
    tile.return %a : i32
  }
  tile.func @k(%x: ptr<i32>) attributes {kernel = true} {
    %v = tile.load %x : (ptr<i32>) -> i32
    %r = tile.call %v {callee = @helper} : (i32) -> i32
    tile.store %x, %r : ptr<i32>, i32
    tile.return
  }
}
"""
    with pytest.raises(CompilationError, match="inline"):
        InterpreterBackend().compile(parse_module(text), "k", LaunchOptions())


def test_scalar_argument_conversion() -> None:
    body = """
    %s = arith.add %a, %b : u8
    tile.store %out, %s : ptr<u8>, u8"""
    out = np.zeros(1, np.uint8)
    run_module(parse_module(module(body, "%out: ptr<u8>, %a: u8, %b: u8")), "k", (1,), [out, np.uint8(200), 100])
    assert out[0] == 44
