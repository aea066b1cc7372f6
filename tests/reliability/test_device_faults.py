"""Driver faults: a build failure or a lost device is a clear kdsl error, and kdsl stays usable.

Faults are injected where kdsl calls the driver (``monkeypatch`` on the
``vulkan`` module functions the runtime calls, or on the LLVM IR handed to
llvmlite), so the real error paths run:

* Vulkan ``VK_ERROR_DEVICE_LOST`` from ``vkQueueSubmit`` or ``vkWaitForFences``
  (synchronous launches with numpy arrays, asynchronous ones with device
  arrays): ``DeviceLost`` (a ``KernelRuntimeError``) naming the kernel; the
  device, queue, pools, allocator and pipelines are recreated and the next
  launch is right; device arrays allocated before the loss raise a clear error
  when read, written or passed to a kernel.
* Vulkan pipeline build failure (``vkCreateShaderModule`` /
  ``vkCreateComputePipelines`` failing): ``PipelineBuildError`` (a
  ``CompilationError``) naming the kernel with ``spirv-val``'s report; the
  same kernel compiles and runs once the driver works again.
* cpu: LLVM rejecting the IR (a corrupted module reaches the real parser):
  ``LLVMBuildError`` with LLVM's diagnostic and the offending IR line; a
  failure linking the object code likewise; the next launch works.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

_FRESH = itertools.count(1)


@kdsl.kernel
def scale_kernel(x_ptr, out_ptr, n, K: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) * K + 1.0, mask=m)


def _run(x: np.ndarray, k: float) -> np.ndarray:
    out = np.zeros_like(x)
    scale_kernel[(kdsl.cdiv(x.size, 256),)](x, out, x.size, K=k, BLOCK=256)
    return out


def _want(x: np.ndarray, k: float) -> np.ndarray:
    return x * np.float32(k) + np.float32(1.0)


def _fresh_k() -> float:
    """A constexpr value no other test used: a cold compilation (a new pipeline/object)."""
    return 2.0 + next(_FRESH) / 64.0


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("KDSL_CACHE_DIR", str(tmp_path / "cache"))
    yield


def _need(name: str) -> None:
    if name not in kdsl.available_backends():
        pytest.skip(f"{name} backend unavailable")


# --- Vulkan: device lost ----------------------------------------------------------------------
def _vk() -> Any:
    """The ``vulkan`` package as kdsl's runtime sees it (tests/vulkan shadows the name, bug 5)."""
    from kdsl.runtime.vulkan import commands

    return commands.vk


def _arm(monkeypatch: pytest.MonkeyPatch, fn: str, after_real: bool) -> list[int]:
    """Make the next call of ``vk.<fn>`` raise ``VkErrorDeviceLost`` (after doing the real work
    when ``after_real``: the GPU finished, the driver then reports the loss). Returns a call log."""
    vk = _vk()
    real: Callable[..., Any] = getattr(vk, fn)
    fired: list[int] = []

    def fake(*args: Any, **kwargs: Any) -> Any:
        if fired:
            return real(*args, **kwargs)
        fired.append(1)
        if after_real:
            real(*args, **kwargs)
        raise vk.VkErrorDeviceLost()

    monkeypatch.setattr(vk, fn, fake)
    return fired


def _current_device() -> Any:
    from kdsl.runtime.vulkan.device import get_device

    return get_device()


@pytest.mark.parametrize("where", ["vkQueueSubmit", "vkWaitForFences"])
def test_vulkan_device_lost_sync_launch(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _need("vulkan")
    x = np.arange(1000, dtype=np.float32)
    with kdsl.backend("vulkan"):
        np.testing.assert_array_equal(_run(x, 3.0), _want(x, 3.0))
        before = _current_device()
        fired = _arm(monkeypatch, where, after_real=where == "vkWaitForFences")
        with pytest.raises(kdsl.KernelRuntimeError, match=r"device was lost .*kernel 'scale_kernel'") as info:
            _run(x, 3.0)
        assert fired and "new device at the next launch" in str(info.value)
        assert before.lost
        for k in (3.0, 5.0):  # the warm kernel and a new compilation, both on the new device
            np.testing.assert_array_equal(_run(x, k), _want(x, k))
        after = _current_device()
        assert after is not before and not after.lost and not before.alive


def test_vulkan_device_lost_async_launch_and_old_device_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    _need("vulkan")
    x = np.arange(3000, dtype=np.float32)
    with kdsl.backend("vulkan"):
        dx = kdsl.tensor(x)
        dout = kdsl.zeros(x.shape, np.float32)
        scale_kernel[(12,)](dx, dout, x.size, K=2.0, BLOCK=256)
        np.testing.assert_array_equal(dout.numpy(), _want(x, 2.0))
        _arm(monkeypatch, "vkWaitForFences", after_real=True)
        scale_kernel[(12,)](dx, dout, x.size, K=2.0, BLOCK=256)  # asynchronous: returns at once
        with pytest.raises(kdsl.KernelRuntimeError, match=r"device was lost while running kernel 'scale_kernel'"):
            kdsl.synchronize()
        # memory of the lost device: a clear error, never a read of freed memory
        with pytest.raises(kdsl.KernelRuntimeError, match="allocated on a Vulkan device that has since been lost"):
            dout.numpy()
        with pytest.raises(kdsl.KernelRuntimeError, match="since been lost"):
            dx.copy_from(x)
        fresh_out = kdsl.zeros(x.shape, np.float32)
        with pytest.raises(kdsl.LaunchError, match="since been lost") as info:
            scale_kernel[(12,)](dx, fresh_out, x.size, K=2.0, BLOCK=256)
        assert info.value.param == "x_ptr"
        # new arrays on the new device work, asynchronously again
        dx2 = kdsl.tensor(x)
        scale_kernel[(12,)](dx2, fresh_out, x.size, K=2.0, BLOCK=256)
        kdsl.synchronize()
        np.testing.assert_array_equal(fresh_out.numpy(), _want(x, 2.0))
        del dx, dout  # collecting arrays of the lost device is harmless
        np.testing.assert_array_equal(_run(x, 4.0), _want(x, 4.0))


# --- Vulkan: pipeline build failure -------------------------------------------------------------
@pytest.mark.parametrize("where", ["vkCreateShaderModule", "vkCreateComputePipelines"])
def test_vulkan_pipeline_build_failure(where: str, monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    _need("vulkan")
    vk = _vk()
    real = getattr(vk, where)
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        raise vk.VkErrorInitializationFailed()

    x = np.arange(700, dtype=np.float32)
    k = _fresh_k()
    with kdsl.backend("vulkan"):
        monkeypatch.setattr(vk, where, failing)
        with pytest.raises(kdsl.CompilationError, match="failed to build kernel 'scale_kernel'") as info:
            _run(x, k)
        assert calls
        msg = str(info.value)
        assert where in msg and "VkErrorInitializationFailed" in msg and "spirv-val" in msg
        monkeypatch.setattr(vk, where, real)
        np.testing.assert_array_equal(_run(x, k), _want(x, k))
        np.testing.assert_array_equal(_run(x, k), _want(x, k))


# --- cpu (llvmlite) -----------------------------------------------------------------------------
def test_cpu_llvm_rejects_the_ir(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    _need("cpu")
    from kdsl.runtime.cpu import backend as cpu_backend

    real = cpu_backend.render_llvm

    def corrupted(*args: Any, **kwargs: Any) -> Any:
        r = real(*args, **kwargs)
        lines = r.ir.splitlines()
        at = next(i for i, line in enumerate(lines) if line.strip().startswith("ret "))
        lines.insert(at, "  %kdsl.bad = add i32 %undefined.value, 1")
        return dataclasses.replace(r, ir="\n".join(lines) + "\n")

    x = np.arange(900, dtype=np.float32)
    k = _fresh_k()
    with kdsl.backend("cpu"):
        monkeypatch.setattr(cpu_backend, "render_llvm", corrupted)
        with pytest.raises(kdsl.CompilationError, match="LLVM failed to parse and optimise kernel") as info:
            _run(x, k)
        msg = str(info.value)
        assert "scale_kernel" in msg and "error:" in msg and "%undefined.value" in msg  # LLVM's log + IR line
        assert "test_device_faults.py" in msg  # located at the kernel's definition
        monkeypatch.setattr(cpu_backend, "render_llvm", real)
        np.testing.assert_array_equal(_run(x, k), _want(x, k))


def test_cpu_object_load_failure(monkeypatch: pytest.MonkeyPatch, fresh_cache: None) -> None:
    _need("cpu")
    from kdsl.runtime.cpu import backend as cpu_backend

    real = cpu_backend.LoadedObject

    def failing(obj: bytes) -> Any:
        raise RuntimeError("LLVM ERROR: injected: cannot link object code")

    x = np.arange(900, dtype=np.float32)
    k = _fresh_k()
    with kdsl.backend("cpu"):
        monkeypatch.setattr(cpu_backend, "LoadedObject", failing)
        with pytest.raises(kdsl.CompilationError, match="load the object code of kernel") as info:
            _run(x, k)
        assert "injected: cannot link object code" in str(info.value)
        monkeypatch.setattr(cpu_backend, "LoadedObject", real)
        np.testing.assert_array_equal(_run(x, k), _want(x, k))
