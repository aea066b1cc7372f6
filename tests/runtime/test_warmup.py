"""``kernel.warmup(...)``: compile without running, report, launch (Triton's ``JITFunction.warmup``)."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.jit
def shift_kernel(x, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    v = kl.load(x + offs, mask=offs < n, other=float("-inf"))
    kl.store(x + offs, v - kl.max(v, 0), mask=offs < n)


def test_warmup_compiles_without_running(backend: str) -> None:
    x = np.arange(16, dtype=np.float32)
    warmed = shift_kernel.warmup(x, 16, BLOCK=16, grid=(1,), num_warps=4, num_stages=2)
    np.testing.assert_array_equal(x, np.arange(16))  # nothing ran
    warmed._init_handles()
    assert warmed.name == "shift_kernel"
    assert "tile.func" in warmed.asm["ttir"] and "tile.func" in warmed.asm["ttgir"]
    assert warmed.metadata.num_warps == 4 and warmed.metadata.num_stages == 2
    assert warmed.metadata.shared >= 0 and warmed.n_regs > 0 and warmed.n_spills == 0
    if backend != "interpreter":
        assert "wi.mlir" in warmed.asm  # the work-item IR every device backend renders from
    warmed[(1,)](x, 16, BLOCK=16)
    np.testing.assert_array_equal(x, np.arange(16) - 15)


def test_launch_returns_the_compiled_kernel(backend: str) -> None:
    """Triton's ``kernel[grid](...)`` returns its CompiledKernel (its unit tests read
    ``pgm.asm[...]`` from it): the same handle for every launch of a specialisation, also through
    the autotuner, and also when the grid is empty."""
    x = np.arange(16, dtype=np.float32)
    first = shift_kernel[(1,)](x, 16, BLOCK=16)
    assert first is not None and first.name == "shift_kernel" and "tile.func" in first.asm["ttir"]
    assert shift_kernel[(1,)](x, 16, BLOCK=16) is first  # the warm path hands back the same handle
    assert shift_kernel[(0,)](x, 16, BLOCK=16) is first  # nothing runs, the kernel is still compiled
    np.testing.assert_array_equal(x, np.arange(16) - 15)
    other = shift_kernel[(1,)](np.zeros(8, np.float32), 8, BLOCK=8)
    assert other is not first and other.name == "shift_kernel"
    tuned = kdsl.autotune(configs=[kdsl.Config({"BLOCK": 16})], key=["n"])(shift_kernel)
    handle = tuned[(1,)](np.zeros(16, np.float32), 16)
    assert handle is not None and handle.metadata.name == "shift_kernel" and repr(handle).startswith("<kdsl compiled")


def test_warmup_backend_code(backend: str) -> None:
    """Each device backend's own output is in ``asm``: OpenCL C, LLVM IR, SPIR-V."""
    stage = {"opencl": "kernel.cl", "cpu": "llir", "vulkan": "spirv", "interpreter": "ttgir"}[backend]
    assert shift_kernel.warmup(np.zeros(8, np.float32), 8, BLOCK=8, grid=(1,)).asm[stage]


@kdsl.jit
def transpose_kernel(a, c, B: kl.constexpr):
    r = kl.arange(0, B)
    kl.store(c + r[:, None] * B + r[None, :], kl.trans(kl.load(a + r[:, None] * B + r[None, :])))


def test_warmup_reports_local_memory() -> None:
    """A transpose over several work-items stages its tile in ``__local`` memory: ``shared`` says how much."""
    if "vulkan" not in kdsl.available_backends():
        pytest.skip("backend 'vulkan' unavailable")
    a = np.zeros((16, 16), np.float32)
    with kdsl.backend("vulkan"):
        warmed = transpose_kernel.warmup(a, a, B=16, grid=(1,), num_threads=32)
    assert warmed.metadata.shared >= 16 * 16 * 4
