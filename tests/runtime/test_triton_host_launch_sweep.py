"""Triton's host-side launch API, as a Triton user exercises it, on every backend.

Each test states the behaviour of ``triton.jit`` kernels read from Triton's runtime
(``python/triton/runtime/jit.py``) and its unit tests (``python/test/unit/runtime/test_cache.py``,
``test_jit.py``, ``test_launch.py``), with ``triton`` -> ``kdsl`` and ``tl`` -> ``kl``. Language
semantics inside kernels are swept elsewhere (tests/semantic/test_triton_*sweep*.py); here it is
what happens around a kernel: launch forms, grids, argument kinds, specialisation and the cache.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x, y, out, n, BLOCK: kl.constexpr = 64):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=mask) + kl.load(y + offs, mask=mask), mask=mask)


@kdsl.kernel
def inc_kernel(X, i, BLOCK: kl.constexpr):
    kl.store(X, i + 1)


@kdsl.kernel(do_not_specialize=["i"])
def inc_kernel_nospec(X, i, BLOCK: kl.constexpr):
    kl.store(X, i + 1)


@kdsl.kernel(do_not_specialize_on_alignment=["i"])
def inc_kernel_noalign(X, i, BLOCK: kl.constexpr):
    kl.store(X, i + 1)


@kdsl.kernel
def grid_kernel(out, W: kl.constexpr, H: kl.constexpr):
    i, j, k = kl.program_id(0), kl.program_id(1), kl.program_id(2)
    code = i + 10 * j + 100 * k + 1000 * kl.num_programs(0) + 10000 * kl.num_programs(1)
    kl.store(out + (k * H + j) * W + i, code + 100000 * kl.num_programs(2))


@kdsl.kernel
def optional_kernel(src, dst, N, BLOCK: kl.constexpr = 32):
    """Triton's idiom for an optional buffer: ``None`` when unused, tested with ``is not None``."""
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < N
    if src is not None:
        kl.store(src + offs, kl.full([BLOCK], 1, dtype=src.dtype.element_ty), mask=mask)
    else:
        kl.store(dst + offs, kl.full([BLOCK], 2, dtype=dst.dtype.element_ty), mask=mask)


@kdsl.kernel
def scalars_kernel(out, a, b, c, d, K: kl.constexpr):
    kl.store(out + 0, a.to(kl.float64))
    kl.store(out + 1, b.to(kl.float64))
    kl.store(out + 2, c.to(kl.float64))
    kl.store(out + 3, d.to(kl.float64))
    kl.store(out + 4, K + 0.0)


@kdsl.kernel
def assert_kernel(x):
    kl.device_assert(kl.load(x) == 1, "x == 1")
    kl.store(x, kl.load(x) + 0)


GLOBAL_DEFAULT = 1


@kdsl.kernel
def default_from_global(X, i: kl.constexpr = GLOBAL_DEFAULT):
    kl.store(X, i)


def variants(kernel: Any, backend: str) -> int:
    """Compiled variants of ``kernel`` for ``backend`` (Triton: ``len(kernel.device_caches[dev][0])``)."""
    return sum(1 for key in kernel.cache if key[0] == backend)


def test_launch_forms_give_the_same_result(backend: str) -> None:
    """``k[grid](...)`` with a tuple, a one-int list or a callable of META; ``k.run(..., grid=)``;
    keyword arguments in any order; a parameter default (``BLOCK = 64``) used when not passed."""
    n = 200
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, np.float32)
    seen: dict[str, Any] = {}

    def grid(meta: dict[str, Any]) -> tuple[int]:
        seen.update(meta)
        return (kdsl.cdiv(meta["n"], meta["BLOCK"]),)

    launches = [
        lambda o: add_kernel[(4,)](x, y, o, n),
        lambda o: add_kernel[[4]](x, y, o, n, 64),
        lambda o: add_kernel[grid](x, y, o, n),
        lambda o: add_kernel[grid](out=o, n=n, y=y, x=x, BLOCK=32),
        lambda o: add_kernel.run(x, y, o, n, grid=(7,), warmup=False, BLOCK=32),
    ]
    for launch in launches:
        out = np.zeros(n, np.float32)
        launch(out)
        np.testing.assert_array_equal(out, x + y)
    # Triton's grid callable gets the bound arguments, defaults and meta-parameters included
    assert sorted(seen) == ["BLOCK", "n", "out", "x", "y"]


@pytest.mark.parametrize("grid", [(4,), (4, 3), (4, 3, 2)])
def test_grid_of_one_to_three_dimensions(backend: str, grid: tuple[int, ...]) -> None:
    g0, g1, g2 = (*grid, 1, 1)[:3]
    out = np.full(g2 * g1 * g0, -1, np.int64)
    grid_kernel[grid](out, W=g0, H=g1)
    k, j, i = np.meshgrid(np.arange(g2), np.arange(g1), np.arange(g0), indexing="ij")
    want = i + 10 * j + 100 * k + 1000 * g0 + 10000 * g1 + 100000 * g2
    np.testing.assert_array_equal(out.reshape(g2, g1, g0), want)


@pytest.mark.parametrize(("kernel", "expected"), [(inc_kernel, 3), (inc_kernel_nospec, 1), (inc_kernel_noalign, 2)])
def test_integer_specialisation_changes_only_the_variant(backend: str, kernel: Any, expected: int) -> None:
    """Triton's test_cache.py::test_specialize: 1, 2, 4, 8, 16, 32 compile 3 variants (== 1,
    divisible by 16, neither); ``do_not_specialize`` 1; ``do_not_specialize_on_alignment`` 2.
    The result is the same whatever the variant."""
    x = np.zeros(1, np.int32)
    before = variants(kernel, backend)
    for i in (1, 2, 4, 8, 16, 32):
        kernel[(1,)](x, i, BLOCK=512)
        assert x[0] == i + 1
    assert variants(kernel, backend) - before == expected


def test_constexpr_and_dtype_changes_recompile_repeats_do_not(backend: str) -> None:
    n = 100
    add = kdsl.kernel(add_kernel.fn)  # a fresh cache
    before = variants(add, backend)
    for dtype, block, want_new in [(np.float32, 16, 1), (np.float32, 16, 0), (np.float32, 32, 1),
                                   (np.float64, 32, 1), (np.int32, 32, 1), (np.float64, 32, 0)]:
        x = np.arange(n).astype(dtype)
        out = np.zeros(n, dtype)
        count = variants(add, backend)
        add[(kdsl.cdiv(n, block),)](x, x, out, n, BLOCK=block)
        np.testing.assert_array_equal(out, 2 * x)
        assert variants(add, backend) - count == want_new, (dtype, block)
    assert variants(add, backend) - before == 4


def test_warmup_then_launch_compiles_once(backend: str) -> None:
    """Triton's test_jit_warmup_cache: ``warmup`` with dtypes for the pointers fills the cache, a
    launch with real arrays of those dtypes reuses it."""

    @kdsl.kernel
    def kernel_add(a, b, o, N: kl.constexpr):
        idx = kl.arange(0, N)
        kl.store(o + idx, kl.load(a + idx) + kl.load(b + idx))

    assert variants(kernel_add, backend) == 0
    kernel_add.warmup(kl.float32, np.float32, np.float32, 32, grid=(1,))  # Triton: torch.float32
    assert variants(kernel_add, backend) == 1
    a, b = np.random.rand(32).astype(np.float32), np.random.rand(32).astype(np.float32)
    o = np.zeros(32, np.float32)
    kernel_add.warmup(a, b, o, 32, grid=(1,))
    assert not o.any()  # warmup never runs the kernel
    kernel_add[(1,)](a, b, o, 32)
    assert variants(kernel_add, backend) == 1
    np.testing.assert_array_equal(o, a + b)


def test_debug_launch_option_is_its_own_variant(backend: str) -> None:
    """Triton's test_jit_debug: ``debug=False`` then ``debug=True`` are two compiled kernels. (kdsl
    compiles ``device_assert`` in both, docs/ENVIRONMENT.md; Triton only with debug.)"""
    x = np.array([1], np.int32)
    before = variants(assert_kernel, backend)
    assert_kernel[(1,)](x, debug=False)
    assert_kernel[(1,)](x, debug=True)
    assert_kernel[(1,)](x, debug=True)
    assert variants(assert_kernel, backend) - before == 2
    x[0] = 2
    with pytest.raises(AssertionError, match="x == 1"):
        assert_kernel[(1,)](x, debug=True)


def test_none_for_an_unused_pointer(backend: str) -> None:
    n = 50
    dst = np.zeros(n, np.float32)
    optional_kernel[lambda m: (kdsl.cdiv(n, m["BLOCK"]),)](None, dst, n)
    np.testing.assert_array_equal(dst, 2.0)
    src = np.zeros(n, np.int16)
    optional_kernel[(2,)](src, None, n)
    np.testing.assert_array_equal(src, 1)


@pytest.mark.parametrize(
    ("a", "b", "c", "d"),
    [
        (np.float32(1.5), np.int32(-7), np.bool_(True), np.uint8(250)),
        (True, 2**40, 2.5, -3),
        (np.float64(0.25), np.uint32(4_000_000_000), np.int16(-3), 2**63 + 5),
        (np.float32(-0.5), 16, 0.0, np.int64(17)),
    ],
)
def test_scalar_argument_kinds(backend: str, a: Any, b: Any, c: Any, d: Any) -> None:
    """Python bools/ints/floats and numpy scalars as runtime arguments, a ``kl.constexpr`` value for
    a constexpr parameter: each arrives with its value (ints past 2**63 as u64). (An int equal to 1
    is a compile-time constant without ``.to``, as in Triton: triton-lang/triton#2939.)"""
    out = np.zeros(5, np.float64)
    scalars_kernel[(1,)](out, a, b, c, d, K=kl.constexpr(7))
    assert out.tolist() == [float(np.float32(a)) if isinstance(a, float) else float(a), float(b),
                            float(np.float32(c)) if isinstance(c, float) else float(c), float(d), 7.0]


def test_kernel_object_attributes() -> None:
    """``fn`` is the Python function, ``src`` its source, ``__name__`` its name; calling the kernel
    like a function (outside another kernel) is an error."""
    assert add_kernel.fn.__name__ == "add_kernel" and add_kernel.__name__ == "add_kernel"
    assert add_kernel.src.lstrip().startswith("@kdsl.kernel") and "def add_kernel(" in add_kernel.src
    assert add_kernel.arg_names == ["x", "y", "out", "n", "BLOCK"]
    with pytest.raises(RuntimeError, match="kernel\\[grid\\]"):
        add_kernel(1, 2, 3, 4)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((1,), {}, "argument 'y': missing"),
        ((1, 2, 3), {}, "argument 'n': missing"),
        ((1, 2, 3, 4, 5, 6), {}, "takes 5 arguments but 6 were given"),
        ((1, 2, 3, 4), {"FOO": 1}, "argument 'FOO': unexpected keyword"),
        ((1, 2, 3, 4), {"n": 1}, "argument 'n': given both"),
    ],
)
def test_wrong_arguments_name_the_argument(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    """Too few / too many / unknown / duplicated arguments: a ``TypeError`` (as Python's binding in
    Triton's launcher raises) that names the kernel and the argument."""
    arrays = [np.zeros(4, np.float32) if isinstance(a, int) and a < 4 else a for a in args]
    with pytest.raises(TypeError, match=message) as info:
        add_kernel[(1,)](*arrays, **kwargs)
    assert "add_kernel" in str(info.value)


def test_default_argument_is_fixed_at_definition(backend: str) -> None:
    """Triton's test_kernel_default_arg: rebinding the global a default came from changes nothing."""
    global GLOBAL_DEFAULT
    x = np.zeros(1, np.int32)
    default_from_global[(1,)](x)
    assert x[0] == 1
    GLOBAL_DEFAULT = 2
    try:
        default_from_global[(1,)](x)
    finally:
        GLOBAL_DEFAULT = 1
    assert x[0] == 1


def test_pre_run_hook_can_refuse_a_launch() -> None:
    """Triton's test_jit.py::test_pre_call_hooks: a hook sees every launch's arguments first."""

    @kdsl.kernel
    def copy(src, dst, BLOCK: kl.constexpr):
        kl.store(dst + kl.arange(0, BLOCK), kl.load(src + kl.arange(0, BLOCK)))

    class Refused(np.ndarray):
        pass

    def hook(*args: Any, **kwargs: Any) -> None:
        if any(isinstance(a, Refused) for a in (*args, *kwargs.values())):
            raise ValueError("Refused arrays are not allowed")

    copy.add_pre_run_hook(hook)
    src = np.arange(4, dtype=np.float32)
    dst = np.zeros(4, np.float32)
    copy[(1,)](src, dst, 4)
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(ValueError, match="not allowed"):
        copy[(1,)](src.view(Refused), dst, 4)


@pytest.mark.parametrize("options", [{"num_warps": 1}, {"enable_fp_fusion": False}, {"num_stages": 2, "num_ctas": 1}])
def test_launch_options_compile_once_each(backend: str, options: dict[str, Any]) -> None:
    """Triton's test_launch.py::test_launch_with_options: a launch with an option compiles a new
    variant once, a second identical launch reuses it; the result does not depend on the option."""
    add = kdsl.kernel(add_kernel.fn)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    add[(1,)](x, x, out, 64)
    add[(1,)](x, x, out, 64, **options)
    assert variants(add, backend) == 2
    out[:] = 0
    add[(1,)](x, x, out, 64, **options)
    assert variants(add, backend) == 2
    np.testing.assert_array_equal(out, 2 * x)


def test_extern_libs_empty_is_accepted_a_library_is_refused(backend: str) -> None:
    """``extern_libs={}`` (no library, as in Triton's test_launch_with_options) changes nothing; a
    bitcode library to link is refused by name: kdsl links none."""
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    add_kernel[(1,)](x, x, out, 64, extern_libs={})
    np.testing.assert_array_equal(out, 2 * x)
    with pytest.raises(TypeError, match=r"extern_libs.*links no external libraries"):
        add_kernel[(1,)](x, x, out, 64, extern_libs={"libdevice": "/nonexistent/libdevice.10.bc"})


@kdsl.kernel
def shape_from_plain_param(X, B, F):
    kl.static_assert(B == 16, "B is a compile-time 16")
    offs = kl.arange(0, B)
    kl.store(X + offs, offs + F)


def test_constexpr_value_for_a_plain_parameter_is_compile_time(backend: str) -> None:
    """Triton's specialisation maps a ``kl.constexpr`` argument to a constant whatever the
    parameter's annotation (test_specialize.py: ``constexpr(1)``, ``constexpr(False)`` ->
    ``("constexpr", arg)``): it can size a tile; each value is its own variant."""
    x = np.zeros(16, np.int32)
    shape_from_plain_param[(1,)](x, kl.constexpr(16), kl.constexpr(3))
    np.testing.assert_array_equal(x, np.arange(16) + 3)
    shape_from_plain_param[(1,)](x, kl.constexpr(16), kl.constexpr(False))
    np.testing.assert_array_equal(x, np.arange(16))
    shape_from_plain_param[(1,)](x, kl.constexpr(16), 5)  # a plain int stays a runtime value
    np.testing.assert_array_equal(x, np.arange(16) + 5)
    assert variants(shape_from_plain_param, backend) == 3
