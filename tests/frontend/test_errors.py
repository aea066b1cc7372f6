"""Compile errors point at the user's file, line and column with the source line and a caret."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import kdsl
from kdsl.errors import CompilationError

from . import fe_bad_kernels as B

SRC = Path(B.__file__).read_text().splitlines()


def marker_line(tag: str) -> int:
    for i, line in enumerate(SRC, start=1):
        if re.search(rf"# ERR {tag}\b", line):
            return i
    raise AssertionError(f"no marker {tag}")


ptr = np.zeros(16, np.float32)

CASES = [
    ("unknown_name", (ptr,), {}, "name 'undefined_thing' is not defined"),
    ("non_constexpr_global", (ptr,), {}, "global NOT_CONST is not a constexpr"),
    ("shape_mismatch", (ptr,), {}, ""),
    ("arange_not_pow2", (ptr,), {}, "power of 2"),
    ("bad_axis", (ptr,), {}, "axis"),
    ("unsupported_with", (ptr,), {}, "'with' is not supported"),
    ("unsupported_lambda", (ptr,), {}, "'lambda' is not supported"),
    ("break_in_loop", (ptr, 10), {}, "'break' is not supported"),
    ("carried_type_change", (ptr, 10), {}, "Loop-carried variable acc has initial type i32 but is re-assigned to f32"),
    ("if_type_mismatch", (ptr, 10), {}, "Mismatched type for y between then block (i32) and else block (f32)"),
    ("wrong_dtypes", (ptr,), {}, ""),
    ("return_in_loop", (ptr, 10), {}, "'return' inside a loop"),
    ("python_exception", (ptr,), {"N": 3}, "ZeroDivisionError"),
    ("tile_condition", (ptr,), {}, "must be a scalar"),
    ("python_call_runtime", (ptr,), {}, "cannot call Python function 'plain_python' with runtime arguments"),
    ("plain_function_global", (ptr,), {}, "global plain_python is not a constexpr"),
    ("static_assert_fails", (ptr,), {"N": 2}, "static assertion failed: N too small"),
    ("kernel_returns_value", (ptr,), {}, "cannot return a value"),
    ("too_few_unpack", (ptr,), {}, "cannot unpack 2 values into 3 names"),
]


@pytest.mark.parametrize(("name", "args", "meta", "text"), CASES, ids=[c[0] for c in CASES])
def test_error_location_and_message(name: str, args: tuple, meta: dict, text: str) -> None:
    with pytest.raises(CompilationError) as info:
        kdsl.compile_to_ir(getattr(B, name), *args, **meta)
    err = info.value
    assert err.loc.file == B.__file__
    line = marker_line(name)
    assert err.loc.line == line, str(err)
    assert err.loc.col >= 1
    assert text in err.message
    rendered = str(err)
    source = SRC[line - 1]
    assert rendered.startswith(f"{B.__file__}:{line}:{err.loc.col}: error:")
    lines = rendered.splitlines()
    assert lines[1].strip() == source.strip()
    # The caret sits under the reported column of the source line.
    assert lines[2].index("^") - lines[1].index(source.strip()[0]) == err.loc.col - 1 - (len(source) - len(source.lstrip()))


def test_caret_column_points_at_expression() -> None:
    with pytest.raises(CompilationError) as info:
        kdsl.compile_to_ir(B.arange_not_pow2, ptr)
    line = SRC[info.value.loc.line - 1]
    assert line[info.value.loc.col - 1 :].startswith("kl.arange(0, 6)")


def test_constexpr_global_is_allowed() -> None:
    kdsl.compile_to_ir(B.constexpr_global_ok, np.zeros(4, np.int32))


def test_errors_are_launch_errors_at_launch_time_too() -> None:
    with pytest.raises(CompilationError):
        B.unknown_name[(1,)](ptr)
