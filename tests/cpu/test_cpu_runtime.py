"""The cpu backend's runtime side: inline vs pooled launches and its device object."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.cpu import CPUBackend
from kdsl.runtime.cpu import backend as cpu_backend
from kdsl.runtime.cpu.target import host

from ._helpers import compile_cpu


@kdsl.kernel
def inc_kernel(x_ptr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(x_ptr + offs, kl.load(x_ptr + offs) + 1.0)


def _no_pool(threads: int) -> Any:
    raise AssertionError("the pool must not be used for this launch")


def test_small_grids_run_inline_after_the_first_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.zeros(64 * 16, np.float32)
    kern = compile_cpu(inc_kernel, [x], threads=2, BLOCK=16)
    kern.launch((64, 1, 1), [x])  # first launch: unknown cost -> pool, measures the program time
    assert 0 < kern.program_s < 0.1
    kern.inline_below = kern.program_s * 64 * 2  # robust on a loaded machine
    monkeypatch.setattr(cpu_backend, "get_pool", _no_pool)
    kern.launch((64, 1, 1), [x])
    np.testing.assert_array_equal(x, 2.0)


def test_big_grids_still_use_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.zeros(8 * 16, np.float32)
    kern = compile_cpu(inc_kernel, [x], threads=2, BLOCK=16)
    kern.launch((8, 1, 1), [x])
    used: list[int] = []
    real = cpu_backend.get_pool

    def spy(threads: int) -> Any:
        used.append(threads)
        return real(threads)

    monkeypatch.setattr(cpu_backend, "get_pool", spy)
    kern.inline_below = 0.0
    kern.launch((8, 1, 1), [x])
    assert used == [2]
    np.testing.assert_array_equal(x, 2.0)


def test_device_is_host_memory_keyed_by_the_llvm_target() -> None:
    dev = CPUBackend().device()
    assert dev is CPUBackend().device()
    h = host()
    assert dev.host_memory is True
    assert h.cpu in dev.key and h.triple in dev.key and h.features in dev.key
    buf = dev.allocate(100)
    assert buf.ctypes.data % 64 == 0 and buf.nbytes >= 100
    src = np.arange(25, dtype=np.float32)
    dev.write(buf, src)
    out = np.empty_like(src)
    dev.read(buf, out)
    dev.synchronize()
    np.testing.assert_array_equal(out, src)


def test_device_arrays_run_on_cpu() -> None:
    from kdsl.runtime.device_array import tensor

    x = np.arange(32, dtype=np.float32)
    d = tensor(x, backend="cpu")
    with kdsl.backend("cpu"):
        inc_kernel[(2,)](d, BLOCK=16)
    np.testing.assert_array_equal(d.numpy(), x + 1)


def test_a_slow_hand_off_does_not_keep_small_grids_on_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-program estimate comes from the calling thread's own slices: a pooled launch that
    waited long for its workers (asleep, or a loaded machine) must not make the kernel look slow,
    or every later small launch would pay the hand-off too."""
    x = np.zeros(4 * 16, np.float32)
    kern = compile_cpu(inc_kernel, [x], threads=2, BLOCK=16)

    class SlowHandOff:
        def run_grid(self, kernel: Any, argv: int, gx: int, gy: int, gz: int, total: int, slices: int) -> Any:
            time.sleep(0.05)  # waiting for the workers
            t0 = time.perf_counter()
            kernel.run(argv, gx, gy, gz, 0, total)
            return time.perf_counter() - t0, total

    monkeypatch.setattr(cpu_backend, "get_pool", lambda threads: SlowHandOff())
    kern.launch((4, 1, 1), [x])  # first launch: unknown cost -> pool
    assert kern.program_s < 0.01
    kern.inline_below = max(kern.inline_below, kern.program_s * 4 * 2)
    monkeypatch.setattr(cpu_backend, "get_pool", _no_pool)
    kern.launch((4, 1, 1), [x])
    np.testing.assert_array_equal(x, 2.0)
