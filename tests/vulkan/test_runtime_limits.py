"""Bounded waits and the automatic work-group size of the vulkan backend.

A kernel that runs past ``KDSL_VULKAN_TIMEOUT`` raises a ``KernelRuntimeError``
instead of hanging; kdsl stays usable afterwards (the next launch queues behind
the slow one and succeeds). The default work-group size grows while private
state x barriers is large (lavapipe's compile time depends on it).
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import KernelRuntimeError
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend
from kdsl.runtime.vulkan.backend import BARRIER_STATE_LIMIT, DEFAULT_NUM_THREADS, barrier_state

from . import vk_kernels as K


@kdsl.kernel
def spin_kernel(out, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    acc = kl.zeros([BLOCK], dtype=kl.int32)
    for i in range(n):
        acc = acc * 1103515245 + i
    kl.store(out + kl.arange(0, BLOCK), acc)


def _compile(kernel: object, *args: object, nt: int | None = None, **meta: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    name = kernel.fn.__name__  # type: ignore[attr-defined]
    return VulkanBackend().compile(module, name, LaunchOptions(num_threads=nt))


def test_timeout_raises_and_kdsl_stays_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    # lavapipe cuts each invocation's loops after 65535 passes (and kdsl reports that: see
    # test_loop_limit.py), so there the slow kernel is many programs of shorter loops: 1024 of
    # them take ~0.2 s on a 2-core AMD Zen 4, four times the timeout (256 took 0.05 s, a flake)
    cap = VulkanBackend().target().max_loop_iterations
    n, programs = (cap - 1000, 1024) if cap else (20_000_001, 64)
    out = np.zeros(8, np.int32)
    spin = _compile(spin_kernel, out, 3, BLOCK=8, nt=8)
    spin.launch((1, 1, 1), [out, 3])  # compile in the driver outside the timed launch
    monkeypatch.setenv("KDSL_VULKAN_TIMEOUT", "0.05")
    with pytest.raises(KernelRuntimeError, match="KDSL_VULKAN_TIMEOUT"):
        spin.launch((programs, 1, 1), [out, n])
    monkeypatch.delenv("KDSL_VULKAN_TIMEOUT")
    x = np.arange(16, dtype=np.float32)
    res = np.zeros(16, np.float32)
    add = _compile(K.add_kernel, x, x, res, 16, BLOCK=16, nt=16)
    add.launch((1, 1, 1), [x, x, res, 16])  # waits behind the slow kernel, then runs
    np.testing.assert_array_equal(res, 2 * x)


@pytest.mark.parametrize("nt", [None, 64, 128])
def test_work_group_grows_with_barrier_state(nt: int | None) -> None:
    m = np.zeros((64, 64), np.float32)
    mod = kdsl.compile_to_ir(K.matmul_kernel, m, m, m, 64, 64, 64, optimize=True, BM=32, BN=32, BK=32)
    stages = VulkanBackend().compile_stages(mod, "matmul_kernel", LaunchOptions(num_threads=nt or 0))
    if nt is not None:  # an explicit choice is kept
        assert stages.layout.num_threads == nt
        return
    assert stages.layout.num_threads > DEFAULT_NUM_THREADS
    assert barrier_state(stages.wi_module) <= BARRIER_STATE_LIMIT
    s = np.zeros((4, 256), np.float32)
    smod = kdsl.compile_to_ir(K.softmax_kernel, s, s, 256, 256, 256, optimize=True, BLOCK=256)
    # llvmpipe runs a barrier-free row kernel as one invocation per program, 8 programs per group
    expected = 1 if VulkanBackend().target().programs_per_group > 1 else 64
    assert VulkanBackend().compile_stages(smod, "softmax_kernel", LaunchOptions()).layout.num_threads == expected
