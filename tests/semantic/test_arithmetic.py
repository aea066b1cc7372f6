"""Arithmetic: + - * / // % ** , bitwise ops and shifts, comparisons, unary ops,
integer wrap-around, and type errors.

Triton facts (triton-lang.org/main/python-api/triton-semantics.html):
- "C rounding in integer division": ``int // int`` truncates toward zero and
  ``a % b == a - b * (a // b)`` (C semantics), also for negative operands.
- Integer arithmetic is two's complement and wraps (no overflow checks
  without the debug sanitizer); the result type of same-typed operands is that
  type (``int8 + int8`` stays int8: no C "integer promotion" to int).
- ``int / int`` converts both to float32 (Triton's ``truediv``).
- Mixing signed and unsigned integers in ``/``, ``//`` or ``%`` is an error
  ("Cannot use /, #, or % with ... different signedness").
- Bitwise ops and shifts need integers; on floats they are errors.
- Float comparisons are IEEE: with a NaN operand every comparison is False
  except ``!=``. ``float % float`` is ``fmod`` (sign of the dividend).
- ``**`` on floats is C ``pow`` (kdsl's math.pow); tolerance rtol 2e-6.
Integer results are compared exactly against Python-int references wrapped to
the element type; float + - * / and fmod exactly against numpy.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ._util import INT_DTYPES, c_div, c_mod, extremes, int_bounds, wrap_array

N = 16
HYP = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@kdsl.kernel
def binop_kernel(x_ptr, y_ptr, out_ptr, n, OP: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask, other=1)
    y = kl.load(y_ptr + offs, mask=mask, other=1)
    if OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "mul":
        r = x * y
    elif OP == "floordiv":
        r = x // y
    elif OP == "mod":
        r = x % y
    elif OP == "truediv":
        r = x / y
    elif OP == "and":
        r = x & y
    elif OP == "or":
        r = x | y
    elif OP == "xor":
        r = x ^ y
    elif OP == "shl":
        r = x << y
    elif OP == "shr":
        r = x >> y
    elif OP == "pow":
        r = x ** y
    else:
        kl.static_assert(False, "unknown op")
    kl.store(out_ptr + offs, r, mask=mask)


def _run(op: str, x: np.ndarray, y: np.ndarray, out_dtype: type | None = None) -> np.ndarray:
    out = np.zeros(x.shape, dtype=out_dtype or x.dtype)
    binop_kernel[(1,)](x, y, out, x.size, OP=op, BLOCK=N)
    return out


def _int_reference(op: str, xs: list[int], ys: list[int], dtype: type) -> np.ndarray:
    fns = {
        "add": operator.add,
        "sub": operator.sub,
        "mul": operator.mul,
        "floordiv": c_div,
        "mod": c_mod,
        "and": operator.and_,
        "or": operator.or_,
        "xor": operator.xor,
        "shl": operator.lshift,
        "shr": operator.rshift,  # Python >> is arithmetic; unsigned values are >= 0
    }
    return wrap_array([fns[op](a, b) for a, b in zip(xs, ys)], dtype)


def _sanitize_divisors(op: str, xs: list[int], ys: list[int], dtype: type) -> list[int]:
    """Avoid the undefined cases: division by zero and INT_MIN / -1; shifts >= width."""
    lo, _ = int_bounds(dtype)
    bits = np.dtype(dtype).itemsize * 8
    if op in ("shl", "shr"):
        return [abs(b) % bits for b in ys]
    if op in ("floordiv", "mod"):
        return [1 if b == 0 or (a == lo and b == -1) else b for a, b in zip(xs, ys)]
    return ys


def _elem(dtype: type) -> st.SearchStrategy[int]:
    lo, hi = int_bounds(dtype)
    small = st.integers(max(lo, -9), min(hi, 9))
    return st.one_of(st.sampled_from(extremes(dtype)), st.integers(lo, hi), small)


INT_OPS = ("add", "sub", "mul", "floordiv", "mod", "and", "or", "xor", "shl", "shr")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", INT_OPS)
def test_int_ops_on_extremes(backend: str, op: str, dtype: type) -> None:
    ext = extremes(dtype)
    xs = [a for a in ext for _ in ext][: N * 4]
    ys = [b for _ in ext for b in ext][: N * 4]
    for start in range(0, len(xs), N):
        cx, cy = xs[start:start + N], ys[start:start + N]
        cy = _sanitize_divisors(op, cx, cy, dtype)
        got = _run(op, np.array(cx, dtype=dtype), np.array(cy, dtype=dtype))
        np.testing.assert_array_equal(got, _int_reference(op, cx, cy, dtype), err_msg=f"{op} {cx} {cy}")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", INT_OPS)
@HYP
@given(data=st.data())
def test_int_ops_property(backend: str, op: str, dtype: type, data: st.DataObject) -> None:
    xs = data.draw(st.lists(_elem(dtype), min_size=1, max_size=N))
    ys = data.draw(st.lists(_elem(dtype), min_size=len(xs), max_size=len(xs)))
    ys = _sanitize_divisors(op, xs, ys, dtype)
    got = _run(op, np.array(xs, dtype=dtype), np.array(ys, dtype=dtype))
    np.testing.assert_array_equal(got, _int_reference(op, xs, ys, dtype))


def test_c_style_division_negative_operands(backend: str) -> None:
    x = np.array([7, -7, 7, -7, 1, -1, 0, -9], dtype=np.int32)
    y = np.array([2, 2, -2, -2, 3, 3, 5, 4], dtype=np.int32)
    np.testing.assert_array_equal(_run("floordiv", x, y), np.array([3, -3, -3, 3, 0, 0, 0, -2], np.int32))
    np.testing.assert_array_equal(_run("mod", x, y), np.array([1, -1, 1, -1, 1, -1, 0, -1], np.int32))


def test_int_truediv_gives_float32(backend: str) -> None:
    x = np.array([7, -7, 1, 16777217, 2**31 - 1], dtype=np.int32)
    y = np.array([2, 2, 3, 1, 7], dtype=np.int32)
    got = _run("truediv", x, y, out_dtype=np.float32)
    np.testing.assert_array_equal(got, x.astype(np.float32) / y.astype(np.float32))


@kdsl.kernel
def truediv_dtype_kernel(x_ptr, y_ptr, out_ptr):
    offs = kl.arange(0, 4)
    q = kl.load(x_ptr + offs) / kl.load(y_ptr + offs)
    kl.static_assert(q.dtype == kl.float32, "int / int must be float32")
    kl.store(out_ptr + offs, q.to(kl.float64))


def test_int_truediv_result_dtype(backend: str) -> None:
    x = np.array([1, 2, 3, 4], dtype=np.int64)
    out = np.zeros(4, np.float64)
    truediv_dtype_kernel[(1,)](x, np.full(4, 3, np.int64), out)
    np.testing.assert_array_equal(out, (x.astype(np.float32) / np.float32(3)).astype(np.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "mod"])
def test_float_ops_exact(backend: str, op: str, dtype: type) -> None:
    if dtype == np.float16 and op in ("truediv", "mod"):
        pytest.skip("f16 / and % compute in float32 (see test_promotion)")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(N) * 100).astype(dtype)
    y = (rng.standard_normal(N) * 10).astype(dtype)
    x[:4] = np.array([5.5, -5.5, 5.5, -0.0], dtype=dtype)
    y[:4] = np.array([2.0, 2.0, -2.0, 3.0], dtype=dtype)
    ref = {"add": x + y, "sub": x - y, "mul": x * y, "truediv": x / y, "mod": np.fmod(x, y)}[op]
    np.testing.assert_array_equal(_run(op, x, y), ref.astype(dtype))


def test_float_pow(backend: str) -> None:
    x = np.array([2.0, 3.0, 0.5, 10.0, 1.5, 4.0, 9.0, 0.0], dtype=np.float32)
    y = np.array([3.0, 0.5, -2.0, 2.0, 1.5, 0.0, 0.5, 2.0], dtype=np.float32)
    got = _run("pow", x, y)
    np.testing.assert_allclose(got, np.power(x.astype(np.float64), y.astype(np.float64)), rtol=2e-6)


@pytest.mark.parametrize("op", ["truediv", "floordiv", "mod"])
def test_mixed_signedness_division_is_compile_error(backend: str, op: str) -> None:
    x = np.arange(1, 5, dtype=np.int32)
    y = np.arange(1, 5, dtype=np.uint32)
    with pytest.raises(CompilationError):
        _run(op, x, y)


def test_mixed_signedness_add_promotes_to_unsigned(backend: str) -> None:
    # triton-semantics.html rule 4: (int32, uint32) -> uint32
    x = np.array([-1, -2, 5], dtype=np.int32)
    y = np.array([0, 1, 1], dtype=np.uint32)
    got = _run("add", x, y, out_dtype=np.uint32)
    np.testing.assert_array_equal(got, np.array([0xFFFFFFFF, 0xFFFFFFFF, 6], np.uint32))


@pytest.mark.parametrize("op", ["and", "or", "xor", "shl", "shr"])
def test_bitwise_on_floats_is_compile_error(backend: str, op: str) -> None:
    x = np.ones(4, np.float32)
    with pytest.raises(CompilationError):
        _run(op, x, x)


@kdsl.kernel
def invert_float_kernel(x_ptr):
    offs = kl.arange(0, 4)
    kl.store(x_ptr + offs, ~kl.load(x_ptr + offs))


def test_invert_float_is_compile_error(backend: str) -> None:
    with pytest.raises(CompilationError):
        invert_float_kernel[(1,)](np.ones(4, np.float32))


@kdsl.kernel
def compare_kernel(x_ptr, y_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    kl.store(out_ptr + 0 * BLOCK + offs, x == y)
    kl.store(out_ptr + 1 * BLOCK + offs, x != y)
    kl.store(out_ptr + 2 * BLOCK + offs, x < y)
    kl.store(out_ptr + 3 * BLOCK + offs, x <= y)
    kl.store(out_ptr + 4 * BLOCK + offs, x > y)
    kl.store(out_ptr + 5 * BLOCK + offs, x >= y)


def _compare(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.zeros(6 * x.size, np.bool_)
    compare_kernel[(1,)](x, y, out, BLOCK=x.size)
    return out.reshape(6, x.size)


def test_comparisons_with_nan(backend: str) -> None:
    nan = np.nan
    x = np.array([nan, 1.0, nan, 1.0, -np.inf, 0.0, -0.0, 2.0], dtype=np.float32)
    y = np.array([1.0, nan, nan, 1.0, np.inf, -0.0, 0.0, 1.0], dtype=np.float32)
    got = _compare(x, y)
    want = np.stack([x == y, x != y, x < y, x <= y, x > y, x >= y])
    np.testing.assert_array_equal(got, want)
    assert not got[[0, 2, 3, 4, 5], :3].any() and got[1, :3].all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_integer_comparisons_respect_signedness(backend: str, dtype: type) -> None:
    lo, hi = int_bounds(dtype)
    vals = [lo, hi, 0, 1, lo + 1, hi - 1, 5, 5]
    x = np.array(vals, dtype=dtype)
    y = np.array(vals[::-1], dtype=dtype)
    np.testing.assert_array_equal(_compare(x, y), np.stack([x == y, x != y, x < y, x <= y, x > y, x >= y]))


@kdsl.kernel
def unary_kernel(x_ptr, neg_ptr, inv_ptr, not_ptr, pos_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(neg_ptr + offs, -x)
    kl.store(inv_ptr + offs, ~x)
    kl.store(not_ptr + offs, not (x > 0))
    kl.store(pos_ptr + offs, +x)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32], ids=lambda d: np.dtype(d).name)
def test_unary_ops_wrap(backend: str, dtype: type) -> None:
    ext = (extremes(dtype) * 2)[:8]
    x = np.array(ext, dtype=dtype)
    neg = np.zeros_like(x)
    inv = np.zeros_like(x)
    nt = np.zeros(8, np.bool_)
    pos = np.zeros_like(x)
    unary_kernel[(1,)](x, neg, inv, nt, pos, BLOCK=8)
    np.testing.assert_array_equal(neg, wrap_array([-v for v in ext], dtype))
    np.testing.assert_array_equal(inv, wrap_array([~v for v in ext], dtype))
    np.testing.assert_array_equal(nt, ~(x > 0))
    np.testing.assert_array_equal(pos, x)


@kdsl.kernel
def neg_float_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 4)
    kl.store(out_ptr + offs, -kl.load(x_ptr + offs))


def test_float_negation_flips_sign_bit(backend: str) -> None:
    x = np.array([0.0, -0.0, np.inf, 1.5], dtype=np.float32)
    out = np.zeros(4, np.float32)
    neg_float_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out.view(np.uint32), (-x).view(np.uint32))


@pytest.mark.parametrize(
    ("dtype", "a", "b", "op"),
    [
        (np.int8, 127, 1, "add"),
        (np.int8, -128, 1, "sub"),
        (np.int8, 64, 2, "mul"),
        (np.int32, 2**31 - 1, 1, "add"),
        (np.int32, 65536, 65536, "mul"),
        (np.uint32, 0, 1, "sub"),
        (np.uint32, 2**32 - 1, 2**32 - 1, "mul"),
        (np.int64, 2**63 - 1, 1, "add"),
        (np.int64, 2**62, 4, "mul"),
        (np.uint64, 0, 1, "sub"),
    ],
)
def test_integer_overflow_wraps(backend: str, dtype: type, a: int, b: int, op: str) -> None:
    x = np.array([a], dtype=dtype)
    y = np.array([b], dtype=dtype)
    np.testing.assert_array_equal(_run(op, x, y), _int_reference(op, [a], [b], dtype))


@kdsl.kernel
def scalar_constexpr_div_kernel(out_ptr, A: kl.constexpr, B: kl.constexpr):
    kl.store(out_ptr, A // B)
    kl.store(out_ptr + 1, A % B)


def test_constexpr_only_division_follows_python(backend: str) -> None:
    # triton-semantics.html: "integer division and modulus follow Python semantics
    # for computations where all the inputs are scalars".
    out = np.zeros(2, np.int32)
    scalar_constexpr_div_kernel[(1,)](out, A=-7, B=2)
    np.testing.assert_array_equal(out, [-4, 1])


@kdsl.kernel
def runtime_scalar_div_kernel(out_ptr, a, b):
    kl.store(out_ptr, a // b)
    kl.store(out_ptr + 1, a % b)


def test_runtime_scalar_division_is_c_style(backend: str) -> None:
    out = np.zeros(2, np.int32)
    runtime_scalar_div_kernel[(1,)](out, -7, 2)
    np.testing.assert_array_equal(out, [-3, -1])


_ = kdsl  # keep the import for readers: kernels above are kdsl kernels
