"""A driver fault during a launch is a kdsl error naming the kernel; the queue is replaced; kdsl stays usable.

Faults are injected by replacing one OpenCL entry point (clapi's, or pyopencl's
enqueue) with one that fails once with the status a real driver returns, then
behaves normally.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyopencl as cl
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import KernelRuntimeError
from kdsl.runtime.opencl import clapi, fastlaunch, get_device


@kdsl.kernel
def shift(x, out, n, k, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + k, mask=m)


def fail_once(real: Callable[..., Any], status: int) -> Callable[..., Any]:
    calls = [0]

    def fake(*args: Any) -> Any:
        calls[0] += 1
        return status if calls[0] == 1 else real(*args)

    return fake


def run_numpy(block: int, k: float = 1.0) -> np.ndarray:
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    with kdsl.backend("opencl"):
        shift[(kdsl.cdiv(1000, block),)](x, out, 1000, k, BLOCK=block)
    np.testing.assert_array_equal(out, x + k)
    return out


@pytest.mark.parametrize(("status", "name"), [(-36, "CL_INVALID_COMMAND_QUEUE"), (-5, "CL_OUT_OF_RESOURCES")])
def test_enqueue_fault_names_the_kernel_and_the_next_launch_works(
    monkeypatch: pytest.MonkeyPatch, status: int, name: str
) -> None:
    dev = get_device()
    lib = clapi.lib()
    monkeypatch.setattr(lib, "clEnqueueNDRangeKernel", fail_once(lib.clEnqueueNDRangeKernel, status))
    monkeypatch.setattr(fastlaunch, "MODULES", {})  # as in a process without pyopencl: the clapi variant
    block = 128 if status == -36 else 64  # a new specialisation: its launch function binds the fake
    resets, queue = dev.resets, dev.queue_handle
    with pytest.raises(KernelRuntimeError, match=rf"kernel 'shift'.*{name}.*queue was recreated") as e:
        run_numpy(block)
    assert isinstance(e.value, clapi.CLError) and e.value.function == "clEnqueueNDRangeKernel"
    assert dev.resets == resets + 1 and dev.queue_handle != queue
    run_numpy(block, 2.0)  # the same kernel, on the new queue
    monkeypatch.setattr(fastlaunch, "MODULES", {"pyopencl": cl})  # new kernels: the pyopencl variant
    run_numpy(block * 2, 2.5)
    with kdsl.backend("opencl"):  # device arrays: pyopencl's view binds to the new queue
        dx, do = kdsl.tensor(np.arange(1000, dtype=np.float32)), kdsl.empty(1000, np.float32)
        shift[(kdsl.cdiv(1000, block),)](dx, do, 1000, 3.0, BLOCK=block)
        np.testing.assert_array_equal(do.numpy(), np.arange(1000, dtype=np.float32) + 3)
    assert dev.queue.int_ptr == dev.queue_handle
    kdsl.synchronize()


def test_finish_fault_recovers(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = get_device()
    run_numpy(256)
    lib = clapi.lib()
    monkeypatch.setattr(lib, "clFinish", fail_once(lib.clFinish, -5))
    resets = dev.resets
    with pytest.raises(KernelRuntimeError, match="clFinish failed: CL_OUT_OF_RESOURCES"):
        kdsl.synchronize("opencl")
    assert dev.resets == resets + 1
    run_numpy(256, 4.0)
    kdsl.synchronize("opencl")


def test_device_array_enqueue_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    """The asynchronous device-array branch enqueues through pyopencl: its error is converted the same way."""
    dev = get_device()
    real = cl._cl.enqueue_nd_range_kernel
    calls = [0]

    def fake(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] == 1:
            raise cl.Error(cl._cl._ErrorRecord("clEnqueueNDRangeKernel", -5, "injected"))
        return real(*args)

    monkeypatch.setattr(cl._cl, "enqueue_nd_range_kernel", fake)
    x = np.arange(1000, dtype=np.float32)
    resets = dev.resets
    with kdsl.backend("opencl"):
        dx, do = kdsl.tensor(x), kdsl.empty(1000, np.float32)
        with pytest.raises(KernelRuntimeError, match=r"kernel 'shift'.*CL_OUT_OF_RESOURCES"):
            shift[(2,)](dx, do, 1000, 5.0, BLOCK=512)  # new specialisation: binds the fake on first launch
        assert dev.resets == resets + 1
        shift[(2,)](dx, do, 1000, 5.0, BLOCK=512)
        np.testing.assert_array_equal(do.numpy(), x + 5)
