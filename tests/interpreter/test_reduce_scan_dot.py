"""tile.reduce / tile.scan (fast and generic paths, tuples, ties) and tile.dot."""

from __future__ import annotations

import numpy as np
import pytest

from .interp_kernels import NP_OF, compile_text, module


def idx2d(name: str, r: int, c: int) -> str:
    """%{name}: tile<r x c x i32> with value i*c + j."""
    return f"""
    %{name}_r = tile.arange {{end = {r}, start = 0}} : tile<{r}xi32>
    %{name}_c = tile.arange {{end = {c}, start = 0}} : tile<{c}xi32>
    %{name}_r2 = tile.expand_dims %{name}_r {{axis = 1}} : (tile<{r}xi32>) -> tile<{r}x1xi32>
    %{name}_c2 = tile.expand_dims %{name}_c {{axis = 0}} : (tile<{c}xi32>) -> tile<1x{c}xi32>
    %{name}_rb = tile.broadcast %{name}_r2 : (tile<{r}x1xi32>) -> tile<{r}x{c}xi32>
    %{name}_cb = tile.broadcast %{name}_c2 : (tile<1x{c}xi32>) -> tile<{r}x{c}xi32>
    %{name}_k = arith.constant {{value = {c}}} : tile<{r}x{c}xi32>
    %{name}_m = arith.mul %{name}_rb, %{name}_k : tile<{r}x{c}xi32>
    %{name} = arith.add %{name}_m, %{name}_cb : tile<{r}x{c}xi32>"""


def load(ptr: str, shape: tuple[int, ...], t: str, dst: str) -> str:
    """Load a row-major tile of ``shape`` (rank 1 or 2) from ``ptr`` into %dst."""
    s = "x".join(map(str, shape))
    if len(shape) == 1:
        idx = f"\n    %{dst}_i = tile.arange {{end = {shape[0]}, start = 0}} : tile<{s}xi32>"
    else:
        idx = idx2d(f"{dst}_i", *shape)
    tp = f"tile<{s}xptr<{t}>>"
    return idx + f"""
    %{dst}_p = tile.splat %{ptr} : (ptr<{t}>) -> {tp}
    %{dst}_a = tile.addptr %{dst}_p, %{dst}_i : ({tp}, tile<{s}xi32>) -> {tp}
    %{dst} = tile.load %{dst}_a : ({tp}) -> tile<{s}x{t}>"""


def store(ptr: str, shape: tuple[int, ...], t: str, src: str) -> str:
    if not shape:
        return f"\n    tile.store %{ptr}, %{src} : ptr<{t}>, {t}"
    s = "x".join(map(str, shape))
    if len(shape) == 1:
        idx = f"\n    %{src}_si = tile.arange {{end = {shape[0]}, start = 0}} : tile<{s}xi32>"
    else:
        idx = idx2d(f"{src}_si", *shape)
    tp = f"tile<{s}xptr<{t}>>"
    return idx + f"""
    %{src}_sp = tile.splat %{ptr} : (ptr<{t}>) -> {tp}
    %{src}_sa = tile.addptr %{src}_sp, %{src}_si : ({tp}, tile<{s}xi32>) -> {tp}
    tile.store %{src}_sa, %{src} : {tp}, tile<{s}x{t}>"""


def reduce_kernel(t: str, shape: tuple[int, ...], axis: int, combiner: str, scan: str | None = None) -> str:
    s = "x".join(map(str, shape))
    out_shape = shape if scan is not None else shape[:axis] + shape[axis + 1 :]
    os_ = "x".join(map(str, out_shape))
    rt = f"tile<{os_}x{t}>" if out_shape else t
    op = f'tile.scan %x {{axis = {axis}, reverse = {scan}}}' if scan is not None else f"tile.reduce %x {{axis = {axis}}}"
    body = load("inp", shape, t, "x") + f"""
    %r = {op} : (tile<{s}x{t}>) -> {rt} {{
    ^bb0(%a: {t}, %b: {t}):
      {combiner}
    }}""" + store("out", out_shape, t, "r")
    return module(body, f"%inp: ptr<{t}>, %out: ptr<{t}>")


def run_reduce(x: np.ndarray, t: str, axis: int, combiner: str, scan: str | None = None) -> np.ndarray:
    k = compile_text(reduce_kernel(t, x.shape, axis, combiner, scan))
    out_shape = x.shape if scan is not None else x.shape[:axis] + x.shape[axis + 1 :]
    out = np.zeros(out_shape or (1,), NP_OF[t])
    k.launch((1, 1, 1), [np.ascontiguousarray(x), out])
    return out if out_shape else out[0]


def simple(op: str, t: str, attrs: str = "") -> str:
    return f"%c = {op} %a, %b{attrs} : {t}\n      scf.yield %c : {t}"


def max_by_select(t: str) -> str:  # a generic-path combiner: keeps acc on ties
    return f"""%gt = arith.cmp %b, %a {{predicate = "gt"}} : ({t}, {t}) -> i1
      %c = arith.select %gt, %b, %a : (i1, {t}, {t}) -> {t}
      scf.yield %c : {t}"""


@pytest.mark.parametrize("t", ["i8", "i32", "u16", "i64"])
@pytest.mark.parametrize("axis", [0, 1])
def test_int_sum_wraps_in_element_type(t: str, axis: int) -> None:
    rng = np.random.default_rng(0)
    info = np.iinfo(NP_OF[t])
    x = rng.integers(info.min, info.max, size=(5, 12), dtype=NP_OF[t], endpoint=True)
    got = run_reduce(x, t, axis, simple("arith.add", t))
    want = x.sum(axis=axis, dtype=NP_OF[t])
    np.testing.assert_array_equal(got, want)
    got = run_reduce(x, t, axis, max_by_select(t))
    np.testing.assert_array_equal(got, x.max(axis=axis))


def tree_sum_f32(v: np.ndarray) -> np.float32:
    """Independent model of the documented order: adjacent pairs, odd tail carried."""
    items = [np.float32(a) for a in v]
    while len(items) > 1:
        nxt = [np.float32(items[i] + items[i + 1]) for i in range(0, len(items) - 1, 2)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


@pytest.mark.parametrize("n", [1, 7, 16, 33])
def test_float_sum_is_balanced_tree(n: int) -> None:
    x = (np.random.default_rng(n).standard_normal(n) * 1e4).astype(np.float32)
    got = run_reduce(x, "f32", 0, simple("arith.add", "f32"))
    assert got == tree_sum_f32(x)


def test_float_max_nan_modes_and_1d_to_scalar() -> None:
    x = np.array([1.0, np.nan, 3.0, 2.0], np.float32)
    assert run_reduce(x, "f32", 0, simple("arith.max", "f32")) == 3.0
    assert np.isnan(run_reduce(x, "f32", 0, simple("arith.max", "f32", " {propagate_nan = true}")))


ARGMAX = """
    %x = tile.load %xa : (tile<16xptr<f32>>) -> tile<16xf32>
    %i = tile.arange {end = 16, start = 0} : tile<16xi32>
    %v, %j = tile.reduce %x, %i {axis = 0} : (tile<16xf32>, tile<16xi32>) -> (f32, i32) {
    ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
      %gt = arith.cmp %v1, %v0 {predicate = "gt"} : (f32, f32) -> i1
      %vv = arith.select %gt, %v1, %v0 : (i1, f32, f32) -> f32
      %ii = arith.select %gt, %i1, %i0 : (i1, i32, i32) -> i32
      scf.yield %vv, %ii : f32, i32
    }
    tile.store %out, %j : ptr<i32>, i32"""


def test_tuple_argmax_ties_keep_lowest_index() -> None:
    pre = """
    %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
    %xp = tile.splat %xs : (ptr<f32>) -> tile<16xptr<f32>>
    %xa = tile.addptr %xp, %ar : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>"""
    k = compile_text(module(pre + ARGMAX, "%xs: ptr<f32>, %out: ptr<i32>"))
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.integers(0, 4, 16).astype(np.float32)  # many ties
        out = np.zeros(1, np.int32)
        k.launch((1, 1, 1), [x, out])
        assert out[0] == int(np.argmax(x))


@pytest.mark.parametrize("reverse", ["false", "true"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scans(reverse: str, axis: int) -> None:
    rng = np.random.default_rng(2)
    x = rng.integers(-100, 100, size=(4, 9)).astype(np.int32)
    flip = (lambda a: np.flip(a, axis)) if reverse == "true" else (lambda a: a)
    got = run_reduce(x, "i32", axis, simple("arith.add", "i32"), scan=reverse)
    np.testing.assert_array_equal(got, flip(np.cumsum(flip(x), axis=axis, dtype=np.int32)))
    got = run_reduce(x, "i32", axis, max_by_select("i32"), scan=reverse)  # generic path
    np.testing.assert_array_equal(got, flip(np.maximum.accumulate(flip(x), axis=axis)))
    xf = x.astype(np.float32) / 7
    got = run_reduce(xf, "f32", axis, simple("arith.add", "f32"), scan=reverse)
    np.testing.assert_allclose(got, flip(np.cumsum(flip(xf), axis=axis)), rtol=1e-6)


def test_generic_combiner_using_outer_scalar() -> None:
    # combine(a, b) = a + b * w with w defined outside the region: not associative,
    # so this pins the tree order: ((x0 + x1 w) + (x2 + x3 w) w)
    body = load("inp", (4,), "f32", "x") + """
    %pid = tile.program_id {axis = 0} : i32
    %wpp = tile.addptr %wp, %pid : (ptr<f32>, i32) -> ptr<f32>
    %w = tile.load %wpp : (ptr<f32>) -> f32
    %r = tile.reduce %x {axis = 0} : (tile<4xf32>) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %bw = arith.mul %b, %w : f32
      %c = arith.add %a, %bw : f32
      scf.yield %c : f32
    }
    %op = tile.addptr %out, %pid : (ptr<f32>, i32) -> ptr<f32>""" + store("op", (), "f32", "r")
    k = compile_text(module(body, "%inp: ptr<f32>, %wp: ptr<f32>, %out: ptr<f32>"))
    x = np.array([1, 2, 3, 4], np.float32)
    out = np.zeros(3, np.float32)
    k.launch((3, 1, 1), [x, np.array([10, 2, 0], np.float32), out])
    assert out.tolist() == [(1 + 2 * w) + (3 + 4 * w) * w for w in (10, 2, 0)]


@pytest.mark.parametrize(
    ("tin", "tacc"), [("f32", "f32"), ("f16", "f32"), ("i8", "i32"), ("u8", "i32"), ("f64", "f64"), ("f16", "f16")]
)
@pytest.mark.parametrize("batched", [False, True])
def test_dot(tin: str, tacc: str, batched: bool) -> None:
    m, kk, n = 4, 8, 16
    rng = np.random.default_rng(3)
    if tin[0] == "f":
        a = rng.standard_normal((m, kk)).astype(NP_OF[tin])
        b = rng.standard_normal((kk, n)).astype(NP_OF[tin])
    else:
        a = rng.integers(0 if tin == "u8" else -128, 128, (m, kk)).astype(NP_OF[tin])
        b = rng.integers(0 if tin == "u8" else -128, 128, (kk, n)).astype(NP_OF[tin])
    ta, tb, tc = (f"tile<{m}x{kk}x{tin}>", f"tile<{kk}x{n}x{tin}>", f"tile<{m}x{n}x{tacc}>")
    if batched:
        body = load("pa", (m, kk), tin, "a") + load("pb", (kk, n), tin, "b") + f"""
    %a3 = tile.reshape %a : ({ta}) -> tile<1x{m}x{kk}x{tin}>
    %b3 = tile.reshape %b : ({tb}) -> tile<1x{kk}x{n}x{tin}>
    %acc = arith.constant {{value = 1}} : tile<1x{m}x{n}x{tacc}>
    %d3 = tile.dot %a3, %b3, %acc : (tile<1x{m}x{kk}x{tin}>, tile<1x{kk}x{n}x{tin}>, tile<1x{m}x{n}x{tacc}>) -> tile<1x{m}x{n}x{tacc}>
    %d = tile.reshape %d3 : (tile<1x{m}x{n}x{tacc}>) -> {tc}""" + store("out", (m, n), tacc, "d")
    else:
        body = load("pa", (m, kk), tin, "a") + load("pb", (kk, n), tin, "b") + f"""
    %acc = arith.constant {{value = 1}} : {tc}
    %d = tile.dot %a, %b, %acc : ({ta}, {tb}, {tc}) -> {tc}""" + store("out", (m, n), tacc, "d")
    k = compile_text(module(body, f"%pa: ptr<{tin}>, %pb: ptr<{tin}>, %out: ptr<{tacc}>"))
    out = np.zeros((m, n), NP_OF[tacc])
    k.launch((1, 1, 1), [a, b, out])
    if tin[0] == "i" or tin == "u8":
        want = a.astype(np.int64) @ b.astype(np.int64) + 1
        np.testing.assert_array_equal(out, want.astype(np.int32))
    else:
        want = a.astype(np.float64) @ b.astype(np.float64) + 1
        tol = 1e-2 if tacc == "f16" else 1e-5
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
