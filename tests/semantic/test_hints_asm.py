"""``kl.assume`` (a promise kdsl checks and accepts) and ``kl.inline_asm_elementwise`` (GPU
assembly, which kdsl's targets cannot run: a compile error naming the line)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ._util import line_of

FILE = Path(__file__).name


@kdsl.kernel
def assume_kernel(x_ptr, n, BLOCK: kl.constexpr):
    kl.assume(n > 0)
    kl.assume(n % 16 == 0)
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.assume(offs >= 0)
    kl.store(x_ptr + offs, offs * 2, mask=offs < n)


def test_assume_changes_nothing(backend: str) -> None:
    x = np.full(64, -1, np.int32)
    assume_kernel[(2,)](x, 48, BLOCK=32)
    want = np.where(np.arange(64) < 48, 2 * np.arange(64), -1)
    np.testing.assert_array_equal(x, want)


@kdsl.kernel
def assume_float_kernel(x_ptr):
    kl.assume(kl.load(x_ptr))  # MARK: assume-float


@kdsl.kernel
def inline_asm_kernel(x_ptr):
    x = kl.load(x_ptr + kl.arange(0, 16))
    y = kl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=kl.int32, is_pure=True, pack=1)  # MARK: asm
    kl.store(x_ptr + kl.arange(0, 16), y)


@pytest.mark.parametrize(
    ("kernel", "dtype", "marker", "words"),
    [
        (assume_float_kernel, np.float32, "assume-float", "kl.assume expects a boolean condition"),
        (inline_asm_kernel, np.int32, "asm", "inline assembly targets one GPU instruction set"),
    ],
)
def test_compile_errors_name_the_line(kernel: kdsl.KernelFunction, dtype: type, marker: str, words: str) -> None:
    with kdsl.backend("interpreter"), pytest.raises(CompilationError) as info:
        kernel[(1,)](np.zeros(16, dtype))
    text = str(info.value)
    assert words in text
    assert f"{FILE}:{line_of(__file__, 'MARK: ' + marker)}" in text
