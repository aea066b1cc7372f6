"""Launches on device arrays only are asynchronous: ordered, capped, errors at the next synchronize."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import KernelRuntimeError
from kdsl.runtime.vulkan import VulkanBackend, inflight

from . import vk_kernels as K


@kdsl.kernel
def inc_kernel(src, dst, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(dst + offs, kl.load(src + offs, mask=m) + 1, mask=m)


@kdsl.kernel
def long_loop_kernel(out, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    acc = kl.zeros([BLOCK], dtype=kl.int32)
    for _i in range(n):
        acc = acc + 1
    kl.store(out + kl.arange(0, BLOCK), acc)


@pytest.fixture(autouse=True)
def _vulkan() -> object:
    with kdsl.backend("vulkan"):
        yield
        kdsl.synchronize()


def _rt() -> object:
    return VulkanBackend().device().rt


def test_dependent_launches_run_in_order() -> None:
    n = 3000
    a = kdsl.tensor(np.zeros(n, np.float32))
    b = kdsl.empty(n, np.float32)
    grid = (kdsl.cdiv(n, 256),)
    seen = 0
    for _ in range(25):  # a -> b -> a ...: each launch reads what the one before wrote
        inc_kernel[grid](a, b, n, BLOCK=256)
        inc_kernel[grid](b, a, n, BLOCK=256)
        seen = max(seen, len(_rt().inflight.pending))  # type: ignore[attr-defined]
    assert 1 <= seen <= inflight.MAX_IN_FLIGHT  # really asynchronous, and capped
    np.testing.assert_array_equal(a.numpy(), np.full(n, 50, np.float32))  # read waits for all
    assert not _rt().inflight.pending  # type: ignore[attr-defined]


def test_numpy_launch_and_write_wait_for_device_launches() -> None:
    n = 1000
    x = kdsl.tensor(np.arange(n, dtype=np.float32))
    y = kdsl.empty(n, np.float32)
    for _ in range(5):
        inc_kernel[(4,)](x, y, n, BLOCK=256)
        inc_kernel[(4,)](y, x, n, BLOCK=256)
    host = np.zeros(n, np.float32)
    K.add_kernel[(4,)](x, x, host, n, BLOCK=256)  # synchronous: sees the ten launches before it
    np.testing.assert_array_equal(host, 2 * (np.arange(n) + 10))
    inc_kernel[(4,)](x, y, n, BLOCK=256)
    VulkanBackend().device().write(x.buffer, np.zeros(n, np.float32))  # after the launch that reads x
    np.testing.assert_array_equal(y.numpy(), np.arange(n) + 11)


def test_temporaries_freed_while_in_flight() -> None:
    n = 1 << 16
    acc = kdsl.tensor(np.zeros(n, np.float32))
    rounds = 8  # each gc.collect() costs ~1 s late in a full test session
    for _ in range(rounds):
        tmp = kdsl.empty(n, np.float32)
        inc_kernel[(n // 1024,)](acc, tmp, n, BLOCK=1024)
        inc_kernel[(n // 1024,)](tmp, acc, n, BLOCK=1024)
        del tmp
        gc.collect(1)  # the buffer goes back only after the launches using it have finished (young generations
        # only: a full collection of a long test session's heap takes ~3 s)
        kdsl.empty(n, np.float32)  # an allocation that could reuse it
    np.testing.assert_array_equal(acc.numpy(), np.full(n, 2 * rounds, np.float32))


def test_failure_is_raised_at_synchronize_and_kdsl_stays_usable() -> None:
    if VulkanBackend().target().max_loop_iterations == 0:
        pytest.skip("needs a driver with a loop cap (lavapipe)")
    out = kdsl.empty(8, np.int32)
    long_loop_kernel[(1,)](out, 100, BLOCK=8)
    long_loop_kernel[(1,)](out, 70_000, BLOCK=8)  # returns at once: the cut is found later
    long_loop_kernel[(1,)](out, 200, BLOCK=8)
    with pytest.raises(KernelRuntimeError, match="kernel 'long_loop_kernel' exceeded the Vulkan driver's loop"):
        kdsl.synchronize()
    kdsl.synchronize()  # reported once
    long_loop_kernel[(1,)](out, 300, BLOCK=8)
    np.testing.assert_array_equal(out.numpy(), np.full(8, 300, np.int32))


def test_cap_zero_is_synchronous(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inflight, "MAX_IN_FLIGHT", 0)
    x = kdsl.tensor(np.zeros(256, np.float32))
    y = kdsl.empty(256, np.float32)
    inc_kernel[(1,)](x, y, 256, BLOCK=256)
    assert not _rt().inflight.pending  # type: ignore[attr-defined]
    np.testing.assert_array_equal(y.numpy(), np.ones(256, np.float32))


@kdsl.kernel
def busy_kernel(x, out, n, ITERS, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    acc = kl.load(x + offs, mask=m)
    for _ in range(0, ITERS):
        acc = acc * 0.5 + 1.0
    kl.store(out + offs, acc, mask=m)


def test_timed_out_launch_is_reported_once_and_retired(monkeypatch: pytest.MonkeyPatch) -> None:
    """An asynchronous launch past KDSL_VULKAN_TIMEOUT: one KernelTimeout naming it, later waits do
    not wait for it again, its slot and memory come back once it has finished, results stay right."""
    from kdsl.runtime.vulkan.commands import KernelTimeout

    fl = _rt().inflight  # type: ignore[attr-defined]
    n = 1 << 14
    x = kdsl.tensor(np.ones(n, np.float32))
    y = kdsl.empty(n, np.float32)
    busy_kernel[(n // 1024,)](x, y, n, 10, BLOCK=1024)  # compiled before the clock is short
    kdsl.synchronize()
    monkeypatch.setenv("KDSL_VULKAN_TIMEOUT", "0.001")
    busy_kernel[(n // 1024,)](x, y, n, 60_000, BLOCK=1024)  # returns at once
    with pytest.raises(KernelTimeout, match="kernel 'busy_kernel' \\(asynchronous\\) did not finish"):
        kdsl.synchronize()
    assert len(fl.stuck) == 1 and not fl.pending
    assert fl.completed < fl.submitted  # memory freed after it is not reused yet
    kdsl.synchronize()  # reported once: nothing pending, no second wait or error
    monkeypatch.delenv("KDSL_VULKAN_TIMEOUT")
    z = kdsl.empty(n, np.float32)
    inc_kernel[(n // 1024,)](y, z, n, BLOCK=1024)  # queued behind the slow one: sees its result
    np.testing.assert_allclose(z.numpy(), np.full(n, 3.0, np.float32))  # busy converges to 2
    kdsl.synchronize()
    assert not fl.stuck and fl.completed == fl.submitted
    assert fl.created <= inflight.SLOTS


def test_stuck_slots_fall_back_to_synchronous_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    fl = _rt().inflight  # type: ignore[attr-defined]
    monkeypatch.setattr(inflight, "SLOTS", len(fl.stuck))  # as if timed-out launches held every slot
    x = kdsl.tensor(np.zeros(256, np.float32))
    y = kdsl.empty(256, np.float32)
    submitted = fl.submitted
    inc_kernel[(1,)](x, y, 256, BLOCK=256)
    assert fl.submitted == submitted and not fl.pending  # ran on the synchronous path
    np.testing.assert_array_equal(y.numpy(), np.ones(256, np.float32))
