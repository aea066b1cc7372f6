"""scf.if / scf.for / scf.while, uniform and divergent across a batch of programs.

Each divergent kernel runs batched and with one program per batch (budget 1);
both must match a plain Python model of one program.
"""

from __future__ import annotations

import numpy as np
import pytest

from kdsl.errors import KernelRuntimeError

from .interp_kernels import compile_text, module

IF_BODY = """
    %pid = tile.program_id {axis = 0} : i32
    %three = arith.constant {value = 3} : i32
    %zero = arith.constant {value = 0} : i32
    %r = arith.rem %pid, %three : i32
    %c = arith.cmp %r, %zero {predicate = "eq"} : (i32, i32) -> i1
    %p = tile.addptr %out, %pid : (ptr<i32>, i32) -> ptr<i32>
    %v = scf.if %c : (i1) -> i32 {
      %ten = arith.constant {value = 10} : i32
      %a = arith.mul %pid, %ten : i32
      %q = tile.addptr %side, %pid : (ptr<i32>, i32) -> ptr<i32>
      tile.store %q, %a : ptr<i32>, i32
      scf.yield %a : i32
    } {
      %h = arith.constant {value = 100} : i32
      %b = arith.add %pid, %h : i32
      scf.yield %b : i32
    }
    tile.store %p, %v : ptr<i32>, i32"""


def if_model(n: int) -> tuple[list[int], list[int]]:
    out, side = [], []
    for pid in range(n):
        out.append(pid * 10 if pid % 3 == 0 else pid + 100)
        side.append(pid * 10 if pid % 3 == 0 else -1)
    return out, side


@pytest.mark.parametrize("budget", [None, 1, 4])
def test_divergent_if(budget: int | None) -> None:
    k = compile_text(module(IF_BODY, "%out: ptr<i32>, %side: ptr<i32>"), budget=budget)
    n = 10
    out = np.zeros(n, np.int32)
    side = np.full(n, -1, np.int32)
    k.launch((n, 1, 1), [out, side])
    want_out, want_side = if_model(n)
    assert out.tolist() == want_out
    assert side.tolist() == want_side


FOR_BODY = """
    %pid = tile.program_id {axis = 0} : i32
    %one = arith.constant {value = 1} : i32
    %lb = arith.sub %pid, %shift : i32
    %acc0 = arith.constant {value = 0} : i32
    %x = tile.load %data : (ptr<i32>) -> i32
    %s = scf.for %lb, %pid, %step, %acc0 : (i32, i32, i32, i32) -> i32 {
    ^bb0(%i: i32, %acc: i32):
      %t = arith.mul %i, %x : i32
      %odd = arith.and %i, %one : i32
      %c = arith.cmp %odd, %one {predicate = "eq"} : (i32, i32) -> i1
      %u = scf.if %c : (i1) -> i32 {
        %w = arith.add %acc, %t : i32
        scf.yield %w : i32
      } {
        %w2 = arith.sub %acc, %one : i32
        scf.yield %w2 : i32
      }
      scf.yield %u : i32
    }
    %p = tile.addptr %out, %pid : (ptr<i32>, i32) -> ptr<i32>
    tile.store %p, %s : ptr<i32>, i32"""


def for_model(pid: int, shift: int, step: int, x: int) -> int:
    acc = 0
    for i in range(pid - shift, pid, step):
        acc = acc + i * x if i & 1 else acc - 1
    return acc


@pytest.mark.parametrize("budget", [None, 1, 3])
@pytest.mark.parametrize(("shift", "step"), [(5, 1), (5, 2), (0, 1)])
def test_for_with_uniform_trip_count(budget: int | None, shift: int, step: int) -> None:
    k = compile_text(module(FOR_BODY, "%out: ptr<i32>, %data: ptr<i32>, %shift: i32, %step: i32"), budget=budget)
    n = 7
    out = np.zeros(n, np.int32)
    k.launch((n, 1, 1), [out, np.array([3], np.int32), shift, step])
    assert out.tolist() == [for_model(p, shift, step, 3) for p in range(n)]


DIVERGENT_FOR = """
    %pid = tile.program_id {axis = 0} : i32
    %zero = arith.constant {value = 0} : i32
    %one = arith.constant {value = 1} : i32
    %init = tile.arange {end = 4, start = 0} : tile<4xi32>
    %r = scf.for %zero, %pid, %one, %init : (i32, i32, i32, tile<4xi32>) -> tile<4xi32> {
    ^bb0(%i: i32, %acc: tile<4xi32>):
      %s = tile.splat %i : (i32) -> tile<4xi32>
      %n = arith.add %acc, %s : tile<4xi32>
      scf.yield %n : tile<4xi32>
    }
    %four = arith.constant {value = 4} : i32
    %base = arith.mul %pid, %four : i32
    %ar = tile.arange {end = 4, start = 0} : tile<4xi32>
    %bs = tile.splat %base : (i32) -> tile<4xi32>
    %offs = arith.add %bs, %ar : tile<4xi32>
    %op = tile.splat %out : (ptr<i32>) -> tile<4xptr<i32>>
    %oa = tile.addptr %op, %offs : (tile<4xptr<i32>>, tile<4xi32>) -> tile<4xptr<i32>>
    tile.store %oa, %r : tile<4xptr<i32>>, tile<4xi32>"""


@pytest.mark.parametrize("budget", [None, 4, 8])
def test_for_with_divergent_bounds(budget: int | None) -> None:
    k = compile_text(module(DIVERGENT_FOR, "%out: ptr<i32>"), budget=budget)
    n = 9
    out = np.zeros(4 * n, np.int32)
    k.launch((n, 1, 1), [out])
    want = np.concatenate([np.arange(4) + sum(range(p)) for p in range(n)])
    assert out.tolist() == want.tolist()


WHILE_BODY = """
    %pid = tile.program_id {axis = 0} : i32
    %one = arith.constant {value = 1} : i32
    %zero = arith.constant {value = 0} : i32
    %start = arith.add %pid, %one : i32
    %steps, %last = scf.while %zero, %start : (i32, i32) -> (i32, i32) {
    ^bb0(%k: i32, %v: i32):
      %go = arith.cmp %v, %one {predicate = "ne"} : (i32, i32) -> i1
      scf.condition %go, %k, %v : i1, i32, i32
    } {
    ^bb0(%k1: i32, %v1: i32):
      %two = arith.constant {value = 2} : i32
      %three = arith.constant {value = 3} : i32
      %m = arith.rem %v1, %two : i32
      %even = arith.cmp %m, %zero {predicate = "eq"} : (i32, i32) -> i1
      %nv = scf.if %even : (i1) -> i32 {
        %h = arith.div %v1, %two : i32
        scf.yield %h : i32
      } {
        %t = arith.mul %v1, %three : i32
        %t1 = arith.add %t, %one : i32
        scf.yield %t1 : i32
      }
      %k2 = arith.add %k1, %one : i32
      scf.yield %k2, %nv : i32, i32
    }
    %p = tile.addptr %out, %pid : (ptr<i32>, i32) -> ptr<i32>
    tile.store %p, %steps : ptr<i32>, i32"""


def collatz(v: int) -> int:
    k = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        k += 1
    return k


@pytest.mark.parametrize("budget", [None, 1, 5])
def test_divergent_while(budget: int | None) -> None:
    k = compile_text(module(WHILE_BODY, "%out: ptr<i32>"), budget=budget)
    n = 30
    out = np.zeros(n, np.int32)
    k.launch((n, 1, 1), [out])
    assert out.tolist() == [collatz(p + 1) for p in range(n)]


def test_program_ids_over_3d_grid() -> None:
    body = """
    %x = tile.program_id {axis = 0} : i32
    %y = tile.program_id {axis = 1} : i32
    %z = tile.program_id {axis = 2} : i32
    %nx = tile.num_programs {axis = 0} : i32
    %ny = tile.num_programs {axis = 1} : i32
    %nz = tile.num_programs {axis = 2} : i32
    %a = arith.mul %z, %ny : i32
    %b = arith.add %a, %y : i32
    %c = arith.mul %b, %nx : i32
    %lin = arith.add %c, %x : i32
    %h = arith.constant {value = 1000} : i32
    %t = arith.mul %nz, %h : i32
    %v = arith.add %lin, %t : i32
    %p = tile.addptr %out, %lin : (ptr<i32>, i32) -> ptr<i32>
    tile.store %p, %v : ptr<i32>, i32"""
    k = compile_text(module(body, "%out: ptr<i32>"), budget=5)
    out = np.zeros(24, np.int32)
    k.launch((2, 3, 4), [out])
    assert out.tolist() == [i + 4000 for i in range(24)]


def test_zero_step_loop_is_reported() -> None:
    body = FOR_BODY
    k = compile_text(module(body, "%out: ptr<i32>, %data: ptr<i32>, %shift: i32, %step: i32"))
    with pytest.raises(KernelRuntimeError, match="step 0"):
        k.launch((3, 1, 1), [np.zeros(3, np.int32), np.array([1], np.int32), 2, 0])
