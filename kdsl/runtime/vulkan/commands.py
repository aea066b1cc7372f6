"""Command pool, one reusable command buffer, a fence and timestamp queries.

Launches are synchronous (numpy arguments are copied back afterwards), so
one primary command buffer is re-recorded per launch and one fence is waited
on; the submit structures are built once. Two timestamp queries bracket the
dispatches when timing is requested (``timestampPeriod`` converts ticks to ns).

Waits are bounded: a submission that has not finished after
``KDSL_VULKAN_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT_S`) raises
:class:`KernelTimeout`. Vulkan cannot cancel work, so the timed-out command
buffer and fence are *retired* (kept alive, not reused: re-recording a pending
command buffer is undefined behaviour and crashed lavapipe) and a fresh pair
is created; retired pairs are destroyed once their fence signals.
``VK_ERROR_DEVICE_LOST`` (at submission or while waiting) raises
:class:`DeviceLost` naming the kernel and marks the device lost; the next
launch (or allocation) destroys it and creates a new device with new queues,
pools, allocator and pipelines, and each kernel re-creates its pipeline there.
Device arrays allocated on the lost device raise :class:`DeviceLost` when used
(their memory is gone) instead of touching freed memory. Vulkan drivers give
no log for a lost device (``VK_EXT_device_fault`` is not offered by lavapipe),
so the error carries the driver's result code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import vulkan as vk

from kdsl.errors import KernelRuntimeError
from kdsl.runtime.vulkan.device import Device

ffi = vk.ffi
ENV_TIMEOUT = "KDSL_VULKAN_TIMEOUT"
DEFAULT_TIMEOUT_S = 120.0


class KernelTimeout(KernelRuntimeError):
    """The device did not finish a submission in time (it may still be running)."""


class DeviceLost(KernelRuntimeError):
    """The driver reported ``VK_ERROR_DEVICE_LOST``, or memory of a lost device was used."""


def device_lost(device: Device, when: str, exc: BaseException) -> DeviceLost:
    """Mark ``device`` lost; the error to raise (``when``: "while running kernel 'k'", ...)."""
    device.lost = True
    return DeviceLost(
        f"vulkan: the device was lost {when} (driver result: {type(exc).__name__}); the "
        "results of that launch are lost, kdsl creates a new device at the next launch, and "
        "device arrays allocated before the loss can no longer be used (allocate them again)"
    )


def timeout_seconds() -> float:
    """``KDSL_VULKAN_TIMEOUT`` (seconds, > 0), else :data:`DEFAULT_TIMEOUT_S`."""
    raw = os.environ.get(ENV_TIMEOUT, "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        return DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


class Submitter:
    def __init__(self, device: Device) -> None:
        self.device = device
        dev = device.device
        pci = vk.VkCommandPoolCreateInfo(
            queueFamilyIndex=device.family, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
        )
        pci.queueFamilyIndex = device.family
        self.pool = vk.vkCreateCommandPool(dev, pci, None)
        ai = vk.VkCommandBufferAllocateInfo(
            commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1
        )
        ai.level = vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY
        self.alloc_info = ai
        self.retired: list[tuple[Any, Any]] = []  # (command buffer, fence) of timed-out submissions
        self.cmd, self.fence = self.new_pair()
        qi = vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2)
        qi.queryType = vk.VK_QUERY_TYPE_TIMESTAMP
        self.queries = vk.vkCreateQueryPool(dev, qi, None)
        self.begin_info = vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)
        self.submit_info = vk.VkSubmitInfo(pCommandBuffers=[self.cmd])
        self.fences = [self.fence]
        self.stamps = ffi.new("uint64_t[2]")
        device.closers.append(self.release)
        device.pending.append(lambda: not self.reap())

    def new_pair(self) -> tuple[Any, Any]:
        """A fresh primary command buffer (from this pool) and an unsignalled fence."""
        dev = self.device.device
        return vk.vkAllocateCommandBuffers(dev, self.alloc_info)[0], vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)

    def _retire_current(self) -> None:
        """The current pair is still pending: keep it aside and start a fresh one."""
        self.retired.append((self.cmd, self.fence))
        self.cmd, self.fence = self.new_pair()
        self.submit_info = vk.VkSubmitInfo(pCommandBuffers=[self.cmd])
        self.fences = [self.fence]

    def reap(self) -> bool:
        """Destroy retired pairs whose work finished; True when none is pending any more."""
        dev = self.device.device
        still = []
        for cmd, fence in self.retired:
            if vk.lib.vkGetFenceStatus(dev, fence) == vk.VK_SUCCESS:
                vk.vkDestroyFence(dev, fence, None)
                vk.vkFreeCommandBuffers(dev, self.pool, 1, [cmd])
            else:
                still.append((cmd, fence))
        self.retired = still
        return not still

    def _wait(self, what: str) -> None:
        limit = timeout_seconds()
        try:
            vk.vkWaitForFences(self.device.device, 1, self.fences, vk.VK_TRUE, int(limit * 1e9))
        except vk.VkTimeout:
            self._retire_current()
            raise KernelTimeout(
                f"vulkan: {what} did not finish within {limit:g} s ({ENV_TIMEOUT}); it may still be running "
                "and its memory stays reserved until it ends. On lavapipe the first dispatch of a pipeline "
                "also runs the LLVM compilation of the shader."
            ) from None
        except vk.VkErrorDeviceLost as exc:
            raise device_lost(self.device, f"while running {what}", exc) from None

    def run(self, record: Callable[[Any], None], timing: bool = False, what: str = "a command buffer") -> float | None:
        """Record with ``record(cmd)``, submit, wait; returns the elapsed ns when ``timing``."""
        if self.retired:
            self.reap()
        cmd = self.cmd
        vk.vkBeginCommandBuffer(cmd, self.begin_info)
        if timing:
            vk.vkCmdResetQueryPool(cmd, self.queries, 0, 2)
            vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, self.queries, 0)
        record(cmd)
        if timing:
            vk.vkCmdWriteTimestamp(cmd, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 1)
        vk.vkEndCommandBuffer(cmd)
        dev = self.device.device
        try:
            vk.vkQueueSubmit(self.device.queue, 1, [self.submit_info], self.fence)
        except vk.VkErrorDeviceLost as exc:
            raise device_lost(self.device, f"at the submission of {what}", exc) from None
        self._wait(what)
        vk.vkResetFences(dev, 1, self.fences)
        if not timing:
            return None
        vk.lib.vkGetQueryPoolResults(
            dev, self.queries, 0, 2, 16, self.stamps, 8, vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT
        )
        return float(self.stamps[1] - self.stamps[0]) * self.device.info.timestamp_period

    def release(self) -> None:
        dev = self.device.device
        self.reap()
        vk.vkDestroyQueryPool(dev, self.queries, None)
        vk.vkDestroyFence(dev, self.fence, None)
        vk.vkFreeCommandBuffers(dev, self.pool, 1, [self.cmd])
        vk.vkDestroyCommandPool(dev, self.pool, None)
