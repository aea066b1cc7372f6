"""arith.cast / arith.bitcast semantics, bf16 rounding."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdsl.interpreter.values import round_to_bf16
from kdsl.ir.types import ScalarType

from .interp_kernels import INT_TYPES, NP_OF, run_elementwise
from .test_int_arith import rng, wrap


def cast(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return run_elementwise("%res = arith.cast %a0 : ({T}) -> {O}", [x], [src], dst)


def bitcast(x: np.ndarray, src: str, dst: str) -> np.ndarray:
    return run_elementwise("%res = arith.bitcast %a0 : ({T}) -> {O}", [x], [src], dst)


@pytest.mark.parametrize("src", INT_TYPES)
@pytest.mark.parametrize("dst", INT_TYPES)
def test_int_to_int_extends_by_source_signedness_and_truncates(src: str, dst: str) -> None:
    lo, hi = rng(src)
    vals = [lo, hi, 0, 1, wrap(-1, src), hi // 3]
    got = cast(np.array(vals, dtype=NP_OF[src]), src, dst)
    assert [int(v) for v in got] == [wrap(v, dst) for v in vals]


@pytest.mark.parametrize("t", [*INT_TYPES, "f16", "f32", "f64"])
def test_to_and_from_i1(t: str) -> None:
    x = np.array([0, 1, 2, 0], dtype=NP_OF[t])
    assert cast(x, t, "i1").tolist() == [False, True, True, False]
    b = np.array([True, False], dtype=bool)
    assert cast(b, "i1", t).tolist() == [1, 0]


def test_nan_to_i1_is_true() -> None:
    assert cast(np.array([np.nan, -0.0], dtype=np.float32), "f32", "i1").tolist() == [True, False]


@pytest.mark.parametrize("src", ["f16", "f32", "f64"])
@pytest.mark.parametrize("dst", INT_TYPES)
def test_float_to_int_truncates_and_saturates(src: str, dst: str) -> None:
    lo, hi = rng(dst)
    vals = [2.9, -2.9, 0.5, -0.5, 100.7, 1e30, -1e30, np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        x = np.array(vals, dtype=NP_OF[src])
    got = [int(v) for v in cast(x, src, dst)]
    want = []
    for v in x.astype(np.float64):
        if np.isnan(v):
            want.append(0)
        else:
            t = int(np.trunc(v)) if np.isfinite(v) else (hi if v > 0 else lo)
            want.append(min(max(t, lo), hi))
    assert got == want


@pytest.mark.parametrize("src", INT_TYPES)
@pytest.mark.parametrize("dst", ["f16", "f32", "f64"])
def test_int_to_float_rounds_to_nearest(src: str, dst: str) -> None:
    lo, hi = rng(src)
    vals = [lo, hi, 0, 7, 2049, 16777217]
    vals = [v for v in vals if lo <= v <= hi]
    got = cast(np.array(vals, dtype=NP_OF[src]), src, dst)
    with np.errstate(over="ignore"):
        want = np.array([float(v) for v in vals]).astype(NP_OF[dst]) if dst != "f32" else np.array(vals, dtype=NP_OF[src]).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=10))
def test_float_to_float(vals: list[float]) -> None:
    x = np.array(vals)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(cast(x, "f64", "f32"), x.astype(np.float32))
        np.testing.assert_array_equal(cast(x, "f64", "f16"), x.astype(np.float16))
        x32 = x.astype(np.float32)
    np.testing.assert_array_equal(cast(x32, "f32", "f64"), x32.astype(np.float64))


@pytest.mark.parametrize(("src", "dst"), [("f32", "i32"), ("i32", "f32"), ("f32", "u32"), ("f16", "i16"), ("u16", "f16"), ("f64", "i64"), ("i64", "u64"), ("u8", "i8")])
def test_bitcast_reinterprets_bits(src: str, dst: str) -> None:
    x = np.array([1.5, -2.0, 0.0, 3.0], dtype=NP_OF[src]) if src[0] == "f" else np.array([1, 200, 0, 77], dtype=NP_OF[src])
    np.testing.assert_array_equal(bitcast(x, src, dst), x.view(NP_OF[dst]))


def _bf16_ref(x: float) -> float:
    """Round-to-nearest-even to bf16 via exact integer arithmetic on the f64 value."""
    from fractions import Fraction

    if x == 0 or not np.isfinite(x):
        return x
    f = Fraction(x)
    e = int(np.floor(np.log2(abs(x))))
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 7)
    q = f / ulp
    n = int(q)
    r = q - n
    if abs(r) > Fraction(1, 2) or (abs(r) == Fraction(1, 2) and n % 2):
        n += 1 if q > 0 else -1
    return float(n * ulp)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e38, 1e38, allow_nan=False), min_size=1, max_size=10))
def test_bf16_round_to_nearest_even(vals: list[float]) -> None:
    x = np.array(vals, dtype=np.float64)
    got = round_to_bf16(x)
    assert got.astype(np.float64).tolist() == [_bf16_ref(v) for v in vals]
    x32 = x.astype(np.float32)
    got32 = round_to_bf16(x32)
    assert got32.astype(np.float64).tolist() == [_bf16_ref(float(v)) for v in x32]


def test_bf16_cast_arith_and_memory() -> None:
    x = np.array([1.0, 1.00390625, 3.14159, -2.5e-3], dtype=np.float32)
    bits = bitcast(round_to_bf16(x), "f32", "f32").view(np.uint32) >> 16
    # f32 -> bf16 (round to nearest even) -> bits
    body = "%b = arith.cast %a0 : ({T}) -> tile<8xbf16>\n    %res = arith.bitcast %b : (tile<8xbf16>) -> {O}"
    got16 = run_elementwise(body, [x], ["f32"], "u16")
    assert got16.tolist() == bits.astype(np.uint16).tolist()
    # bf16 arithmetic rounds each result to bf16
    y = np.array([1.0, 1.0, 256.0, 3.0], dtype=np.float32)
    body = "%b = arith.cast %a0 : ({T}) -> tile<8xbf16>\n    %c = arith.cast %a1 : ({T}) -> tile<8xbf16>\n    %s = arith.add %b, %c : tile<8xbf16>\n    %res = arith.cast %s : (tile<8xbf16>) -> {O}"
    got = run_elementwise(body, [x, y], ["f32", "f32"], "f32")
    want = round_to_bf16(round_to_bf16(x) + round_to_bf16(y))
    np.testing.assert_array_equal(got, want)


def test_scalar_type_table_is_complete() -> None:
    for t in NP_OF:
        assert ScalarType(t).np_dtype == NP_OF[t]
