"""Device arrays on the vulkan backend: Device interface, zero-copy launches, freeing."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import kdsl
from kdsl.runtime.vulkan import VulkanBackend
from kdsl.runtime.vulkan.arrays import VulkanBuffer

from . import vk_kernels as K


@pytest.fixture(autouse=True)
def _vulkan() -> object:
    with kdsl.backend("vulkan"):
        yield


def test_device_interface() -> None:
    dev = VulkanBackend().device()
    assert dev is VulkanBackend().device()
    assert dev.host_memory is False
    assert dev.name and dev.key.startswith("vulkan|") and "shader_float64=" in dev.key
    buf = dev.allocate(100)
    assert isinstance(buf, VulkanBuffer) and buf.address % 64 == 0
    src = np.arange(25, dtype=np.int32)
    dev.write(buf, src[5:], offset=20)
    dst = np.zeros(20, np.int32)
    dev.read(buf, dst, offset=20)
    dev.synchronize()
    np.testing.assert_array_equal(dst, src[5:])
    with pytest.raises(ValueError):
        dev.write(buf, src, offset=4)  # 100 bytes at offset 4 overflow the buffer


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64])
def test_round_trip(dtype: type) -> None:
    data = (np.arange(37) % 11).astype(dtype)
    d = kdsl.tensor(data)
    assert d.backend == "vulkan"
    np.testing.assert_array_equal(d.numpy(), data)


def test_launch_on_device_arrays_and_mixed_numpy() -> None:
    n = 1000
    x = kdsl.tensor(np.arange(n, dtype=np.float32))
    y = kdsl.tensor(np.ones(n, np.float32))
    out = kdsl.empty(n, np.float32)
    K.add_kernel[(kdsl.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out.numpy(), np.arange(n) + 1)
    host = np.zeros(n, np.float32)
    K.add_kernel[(kdsl.cdiv(n, 256),)](out, y, host, n, BLOCK=256)  # numpy output, device inputs
    np.testing.assert_array_equal(host, np.arange(n) + 2)


def test_collected_arrays_are_reused() -> None:
    rt = VulkanBackend().device().rt
    kdsl.empty(1 << 20, np.float32)  # temporary, collected at once
    gc.collect()
    before = rt.allocator.in_use()
    for _ in range(6):  # 6 MiB without reuse; each gc.collect() is slow late in a full session
        a = kdsl.empty(1 << 20, np.float32)
        del a
        gc.collect(1)  # young generations: a full collection is slow late in a full session
    kdsl.empty(16, np.float32)  # drains the deferred frees
    assert rt.allocator.in_use() <= before + (1 << 20) + 4096
