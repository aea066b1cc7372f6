"""User-facing errors: CompilationError points at the user's source (file name,
line, the source line and a caret); LaunchError names the offending parameter.

Triton reports compile errors as ``CompilationError`` carrying the kernel's
source location; kdsl's contract (kdsl/errors.py) is ``file:line:col: error:
message`` followed by the source line and a caret, and ``LaunchError.param``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError, LaunchError

from ._util import line_of, source_line

FILE = Path(__file__).name


@kdsl.kernel
def undefined_name_kernel(x_ptr):
    offs = kl.arange(0, 16)
    kl.store(x_ptr + offs, offs_typo)  # noqa: F821  # MARK: undefined-name


@kdsl.kernel
def float_bitwise_kernel(x_ptr):
    offs = kl.arange(0, 16)
    x = kl.load(x_ptr + offs)
    y = x & 1  # MARK: float-bitwise
    kl.store(x_ptr + offs, y)


@kdsl.kernel
def shape_mismatch_kernel(x_ptr):
    a = kl.arange(0, 16)
    b = kl.arange(0, 32)
    kl.store(x_ptr + b, a + b)  # MARK: shape-mismatch


@kdsl.kernel
def tensor_bool_kernel(x_ptr):
    offs = kl.arange(0, 16)
    x = kl.load(x_ptr + offs)
    if x > 0:  # MARK: tensor-bool
        x = x + 1
    kl.store(x_ptr + offs, x)


@kdsl.kernel
def helper_with_error(x):
    return x & 1.5  # MARK: callee-error


@kdsl.kernel
def calls_bad_helper_kernel(x_ptr):
    offs = kl.arange(0, 16)
    kl.store(x_ptr + offs, helper_with_error(kl.load(x_ptr + offs)))


CASES = [
    (undefined_name_kernel, np.int32, "MARK: undefined-name"),
    (float_bitwise_kernel, np.float32, "MARK: float-bitwise"),
    (shape_mismatch_kernel, np.int32, "MARK: shape-mismatch"),
    (calls_bad_helper_kernel, np.int32, "MARK: callee-error"),
]


@pytest.mark.parametrize(("kernel", "dtype", "marker"), CASES, ids=[c[2].split(": ")[1] for c in CASES])
def test_compilation_error_points_at_source(backend: str, kernel, dtype: type, marker: str) -> None:
    x = np.zeros(32, dtype)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x)
    line = line_of(__file__, marker)
    err = info.value
    assert err.loc.line == line
    text = str(err)
    assert FILE in text
    assert f":{line}:" in text
    src = source_line(__file__, line)
    assert src.split("#")[0].strip() in text
    lines = text.splitlines()
    caret_lines = [ln for ln in lines if ln.strip() == "^"]
    assert caret_lines, text


@kdsl.kernel
def loop_type_change_kernel(out_ptr, n):
    acc = 0
    for _ in range(n):
        acc += 0.5  # int32 loop-carried value re-assigned to float32
    kl.store(out_ptr, acc)


@kdsl.kernel
def defined_only_in_loop_kernel(out_ptr, n):
    for _ in range(n):
        value = 1.0
    kl.store(out_ptr, value)


def test_loop_carried_type_change_is_compile_error(backend: str) -> None:
    # Triton: "Loop-carried variable acc has initial type int32 but is re-assigned to fp32".
    with pytest.raises(CompilationError):
        loop_type_change_kernel[(1,)](np.zeros(1, np.float32), 3)


def test_variable_defined_only_in_loop_is_compile_error(backend: str) -> None:
    # triton-semantics.html "Variable scoping": such a variable is not defined after the loop.
    with pytest.raises(CompilationError):
        defined_only_in_loop_kernel[(1,)](np.zeros(1, np.float32), 1)


def test_if_on_non_scalar_tensor_is_compile_error(backend: str) -> None:
    # Triton: "Boolean value of Tensor with more than one value is ambiguous".
    with pytest.raises(CompilationError):
        tensor_bool_kernel[(1,)](np.zeros(16, np.int32))


@kdsl.kernel
def three_arg_kernel(x_ptr, y_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(y_ptr + offs, kl.load(x_ptr + offs, mask=mask), mask=mask)


def test_launch_error_missing_argument(backend: str) -> None:
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError) as info:
        three_arg_kernel[(1,)](x, x, BLOCK=16)
    assert info.value.param == "n"
    assert "n" in str(info.value)


def test_launch_error_missing_constexpr(backend: str) -> None:
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError) as info:
        three_arg_kernel[(1,)](x, x, 16)
    assert info.value.param == "BLOCK"


def test_launch_error_unsupported_argument_type(backend: str) -> None:
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError) as info:
        three_arg_kernel[(1,)](x, np.zeros(16, np.complex64), 16, BLOCK=16)
    assert info.value.param == "y_ptr"
    assert "y_ptr" in str(info.value)


def test_launch_error_unknown_keyword(backend: str) -> None:
    x = np.zeros(16, np.float32)
    with pytest.raises(LaunchError) as info:
        three_arg_kernel[(1,)](x, x, 16, BLOCK=16, BLOCKK=3)
    assert info.value.param == "BLOCKK"


def test_launch_error_is_a_type_error(backend: str) -> None:
    with pytest.raises(TypeError):
        three_arg_kernel[(1,)](np.zeros(4, np.float32))


_ = kdsl
