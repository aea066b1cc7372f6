"""Loads and stores: masks, other, bounds errors, scalars, i1/bf16 memory, views."""

from __future__ import annotations

import numpy as np
import pytest

from kdsl.errors import KernelRuntimeError, OutOfBoundsError
from kdsl.interpreter import InterpreterBackend, run_module
from kdsl.interpreter.values import round_to_bf16
from kdsl.ir.parser import parse_module
from kdsl.runtime.backend import LaunchOptions

from .interp_kernels import module, offsets_prelude

T8 = "tile<8xi32>"


def masked_copy_text(with_other: bool) -> str:
    other = ", %minus" if with_other else ""
    other_t = ", tile<8xf32>" if with_other else ""
    body = offsets_prelude(8) + f"""
    %ns = tile.splat %n : (i32) -> {T8}
    %mask = arith.cmp %offs, %ns {{predicate = "lt"}} : ({T8}, {T8}) -> tile<8xi1>
    %minus = arith.constant {{value = -1.0}} : tile<8xf32>
    %xp = tile.splat %x : (ptr<f32>) -> tile<8xptr<f32>>
    %xa = tile.addptr %xp, %offs : (tile<8xptr<f32>>, {T8}) -> tile<8xptr<f32>>
    %v = tile.load %xa, %mask{other} : (tile<8xptr<f32>>, tile<8xi1>{other_t}) -> tile<8xf32>
    %op = tile.splat %out : (ptr<f32>) -> tile<8xptr<f32>>
    %oa = tile.addptr %op, %offs : (tile<8xptr<f32>>, {T8}) -> tile<8xptr<f32>>
    tile.store %oa, %v : tile<8xptr<f32>>, tile<8xf32>"""
    return module(body, "%x: ptr<f32>, %out: ptr<f32>, %n: i32")


@pytest.mark.parametrize("with_other", [False, True])
def test_masked_load_never_touches_masked_lanes(with_other: bool) -> None:
    m = parse_module(masked_copy_text(with_other))
    x = np.arange(10, dtype=np.float32) + 1  # only 10 elements: lanes >= 10 must stay masked
    out = np.full(16, 99.0, dtype=np.float32)
    run_module(m, "k", 2, [x, out, 10])
    fill = -1.0 if with_other else 0.0
    np.testing.assert_array_equal(out, np.concatenate([x, np.full(6, fill, np.float32)]))


def test_out_of_bounds_load_names_location_argument_index_and_program() -> None:
    m = parse_module(masked_copy_text(False), filename="kern.mlir")
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(16, dtype=np.float32)
    with pytest.raises(OutOfBoundsError) as info:
        run_module(m, "k", 2, [x, out, 16])  # n too large: lanes 10..15 read past x
    msg = str(info.value)
    assert "kern.mlir:" in msg and info.value.loc.line > 0
    assert "argument 'arg0'" in msg or "argument 'x'" in msg
    assert "element index 10" in msg
    assert "program id (1, 0, 0)" in msg
    assert "tile index (2,)" in msg
    assert "load" in msg and "'k'" in msg


def test_out_of_bounds_store_and_negative_index() -> None:
    body = offsets_prelude(8) + f"""
    %off = tile.splat %delta : (i32) -> {T8}
    %o2 = arith.add %offs, %off : {T8}
    %op = tile.splat %out : (ptr<f32>) -> tile<8xptr<f32>>
    %oa = tile.addptr %op, %o2 : (tile<8xptr<f32>>, {T8}) -> tile<8xptr<f32>>
    %v = arith.constant {{value = 1.0}} : tile<8xf32>
    tile.store %oa, %v : tile<8xptr<f32>>, tile<8xf32>"""
    m = parse_module(module(body, "%out: ptr<f32>, %delta: i32"), filename="st.mlir")
    out = np.zeros(8, dtype=np.float32)
    run_module(m, "k", 1, [out, 0])
    assert (out == 1).all()
    with pytest.raises(OutOfBoundsError, match=r"element index -3 .*program id \(0, 0, 0\), tile index \(0,\)"):
        run_module(m, "k", 1, [out, -3])
    with pytest.raises(OutOfBoundsError, match=r"store.*element index 8"):
        run_module(m, "k", 1, [out, 1])


def scalar_kernel() -> str:
    body = """
    %v = tile.load %x : (ptr<i64>) -> i64
    %one = arith.constant {value = 1} : i64
    %w = arith.add %v, %one : i64
    tile.store %x, %w : ptr<i64>, i64
    %again = tile.load %x : (ptr<i64>) -> i64
    %two = arith.constant {value = 2} : i32
    %p2 = tile.addptr %x, %two : (ptr<i64>, i32) -> ptr<i64>
    tile.store %p2, %again : ptr<i64>, i64"""
    return module(body, "%x: ptr<i64>")


def test_scalar_load_store_and_own_stores_visible() -> None:
    x = np.array([41, 0, 0], dtype=np.int64)
    run_module(parse_module(scalar_kernel()), "k", 1, [x])
    assert x.tolist() == [42, 0, 42]


def test_i1_memory_is_one_byte_each() -> None:
    body = offsets_prelude(8) + f"""
    %xp = tile.splat %x : (ptr<i1>) -> tile<8xptr<i1>>
    %xa = tile.addptr %xp, %offs : (tile<8xptr<i1>>, {T8}) -> tile<8xptr<i1>>
    %v = tile.load %xa : (tile<8xptr<i1>>) -> tile<8xi1>
    %t = arith.constant {{value = true}} : tile<8xi1>
    %nv = arith.xor %v, %t : tile<8xi1>
    %op = tile.splat %out : (ptr<i1>) -> tile<8xptr<i1>>
    %oa = tile.addptr %op, %offs : (tile<8xptr<i1>>, {T8}) -> tile<8xptr<i1>>
    tile.store %oa, %nv : tile<8xptr<i1>>, tile<8xi1>"""
    x = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    out = np.zeros(8, dtype=bool)
    run_module(parse_module(module(body, "%x: ptr<i1>, %out: ptr<i1>")), "k", 1, [x, out])
    assert out.tolist() == (~x).tolist()


def test_bf16_memory_holds_bits() -> None:
    body = offsets_prelude(8) + f"""
    %xp = tile.splat %x : (ptr<bf16>) -> tile<8xptr<bf16>>
    %xa = tile.addptr %xp, %offs : (tile<8xptr<bf16>>, {T8}) -> tile<8xptr<bf16>>
    %v = tile.load %xa : (tile<8xptr<bf16>>) -> tile<8xbf16>
    %s = arith.add %v, %v : tile<8xbf16>
    tile.store %xa, %s : tile<8xptr<bf16>>, tile<8xbf16>"""
    vals = round_to_bf16(np.array([1.5, -3.25, 100.0, 0.0, 7.0, 1e-3, 2.0, -0.5], dtype=np.float32))
    mem = (vals.view(np.uint32) >> 16).astype(np.uint16)
    run_module(parse_module(module(body, "%x: ptr<bf16>")), "k", 1, [mem])
    back = (mem.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(back, round_to_bf16(vals * 2))


def strided_copy_text() -> str:
    body = offsets_prelude(8) + f"""
    %two = arith.constant {{value = 2}} : {T8}
    %o2 = arith.mul %offs, %two : {T8}
    %xp = tile.splat %x : (ptr<f32>) -> tile<8xptr<f32>>
    %xa = tile.addptr %xp, %offs : (tile<8xptr<f32>>, {T8}) -> tile<8xptr<f32>>
    %v = tile.load %xa : (tile<8xptr<f32>>) -> tile<8xf32>
    %op = tile.splat %out : (ptr<f32>) -> tile<8xptr<f32>>
    %oa = tile.addptr %op, %o2 : (tile<8xptr<f32>>, {T8}) -> tile<8xptr<f32>>
    tile.store %oa, %v : tile<8xptr<f32>>, tile<8xf32>"""
    return module(body, "%x: ptr<f32>, %out: ptr<f32>")


def test_views_non_contiguous_and_negative_strides() -> None:
    m = parse_module(strided_copy_text())
    base = np.arange(24, dtype=np.float32)
    rev = base[::-1]  # negative stride: element i of the kernel's pointer is rev[0] + i*4 bytes
    out_buf = np.zeros(32, dtype=np.float32)
    out_view = out_buf[::2]  # kernel writes every other float: exactly the view's extent
    with pytest.raises(OutOfBoundsError):
        run_module(m, "k", 1, [rev, out_view])  # rev[0] is the highest address: +i walks off the end
    x = base[4:12]
    run_module(m, "k", 1, [x, out_buf[1:]])
    np.testing.assert_array_equal(out_buf[1:17:2], x)


def test_overlapping_views_share_memory() -> None:
    m = parse_module(strided_copy_text())
    buf = np.arange(32, dtype=np.float32)
    run_module(m, "k", 1, [buf[:8].copy(), buf[8:]])  # out overlaps nothing else
    assert buf[8:24:2].tolist() == list(range(8))
    buf2 = np.arange(32, dtype=np.float32)
    run_module(m, "k", 1, [buf2[0:8], buf2[4:]])  # overlapping input/output views
    assert buf2[4] == 0.0


def test_read_only_array_store_is_an_error() -> None:
    m = parse_module(strided_copy_text())
    out = np.zeros(16, dtype=np.float32)
    out.flags.writeable = False
    with pytest.raises(KernelRuntimeError, match="read-only"):
        run_module(m, "k", 1, [np.zeros(8, np.float32), out])


def test_misaligned_pointer_from_integer_cast() -> None:
    body = """
    %i = arith.cast %x : (ptr<i32>) -> i64
    %one = arith.constant {value = 1} : i64
    %j = arith.add %i, %one : i64
    %p = arith.cast %j : (i64) -> ptr<i32>
    %v = tile.load %p : (ptr<i32>) -> i32
    tile.store %x, %v : ptr<i32>, i32"""
    m = parse_module(module(body, "%x: ptr<i32>"))
    with pytest.raises(KernelRuntimeError, match="misaligned"):
        run_module(m, "k", 1, [np.zeros(4, np.int32)])


def test_pointer_integer_roundtrip_and_2d_tiles() -> None:
    body = """
    %r = tile.arange {end = 4, start = 0} : tile<4xi32>
    %c = tile.arange {end = 3, start = 0} : tile<3xi32>
    %r2 = tile.expand_dims %r {axis = 1} : (tile<4xi32>) -> tile<4x1xi32>
    %c2 = tile.expand_dims %c {axis = 0} : (tile<3xi32>) -> tile<1x3xi32>
    %rb = tile.broadcast %r2 : (tile<4x1xi32>) -> tile<4x3xi32>
    %cb = tile.broadcast %c2 : (tile<1x3xi32>) -> tile<4x3xi32>
    %st = tile.splat %stride : (i32) -> tile<4x3xi32>
    %ro = arith.mul %rb, %st : tile<4x3xi32>
    %off = arith.add %ro, %cb : tile<4x3xi32>
    %i = arith.cast %x : (ptr<f64>) -> u64
    %p = arith.cast %i : (u64) -> ptr<f64>
    %xp = tile.splat %p : (ptr<f64>) -> tile<4x3xptr<f64>>
    %xa = tile.addptr %xp, %off : (tile<4x3xptr<f64>>, tile<4x3xi32>) -> tile<4x3xptr<f64>>
    %v = tile.load %xa : (tile<4x3xptr<f64>>) -> tile<4x3xf64>
    %t = tile.permute %v {order = (1, 0)} : (tile<4x3xf64>) -> tile<3x4xf64>
    %f = tile.reshape %t : (tile<3x4xf64>) -> tile<12xf64>
    %o = tile.arange {end = 12, start = 0} : tile<12xi32>
    %op = tile.splat %out : (ptr<f64>) -> tile<12xptr<f64>>
    %oa = tile.addptr %op, %o : (tile<12xptr<f64>>, tile<12xi32>) -> tile<12xptr<f64>>
    tile.store %oa, %f : tile<12xptr<f64>>, tile<12xf64>"""
    m = parse_module(module(body, "%x: ptr<f64>, %out: ptr<f64>, %stride: i32"))
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    out = np.zeros(12)
    run_module(m, "k", 1, [x, out, 5])
    np.testing.assert_array_equal(out, x[:, :3].T.reshape(-1))


def test_launch_argument_errors() -> None:
    from kdsl.errors import LaunchError

    m = parse_module(scalar_kernel())
    k = InterpreterBackend().compile(m, "k", LaunchOptions())
    with pytest.raises(LaunchError):
        k.launch((1, 1, 1), [])
    with pytest.raises(LaunchError):
        k.launch((1, 1, 1), [[1, 2, 3]])
