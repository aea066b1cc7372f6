"""Command pool, one reusable command buffer, a fence and timestamp queries.

Launches are synchronous (numpy arguments are copied back afterwards), so
one primary command buffer is re-recorded per launch and one fence is waited
on; the submit structures are built once. Two timestamp queries bracket the
dispatches when timing is requested (``timestampPeriod`` converts ticks to ns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import vulkan as vk

from kdsl.runtime.vulkan.device import Device

ffi = vk.ffi
_WAIT_NS = 60 * 1_000_000_000


class Submitter:
    def __init__(self, device: Device) -> None:
        self.device = device
        dev = device.device
        pci = vk.VkCommandPoolCreateInfo(queueFamilyIndex=device.family,
                                         flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT)
        pci.queueFamilyIndex = device.family
        self.pool = vk.vkCreateCommandPool(dev, pci, None)
        ai = vk.VkCommandBufferAllocateInfo(commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                            commandBufferCount=1)
        ai.level = vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY
        self.cmd = vk.vkAllocateCommandBuffers(dev, ai)[0]
        self.fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
        qi = vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2)
        qi.queryType = vk.VK_QUERY_TYPE_TIMESTAMP
        self.queries = vk.vkCreateQueryPool(dev, qi, None)
        self.begin_info = vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)
        self.submit_info = vk.VkSubmitInfo(pCommandBuffers=[self.cmd])
        self.fences = [self.fence]
        self.stamps = ffi.new("uint64_t[2]")
        device.closers.append(self.release)

    def run(self, record: Callable[[Any], None], timing: bool = False) -> float | None:
        """Record with ``record(cmd)``, submit, wait; returns the elapsed ns when ``timing``."""
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
        vk.vkQueueSubmit(self.device.queue, 1, [self.submit_info], self.fence)
        vk.vkWaitForFences(dev, 1, self.fences, vk.VK_TRUE, _WAIT_NS)
        vk.vkResetFences(dev, 1, self.fences)
        if not timing:
            return None
        vk.lib.vkGetQueryPoolResults(dev, self.queries, 0, 2, 16, self.stamps, 8,
                                     vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT)
        return float(self.stamps[1] - self.stamps[0]) * self.device.info.timestamp_period

    def release(self) -> None:
        dev = self.device.device
        vk.vkDestroyQueryPool(dev, self.queries, None)
        vk.vkDestroyFence(dev, self.fence, None)
        vk.vkFreeCommandBuffers(dev, self.pool, 1, [self.cmd])
        vk.vkDestroyCommandPool(dev, self.pool, None)
