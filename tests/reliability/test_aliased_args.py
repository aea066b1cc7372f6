"""Aliased numpy arguments: one array (or overlapping views) for several pointer parameters.

The interpreter is the reference: pointers are real addresses into the caller's
arrays, so stores through one parameter are seen through every alias, in tile
order. Device backends must give the same answer whatever they copy: bug 9 in
docs/RELIABILITY.md (Vulkan copied each parameter into its own buffer and
copied every "written" one back, so a stale copy of an unused alias overwrote
the result when the written-set analysis could not trace a store's pointer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kdsl

from . import aliasing_kernels as K

# A case: base array -> (kernel, grid, arguments built from views of the base, constexprs)
Case = Callable[[np.ndarray], tuple[Any, tuple[int, ...], list[Any], dict[str, Any]]]

N = 300


def _repeat_same(x: np.ndarray) -> Any:
    return K.repeat_inc_kernel, (kdsl.cdiv(N, 128),), [x, x, N], {"ITERS": 3, "BLOCK": 128}


def _carried_unused_alias(x: np.ndarray) -> Any:
    y = x[N:]  # dst and the unused parameter are the same array
    return K.carried_ptr_kernel, (1,), [x[:N], y, y, N, kdsl.cdiv(N, 64)], {"BLOCK": 64}


def _carried_all_same(x: np.ndarray) -> Any:
    return K.carried_ptr_kernel, (1,), [x, x, x, N, kdsl.cdiv(N, 64)], {"BLOCK": 64}


def _ragged_unused_alias(x: np.ndarray) -> Any:
    # the carried pointer tile lives in a private array: a written-set analysis that cannot
    # follow it marks every pointer parameter written (bug 9)
    y = x[N:2 * N]
    return K.ragged_ptr_kernel, (1,), [x[:N], y, y, N, 3], {"BLOCK": 32}


def _where_same(x: np.ndarray) -> Any:
    return K.where_ptr_kernel, (kdsl.cdiv(N, 64),), [x, x, x, N, 0], {"BLOCK": 64}


def _where_two_outputs_one_input_alias(x: np.ndarray) -> Any:
    a, b = x[:N], x[N:]
    return K.where_ptr_kernel, (kdsl.cdiv(N, 64),), [a, b, b, N, 1], {"BLOCK": 64}


def _shift_up(x: np.ndarray) -> Any:
    # dst = a[1:], src = a[:-1]: element i+1 gets old element i (one program: all loads first)
    a = x[:N]
    return K.shift_kernel, (1,), [a[:-1], a[1:], N - 1], {"BLOCK": 512}


def _shift_down(x: np.ndarray) -> Any:
    a = x[:N]
    return K.shift_kernel, (1,), [a[1:], a[:-1], N - 1], {"BLOCK": 512}


def _strided_views(x: np.ndarray) -> Any:
    # interleaved, non-overlapping elements but overlapping memory spans
    a = x[: 2 * N]
    return K.shift_kernel, (1,), [a[0::2], a[1::2], N], {"BLOCK": 512}


def _strided_span(x: np.ndarray) -> Any:
    # src = a[0:2N:2] holds N elements but its memory span reaches a[2N-2]: it overlaps dst = a[N:2N]
    # although src.nbytes alone would end at a[N]
    a = x[: 2 * N]
    return K.shift_kernel, (1,), [a[0::2], a[N:], N], {"BLOCK": 512}


CASES: dict[str, Case] = {
    "repeat-same": _repeat_same,
    "carried-unused-alias": _carried_unused_alias,
    "carried-all-same": _carried_all_same,
    "ragged-unused-alias": _ragged_unused_alias,
    "where-same": _where_same,
    "where-two-outputs": _where_two_outputs_one_input_alias,
    "shift-up": _shift_up,
    "shift-down": _shift_down,
    "strided-views": _strided_views,
    "strided-span": _strided_span,
}


def _base() -> np.ndarray:
    return np.random.default_rng(7).integers(-50, 50, 3 * N).astype(np.float32)


def _run(case: Case, backend: str) -> np.ndarray:
    base = _base()
    kernel, grid, args, meta = case(base)
    with kdsl.backend(backend):
        kernel[grid](*args, **meta)
        kdsl.synchronize()
    return base


@pytest.mark.parametrize("name", list(CASES))
def test_aliased_numpy_arguments_match_the_interpreter(backend: str, name: str) -> None:
    expected = _run(CASES[name], "interpreter")
    assert not np.array_equal(expected, _base())  # the case writes something
    np.testing.assert_array_equal(_run(CASES[name], backend), expected)


# --- the written-set analysis (kdsl/ir/analysis.py), shared by every runtime and the OpenCL renderer ---

_ARRAY_OF_POINTERS = """builtin.module {
  wi.func @k(%a: ptr<f32>, %b: ptr<f32>, %n: i64, %c: i1) attributes {num_threads = 1} {
    %0 = wi.alloc : memref<2xptr<f32>, private>
    %1 = arith.constant {value = 0} : i32
    %2 = arith.constant {value = 1.0} : f32
    %3 = scf.if %c : (i1) -> ptr<f32> {
      %4 = wi.addptr %b, %1 : (ptr<f32>, i32) -> ptr<f32>
      scf.yield %4 : ptr<f32>
    } {
      scf.yield %b : ptr<f32>
    }
    wi.store %3, %0, %1 : ptr<f32>, memref<2xptr<f32>, private>, i32
    %5 = LOADED
    wi.gstore %5, %2 : ptr<f32>, f32
    %6 = wi.gload %a : (ptr<f32>) -> f32
    wi.return
  }
}"""


def _written(text: str) -> frozenset[int]:
    from kdsl.ir.analysis import written_pointer_args
    from kdsl.ir.parser import parse_module

    return written_pointer_args(parse_module(text).body.ops[0])


def test_written_set_follows_pointers_through_private_arrays_and_regions() -> None:
    assert _written(_ARRAY_OF_POINTERS.replace(
        "LOADED", "wi.load %0, %1 : (memref<2xptr<f32>, private>, i32) -> ptr<f32>")) == {1}


def test_written_set_is_every_pointer_for_a_pointer_made_from_an_integer() -> None:
    assert _written(_ARRAY_OF_POINTERS.replace("LOADED", "arith.cast %n : (i64) -> ptr<f32>")) == {0, 1}


@pytest.mark.parametrize("kernel,args,meta,written", [
    (K.ragged_ptr_kernel, [np.zeros(8, np.float32)] * 3 + [8, 2], {"BLOCK": 32}, {1}),
    (K.carried_ptr_kernel, [np.zeros(8, np.float32)] * 3 + [8, 2], {"BLOCK": 64}, {1}),
    (K.where_ptr_kernel, [np.zeros(8, np.float32)] * 3 + [8, 0], {"BLOCK": 64}, {0, 1}),
])
def test_written_set_is_precise_at_both_ir_levels(kernel: Any, args: list[Any], meta: dict[str, Any],
                                                   written: set[int]) -> None:
    """Tile IR (the read-only check) and the lowered work-item IR (runtimes, ``const``) agree:
    ``ragged_ptr_kernel``'s carried pointer tile lives in a private array after lowering."""
    from kdsl.ir.analysis import written_pointer_args
    from kdsl.lowering import Layout, lower_to_wi

    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    func = next(op for op in module.walk() if op.NAME == "tile.func")
    assert written_pointer_args(func) == written
    for threads in (1, 64):
        wi_module = lower_to_wi(module, str(func.attributes["sym_name"]), Layout.from_options(threads, ()))
        assert written_pointer_args(wi_module.body.ops[0]) == written


def test_cpu_overlap_spans_follow_strides() -> None:
    """The cpu backend's overlap check sizes a view by the memory its strides reach, not by nbytes."""
    from kdsl.runtime.cpu.backend import _byte_span

    a = np.zeros((4, 8), np.float32)
    assert _byte_span(a) == (0, 128)
    assert _byte_span(a[:, ::2]) == (0, 3 * 32 + 3 * 8 + 4)  # nbytes is only 64
    assert _byte_span(a[::-1]) == (-3 * 32, 32)  # reaches below its first element
    assert _byte_span(a[:0]) == (0, 1)
