"""Control flow: runtime if/else, for over range with runtime (incl. negative and
int64) bounds, while loops, static_range unrolling, early return, constexpr if,
nested loops and calls to other kernels (default args, tuple returns).

Triton facts (triton-lang.org/main/python-api/):
- generated/triton.language.static_range.html: iterates at compile time, the
  loop variable is a constexpr.
- generated/triton.language.range.html: like Python's ``range`` (start, end,
  step; any sign of step) with extra optimisation hints (num_stages...).
- triton-semantics.html "Variable scoping": a variable used after an if/for
  must be assigned on every path (tests always do so).
- ``if`` on a constexpr is resolved at compile time: the untaken branch is not
  compiled (a failing ``static_assert`` in it must not fire).
- A ``@triton.jit`` function may call another one, which may have default
  arguments and return tuples.
All results are exact.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def if_else_kernel(x_ptr, out_ptr):
    pid = kl.program_id(0)
    x = kl.load(x_ptr + pid)
    if x > 0:
        y = x * 2
        tag = 1
    elif x == 0:
        y = x + 100
        tag = 2
    else:
        y = -x
        tag = 3
    kl.store(out_ptr + pid * 2, y)
    kl.store(out_ptr + pid * 2 + 1, tag)


def test_runtime_if_else_with_branch_assignments(backend: str) -> None:
    x = np.array([5, 0, -7, 1, -1, 0], np.int32)
    out = np.zeros(12, np.int32)
    if_else_kernel[(6,)](x, out)
    want = [(v * 2, 1) if v > 0 else (v + 100, 2) if v == 0 else (-v, 3) for v in x]
    np.testing.assert_array_equal(out.reshape(6, 2), np.array(want))


@kdsl.kernel
def range_sum_kernel(out_ptr, start, stop, step):
    acc = start * 0  # same type as the loop variable (i32 or i64)
    count = 0
    for i in range(start, stop, step):
        acc += i
        count += 1
    kl.store(out_ptr, acc)
    kl.store(out_ptr + 1, count)


@pytest.mark.parametrize(
    ("start", "stop", "step"),
    [(0, 10, 1), (10, 0, -1), (10, 0, -3), (-5, 5, 2), (5, 5, 1), (0, 10, -1), (3, -20, -7), (0, 1, 5)],
)
def test_for_range_runtime_bounds(backend: str, start: int, stop: int, step: int) -> None:
    out = np.zeros(2, np.int64)
    range_sum_kernel[(1,)](out, start, stop, step)
    r = range(start, stop, step)
    np.testing.assert_array_equal(out, [sum(r), len(r)])


def test_for_range_int64_bounds(backend: str) -> None:
    start = 2**33 + 3
    out = np.zeros(2, np.int64)
    range_sum_kernel[(1,)](out, start, start + 10, 3)
    r = range(start, start + 10, 3)
    np.testing.assert_array_equal(out, [sum(r), len(r)])
    range_sum_kernel[(1,)](out, -(2**40), -(2**40) - 9, -4)
    r = range(-(2**40), -(2**40) - 9, -4)
    np.testing.assert_array_equal(out, [sum(r), len(r)])


@kdsl.kernel
def kl_range_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    acc = kl.zeros([BLOCK], dtype=kl.float32)
    for off in kl.range(0, n, BLOCK, num_stages=2):
        offs = off + kl.arange(0, BLOCK)
        acc += kl.load(x_ptr + offs, mask=offs < n, other=0.0)
    kl.store(out_ptr + kl.arange(0, BLOCK), acc)


def test_kl_range_loop_carried_tile(backend: str) -> None:
    n = 100
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(16, np.float32)
    kl_range_kernel[(1,)](x, out, n, BLOCK=16)
    want = np.zeros(16 * 7, np.float32)
    want[:n] = x
    np.testing.assert_array_equal(out, want.reshape(7, 16).sum(axis=0))


@kdsl.kernel
def collatz_kernel(n_ptr, out_ptr):
    pid = kl.program_id(0)
    n = kl.load(n_ptr + pid)
    steps = 0
    while n != 1:
        if n % 2 == 0:  # noqa: SIM108 -- a runtime if statement is what is under test
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    kl.store(out_ptr + pid, steps)


def _collatz(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_while_loop(backend: str) -> None:
    ns = np.array([1, 2, 3, 6, 7, 27, 97, 871], np.int64)
    out = np.zeros(8, np.int32)
    collatz_kernel[(8,)](ns, out)
    np.testing.assert_array_equal(out, [_collatz(int(v)) for v in ns])


@kdsl.kernel
def static_range_kernel(x_ptr, out_ptr, N: kl.constexpr):
    acc = kl.load(x_ptr) * 0
    for i in kl.static_range(N):
        if i % 2 == 0:  # i is a constexpr: resolved at compile time
            acc += kl.load(x_ptr + i) * (i + 1)
        else:
            acc -= kl.load(x_ptr + i)
    for j in kl.static_range(1, 7, 3):
        acc += j * 1000
    kl.store(out_ptr, acc)


def test_static_range_unrolls_with_constexpr_index(backend: str) -> None:
    x = np.arange(1, 9, dtype=np.int32)
    out = np.zeros(1, np.int32)
    static_range_kernel[(1,)](x, out, N=6)
    want = sum(int(x[i]) * (i + 1) if i % 2 == 0 else -int(x[i]) for i in range(6)) + 1000 + 4000
    assert out[0] == want


@kdsl.kernel
def early_return_kernel(out_ptr, skip):
    pid = kl.program_id(0)
    if pid == skip:
        return
    kl.store(out_ptr + pid, pid * 10)


def test_early_return(backend: str) -> None:
    out = np.full(6, -1, np.int32)
    early_return_kernel[(6,)](out, 2)
    np.testing.assert_array_equal(out, [0, 10, -1, 30, 40, 50])


@kdsl.kernel
def constexpr_if_kernel(x_ptr, out_ptr, MODE: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    if MODE == "double":
        y = x * 2
    elif MODE == "square":
        y = x * x
    else:
        kl.static_assert(False, "this branch must never be compiled")
        y = x
    kl.store(out_ptr + offs, y)


@pytest.mark.parametrize(("mode", "fn"), [("double", lambda v: v * 2), ("square", lambda v: v * v)])
def test_constexpr_if_prunes_branches(backend: str, mode: str, fn) -> None:
    x = np.arange(8, dtype=np.int32) - 3
    out = np.zeros(8, np.int32)
    constexpr_if_kernel[(1,)](x, out, MODE=mode, BLOCK=8)
    np.testing.assert_array_equal(out, fn(x))


@kdsl.kernel
def nested_loops_kernel(out_ptr, m, n):
    total = 0
    for i in range(m):
        row = 0
        for j in range(i, n):
            if (i + j) % 3 == 0:
                row += i * j
        total += row
        kl.store(out_ptr + 1 + i, row)
    kl.store(out_ptr, total)


def test_nested_loops(backend: str) -> None:
    m, n = 5, 9
    out = np.zeros(m + 1, np.int32)
    nested_loops_kernel[(1,)](out, m, n)
    rows = [sum(i * j for j in range(i, n) if (i + j) % 3 == 0) for i in range(m)]
    np.testing.assert_array_equal(out, [sum(rows), *rows])


@kdsl.kernel
def helper_pair(a, b, scale=2):
    return a * scale + b, a - b


@kdsl.kernel
def helper_inner(x):
    return x + 1


@kdsl.kernel
def helper_outer(x, k: kl.constexpr = 3):
    return helper_inner(x) * k


@kdsl.kernel
def caller_kernel(x_ptr, y_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    s, d = helper_pair(x, y)
    s3, _ = helper_pair(x, y, scale=3)
    res = helper_pair(x, y, 5)
    kl.store(out_ptr + offs, s)
    kl.store(out_ptr + BLOCK + offs, d)
    kl.store(out_ptr + 2 * BLOCK + offs, s3)
    kl.store(out_ptr + 3 * BLOCK + offs, res[0])
    kl.store(out_ptr + 4 * BLOCK + offs, helper_outer(x))
    kl.store(out_ptr + 5 * BLOCK + offs, helper_outer(x, k=10))


def test_kernel_calls_kernel_with_defaults_and_tuples(backend: str) -> None:
    x = np.arange(8, dtype=np.float32)
    y = np.arange(8, dtype=np.float32) * 0.5
    out = np.zeros(48, np.float32)
    caller_kernel[(1,)](x, y, out, BLOCK=8)
    o = out.reshape(6, 8)
    np.testing.assert_array_equal(o[0], x * 2 + y)
    np.testing.assert_array_equal(o[1], x - y)
    np.testing.assert_array_equal(o[2], x * 3 + y)
    np.testing.assert_array_equal(o[3], x * 5 + y)
    np.testing.assert_array_equal(o[4], (x + 1) * 3)
    np.testing.assert_array_equal(o[5], (x + 1) * 10)


@kdsl.kernel
def loop_in_if_kernel(out_ptr, n, flag):
    acc = 0.0
    if flag:
        for _i in range(n):
            acc += 0.5
    else:
        acc = -1.0
    kl.store(out_ptr, acc)


def test_loop_inside_runtime_if(backend: str) -> None:
    out = np.zeros(1, np.float32)
    loop_in_if_kernel[(1,)](out, 7, 1)
    assert out[0] == 3.5
    loop_in_if_kernel[(1,)](out, 7, 0)
    assert out[0] == -1.0


@kdsl.kernel
def runtime_ifexp_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    total = kl.sum(x, axis=0)
    y = x * 2 if total > 0 else x - 1  # a runtime scalar condition in a conditional expression
    kl.store(out_ptr + offs, y)


def test_conditional_expression_on_runtime_scalar(backend: str) -> None:
    x = np.array([1, -2, 3, 4], np.int32)
    out = np.zeros(4, np.int32)
    runtime_ifexp_kernel[(1,)](x, out, BLOCK=4)
    np.testing.assert_array_equal(out, x * 2)
    runtime_ifexp_kernel[(1,)](-x * 3, out, BLOCK=4)
    np.testing.assert_array_equal(out, -x * 3 - 1)
