# ruff: noqa: B007, SIM108, F841, E731, F821
"""Kernels that must fail to compile; ``# ERR`` marks the line each error must point at."""

import kdsl
import kdsl.language as kl

NOT_CONST = 128
IS_CONST = kl.constexpr(4)


@kdsl.kernel
def unknown_name(x_ptr):
    kl.store(x_ptr, undefined_thing)  # ERR unknown_name


@kdsl.kernel
def non_constexpr_global(x_ptr):
    offs = kl.arange(0, NOT_CONST)  # ERR non_constexpr_global
    kl.store(x_ptr + offs, offs)


@kdsl.kernel
def constexpr_global_ok(x_ptr):
    offs = kl.arange(0, IS_CONST)
    kl.store(x_ptr + offs, offs)


@kdsl.kernel
def shape_mismatch(x_ptr):
    a = kl.arange(0, 4)
    b = kl.arange(0, 8)
    kl.store(x_ptr + a, a + b)  # ERR shape_mismatch


@kdsl.kernel
def arange_not_pow2(x_ptr):
    offs = kl.arange(0, 6)  # ERR arange_not_pow2
    kl.store(x_ptr + offs, offs)


@kdsl.kernel
def bad_axis(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 4))
    kl.store(x_ptr, kl.sum(x, axis=2))  # ERR bad_axis


@kdsl.kernel
def unsupported_with(x_ptr):
    with open("f"):  # ERR unsupported_with
        pass


@kdsl.kernel
def unsupported_lambda(x_ptr):
    f = lambda v: v  # ERR unsupported_lambda
    kl.store(x_ptr, f(1))


@kdsl.kernel
def break_in_loop(x_ptr, n):
    for i in range(n):
        if i > 3:
            break  # ERR break_in_loop


@kdsl.kernel
def carried_type_change(x_ptr, n):
    acc = 0
    for i in range(n):  # ERR carried_type_change
        acc = acc + 1.5
    kl.store(x_ptr, acc)


@kdsl.kernel
def if_type_mismatch(x_ptr, n):
    if n > 0:  # ERR if_type_mismatch
        y = 1
    else:
        y = 2.0
    kl.store(x_ptr, y)


@kdsl.kernel
def wrong_dtypes(x_ptr):
    x = kl.load(x_ptr)
    kl.store(x_ptr, x & 1.5)  # ERR wrong_dtypes


@kdsl.kernel
def return_in_loop(x_ptr, n):
    for i in range(n):
        if i > 2:
            return  # ERR return_in_loop


@kdsl.kernel
def python_exception(x_ptr, N: kl.constexpr):
    kl.store(x_ptr, N // 0)  # ERR python_exception


@kdsl.kernel
def tile_condition(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 4))
    if x > 0:  # ERR tile_condition
        kl.store(x_ptr, 1.0)


def plain_python(v):
    return v + 1


def _make_python_call_runtime():  # closure cells may hold any Python object
    fn = plain_python

    @kdsl.kernel
    def python_call_runtime(x_ptr):
        kl.store(x_ptr, fn(kl.load(x_ptr)))  # ERR python_call_runtime

    return python_call_runtime


python_call_runtime = _make_python_call_runtime()


@kdsl.kernel
def plain_function_global(x_ptr):
    kl.store(x_ptr, plain_python(1))  # ERR plain_function_global


@kdsl.kernel
def static_assert_fails(x_ptr, N: kl.constexpr):
    assert N > 4, "N too small"  # ERR static_assert_fails


@kdsl.kernel
def kernel_returns_value(x_ptr):
    return kl.load(x_ptr)  # ERR kernel_returns_value


@kdsl.kernel
def too_few_unpack(x_ptr):
    a, b, c = (1, 2)  # ERR too_few_unpack
