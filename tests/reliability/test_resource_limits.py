"""Resource limits: an over-sized configuration is a clear error before launch, never a driver crash.

PoCL aborts the process on too much ``__local`` memory and both PoCL and the
``cpu`` backend segfault when a work-item's private arrays outgrow the thread
stack (measured: 4 MiB runs, 8 MiB crashes); these configurations must raise Triton's
``OutOfResources`` (a ``CompilationError``) naming the limit, and the autotuner must discard them with
a logged reason. Every case that would crash runs the kernel in this process:
if a check regresses, the test process dies (which the suite reports).
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.autotune import Config, autotune
from kdsl.errors import CompilationError, OutOfResources


@kdsl.kernel
def copy_kernel(x, out, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(out + offs, kl.load(x + offs))


@kdsl.kernel
def transpose_kernel(a, c, B: kl.constexpr):
    r = kl.arange(0, B)
    kl.store(c + r[:, None] * B + r[None, :], kl.trans(kl.load(a + r[:, None] * B + r[None, :])))


@kdsl.kernel
def normalise_kernel(x, out, BLOCK: kl.constexpr):
    # y is computed (not a copy of memory) and needed after the reduction over all of it, so the
    # lowering must keep the whole row in private memory: a plain kl.sum(kl.load(...)) no longer does.
    offs = kl.arange(0, BLOCK)
    y = kl.load(x + offs) * 2.0
    kl.store(out + offs, y / kl.sum(y, axis=0))


def _use(name: str) -> None:
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable")


@pytest.mark.parametrize("name", ["opencl", "vulkan"])
def test_work_group_larger_than_the_device_allows(name: str) -> None:
    _use(name)
    x = np.ones(64, np.float32)
    with kdsl.backend(name), pytest.raises(CompilationError, match="exceeds the device's maximum work-group size"):
        copy_kernel[(1,)](x, np.zeros_like(x), BLOCK=64, num_threads=1 << 16)


def test_local_memory_larger_than_the_device_has() -> None:
    """A transpose stages its tile in ``__local`` memory: 4 MiB on PoCL (2 MiB): Triton's
    ``OutOfResources`` (a CompilationError) with the numbers."""
    _use("opencl")
    a = np.ones((1024, 1024), np.float32)
    with kdsl.backend("opencl"), pytest.raises(OutOfResources, match=r"bytes of __local memory \(work-group shared memory\), the device has \d+") as err:
        transpose_kernel[(1,)](a, np.zeros_like(a), B=1024, num_threads=64)
    assert err.value.name == "shared memory" and err.value.required > err.value.limit
    assert isinstance(err.value, CompilationError)


def test_vulkan_local_memory_past_the_device_spills_to_scratch() -> None:
    """The same over-sized transpose on lavapipe (64 KiB of 32 KiB): the arrays that do not fit
    live in a scratch buffer (docs/VULKAN.md), and the kernel runs."""
    _use("vulkan")
    a = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    c = np.zeros_like(a)
    with kdsl.backend("vulkan"):
        transpose_kernel[(1,)](a, c, B=128, num_threads=64)
    np.testing.assert_array_equal(c, a.T)


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_private_memory_larger_than_the_thread_stack(name: str) -> None:
    """8 MiB of private arrays in one work-item segfaulted both backends before the check (a float64
    tile of Triton's largest size, kl.TRITON_MAX_TENSOR_NUMEL elements, is 8 MiB)."""
    _use(name)
    x = np.ones(1 << 20, np.float64)
    out = np.zeros_like(x)
    with kdsl.backend(name), pytest.raises(OutOfResources, match="out of resource: private memory, Required: 8388608"):
        normalise_kernel[(1,)](x, out, BLOCK=1 << 20, num_threads=1)
    small = np.zeros(1 << 12, np.float64)
    with kdsl.backend(name):
        normalise_kernel[(1,)](x[: 1 << 12], small, BLOCK=1 << 12, num_threads=1)  # still usable afterwards
    np.testing.assert_array_equal(small, np.full(1 << 12, 1 / (1 << 12)))


@pytest.mark.parametrize("name", ["opencl", "vulkan"])
def test_autotuner_discards_configs_beyond_the_limits(name: str, caplog: pytest.LogCaptureFixture) -> None:
    _use(name)
    configs = [Config({"BLOCK": 64}, num_threads=1 << 16), Config({"BLOCK": 64}, num_threads=16)]
    tuned = autotune(configs=configs, key=["n"], warmup=0.5, rep=2, max_repeats=3, persist=False, compile_workers=1)(
        _tunable
    )
    n = 256
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    with kdsl.backend(name), caplog.at_level(logging.WARNING, logger="kdsl"):
        tuned[lambda meta: (n // meta["BLOCK"],)](x, out, n)
    np.testing.assert_array_equal(out, x)
    assert tuned.best_config == configs[1]
    assert [c for c, _ in tuned.rejected] == [configs[0]]
    assert "maximum work-group size" in tuned.rejected[0][1]
    assert any("discarded" in r.getMessage() and "work-group size" in r.getMessage() for r in caplog.records)


@kdsl.kernel
def _tunable(x, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(out + offs, kl.load(x + offs, mask=offs < n), mask=offs < n)
