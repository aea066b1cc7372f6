"""Launch validation audit: every bad launch is a clear kdsl error, before anything runs.

"Before anything runs" is checked with a *recording* backend (registered for
the test only): it compiles nothing and counts launches, so a check that
happens too late (inside the kernel) is visible as a launch, and a huge grid
cannot hang the suite. Errors must be :class:`kdsl.LaunchError` naming the
parameter (``exc.param``) unless noted.

Legal and documented (docs/RELIABILITY.md): a new dtype is a new
specialisation; a non-contiguous view passes the address of its first element
and the kernel must apply the strides itself (as in Triton); a read-only array
the kernel only reads is fine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime import backends as registry
from kdsl.runtime.backend import LaunchOptions


@kdsl.kernel
def copy_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m), mask=m)


@kdsl.kernel
def strided_kernel(x_ptr, out_ptr, n, stride, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs * stride, kl.load(x_ptr + offs, mask=m), mask=m)


@kdsl.kernel
def write_two(a_ptr, b_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(a_ptr + offs, offs.to(kl.float32) + 1)
    kl.store(b_ptr + offs, offs.to(kl.float32) + 1)


class _Recorded:
    def __init__(self, log: list[tuple[int, int, int]]) -> None:
        self.log = log

    def launch(self, grid: tuple[int, int, int], args: Any) -> None:
        self.log.append(grid)


class RecordingBackend:
    """A backend that compiles nothing and records launches (grids)."""

    name = "recording"

    def __init__(self) -> None:
        self.launches: list[tuple[int, int, int]] = []

    def availability(self) -> tuple[bool, str]:
        return True, ""

    def compile(self, module: Any, entry: str, options: LaunchOptions) -> _Recorded:
        return _Recorded(self.launches)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingBackend]:
    rec = RecordingBackend()
    monkeypatch.setitem(registry._FACTORIES, "recording", lambda: rec)
    monkeypatch.setitem(registry._INSTANCES, "recording", rec)
    monkeypatch.setitem(registry._AVAILABILITY, "recording", (True, ""))
    monkeypatch.setenv("KDSL_ALWAYS_COMPILE", "1")
    registry._DEFAULT_NAME.clear()
    with kdsl.backend("recording"):
        yield rec
    registry._DEFAULT_NAME.clear()


def _arrays() -> tuple[np.ndarray, np.ndarray]:
    return np.arange(64, dtype=np.float32), np.zeros(64, np.float32)


def _launch_error(rec: RecordingBackend, param: str | None, fn: Any) -> kdsl.LaunchError:
    with pytest.raises(kdsl.LaunchError) as info:
        fn()
    assert info.value.param == param, str(info.value)
    if param is not None:
        assert f"'{param}'" in str(info.value)
    assert rec.launches == [], "the error came after a launch"
    return info.value


# --- arguments -----------------------------------------------------------------------
def test_too_many_arguments(recording: RecordingBackend) -> None:
    x, o = _arrays()
    err = _launch_error(recording, None, lambda: copy_kernel[(1,)](x, o, 64, 64, 5))
    assert "takes 4 arguments but 5 were given" in str(err)


def test_missing_argument(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "n", lambda: copy_kernel[(1,)](x, o, BLOCK=64))


def test_missing_constexpr(recording: RecordingBackend) -> None:
    x, o = _arrays()
    err = _launch_error(recording, "BLOCK", lambda: copy_kernel[(1,)](x, o, 64))
    assert "constexpr" in str(err)


def test_argument_given_twice(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "BLOCK", lambda: copy_kernel[(1,)](x, o, 64, 64, BLOCK=64))


def test_unknown_keyword(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "FOO", lambda: copy_kernel[(1,)](x, o, 64, BLOCK=64, FOO=1))


@pytest.mark.parametrize(
    "bad",
    [
        [1.0] * 64,
        np.zeros(64, np.complex64),
        np.array([object()] * 4),
        np.zeros(4, "datetime64[s]"),
        np.array(["a", "b"]),
    ],
    ids=["list", "complex64", "object", "datetime64", "str"],
)
def test_unsupported_pointer_argument(recording: RecordingBackend, bad: Any) -> None:
    _, o = _arrays()
    _launch_error(recording, "x_ptr", lambda: copy_kernel[(1,)](bad, o, 64, BLOCK=64))


def test_scalar_out_of_range(recording: RecordingBackend) -> None:
    x, o = _arrays()
    err = _launch_error(recording, "n", lambda: copy_kernel[(1,)](x, o, 2**70, BLOCK=64))
    assert "64 bits" in str(err)


def test_constexpr_given_an_array(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "BLOCK", lambda: copy_kernel[(1,)](x, o, 64, BLOCK=x))


def test_constexpr_of_the_wrong_type_is_a_located_compile_error(recording: RecordingBackend) -> None:
    """A float BLOCK is a legal constexpr value that the kernel body rejects: the
    error points at the use (file:line:col), not at the launch."""
    x, o = _arrays()
    with pytest.raises(kdsl.CompilationError) as info:
        copy_kernel[(1,)](x, o, 64, BLOCK=64.0)
    assert info.value.loc.known and info.value.loc.file.endswith("test_launch_validation.py")
    assert "arange" in info.value.message
    assert recording.launches == []


def test_bad_launch_option(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "num_threads", lambda: copy_kernel[(1,)](x, o, 64, BLOCK=64, num_threads=-1))


# --- grids -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "grid",
    [(-1,), (1, -2), (1.0,), (), (1, 1, 1, 1), None, "x", (True,)],
    ids=["neg", "neg-y", "float", "empty", "4d", "none", "str", "bool"],
)
def test_bad_grid(recording: RecordingBackend, grid: Any) -> None:
    x, o = _arrays()
    _launch_error(recording, "grid", lambda: copy_kernel[grid](x, o, 64, BLOCK=64))


def test_bad_grid_callable(recording: RecordingBackend) -> None:
    x, o = _arrays()
    _launch_error(recording, "grid", lambda: copy_kernel[lambda meta: (meta["n"], -1)](x, o, 64, BLOCK=64))


def test_zero_grid_runs_nothing(recording: RecordingBackend) -> None:
    x, o = _arrays()
    copy_kernel[(0,)](x, o, 64, BLOCK=64)
    copy_kernel[(4, 0)](x, o, 64, BLOCK=64)
    assert recording.launches == []


@pytest.mark.parametrize("grid", [(2**31,), (2**32 + 1,), (1, 2**31), (1, 1, 2**40)], ids=["x", "x-wrap", "y", "z"])
def test_grid_too_large_cold(recording: RecordingBackend, grid: tuple[int, ...]) -> None:
    """Found by this suite (was: the interpreter hung or reported a bogus out-of-bounds access, cpu
    silently ran 1 program for 2**32 + 1); program ids are i32, so each dimension is < 2**31."""
    x, o = _arrays()
    k = kdsl.kernel(copy_kernel.fn)  # first launch: the slow, fully checked path
    _launch_error(recording, "grid", lambda: k[grid](x, o, 64, BLOCK=64))


@pytest.mark.parametrize("grid", [(2**31,), (2**32 + 1,), (1, 2**31), (1, 1, 2**40)], ids=["x", "x-wrap", "y", "z"])
def test_grid_too_large_warm(recording: RecordingBackend, grid: tuple[int, ...]) -> None:
    """The same after a good launch, when the cached fast launcher is used."""
    x, o = _arrays()
    k = kdsl.kernel(copy_kernel.fn)
    k[(1,)](x, o, 64, BLOCK=64)
    recording.launches.clear()
    _launch_error(recording, "grid", lambda: k[grid](x, o, 64, BLOCK=64))


# --- arrays on real backends --------------------------------------------------------------
def test_new_dtype_is_a_new_specialisation(backend: str) -> None:
    for dt in (np.float32, np.int32, np.float64, np.uint8):
        x = np.arange(64).astype(dt)
        o = np.zeros(64, dt)
        copy_kernel[(1,)](x, o, 64, BLOCK=64)
        np.testing.assert_array_equal(o, x)


def test_non_contiguous_view_is_its_first_element_address(backend: str) -> None:
    """As in Triton, a pointer is the address of element 0; the kernel applies strides."""
    base = np.zeros(128, np.float32)
    view = base[::2]
    x = np.arange(1, 65, dtype=np.float32)
    strided_kernel[(1,)](x, view, 64, view.strides[0] // view.itemsize, BLOCK=64)
    np.testing.assert_array_equal(view, x)
    np.testing.assert_array_equal(base[1::2], 0)


def _read_only_input() -> None:
    x, o = _arrays()
    x.flags.writeable = False
    copy_kernel[(1,)](x, o, 64, BLOCK=64)
    np.testing.assert_array_equal(o, x)


def test_read_only_input_is_fine(backend: str) -> None:
    """Found by this suite on opencl (a raw ValueError from a READ_WRITE host-pointer buffer); fixed."""
    _read_only_input()


def test_read_only_output_is_a_launch_error(backend: str) -> None:
    """Found by this suite (was: interpreter raised at the store after earlier stores ran; cpu wrote
    into the read-only array); fixed in kdsl/runtime/launcher.py + compile.py."""
    a = np.zeros(16, np.float32)
    b = np.zeros(16, np.float32)
    b.flags.writeable = False
    with pytest.raises(kdsl.LaunchError) as info:
        write_two[(1,)](a, b, BLOCK=16)
    assert info.value.param == "b_ptr"
    np.testing.assert_array_equal(a, 0)  # nothing ran
    np.testing.assert_array_equal(b, 0)


def test_device_array_of_another_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second host backend (the interpreter under another name) stands in for a device."""
    from kdsl.interpreter import InterpreterBackend

    class OtherHost(InterpreterBackend):
        name = "otherhost"

    other = OtherHost()
    monkeypatch.setitem(registry._FACTORIES, "otherhost", lambda: other)
    monkeypatch.setitem(registry._INSTANCES, "otherhost", other)
    monkeypatch.setitem(registry._AVAILABILITY, "otherhost", (True, ""))
    x, o = _arrays()
    d = kdsl.tensor(x, backend="otherhost")
    with kdsl.backend("interpreter"), pytest.raises(kdsl.LaunchError) as info:
        copy_kernel[(1,)](d, o, 64, BLOCK=64)
    assert info.value.param == "x_ptr" and "otherhost" in str(info.value)
    np.testing.assert_array_equal(o, 0)


def test_device_arrays_across_real_backends() -> None:
    """Every ordered pair of available backends: a device array of one launched on the other."""
    names = kdsl.available_backends()
    if len(names) < 2:
        pytest.skip("needs two available backends")
    x, _ = _arrays()
    for src in names:
        d = kdsl.tensor(x, backend=src)
        for dst in names:
            if dst == src:
                continue
            o = np.zeros(64, np.float32)
            with kdsl.backend(dst), pytest.raises(kdsl.LaunchError) as info:
                copy_kernel[(1,)](d, o, 64, BLOCK=64)
            assert info.value.param == "x_ptr" and src in str(info.value), (src, dst, str(info.value))
            np.testing.assert_array_equal(o, 0)


def test_big_endian_array_is_rejected(recording: RecordingBackend) -> None:
    _, o = _arrays()
    _launch_error(recording, "x_ptr", lambda: copy_kernel[(1,)](np.arange(64, dtype=">f4"), o, 64, BLOCK=64))


def test_misaligned_view_works(backend: str) -> None:
    """A float32 view at byte offset 2 of a byte buffer: legal numpy, must not fault or misread."""
    buf = np.zeros(64 * 4 + 8, np.uint8)
    ref = np.arange(64, dtype=np.float32)
    buf[2 : 2 + 256] = ref.view(np.uint8)
    x = np.frombuffer(buf.data, dtype=np.float32, count=64, offset=2)
    o = np.zeros(64, np.float32)
    copy_kernel[(1,)](x, o, 64, BLOCK=64)
    np.testing.assert_array_equal(o, ref)


@kdsl.kernel
def busy_kernel(x_ptr, out_ptr, n, ITERS, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    acc = kl.load(x_ptr + offs, mask=m)
    for _ in range(0, ITERS):
        acc = acc * 1.0000001 + 1.0
    kl.store(out_ptr + offs, acc, mask=m)


def test_vulkan_timeout_leaves_the_backend_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel exceeding KDSL_VULKAN_TIMEOUT is a kdsl error, and the next launch is right.

    Found by tools/difftest.py --ub (seed 900058, an earlier vulkan runtime): after a raw
    ``VkTimeout`` every later vulkan launch silently returned zeros."""
    if "vulkan" not in kdsl.available_backends():
        pytest.skip("vulkan backend unavailable")
    x = np.arange(4096, dtype=np.float32)
    with kdsl.backend("vulkan"):
        o = np.zeros_like(x)
        copy_kernel[(4,)](x, o, x.size, BLOCK=1024)
        np.testing.assert_array_equal(o, x)
        monkeypatch.setenv("KDSL_VULKAN_TIMEOUT", "0.001")
        with pytest.raises(kdsl.KernelRuntimeError, match="did not finish"):
            busy_kernel[(4,)](x, np.zeros_like(x), x.size, 20000, BLOCK=1024)
        monkeypatch.delenv("KDSL_VULKAN_TIMEOUT")
        for _ in range(2):
            o = np.zeros_like(x)
            copy_kernel[(4,)](x, o, x.size, BLOCK=1024)
            np.testing.assert_array_equal(o, x)
