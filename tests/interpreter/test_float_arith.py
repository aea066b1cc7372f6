"""Float arith/math semantics: NaN rules, fmax vs NaN-propagating max, f16/bf16
rounding, fma exactness, transcendental accuracy."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .interp_kernels import binary, run_elementwise, unary

NAN = float("nan")
INF = float("inf")


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_nan_comparisons_ordered_except_ne(t: str, pred: str) -> None:
    dt = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[t]
    a = np.array([NAN, 1.0, NAN, 1.0, -0.0], dtype=dt)
    b = np.array([1.0, NAN, NAN, 1.0, 0.0], dtype=dt)
    body = f'%res = arith.cmp %a0, %a1 {{predicate = "{pred}"}} : ({{T}}, {{T}}) -> {{O}}'
    got = run_elementwise(body, [a, b], [t, t], "i1", n=5).tolist()
    nan_result = pred == "ne"
    want_eq = {"eq": True, "ne": False, "lt": False, "le": True, "gt": False, "ge": True}[pred]
    assert got == [nan_result, nan_result, nan_result, want_eq, want_eq]


def test_max_min_nan_handling() -> None:
    a = np.array([NAN, 1.0, NAN, 2.0], dtype=np.float32)
    b = np.array([1.0, NAN, NAN, 3.0], dtype=np.float32)
    fmax = binary("arith.max", "f32", a, b)
    np.testing.assert_array_equal(fmax, [1.0, 1.0, NAN, 3.0])
    fmin = binary("arith.min", "f32", a, b)
    np.testing.assert_array_equal(fmin, [1.0, 1.0, NAN, 2.0])
    pmax = binary("arith.max", "f32", a, b, "propagate_nan = true")
    np.testing.assert_array_equal(pmax, [NAN, NAN, NAN, 3.0])
    pmin = binary("arith.min", "f32", a, b, "propagate_nan = true")
    np.testing.assert_array_equal(pmin, [NAN, NAN, NAN, 2.0])


def test_float_rem_is_fmod() -> None:
    a = np.array([5.5, -5.5, 5.5, -5.5, 1.0, INF], dtype=np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 1.0], dtype=np.float32)
    got = binary("arith.rem", "f32", a, b)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got, np.fmod(a, b))
    assert np.signbit(got[1]) and np.signbit(got[3])


finite32 = st.floats(-(2.0**100), 2.0**100, width=32)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite32, finite32), min_size=1, max_size=16))
def test_f32_basic_ops_correctly_rounded(pairs: list[tuple[float, float]]) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.float32)
    b = np.array([p[1] for p in pairs], dtype=np.float32)
    with np.errstate(all="ignore"):
        for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
            np.testing.assert_array_equal(binary(f"arith.{op}", "f32", a, b), fn(a, b))
        np.testing.assert_array_equal(binary("math.div_rn", "f32", a, b), np.divide(a, b))


finite16 = st.floats(-6e4, 6e4, width=16)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite16, finite16), min_size=1, max_size=16))
def test_f16_ops_round_once_from_exact(pairs: list[tuple[float, float]]) -> None:
    a = np.array([p[0] for p in pairs], dtype=np.float16)
    b = np.array([p[1] for p in pairs], dtype=np.float16)
    for op, fn in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        got = binary(f"arith.{op}", "f16", a, b)
        with np.errstate(over="ignore"):
            want = fn(a.astype(np.float64), b.astype(np.float64)).astype(np.float16)  # exact in f64, one rounding
        np.testing.assert_array_equal(got, want)
    got = unary("math.sqrt", "f16", np.abs(a))
    np.testing.assert_array_equal(got, np.sqrt(np.abs(a).astype(np.float64)).astype(np.float16))


def _exact_fma(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _is_correctly_rounded_f32(got: np.float32, exact: Fraction) -> bool:
    if not math.isfinite(float(got)):
        return False
    err = abs(Fraction(float(got)) - exact)
    for nb in (np.nextafter(got, np.float32(-INF)), np.nextafter(got, np.float32(INF))):
        if not math.isfinite(float(nb)):
            continue
        nerr = abs(Fraction(float(nb)) - exact)
        if nerr < err or (nerr == err and int(np.float32(got).view(np.uint32)) & 1):
            return False
    return True


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(finite32, finite32, finite32), min_size=1, max_size=8))
def test_fma_f32_single_rounding(triples: list[tuple[float, float, float]]) -> None:
    a, b, c = (np.array([t[i] for t in triples], dtype=np.float32) for i in range(3))
    got = run_elementwise("%res = math.fma %a0, %a1, %a2 : {T}", [a, b, c], ["f32"] * 3, "f32")
    for x, y, z, g in zip(a, b, c, got):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if abs(exact) < Fraction(2) ** 120:
            assert _is_correctly_rounded_f32(g, exact), (x, y, z, g)


def test_fma_f32_hard_case() -> None:
    # a*b + c where a double-rounding via f64 would give the wrong f32
    a = np.array([1 + 2.0**-23], dtype=np.float32)
    b = np.array([1 + 2.0**-23], dtype=np.float32)
    c = np.array([-1.0], dtype=np.float32)
    got = run_elementwise("%res = math.fma %a0, %a1, %a2 : {T}", [a, b, c], ["f32"] * 3, "f32")
    assert got[0] == np.float32(2.0**-22 + 2.0**-46)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(*(st.floats(-1e100, 1e100),) * 3), min_size=1, max_size=6))
def test_fma_f64_exact(triples: list[tuple[float, float, float]]) -> None:
    a, b, c = (np.array([t[i] for t in triples], dtype=np.float64) for i in range(3))
    got = run_elementwise("%res = math.fma %a0, %a1, %a2 : {T}", [a, b, c], ["f64"] * 3, "f64")
    assert got.tolist() == [_exact_fma(*t) for t in zip(a.tolist(), b.tolist(), c.tolist())]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_transcendentals_close_to_math(t: str) -> None:
    dt = np.float32 if t == "f32" else np.float64
    x = np.array([0.1, 0.5, 1.0, 2.5, 10.0, 1e-3, 3.0, 0.75], dtype=dt)
    funcs = {
        "exp": math.exp, "exp2": lambda v: 2.0**v, "log": math.log, "log2": math.log2, "sqrt": math.sqrt,
        "rsqrt": lambda v: 1 / math.sqrt(v), "sin": math.sin, "cos": math.cos, "tanh": math.tanh,
        "erf": math.erf, "floor": math.floor, "ceil": math.ceil, "abs": abs, "sqrt_rn": math.sqrt,
    }  # fmt: skip
    for name, fn in funcs.items():
        got = unary(f"math.{name}", t, x)
        want = np.array([fn(float(v)) for v in x], dtype=np.float64).astype(dt)
        np.testing.assert_array_max_ulp(got, want, maxulp=2)


def test_erf_f32_range_and_special_values() -> None:
    x = np.linspace(-7, 7, 2001).astype(np.float32)
    x = np.concatenate([x, np.array([0.0, -0.0, INF, -INF, NAN, 1e-30, 5.9, 6.1], dtype=np.float32)])
    got = unary("math.erf", "f32", x)
    want = np.array([math.erf(float(v)) if not math.isnan(v) else NAN for v in x]).astype(np.float32)
    np.testing.assert_array_max_ulp(got, want, maxulp=1)


def test_pow_and_f16_math_in_f32() -> None:
    a = np.array([2.0, 0.5, 3.0, 10.0], dtype=np.float16)
    b = np.array([3.0, -1.0, 0.5, 2.0], dtype=np.float16)
    got = binary("math.pow", "f16", a, b)
    np.testing.assert_array_equal(got, np.power(a.astype(np.float64), b.astype(np.float64)).astype(np.float16))
    got = unary("math.exp", "f16", a)
    np.testing.assert_array_equal(got, np.exp(a.astype(np.float64)).astype(np.float16))


def test_float_neg_and_abs_flip_sign_bit() -> None:
    x = np.array([0.0, -0.0, NAN, -INF, 1.5], dtype=np.float32)
    assert np.signbit(unary("arith.neg", "f32", x)).tolist() == [True, False, not np.signbit(x[2]), False, True]
    assert not np.signbit(unary("math.abs", "f32", x)).any()
