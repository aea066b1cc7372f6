"""``kl.assume`` (a promise kdsl checks and accepts), ``kl.inline_asm_elementwise`` (GPU
assembly, which kdsl's targets cannot run: a compile error naming the line) and the ``kl``
functions Triton also makes tensor members."""

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


@kdsl.kernel
def members_kernel(x_ptr, y_ptr, out_ptr):
    offs = kl.arange(0, 16)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    i = offs.cast(kl.int32)
    kl.store(out_ptr + offs, x.sigmoid())
    kl.store(out_ptr + 16 + offs, x.softmax())
    kl.store(out_ptr + 32 + offs, x.fdiv(y))
    kl.store(out_ptr + 48 + offs, x.div_rn(y))
    kl.store(out_ptr + 64 + offs, x.fma(y, 1.0))
    kl.store(out_ptr + 80 + offs, i.cdiv(3).to(kl.float32))
    kl.store(out_ptr + 96 + offs, x.interleave(y).reshape(2, 16).sum(0) + x.join(y).sum(1))


def test_triton_member_functions(backend: str) -> None:
    # Triton makes these kl functions tensor members too (x.sigmoid(), x.cdiv(3), ...)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16).astype(np.float32)
    y = (rng.random(16) + 0.5).astype(np.float32)
    out = np.zeros(112, np.float32)
    members_kernel[(1,)](x, y, out)
    e = np.exp(x - x.max())
    want = [1 / (1 + np.exp(-x)), e / e.sum(), x / y, x / y, x * y + 1, -(-np.arange(16) // 3),
            np.stack([x, y], 1).reshape(2, 16).sum(0) + x + y]
    np.testing.assert_allclose(out.reshape(7, 16), np.array(want, np.float32), rtol=2e-6, atol=1e-6)


@kdsl.kernel
def atomic_members_kernel(x_ptr, out_ptr):
    offs = kl.arange(0, 16)
    p = out_ptr + offs
    p.atomic_add(kl.load(x_ptr + offs))
    p.atomic_max(5)
    old = p.atomic_xchg(offs)
    (out_ptr + 16 + offs).atomic_cas(0, old.to(kl.int32) + 100)


def test_atomic_member_functions(backend: str) -> None:
    x = np.arange(16, dtype=np.int32) * 2 - 8
    out = np.zeros(32, np.int32)
    atomic_members_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out[:16], np.arange(16))
    np.testing.assert_array_equal(out[16:], np.maximum(x, 5) + 100)
