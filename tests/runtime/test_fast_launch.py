"""The launch fast path: launchers per argument kind, correct specialisation, errors."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import LaunchError
from kdsl.runtime.cache import STATS
from kdsl.runtime.launcher import argkey, constkey, make_binder

from . import rt_kernels as K


def fresh(k: kdsl.KernelFunction) -> kdsl.KernelFunction:
    """A new KernelFunction (empty in-memory caches) for the same Python function."""
    return kdsl.kernel(k.fn)


def test_warm_launches_do_not_recompile() -> None:
    k = fresh(K.add)
    x = np.arange(64, dtype=np.float32)
    o = np.zeros(64, np.float32)
    with kdsl.backend("interpreter"):
        for _ in range(5):
            k[(1,)](x, x, o, 64, BLOCK=64)
    assert np.array_equal(o, 2 * x)
    assert STATS.frontend_compiles == 1 and len(k._launchers) == 1


def test_specialisation_facts_select_distinct_kernels() -> None:
    k = fresh(K.add)
    base = np.arange(80, dtype=np.float32)
    with kdsl.backend("interpreter"):
        for n in (1, 17, 32):
            o = np.zeros(80, np.float32)
            k[(1,)](base, base, o, n, BLOCK=64)
            assert np.array_equal(o[:n], 2 * base[:n]) and not o[n:].any()
        # a view off the 16-byte alignment
        o = np.zeros(80, np.float32)
        k[(1,)](base[1:], base[1:], o[1:], 40, BLOCK=64)
        assert np.array_equal(o[1:41], 2 * base[1:41])
    assert STATS.frontend_compiles == 4


def test_keyword_arguments_and_callable_grid() -> None:
    k = fresh(K.add)
    x = np.arange(100, dtype=np.float32)
    o = np.zeros(100, np.float32)
    with kdsl.backend("interpreter"):
        k[lambda meta: (kdsl.cdiv(meta["n"], meta["BLOCK"]),)](x_ptr=x, y_ptr=x, out_ptr=o, n=100, BLOCK=32)
        assert np.array_equal(o, 2 * x)
        o[:] = 0
        k[(4,)](x, x, out_ptr=o, n=100, BLOCK=32)
    assert np.array_equal(o, 2 * x)
    assert STATS.frontend_compiles == 1


def test_errors_still_come_from_the_checked_path() -> None:
    x = np.zeros(16, np.float32)
    with kdsl.backend("interpreter"):
        K.add[(1,)](x, x, x, 16, BLOCK=16)
        with pytest.raises(LaunchError, match="missing"):
            K.add[(1,)](x, x, x, BLOCK=16)
        with pytest.raises(LaunchError, match="unexpected keyword"):
            K.add[(1,)](x, x, x, 16, BLOCK=16, bogus=3)
        with pytest.raises(LaunchError, match="unsupported argument type"):
            K.add[(1,)](x, x, x, object(), BLOCK=16)


def test_zero_grid_does_nothing() -> None:
    x = np.ones(16, np.float32)
    o = np.zeros(16, np.float32)
    with kdsl.backend("interpreter"):
        K.add[(0,)](x, x, o, 16, BLOCK=16)
        K.add[(0,)](x, x, o, 16, BLOCK=16)
    assert not o.any()


def test_argkey_is_finer_than_the_specialisation() -> None:
    assert argkey(1) != argkey(2) and argkey(16) != argkey(17) and argkey(2**31) != argkey(2**31 + 1)
    assert argkey(True) != argkey(1) and argkey(1.0) != argkey(1)
    a = np.zeros(8, np.float32)
    assert argkey(a) != argkey(a[1:]) and argkey(a) != argkey(a.view(np.int32))
    assert argkey(np.int64(1)) != argkey(np.int64(2)) != argkey(np.int32(2))
    assert constkey(1) != constkey(True) and constkey(kl.constexpr(4)) == constkey(4)


def test_binder_mirrors_python_binding() -> None:
    import inspect

    def f(a, b, C=3, D=None):  # type: ignore[no-untyped-def]
        pass

    bind = make_binder(inspect.signature(f), {"C"})
    assert bind is not None
    values, keys, opts = bind(1, 2, D=5, num_threads=4)
    assert values == (1, 2, 3, 5) and opts == {"num_threads": 4} and keys[2] == (int, 3)
    with pytest.raises(TypeError):
        bind(1)

    def g(*args):  # type: ignore[no-untyped-def]
        pass

    assert make_binder(inspect.signature(g), set()) is None


def test_launch_options_are_part_of_the_key() -> None:
    k = fresh(K.add)
    x = np.ones(16, np.float32)
    with kdsl.backend("interpreter"):
        k[(1,)](x, x, x, 16, BLOCK=16)
        k[(1,)](x, x, x, 16, BLOCK=16, num_threads=4)
    assert STATS.frontend_compiles == 2
