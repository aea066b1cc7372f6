"""Integer arith semantics (C, two's complement wraparound) against Python ints."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdsl.ir.types import ScalarType

from .interp_kernels import INT_TYPES, NP_OF, binary, run_elementwise, unary


def rng(t: str) -> tuple[int, int]:
    e = ScalarType(t)
    bits = e.bitwidth
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if e.is_signed else (0, (1 << bits) - 1)


def wrap(v: int, t: str) -> int:
    e = ScalarType(t)
    bits = e.bitwidth
    v &= (1 << bits) - 1
    if e.is_signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def ref(op: str, t: str, a: int, b: int) -> int:
    bits = ScalarType(t).bitwidth
    signed = ScalarType(t).is_signed
    amt = b & ((1 << bits) - 1)  # shift amounts read as unsigned
    if op == "add":
        return wrap(a + b, t)
    if op == "sub":
        return wrap(a - b, t)
    if op == "mul":
        return wrap(a * b, t)
    if op == "div":
        return 0 if b == 0 else wrap(tdiv(a, b), t)
    if op == "rem":
        return 0 if b == 0 else wrap(a - b * tdiv(a, b), t)
    if op == "and":
        return wrap(a & b, t)
    if op == "or":
        return wrap(a | b, t)
    if op == "xor":
        return wrap(a ^ b, t)
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    if op == "shl":
        return 0 if amt >= bits else wrap(a << amt, t)
    if op == "shr":
        if amt >= bits:
            return -1 if (signed and a < 0) else 0
        return a >> amt
    raise AssertionError(op)


OPS = ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "max", "min", "shl", "shr")


@st.composite
def int_pairs(draw: st.DrawFn, t: str) -> tuple[list[int], list[int]]:
    lo, hi = rng(t)
    bits = ScalarType(t).bitwidth
    special = st.sampled_from([lo, hi, 0, 1, wrap(-1, t), lo + 1, hi - 1, bits, bits - 1])
    val = st.one_of(st.integers(lo, hi), special)
    n = draw(st.integers(1, 20))
    return draw(st.lists(val, min_size=n, max_size=n)), draw(st.lists(val, min_size=n, max_size=n))


@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("op", OPS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_int_binary(op: str, t: str, data: st.DataObject) -> None:
    a, b = data.draw(int_pairs(t))
    dt = NP_OF[t]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the interpreter must not emit numpy warnings
        got = binary(f"arith.{op}", t, np.array(a, dtype=dt), np.array(b, dtype=dt))
    want = [ref(op, t, x, y) for x, y in zip(a, b)]
    assert [int(v) for v in got] == want, (op, t, a, b)


@pytest.mark.parametrize("t", ("i8", "i16", "i32", "i64"))
def test_int_min_div_minus_one_wraps(t: str) -> None:
    lo, _ = rng(t)
    dt = NP_OF[t]
    a = np.array([lo, lo, 7, -7, 7, -7], dtype=dt)
    b = np.array([-1, -1, -2, 2, 0, 0], dtype=dt)
    assert binary("arith.div", t, a, b).tolist() == [lo, lo, -3, -3, 0, 0]
    assert binary("arith.rem", t, a, b).tolist() == [0, 0, 1, -1, 0, 0]


@pytest.mark.parametrize("t", INT_TYPES)
def test_neg_and_abs_wrap(t: str) -> None:
    lo, hi = rng(t)
    vals = [lo, hi, 0, 1, hi // 2]
    a = np.array(vals, dtype=NP_OF[t])
    assert [int(v) for v in unary("arith.neg", t, a)] == [wrap(-v, t) for v in vals]
    want_abs = [wrap(abs(v), t) for v in vals]
    assert [int(v) for v in unary("math.abs", t, a)] == want_abs


def test_i1_arithmetic_is_modulo_two() -> None:
    a = np.array([0, 0, 1, 1], dtype=bool)
    b = np.array([0, 1, 0, 1], dtype=bool)
    assert binary("arith.add", "i1", a, b).tolist() == [False, True, True, False]
    assert binary("arith.mul", "i1", a, b).tolist() == [False, False, False, True]
    assert binary("arith.xor", "i1", a, b).tolist() == [False, True, True, False]
    assert binary("arith.or", "i1", a, b).tolist() == [False, True, True, True]
    assert binary("arith.div", "i1", a, b).tolist() == [False, False, False, True]
    assert binary("arith.max", "i1", a, b).tolist() == [False, True, True, True]


@pytest.mark.parametrize("t", ("i32", "u32", "i64", "u64"))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_umulhi(t: str, data: st.DataObject) -> None:
    a, b = data.draw(int_pairs(t))
    bits = ScalarType(t).bitwidth
    got = binary("math.umulhi", t, np.array(a, dtype=NP_OF[t]), np.array(b, dtype=NP_OF[t]))
    want = [wrap((x * y) >> bits, t) for x, y in zip(a, b)]
    assert [int(v) for v in got] == want


@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("pred", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_int_cmp_uses_signedness(t: str, pred: str) -> None:
    lo, hi = rng(t)
    a_vals = [lo, hi, 0, 5, lo, hi]
    b_vals = [hi, lo, 0, 5, lo, 0]
    dt = NP_OF[t]
    n = len(a_vals)
    body = f"%res = arith.cmp %a0, %a1 {{predicate = \"{pred}\"}} : ({{T}}, {{T}}) -> {{O}}"
    got = run_elementwise(body, [np.array(a_vals, dtype=dt), np.array(b_vals, dtype=dt)], [t, t], "i1", n=n)
    import operator

    fn = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}[pred]
    assert got.tolist() == [fn(x, y) for x, y in zip(a_vals, b_vals)]
