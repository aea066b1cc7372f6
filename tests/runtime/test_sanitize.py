"""Sanitiser mode: bounds-checked loads, stores and atomics on every backend.

Out-of-bounds accesses of unmasked lanes raise ``kdsl.OutOfBoundsError`` naming
the kernel, the access's file:line, the argument, the element index and the
program id -- in the same words on the device backends (instrumented by
``kdsl.transforms.sanitize``) and on the interpreter (which always checks).
Masked-off lanes are never reported and correct kernels give the same results.
Out-of-bounds reads in these tests stay inside a larger numpy buffer (a view of
it is passed), so running them unsanitised on a device is harmless.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.sanitize import byte_range

FILE = __file__


def _line(fn: object, text: str) -> int:
    """The file line of the first source line of kernel ``fn`` containing ``text``."""
    src, first = inspect.getsourcelines(fn.fn)  # type: ignore[attr-defined]
    for k, line in enumerate(src):
        if text in line:
            return first + k
    raise AssertionError(text)


@kdsl.kernel(sanitize=True)
def add_kernel(x, y, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    a = kl.load(x + offs, mask=m)
    b = kl.load(y + offs)  # unmasked: y must hold the whole grid
    kl.store(out + offs, a + b, mask=m)


@kdsl.kernel(sanitize=True)
def store_kernel(out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(out + offs, offs.to(kl.float32), mask=offs < n)


@kdsl.kernel(sanitize=True)
def atomic_kernel(counts, idx, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.atomic_add(counts + kl.load(idx + offs), 1)


@kdsl.kernel(sanitize=True)
def scalar_kernel(x, out, i):
    kl.store(out, kl.load(x + i))


@kdsl.kernel(sanitize=True)
def matmul_kernel(a, b, c, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pm, pn = kl.program_id(0), kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    a_ptrs = a + rm[:, None] * K + rk[None, :]
    b_ptrs = b + rk[:, None] * N + rn[None, :]
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for _ in range(0, K, BK):
        acc += kl.dot(kl.load(a_ptrs), kl.load(b_ptrs))  # no masks: K must be a multiple of BK
        a_ptrs += BK
        b_ptrs += BK * N
    kl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@kdsl.kernel
def plain_copy(x, out, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out + offs, kl.load(x + offs))


@pytest.fixture
def sanitize_default() -> Iterator[None]:
    yield
    kdsl.set_sanitize(None)


def _expect(
    exc: pytest.ExceptionInfo[kdsl.OutOfBoundsError],
    what: str,
    kernel: str,
    arg: str,
    index: int,
    line: int,
    pid: tuple[int, int, int] | None = None,
) -> None:
    e = exc.value
    msg = str(e)
    assert f"out-of-bounds {what} in kernel '{kernel}'" in msg
    assert f"element index {index} relative to argument '{arg}'" in msg
    assert (e.loc.file, e.loc.line) == (FILE, line), msg
    if pid is not None:
        assert f"program id {pid}" in msg


def test_load_out_of_bounds(backend: str) -> None:
    x = np.arange(100, dtype=np.float32)
    ybuf = np.ones(128, np.float32)
    out = np.zeros(100, np.float32)
    add_kernel[(4,)](x, ybuf, out, 100, BLOCK=32)  # masked-off lanes of x (100..127) are not reported
    np.testing.assert_array_equal(out, x + 1)
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        add_kernel[(4,)](x, ybuf[:100], out, 100, BLOCK=32)
    _expect(exc, "load", "add_kernel", "y", 100, _line(add_kernel, "kl.load(y"), (3, 0, 0))
    assert "valid element range [0, 99]" in str(exc.value)


def test_store_out_of_bounds_is_reported_and_blocked(backend: str) -> None:
    buf = np.zeros(64, np.float32)
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        store_kernel[(2,)](buf[:40], 64, BLOCK=32)  # n lies: lanes 40..63 are out of bounds
    _expect(exc, "store", "store_kernel", "out", 40, _line(store_kernel, "kl.store"), (1, 0, 0))
    assert not buf[40:].any(), "the failing lanes must not have been written"


def test_atomic_out_of_bounds(backend: str) -> None:
    counts = np.zeros(16, np.int32)
    idx = np.array([0, 1, 2, 3, 4, 5, 6, 21], np.int32)
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        atomic_kernel[(1,)](counts[:8], idx, BLOCK=8)
    _expect(exc, "atomic_add", "atomic_kernel", "counts", 21, _line(atomic_kernel, "atomic_add"), (0, 0, 0))
    assert not counts[8:].any()


def test_scalar_access_and_negative_index(backend: str) -> None:
    buf = np.arange(10, dtype=np.float32)
    out = np.zeros(1, np.float32)
    scalar_kernel[(1,)](buf[2:6], out, 3)
    assert out[0] == 5
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        scalar_kernel[(1,)](buf[2:6], out, -2)
    _expect(exc, "load", "scalar_kernel", "x", -2, _line(scalar_kernel, "kl.load"))


def test_loop_carried_pointers(backend: str) -> None:
    rng = np.random.default_rng(0)
    M = N = 32
    K = 64
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    matmul_kernel[(2, 2)](a, b, c, M, N, K, BM=16, BN=16, BK=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    big = np.zeros(K * N + 64 * N, np.float32)
    big[: K * N] = b.ravel()
    with pytest.raises(kdsl.OutOfBoundsError) as exc:  # K lies by one block: the last b tile is past the end
        matmul_kernel[(2, 2)](a, big[: K * N], c, M, N, K + 16, BM=16, BN=16, BK=16)
    msg = str(exc.value)
    assert exc.value.loc.line == _line(matmul_kernel, "kl.dot(")
    assert "argument 'b'" in msg or "argument 'a'" in msg


def test_negative_strides_use_the_view_span(backend: str) -> None:
    if backend in ("opencl", "vulkan"):
        pytest.skip(f"the {backend} backend refuses arrays with negative strides (a LaunchError)")
    base = np.arange(8, dtype=np.float32)
    view = base[::-1]  # element 0 is base[7]; valid element offsets -7..0
    assert byte_range(view) == (-28, 4)
    out = np.zeros(1, np.float32)
    scalar_kernel[(1,)](view, out, -7)
    assert out[0] == 0
    with pytest.raises(kdsl.OutOfBoundsError):
        scalar_kernel[(1,)](view, out, 1)


def test_flag_is_part_of_the_cache_key(backend: str, sanitize_default: None) -> None:
    buf = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    if backend != "interpreter":  # the interpreter always checks
        kdsl.set_sanitize(False)
        plain_copy[(1,)](buf[:8], out, BLOCK=16)  # reads 8 elements past the view, unchecked
        np.testing.assert_array_equal(out[:8], buf[:8])
    kdsl.set_sanitize(True)
    assert kdsl.sanitize_enabled()
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        plain_copy[(1,)](buf[:8], out, BLOCK=16)
    _expect(exc, "load", "plain_copy", "x", 8, _line(plain_copy, "kl.load"))
    kdsl.set_sanitize(None)


def test_env_variable(backend: str, monkeypatch: pytest.MonkeyPatch, sanitize_default: None) -> None:
    monkeypatch.setenv("KDSL_SANITIZE", "1")
    assert kdsl.sanitize_enabled()
    buf = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(kdsl.OutOfBoundsError):
        plain_copy[(1,)](buf[:12], out, BLOCK=16)
    kdsl.set_sanitize(False)
    assert not kdsl.sanitize_enabled()


def test_device_arrays(backend: str) -> None:
    x = kdsl.tensor(np.arange(100, dtype=np.float32))
    y = kdsl.tensor(np.ones(100, np.float32))
    out = kdsl.zeros(100, np.float32)
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        add_kernel[(4,)](x, y, out, 100, BLOCK=32)
    _expect(exc, "load", "add_kernel", "y", 100, _line(add_kernel, "kl.load(y"), (3, 0, 0))


@kdsl.kernel
def pick_kernel(x, y, out, flag, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    p = kl.where(flag > 0, x, y)  # from either parameter: provenance unknown
    kl.store(out + offs, kl.load(p + offs))


def test_unknown_provenance_is_counted_not_checked() -> None:
    from kdsl.ir.verifier import verify
    from kdsl.transforms.sanitize import instrument

    x = np.zeros(16, np.float32)
    module = kdsl.compile_to_ir(pick_kernel, x, x, x, 3, BLOCK=16, optimize=True)
    info = instrument(module, "pick_kernel")
    verify(module)
    assert info.unchecked == 1
    assert [(c.what, c.param) for c in info.checks] == [("store", 2)]
    assert info.params == (2,)


def test_rebuilt_from_the_disk_cache(backend: str) -> None:
    buf, ybuf = np.ones(64, np.float32), np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    add_kernel[(2,)](buf, ybuf, out, 64, BLOCK=32)
    add_kernel.cache.clear()  # the next launch loads the disk entry (check table in its metadata)
    add_kernel._launchers.clear()
    with pytest.raises(kdsl.OutOfBoundsError) as exc:
        add_kernel[(2,)](buf, ybuf[:40], out, 64, BLOCK=32)
    _expect(exc, "load", "add_kernel", "y", 40, _line(add_kernel, "kl.load(y"), (1, 0, 0))
