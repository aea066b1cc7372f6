"""Device arrays on Vulkan: the :class:`~kdsl.runtime.backend` ``Device`` interface.

A buffer is a sub-allocation of the runtime's allocator wrapped in
:class:`VulkanBuffer` (freed back to the allocator when the last
``DeviceArray`` view of it is garbage-collected). Kernels receive its device
address (``buffer.address + offset``) directly: no copies at launch.

``host_memory`` is False even though on lavapipe (and integrated GPUs) the
memory is host-visible, coherent and stays mapped: the JIT's host-memory path
hands kernels numpy views, which the launch would copy into fresh device
memory; device arrays instead keep their one allocation for their lifetime.
``write``/``read`` are then a ``memcpy`` into/out of the mapping (a staging
copy on devices without host-visible memory).

After a lost device (:class:`~kdsl.runtime.vulkan.commands.DeviceLost`) the
arrays allocated on it keep their Python objects but not their memory: reading
or writing one raises ``DeviceLost`` and passing one to a kernel raises a
``LaunchError`` naming the parameter, instead of touching freed memory.

Launches whose pointer arguments are all device arrays are asynchronous
(:mod:`kdsl.runtime.vulkan.inflight`): ``synchronize``, ``read`` and
``write`` first wait for every launch in flight (and raise the first kernel
failure among them), so a read always sees every launch issued before it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kdsl.runtime.vulkan.commands import DeviceLost
from kdsl.runtime.vulkan.memory import Allocation
from kdsl.runtime.vulkan.runtime import Runtime, get_runtime


class VulkanBuffer:
    """One allocation owned by device arrays; ``address`` is what shaders use."""

    __slots__ = ("__weakref__", "alloc", "nbytes", "rt")

    def __init__(self, rt: Runtime, alloc: Allocation, nbytes: int) -> None:
        self.rt = rt
        self.alloc = alloc
        self.nbytes = nbytes

    @property
    def address(self) -> int:
        return self.alloc.address

    def view(self, offset: int, nbytes: int) -> Allocation:
        """The bytes ``[offset, offset + nbytes)`` as an (unowned) allocation."""
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"range [{offset}, {offset + nbytes}) outside a {self.nbytes}-byte vulkan buffer")
        return Allocation(self.alloc.block, self.alloc.offset + offset, nbytes)

    @property
    def gone(self) -> bool:
        """The device this buffer was allocated on was lost (or destroyed): its memory is gone."""
        return self.rt.device.lost or not self.rt.device.alive

    def __del__(self) -> None:
        # no lock here: the collector may run inside a launch that holds it;
        # the runtime frees deferred allocations at its next allocation/launch
        self.rt.to_free.append((self.alloc, self.rt.inflight.submitted))


class VulkanDevice:
    """kdsl's ``Device`` for the process's Vulkan device (see module doc)."""

    host_memory = False

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        info, t = rt.device.info, rt.device.target
        self.name = info.name
        feats = ",".join(
            f"{k}={int(bool(getattr(t, k)))}"
            for k in (
                "shader_float64",
                "shader_float16",
                "shader_int8",
                "shader_int16",
                "shader_int64",
                "int64_atomics",
                "float32_atomic_add",
            )
        )
        self.key = (
            f"vulkan|{info.name}|{info.vendor_id:04x}:{info.device_id:04x}|driver={info.driver_version}"
            f"|api={info.api_version[0]}.{info.api_version[1]}|{feats}"
        )

    def allocate(self, nbytes: int) -> VulkanBuffer:
        n = max(int(nbytes), 1)
        with self.rt.device.lock:
            self.rt.drain_frees()
            alloc = self.rt.allocator.alloc(max(n, 16))
        return VulkanBuffer(self.rt, alloc, n)

    def write(self, buffer: VulkanBuffer, src: np.ndarray[Any, Any], offset: int = 0) -> None:
        _check_alive(buffer)
        raw = np.ascontiguousarray(src).reshape(-1).view(np.uint8)
        if not raw.nbytes:
            return
        with self.rt.device.lock:
            self.rt.inflight.drain()  # launches issued before the write must not see it
            self.rt.upload([(buffer.view(offset, raw.nbytes), raw)])

    def read(self, buffer: VulkanBuffer, dst: np.ndarray[Any, Any], offset: int = 0) -> None:
        _check_alive(buffer)
        if not dst.nbytes:
            return
        with self.rt.device.lock:
            self.rt.inflight.drain()
            self.rt.download(buffer.view(offset, dst.nbytes), dst.reshape(-1))

    def address(self, buffer: VulkanBuffer, offset: int = 0) -> int:
        """The device address shaders use for byte ``offset`` of ``buffer`` (``DeviceArray.data_ptr``)."""
        _check_alive(buffer)
        return buffer.address + offset

    def synchronize(self) -> None:
        """Wait for the asynchronous launches; raises the first failure among them."""
        if self.rt.device.lost or not self.rt.device.alive:
            return  # nothing can finish there any more; the loss was raised when it was found
        with self.rt.device.lock:
            self.rt.inflight.drain()


def _check_alive(buffer: VulkanBuffer) -> None:
    if buffer.gone:
        raise DeviceLost(
            "vulkan: this device array was allocated on a Vulkan device that has since been "
            "lost; its memory and contents are gone (allocate it again)"
        )


_DEVICES: dict[int, VulkanDevice] = {}  # cache: one per live runtime


def get_vulkan_device() -> VulkanDevice:
    rt = get_runtime()
    dev = _DEVICES.get(id(rt))
    if dev is None or dev.rt is not rt:
        _DEVICES.clear()
        dev = _DEVICES[id(rt)] = VulkanDevice(rt)
    return dev
