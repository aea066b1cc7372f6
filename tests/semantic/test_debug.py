"""Debug ops: static_assert, static_print, device_print, device_assert.

Triton facts (triton-lang.org/main/python-api/generated/):
- triton.language.static_assert.html: checks a compile-time condition; failing
  is a compile error (kdsl: CompilationError pointing at the assert's line).
- triton.language.static_print.html: prints compile-time values while compiling.
- triton.language.device_print.html: prints runtime values from the device
  with a prefix string.
- triton.language.device_assert.html: fails the launch when the condition is
  False for some element (kdsl: DeviceAssertionError on the interpreter).
Output is captured at the file-descriptor level (capfd) so device printf
from native backends is seen too.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError, DeviceAssertionError

from ._util import line_of


@kdsl.kernel
def static_assert_kernel(out_ptr, BLOCK: kl.constexpr):
    kl.static_assert(BLOCK % 16 == 0, "BLOCK must be a multiple of 16")  # MARK: static-assert-line
    kl.store(out_ptr + kl.arange(0, BLOCK), kl.arange(0, BLOCK))


def test_static_assert_passes(backend: str) -> None:
    out = np.zeros(32, np.int32)
    static_assert_kernel[(1,)](out, BLOCK=32)
    np.testing.assert_array_equal(out, np.arange(32))


def test_static_assert_failure_points_at_line(backend: str) -> None:
    out = np.zeros(8, np.int32)
    with pytest.raises(CompilationError) as info:
        static_assert_kernel[(1,)](out, BLOCK=8)
    assert info.value.loc.line == line_of(__file__, "MARK: static-assert-line")
    assert "BLOCK must be a multiple of 16" in str(info.value)


@kdsl.kernel
def static_print_kernel(out_ptr, BLOCK: kl.constexpr):
    kl.static_print("static-print-marker", BLOCK)
    kl.store(out_ptr + kl.arange(0, BLOCK), kl.arange(0, BLOCK))


def test_static_print_at_compile_time(backend: str, capfd: pytest.CaptureFixture[str]) -> None:
    out = np.zeros(64, np.int32)
    static_print_kernel[(1,)](out, BLOCK=64)
    text = capfd.readouterr().out
    assert "static-print-marker" in text and "64" in text


@kdsl.kernel
def device_print_kernel(x_ptr):
    offs = kl.arange(0, 4)
    x = kl.load(x_ptr + offs)
    kl.device_print("dp-marker ", x)


def test_device_print(backend: str, capfd: pytest.CaptureFixture[str]) -> None:
    x = np.array([1234, 5678, -91011, 42], np.int32)
    device_print_kernel[(1,)](x)
    captured = capfd.readouterr()
    text = captured.out + captured.err
    assert "dp-marker" in text
    for v in x:
        assert str(v) in text


@kdsl.kernel
def device_assert_kernel(x_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n, other=1)
    kl.device_assert(x > 0, "x must be positive")


def test_device_assert(backend: str) -> None:
    good = np.array([1, 2, 3, 4], np.int32)
    device_assert_kernel[(1,)](good, 4, BLOCK=8)
    bad = np.array([1, 2, -3, 4], np.int32)
    with pytest.raises(DeviceAssertionError) as info:
        device_assert_kernel[(1,)](bad, 4, BLOCK=8)
    assert "x must be positive" in str(info.value)


_ = kdsl
