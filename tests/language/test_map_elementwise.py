"""``kl.map_elementwise`` (Triton 3.5): a scalar ``@jit`` function mapped over tensors.

Each test runs on every backend and compares with a per-element Python/numpy reference:
data-dependent ``if``/``elif``/``else``, early returns, ``while`` and ``for`` loops whose
trip count depends on the element, tuple results, broadcasting, ``pack``, nested calls,
and effects (loads, stores, atomics) that must happen only for the elements whose
control flow reaches them. Compile errors name the user's line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ..semantic._util import line_of

FILE = Path(__file__).name
HYP = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# --- scalar functions ------------------------------------------------------------------------
@kdsl.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (kl.exp(x) - 1)


@kdsl.jit
def selu(x, alpha):
    return kl.map_elementwise(selu_scalar, x, alpha)


@kdsl.jit
def compare(x, y):
    if x < y:
        return -1
    elif x == y:
        return 0
    else:
        return 1


@kdsl.jit
def piecewise(x):
    # if/elif/else assigning (no return), nested branches, a conditional expression
    if x < -10:
        y = -x
    elif x < 0:
        y = x * 2
        if x == -5:
            y = x * 0 + 100  # (a literal would be an int32: the branches' types must agree, as in Triton)
    elif x == 0:
        y = x + 7
    else:
        y = x + 1 if x > 20 else x - 1
    return y


@kdsl.jit
def early(x):
    if x < 0:
        return -3 * x
    y = x + 1
    if y > 20:
        return y // 2
    z = y * y
    if z % 3 == 0:
        return z
    return z + 1000


@kdsl.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:  # noqa: SIM108 -- a per-element if statement is what is under test
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@kdsl.jit
def triangle(n):
    acc = 0
    for i in range(n):  # per-element trip count
        acc += i
    return acc


@kdsl.jit
def stepped(lo, hi, step):
    count = 0
    total = 0
    for i in range(lo, hi, step):  # per-element bounds and (signed) step
        count += 1
        total += i
    return count, total


@kdsl.jit
def divmod_signed(a, b):
    # Python's floor division and modulo from C's truncating ones; b == 0 gives (0, a)
    if b == 0:
        return 0, a
    q = a // b
    r = a % b
    if r != 0 and (r < 0) != (b < 0):
        q -= 1
        r += b
    return q, r


@kdsl.jit
def mix(a, b, c):
    if a > b:
        return a * c - b
    return b * c + a


@kdsl.jit
def divmod_pack2(a0, a1, b0, b1):
    return a0 // b0, a1 // b1, a0 % b0, a1 % b1


@kdsl.jit
def rotate_pack4(a0, a1, a2, a3):
    return a1, a2, a3, a0


@kdsl.jit
def newton_sqrt(x):
    # helper with its own per-element loop, called from a mapped function
    if x <= 0.0:
        return 0.0
    g = x
    err = 1.0
    while err > 1e-6:
        nxt = 0.5 * (g + x / g)
        err = kl.abs(nxt - g) / nxt
        g = nxt
    return g


@kdsl.jit
def hypot_or_neg(x, y):
    if x < 0.0:
        return -1.0
    return newton_sqrt(x * x + y * y)


@kdsl.jit
def guarded_div(a, d):
    if d != 0:
        return a // d + a % d
    return -1


@kdsl.jit
def gather_if_valid(i, base, n):
    # the load happens only for elements with a valid index: the others must not touch memory
    if i >= 0 and i < n:
        return kl.load(base + i) * 2
    return -1


@kdsl.jit
def count_and_mark(x, counter, marks, i):
    if x > 0:
        kl.atomic_add(counter, 1)
        kl.store(marks + i, x * 10)
        return x
    kl.device_assert(x <= 0, "only non-positive elements get here")
    return -x


@kdsl.jit
def pick(x, base):
    return kl.load(base + x) if x >= 0 else x


@kdsl.jit
def poly_uniform_loop(x):
    acc = 0.0
    for k in range(4):  # uniform trip count: an ordinary scf.for with a per-element carried value
        acc = acc * x + (k + 1)
    n = 0
    while n < 3:  # uniform condition
        n += 1
        acc += 0.5
    return acc


@kdsl.jit
def store_helper(p, v):
    kl.store(p, v)


@kdsl.jit
def bounded_triangle(n, marks, i):
    if n < 100:
        acc = 0
        for k in range(n):  # must not run for the (huge) n of the other elements
            acc += k
        store_helper(marks + i, acc)  # a nested call: its store is masked like the caller's code
    else:
        acc = -1
    return acc


@kdsl.jit
def by_program(x):
    if kl.program_id(0) == 1:  # a uniform condition: an ordinary scf.if, returning per-element values
        if x > 3:
            return x * 2
        return x - 100
    return x + 1


@kdsl.jit
def pair_sums(a0, a1, b0, b1):
    return a0 + a1, a0 - a1, b0 * 100 + a0, b1 * 100 + a1


# --- kernels -----------------------------------------------------------------------------------
@kdsl.kernel
def selu_kernel(x_ptr, out_ptr, out2_ptr, alpha, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, selu(x, alpha))
    kl.store(out2_ptr + offs, kl.map_elementwise(selu_scalar, x, 0.5))


@kdsl.kernel
def binary_kernel(x_ptr, y_ptr, out_ptr, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    kl.store(out_ptr + offs, kl.map_elementwise(FN, x, y))


@kdsl.kernel
def unary_kernel(x_ptr, out_ptr, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, kl.map_elementwise(FN, x))


@kdsl.kernel
def pair_kernel(a_ptr, b_ptr, q_ptr, r_ptr, FN: kl.constexpr, PACK: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    a = kl.load(a_ptr + offs)
    b = kl.load(b_ptr + offs)
    q, r = kl.map_elementwise(FN, a, b, pack=PACK)
    kl.store(q_ptr + offs, q)
    kl.store(r_ptr + offs, r)


@kdsl.kernel
def stepped_kernel(lo_ptr, hi_ptr, st_ptr, c_ptr, t_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    c, t = kl.map_elementwise(stepped, kl.load(lo_ptr + offs), kl.load(hi_ptr + offs), kl.load(st_ptr + offs))
    kl.store(c_ptr + offs, c)
    kl.store(t_ptr + offs, t)


@kdsl.kernel
def broadcast_kernel(a_ptr, b_ptr, out_ptr, c, M: kl.constexpr, N: kl.constexpr):
    rows = kl.arange(0, M)[:, None]
    cols = kl.arange(0, N)[None, :]
    a = kl.load(a_ptr + rows)  # [M, 1]
    b = kl.load(b_ptr + cols)  # [1, N]
    out = kl.map_elementwise(mix, a, b, c)  # c: a runtime scalar argument
    kl.store(out_ptr + rows * N + cols, out)


@kdsl.kernel
def rotate_kernel(x_ptr, out_ptr, M: kl.constexpr, N: kl.constexpr):
    offs = kl.arange(0, M)[:, None] * N + kl.arange(0, N)[None, :]
    x = kl.load(x_ptr + offs)
    (y,) = kl.map_elementwise(rotate_pack4, x, pack=4)
    kl.store(out_ptr + offs, y)


@kdsl.kernel
def hypot_kernel(x_ptr, y_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    out = kl.map_elementwise(hypot_or_neg, kl.load(x_ptr + offs), kl.load(y_ptr + offs))
    kl.store(out_ptr + offs, out)


@kdsl.kernel
def gather_kernel(idx_ptr, base_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    out = kl.map_elementwise(gather_if_valid, kl.load(idx_ptr + offs), base_ptr, n)
    kl.store(out_ptr + offs, out)


@kdsl.kernel
def effects_kernel(x_ptr, out_ptr, counter_ptr, marks_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    out = kl.map_elementwise(count_and_mark, kl.load(x_ptr + offs), counter_ptr, marks_ptr, offs)
    kl.store(out_ptr + offs, out)


@kdsl.kernel
def pick_kernel(x_ptr, base_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.map_elementwise(pick, kl.load(x_ptr + offs), base_ptr))


@kdsl.kernel
def bounded_kernel(n_ptr, out_ptr, marks_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.map_elementwise(bounded_triangle, kl.load(n_ptr + offs), marks_ptr, offs))


@kdsl.kernel
def scalar_kernel(x_ptr, out_ptr):
    x = kl.load(x_ptr + kl.program_id(0))  # one scalar: the mapped function runs on scalars as written
    kl.store(out_ptr + kl.program_id(0), kl.map_elementwise(collatz_steps, x))


@kdsl.kernel
def pack_broadcast_kernel(a_ptr, b_ptr, s_ptr, t_ptr, M: kl.constexpr, N: kl.constexpr):
    rows = kl.arange(0, M)[:, None]
    cols = kl.arange(0, N)[None, :]
    s, t = kl.map_elementwise(pair_sums, kl.load(a_ptr + rows), kl.load(b_ptr + cols), pack=2)
    kl.store(s_ptr + rows * N + cols, s)
    kl.store(t_ptr + rows * N + cols, t)


# --- references ----------------------------------------------------------------------------------
def _collatz(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def _piecewise(x: int) -> int:
    if x < -10:
        return -x
    if x < 0:
        return 100 if x == -5 else x * 2
    if x == 0:
        return 7
    return x + 1 if x > 20 else x - 1


def _early(x: int) -> int:
    if x < 0:
        return -3 * x
    y = x + 1
    if y > 20:
        return y // 2
    z = y * y
    return z if z % 3 == 0 else z + 1000


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# --- tests ----------------------------------------------------------------------------------------
def test_selu(backend: str) -> None:
    x = np.linspace(-4, 4, 128).astype(np.float32)
    out, out2 = np.zeros_like(x), np.zeros_like(x)
    selu_kernel[(1,)](x, out, out2, 1.6732, BLOCK=128)
    for got, alpha in ((out, 1.6732), (out2, 0.5)):
        want = np.where(x > 0, x, np.float32(alpha) * (np.exp(x) - 1))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_compare_if_elif_else(backend: str) -> None:
    rng = np.random.default_rng(17)
    x = rng.integers(-5, 5, 256).astype(np.int32)
    y = rng.integers(-5, 5, 256).astype(np.int32)
    out = np.full_like(x, 99)
    binary_kernel[(2,)](x, y, out, FN=compare, BLOCK=128)
    np.testing.assert_array_equal(out, (x > y).astype(np.int32) - (y > x).astype(np.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.float32, np.float64])
def test_piecewise_dtypes(backend: str, dtype: type) -> None:
    x = np.arange(-20, 44).astype(dtype)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=piecewise, BLOCK=64)
    np.testing.assert_array_equal(out, np.array([_piecewise(int(v)) for v in x]).astype(dtype))


def test_early_returns(backend: str) -> None:
    x = np.arange(-32, 96).astype(np.int32)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=early, BLOCK=128)
    np.testing.assert_array_equal(out, [_early(int(v)) for v in x])


def test_collatz_while_loop(backend: str) -> None:
    x = np.arange(1, 1025, dtype=np.int32)
    out = np.zeros_like(x)
    unary_kernel[(4,)](x, out, FN=collatz_steps, BLOCK=256)
    np.testing.assert_array_equal(out, [_collatz(int(v)) for v in x])


def test_for_loop_element_trip_count(backend: str) -> None:
    x = np.arange(-8, 56).astype(np.int32)
    out = np.full_like(x, -1)
    unary_kernel[(1,)](x, out, FN=triangle, BLOCK=64)
    np.testing.assert_array_equal(out, [sum(range(int(v))) for v in x])


def test_for_loop_element_bounds_and_step(backend: str) -> None:
    rng = np.random.default_rng(3)
    lo = rng.integers(-20, 20, 64).astype(np.int32)
    hi = rng.integers(-20, 20, 64).astype(np.int32)
    step = rng.choice([-3, -1, 1, 2, 5], 64).astype(np.int32)
    step[:4] = 0  # kdsl's definition: a zero step runs no iteration (Python would raise)
    count, total = np.zeros_like(lo), np.zeros_like(lo)
    stepped_kernel[(1,)](lo, hi, step, count, total, BLOCK=64)
    ranges = [range(a, b, s) if s else range(0) for a, b, s in zip(lo.tolist(), hi.tolist(), step.tolist())]
    np.testing.assert_array_equal(count, [len(r) for r in ranges])
    np.testing.assert_array_equal(total, [sum(r) for r in ranges])


def test_tuple_results(backend: str) -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(-50, 50, 128).astype(np.int32)
    b = rng.integers(-7, 7, 128).astype(np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    pair_kernel[(1,)](a, b, q, r, FN=divmod_signed, PACK=1, BLOCK=128)
    want = [divmod(int(x), int(y)) if y else (0, int(x)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(q, [w[0] for w in want])
    np.testing.assert_array_equal(r, [w[1] for w in want])


def test_pack2(backend: str) -> None:
    a = np.array([7, -7, 7, -7, 8, -8, 1, -1] * 4, dtype=np.int32)
    b = np.array([3, 3, -3, -3, 3, 3, 2, 2] * 4, dtype=np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    pair_kernel[(1,)](a, b, q, r, FN=divmod_pack2, PACK=2, BLOCK=32)
    want_q = np.array([_trunc_div(int(x), int(y)) for x, y in zip(a, b)])
    np.testing.assert_array_equal(q, want_q)
    np.testing.assert_array_equal(r, a - want_q * b)


def test_pack4_groups_consecutive_elements(backend: str) -> None:
    x = np.arange(64, dtype=np.float32).reshape(4, 16) * 1.5
    out = np.zeros_like(x)
    rotate_kernel[(1,)](x, out, M=4, N=16)
    groups = x.reshape(-1, 4)
    np.testing.assert_array_equal(out, np.roll(groups, -1, axis=1).reshape(4, 16))


def test_broadcast_and_scalar_args(backend: str) -> None:
    a = np.arange(8, dtype=np.float32) - 3.0
    b = (np.arange(16, dtype=np.float32) - 8.0) * 0.5
    out = np.zeros((8, 16), np.float32)
    broadcast_kernel[(1,)](a, b, out, 3, M=8, N=16)  # c=3: an int32 scalar, promoted with the floats
    A, B = a[:, None], b[None, :]
    np.testing.assert_array_equal(out, np.where(A > B, A * 3 - B, B * 3 + A))


def test_nested_jit_call_with_loop(backend: str) -> None:
    rng = np.random.default_rng(9)
    x = rng.uniform(-2, 30, 64).astype(np.float32)
    y = rng.uniform(-30, 30, 64).astype(np.float32)
    out = np.zeros_like(x)
    hypot_kernel[(1,)](x, y, out, BLOCK=64)
    want = np.where(x < 0, -1.0, np.hypot(x, y)).astype(np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_untaken_branch_division_by_zero(backend: str) -> None:
    a = np.arange(-32, 32, dtype=np.int32)
    d = np.tile(np.array([0, 3, -2, 0, 5, 1, 0, -7], np.int32), 8)
    out = np.zeros_like(a)
    binary_kernel[(1,)](a, d, out, FN=guarded_div, BLOCK=64)
    want = [_trunc_div(int(x), int(y)) + (int(x) - _trunc_div(int(x), int(y)) * int(y)) if y else -1
            for x, y in zip(a, d)]
    np.testing.assert_array_equal(out, want)


def test_loads_only_where_reached(backend: str) -> None:
    # indices far outside `base` must never be loaded (the interpreter checks every access)
    idx = np.array([0, 5, -1000000, 3, 1 << 28, 7, -1, 2] * 4, dtype=np.int32)
    base = np.arange(10, 18, dtype=np.int32)
    out = np.zeros_like(idx)
    gather_kernel[(1,)](idx, base, out, 8, BLOCK=32)
    np.testing.assert_array_equal(out, [base[i] * 2 if 0 <= i < 8 else -1 for i in idx])
    x = np.array([3, -1, 0, -5, 7, 1, -2, 6] * 2, dtype=np.int32)
    out2 = np.zeros_like(x)
    pick_kernel[(1,)](x, base, out2, BLOCK=16)
    np.testing.assert_array_equal(out2, [base[v] if v >= 0 else v for v in x])


def test_stores_and_atomics_only_where_reached(backend: str) -> None:
    x = np.array([3, -1, 0, 5, -7, 2, 0, 9] * 8, dtype=np.int32)
    out = np.zeros_like(x)
    counter = np.zeros(1, np.int32)
    marks = np.full_like(x, -1)
    effects_kernel[(1,)](x, out, counter, marks, BLOCK=64)
    np.testing.assert_array_equal(out, np.abs(x))
    assert counter[0] == int((x > 0).sum())
    np.testing.assert_array_equal(marks, np.where(x > 0, x * 10, -1))


def test_uniform_loops_inside(backend: str) -> None:
    x = np.linspace(-2, 2, 32).astype(np.float32)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=poly_uniform_loop, BLOCK=32)
    want = (((1 * x + 2) * x + 3) * x + 4) + 1.5  # Horner of 1, 2, 3, 4, then three += 0.5
    np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_loops_and_nested_effects_only_where_reached(backend: str) -> None:
    n = np.array([5, 1 << 30, 0, 99, 2000000000, -3, 17, 100] * 4, dtype=np.int32)
    out = np.zeros_like(n)
    marks = np.full_like(n, -7)
    bounded_kernel[(1,)](n, out, marks, BLOCK=32)
    want = np.array([sum(range(v)) if v < 100 else -1 for v in n.tolist()])
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(marks, np.where(n < 100, want, -7))


def test_uniform_condition_with_returns(backend: str) -> None:
    x = np.tile(np.arange(8, dtype=np.int32), 2)
    out = np.zeros_like(x)
    unary_kernel[(2,)](x, out, FN=by_program, BLOCK=8)
    first = x[:8] + 1
    second = np.where(x[8:] > 3, x[8:] * 2, x[8:] - 100)
    np.testing.assert_array_equal(out, np.concatenate([first, second]))


def test_scalar_arguments_only(backend: str) -> None:
    x = np.array([1, 7, 27, 97], dtype=np.int32)
    out = np.zeros_like(x)
    scalar_kernel[(4,)](x, out)
    np.testing.assert_array_equal(out, [_collatz(int(v)) for v in x])


def test_pack2_with_broadcast(backend: str) -> None:
    a = np.arange(4, dtype=np.int32) + 1
    b = np.arange(8, dtype=np.int32) * 3
    s_out, t_out = np.zeros((4, 8), np.int32), np.zeros((4, 8), np.int32)
    pack_broadcast_kernel[(1,)](a, b, s_out, t_out, M=4, N=8)
    A = np.broadcast_to(a[:, None], (4, 8)).reshape(-1, 2)  # pairs of row-major consecutive elements
    B = np.broadcast_to(b[None, :], (4, 8)).reshape(-1, 2)
    s_want = np.stack([A[:, 0] + A[:, 1], A[:, 0] - A[:, 1]], axis=1).reshape(4, 8)
    t_want = (B * 100 + A).reshape(4, 8)
    np.testing.assert_array_equal(s_out, s_want)
    np.testing.assert_array_equal(t_out, t_want)


@HYP
@given(data=st.data())
def test_collatz_property(backend: str, data: st.DataObject) -> None:
    xs = data.draw(st.lists(st.integers(1, 100000), min_size=64, max_size=64))
    x = np.array(xs, dtype=np.int64)
    out = np.zeros_like(x)
    unary_kernel[(1,)](x, out, FN=collatz_steps, BLOCK=64)
    np.testing.assert_array_equal(out, [_collatz(v) for v in xs])


# --- errors ----------------------------------------------------------------------------------------
def not_jit(x: object) -> object:  # a plain Python function
    return x


@kdsl.jit
def two_args(a, b):
    return a + b


@kdsl.jit
def mismatched_types(x):
    if x > 0:  # MARK: mismatched-types
        return 1.5
    return x


@kdsl.jit
def mismatched_count(x):
    if x > 0:  # MARK: mismatched-count
        return x, x
    return x


@kdsl.jit
def uses_sum(x):
    return kl.sum(x)  # MARK: uses-sum


@kdsl.jit
def uses_print(x):
    print("x", x)  # MARK: uses-print
    return x


@kdsl.jit
def uses_cas(x, p):
    kl.atomic_cas(p, x, x)  # MARK: uses-cas
    return x


@kdsl.jit
def makes_tile(x):
    return x + kl.zeros((4,), kl.int32)  # MARK: makes-tile


@kdsl.jit
def returns_nothing(x):
    x = x + 1


@kdsl.jit
def return_in_loop(x):
    while x > 0:
        if x == 3:
            return x  # MARK: return-in-loop
        x -= 1
    return x


@kdsl.kernel
def err_not_jit(x_ptr, FN: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(FN, x))  # MARK: not-jit


@kdsl.kernel
def err_arg_count(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(two_args, x, x, pack=2)[0])  # MARK: arg-count


@kdsl.kernel
def err_pack_divides(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(two_args, x, x, pack=16)[0])  # MARK: pack-divides


@kdsl.kernel
def err_pack_power(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(two_args, x, x, pack=3)[0])  # MARK: pack-power


@kdsl.kernel
def err_cas(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(uses_cas, x, x_ptr))


@kdsl.kernel
def err_in_fn(x_ptr, FN: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, 8))
    kl.store(x_ptr + kl.arange(0, 8), kl.map_elementwise(FN, x))  # MARK: in-fn


@pytest.mark.parametrize(
    ("kernel", "meta", "marker", "words"),
    [
        (err_not_jit, {"FN": not_jit}, "not-jit", "must be a @kdsl.jit function, got 'not_jit'"),
        (err_arg_count, {}, "arg-count", "'two_args' cannot take the 4 scalar arguments it is mapped with "
                                         "(2 input(s) x pack=2)"),
        (err_pack_divides, {}, "pack-divides", "pack=16 does not divide the 8 elements"),
        (err_pack_power, {}, "pack-power", "pack must be a positive power of two, got 3"),
        (err_in_fn, {"FN": mismatched_types}, "mismatched-types", "inconsistent return types: f32 and i32"),
        (err_in_fn, {"FN": mismatched_count}, "mismatched-count", "inconsistent return types"),
        (err_in_fn, {"FN": uses_sum}, "uses-sum", "kl.sum cannot be used inside a kl.map_elementwise function"),
        (err_in_fn, {"FN": uses_print}, "uses-print", "cannot be used inside a kl.map_elementwise function"),
        (err_cas, {}, "uses-cas", "kl.atomic_cas cannot be used inside a kl.map_elementwise function"),
        (err_in_fn, {"FN": makes_tile}, "makes-tile", "values are scalars, but this makes a tile of shape (4,)"),
        (err_in_fn, {"FN": returns_nothing}, "in-fn", "the mapped function must return one or more values"),
        (err_in_fn, {"FN": return_in_loop}, "return-in-loop", "'return' inside a loop is not supported"),
    ],
)
def test_compile_errors_name_the_line(kernel: kdsl.KernelFunction, meta: dict[str, object], marker: str,
                                      words: str) -> None:
    with kdsl.backend("interpreter"), pytest.raises(CompilationError) as info:
        kernel[(1,)](np.zeros(8, np.int32), **meta)
    text = str(info.value)
    assert words in text
    assert f"{FILE}:{line_of(__file__, 'MARK: ' + marker)}" in text
