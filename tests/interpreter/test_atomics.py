"""Atomics: sequentially consistent program-order execution."""

from __future__ import annotations

import numpy as np
import pytest

from .interp_kernels import compile_text, module

COUNTER = """
    %one = arith.constant {value = 1} : i32
    %old = tile.atomic_rmw %ctr, %one {kind = "add"} : (ptr<i32>, i32) -> i32
    %pid = tile.program_id {axis = 0} : i32
    %p = tile.addptr %out, %pid : (ptr<i32>, i32) -> ptr<i32>
    tile.store %p, %old : ptr<i32>, i32"""


def test_atomic_counter_from_many_programs_in_program_order() -> None:
    k = compile_text(module(COUNTER, "%ctr: ptr<i32>, %out: ptr<i32>"))
    assert k.batch_size == 1
    ctr = np.zeros(1, np.int32)
    out = np.full(50, -1, np.int32)
    k.launch((50, 1, 1), [ctr, out])
    assert ctr[0] == 50
    assert out.tolist() == list(range(50))  # program order: program i saw i


HISTOGRAM = """
    %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
    %four = arith.constant {value = 4} : tile<16xi32>
    %bin = arith.rem %ar, %four : tile<16xi32>
    %hp = tile.splat %hist : (ptr<f32>) -> tile<16xptr<f32>>
    %ha = tile.addptr %hp, %bin : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %w = arith.constant {value = 0.5} : tile<16xf32>
    %lim = arith.constant {value = 14} : tile<16xi32>
    %m = arith.cmp %ar, %lim {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
    %old = tile.atomic_rmw %ha, %w, %m {kind = "add"} : (tile<16xptr<f32>>, tile<16xf32>, tile<16xi1>) -> tile<16xf32>
    %op = tile.splat %out : (ptr<f32>) -> tile<16xptr<f32>>
    %oa = tile.addptr %op, %ar : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    tile.store %oa, %old : tile<16xptr<f32>>, tile<16xf32>"""


def test_atomic_add_with_repeated_addresses_and_mask() -> None:
    k = compile_text(module(HISTOGRAM, "%hist: ptr<f32>, %out: ptr<f32>"))
    hist = np.zeros(4, np.float32)
    out = np.zeros(16, np.float32)
    k.launch((1, 1, 1), [hist, out])
    assert hist.tolist() == [2.0, 2.0, 1.5, 1.5]  # lanes 14, 15 masked off
    # lane i is the (i // 4)-th visitor of its bin; masked lanes return 0
    assert out.tolist() == [0.5 * (i // 4) for i in range(14)] + [0.0, 0.0]


@pytest.mark.parametrize(
    ("kind", "t", "init", "val", "want_mem"),
    [
        ("max", "i32", -5, 3, 3),
        ("min", "i32", -5, 3, -5),
        ("max", "u32", 5, 0xFFFFFFFF, 0xFFFFFFFF),
        ("xchg", "i64", 7, 9, 9),
        ("and", "u8", 0b1100, 0b1010, 0b1000),
        ("or", "u8", 0b1100, 0b1010, 0b1110),
        ("xor", "u8", 0b1100, 0b1010, 0b0110),
        ("add", "f16", 1.0, 0.5, 1.5),
        ("max", "f32", 1.0, 2.5, 2.5),
        ("add", "i8", 127, 1, -128),
    ],
)
def test_atomic_rmw_kinds(kind: str, t: str, init: float, val: float, want_mem: float) -> None:
    body = f"""
    %v = tile.load %vp : (ptr<{t}>) -> {t}
    %old = tile.atomic_rmw %p, %v {{kind = "{kind}"}} : (ptr<{t}>, {t}) -> {t}
    tile.store %vp, %old : ptr<{t}>, {t}"""
    from .interp_kernels import NP_OF

    k = compile_text(module(body, f"%p: ptr<{t}>, %vp: ptr<{t}>"))
    mem = np.array([init], NP_OF[t])
    vp = np.array([val], NP_OF[t])
    k.launch((1, 1, 1), [mem, vp])
    assert mem[0] == np.array(want_mem).astype(NP_OF[t])
    assert vp[0] == np.array(init).astype(NP_OF[t])


SPIN_LOCK = """
    %zero = arith.constant {value = 0} : i32
    %one = arith.constant {value = 1} : i32
    scf.while {
      %old = tile.atomic_cas %lock, %zero, %one : (ptr<i32>, i32, i32) -> i32
      %busy = arith.cmp %old, %one {predicate = "eq"} : (i32, i32) -> i1
      scf.condition %busy : i1
    } {
      scf.yield
    }
    %v = tile.load %total : (ptr<f32>) -> f32
    %pid = tile.program_id {axis = 0} : i32
    %pf = arith.cast %pid : (i32) -> f32
    %nv = arith.add %v, %pf : f32
    tile.store %total, %nv : ptr<f32>, f32
    %released = tile.atomic_rmw %lock, %zero {kind = "xchg"} : (ptr<i32>, i32) -> i32"""


def test_cas_spin_lock_serialises_critical_sections() -> None:
    k = compile_text(module(SPIN_LOCK, "%lock: ptr<i32>, %total: ptr<f32>"))
    lock = np.zeros(1, np.int32)
    total = np.zeros(1, np.float32)
    k.launch((20, 1, 1), [lock, total])
    assert lock[0] == 0
    assert total[0] == sum(range(20))


def test_cas_float_compares_bits() -> None:
    body = """
    %cmp = tile.load %c : (ptr<f32>) -> f32
    %new = arith.constant {value = 5.0} : f32
    %old = tile.atomic_cas %p, %cmp, %new : (ptr<f32>, f32, f32) -> f32
    tile.store %c, %old : ptr<f32>, f32"""
    k = compile_text(module(body, "%p: ptr<f32>, %c: ptr<f32>"))
    p = np.array([np.nan], np.float32)
    c = np.array([np.nan], np.float32)
    k.launch((1, 1, 1), [p, c])
    assert p[0] == 5.0  # NaN == NaN bitwise
    p = np.array([0.0], np.float32)
    c = np.array([-0.0], np.float32)
    k.launch((1, 1, 1), [p, c])
    assert p[0] == 0.0 and not np.signbit(p[0])  # +0 != -0 bitwise: no swap
