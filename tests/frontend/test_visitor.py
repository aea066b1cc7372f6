"""Python constructs the AST visitor supports, checked on IR text and by running them."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.ir.printer import print_op


def ir(kernel: kdsl.KernelFunction, *args: object, **meta: object) -> str:
    return print_op(kdsl.compile_to_ir(kernel, *args, **meta))


def run(kernel: kdsl.KernelFunction, *args: object, **meta: object) -> None:
    kernel[(1,)](*args, **meta)


@kdsl.kernel
def static_branches(out_ptr, BLOCK: kl.constexpr, FLAG: kl.constexpr):
    if BLOCK > 64 and FLAG:
        v = 1.0
    elif False and undefined_name:  # noqa: F821, SIM223 - short-circuit: never evaluated
        v = 2.0
    else:
        v = 3.0
    kl.store(out_ptr, v)


def test_constexpr_if_generates_only_the_taken_branch() -> None:
    out = np.zeros(1, np.float32)
    text = ir(static_branches, out, BLOCK=128, FLAG=True)
    assert "scf.if" not in text
    run(static_branches, out, BLOCK=128, FLAG=True)
    assert out[0] == 1.0
    run(static_branches, out, BLOCK=16, FLAG=True)
    assert out[0] == 3.0


@kdsl.kernel
def expressions(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    B2: kl.constexpr = BLOCK * 2
    offs = kl.arange(0, B2)
    x = kl.load(x_ptr + offs)
    inside = (0.0 < x) & (x < 10.0)  # noqa: SIM300
    chained = 0.0 < x < 10.0
    kl.store(out_ptr + offs, kl.where(inside == chained, 1.0, 0.0))
    t = (x, offs)
    y = t[0] * 2.0
    y = y if n > 3 else y + 1.0
    big: kl.constexpr = min(BLOCK, 64) + max(1, 2) + abs(-3)
    kl.static_assert(big == min(BLOCK, 64) + 5, f"big={big}")
    z = max(y, x) - min(y, 1.0)
    kl.store(out_ptr + B2 + offs, z + abs(x - 100.0) + big)
    vals = tuple([i * 2 for i in kl.static_range(3)])
    kl.store(out_ptr + 2 * B2, vals[2] + len(vals))


def test_expressions_match_numpy() -> None:
    x = np.array([-1, 0.5, 3, 12, 7, 2, -4, 9], np.float32)
    out = np.zeros(17, np.float32)
    run(expressions, x, out, 5, BLOCK=4)
    np.testing.assert_array_equal(out[:8], 1.0)
    y = x * 2.0
    big = min(4, 64) + 5
    np.testing.assert_allclose(out[8:16], np.maximum(y, x) - np.minimum(y, 1.0) + np.abs(x - 100.0) + big)
    assert out[16] == 4 + 3
    run(expressions, x, out, 2, BLOCK=4)
    y = x * 2.0 + 1.0
    np.testing.assert_allclose(out[8:16], np.maximum(y, x) - np.minimum(y, 1.0) + np.abs(x - 100.0) + big)


@kdsl.kernel
def loops(out_ptr, lo, hi):
    total = 0
    for i in range(hi, lo, -2):  # negative step
        for j in range(3):
            total += i * j
    big = lo.to(kl.int64) * 0
    for k in range(lo.to(kl.int64), hi.to(kl.int64)):
        big += k
    acc = 0.0
    for v in (1.0, 2.0, 3.0):  # unrolled over a tuple
        acc = acc + v
    kl.store(out_ptr, total)
    kl.store(out_ptr + 1, big.to(kl.int32))
    kl.store(out_ptr + 2, acc.to(kl.int32))


def test_loops() -> None:
    out = np.zeros(3, np.int32)
    run(loops, out, 2, 9)
    assert out[0] == sum(i * j for i in range(9, 2, -2) for j in range(3))
    assert out[1] == sum(range(2, 9))
    assert out[2] == 6
    assert "scf.for" in ir(loops, out, 2, 9)


def test_loop_induction_variable_type_is_promoted() -> None:
    text = ir(loops, np.zeros(3, np.int32), 2, 9)
    assert "^bb0(%k: i64" in text


@kdsl.kernel
def combine(a, b):
    return a + b


@kdsl.kernel
def user_reduce(x_ptr, out_ptr, BLOCK: kl.constexpr):
    x = kl.load(x_ptr + kl.arange(0, BLOCK))
    kl.store(out_ptr, kl.reduce(x, 0, combine))


def test_reduce_with_user_combine_function() -> None:
    x = np.arange(8, dtype=np.int32)
    out = np.zeros(1, np.int32)
    run(user_reduce, x, out, BLOCK=8)
    assert out[0] == 28


@kdsl.kernel
def printing(x_ptr):
    x = kl.load(x_ptr)
    print("x is", x)
    assert x > 0, "x must be positive"


def test_print_maps_to_device_print_and_assert_to_device_assert() -> None:
    x = np.ones(1, np.float32)
    text = ir(printing, x)
    assert "tile.print" in text and "tile.assert" in text
    assert '"x must be positive"' in text


@kdsl.kernel
def one_branch_only(out_ptr, n):
    if n > 0:
        only_then = 1
    kl.store(out_ptr, only_then)


def test_variable_bound_in_one_branch_is_not_visible_after() -> None:
    with pytest.raises(CompilationError, match="only_then"):
        ir(one_branch_only, np.zeros(1, np.int32), 3)


@kdsl.kernel
def never_loops(out_ptr):
    i = 0
    while False:
        i += 1
    kl.store(out_ptr, i)


def test_while_false_generates_nothing() -> None:
    text = ir(never_loops, np.zeros(1, np.int32))
    assert "scf.while" not in text


SCALE = kl.constexpr(3)


def _make_closure_kernel() -> kdsl.KernelFunction:
    offset = 4

    @kdsl.kernel
    def closure_kernel(out_ptr):
        kl.store(out_ptr, offset * SCALE)

    return closure_kernel


def test_closure_and_constexpr_global() -> None:
    out = np.zeros(1, np.int32)
    run(_make_closure_kernel(), out)
    assert out[0] == 12


def test_names_and_locations_in_ir() -> None:
    import inspect

    lines, first = inspect.getsourcelines(expressions.fn)
    text = print_op(kdsl.compile_to_ir(expressions, np.zeros(8, np.float32), np.zeros(17, np.float32), 5, BLOCK=4),
                    locations=True)
    assert "%offs = tile.arange" in text
    arange_line = first + next(i for i, s in enumerate(lines) if "offs = kl.arange" in s)
    col = lines[arange_line - first].index("kl.arange") + 1
    assert f'tile.arange {{end = 8, start = 0}} : tile<8xi32> loc("{__file__}":{arange_line}:{col})' in text


@kdsl.kernel
def helper_with_early_return(x, LIMIT: kl.constexpr):
    if x > LIMIT:
        return LIMIT * 1.0, 1
    y = x * 2.0
    return y, 0


@kdsl.kernel
def uses_early_return_helper(x_ptr, out_ptr):
    v, flag = helper_with_early_return(kl.load(x_ptr), 10)
    kl.store(out_ptr, v + flag)


@pytest.mark.parametrize(("x", "expected"), [(3.0, 6.0), (20.0, 11.0)])
def test_helper_with_early_return_yields_values(x: float, expected: float) -> None:
    out = np.zeros(1, np.float32)
    run(uses_early_return_helper, np.array([x], np.float32), out)
    assert out[0] == expected


@kdsl.kernel
def nested_if(x_ptr, out_ptr, a, b):
    x = kl.load(x_ptr)
    r = 0.0
    if a > 0:
        if b > 0:  # noqa: SIM108 - statement form is what is tested
            r = x + 1.0
        else:
            r = x + 2.0
    elif b > 0:
        r = x + 3.0
    kl.store(out_ptr, r)


@pytest.mark.parametrize(("a", "b", "expected"), [(1, 1, 1.0), (1, 0, 2.0), (0, 1, 3.0), (0, 0, 0.0)])
def test_nested_runtime_ifs(a: int, b: int, expected: float) -> None:
    out = np.zeros(1, np.float32)
    run(nested_if, np.zeros(1, np.float32), out, a, b)
    assert out[0] == expected


@kdsl.kernel
def pick_max(v1, i1, v2, i2):
    take = v1 >= v2
    return kl.where(take, v1, v2), kl.where(take, i1, i2)


@kdsl.kernel
def tuple_reduce_and_scan(x_ptr, out_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    x = kl.load(x_ptr + offs)
    v, i = kl.reduce((x, offs), 0, pick_max)
    kl.store(out_ptr, v)
    kl.store(out_ptr + 1, i.to(kl.float32))
    kl.store(out_ptr + 2 + offs, kl.associative_scan(x, 0, combine))


def test_combine_functions_returning_tuples() -> None:
    x = np.array([3, 9, 2, 9, 1, 0, 4, 5], np.float32)
    out = np.zeros(10, np.float32)
    run(tuple_reduce_and_scan, x, out, N=8)
    assert out[0] == 9 and out[1] == 1
    np.testing.assert_array_equal(out[2:], np.cumsum(x))


@kdsl.kernel
def recursive(x, N: kl.constexpr):
    return recursive(x, N)


@kdsl.kernel
def calls_recursive(out_ptr):
    kl.store(out_ptr, recursive(kl.load(out_ptr), 3))


def test_recursion_is_a_compile_error() -> None:
    with pytest.raises(CompilationError, match="recursive call of kernel 'recursive'"):
        ir(calls_recursive, np.zeros(1, np.float32))


@kdsl.kernel
def apply(fn, x):
    return fn(x)


@kdsl.kernel
def passes_functions(x_ptr, out_ptr):
    x = kl.load(x_ptr)
    kl.store(out_ptr, apply(kl.exp, x))
    kl.store(out_ptr + 1, apply(kl.abs, x))


def test_functions_as_constexpr_arguments() -> None:
    x = np.array([-2.0], np.float32)
    out = np.zeros(2, np.float32)
    run(passes_functions, x, out)
    np.testing.assert_allclose(out, [np.exp(-2.0), 2.0], rtol=1e-6)
    text = ir(passes_functions, x, out)
    assert "@apply__f32__fn_exp" in text and "@apply__f32__fn_abs" in text


@kdsl.kernel
def bad_helper_call(out_ptr):
    kl.store(out_ptr, apply(1))


def test_bad_arguments_to_a_kernel_call() -> None:
    with pytest.raises(CompilationError, match="bad call to kernel 'apply'"):
        ir(bad_helper_call, np.zeros(1, np.float32))


@kdsl.kernel
def iterate_tuples(x_ptr, out_ptr):
    vals = (kl.load(x_ptr), kl.load(x_ptr + 1), kl.load(x_ptr + 2))
    weights = (1.0, 10.0, 100.0)
    acc = 0.0
    for i, (v, w) in enumerate(zip(vals, weights)):
        acc += v * w + i
    kl.store(out_ptr, acc)


def test_unrolled_iteration_over_tuples() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out = np.zeros(1, np.float32)
    run(iterate_tuples, x, out)
    assert out[0] == 1 + 20 + 300 + 3
    assert "scf.for" not in ir(iterate_tuples, x, out)
