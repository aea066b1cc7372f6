"""Kernel parameter blocks through one dynamic uniform buffer instead of push constants.

WHY: lavapipe (Mesa 22.3) leaks ~52 bytes of host memory on every dispatch
that follows a ``vkCmdPushConstants`` (measured: an empty shader dispatched
20,000 times grows RSS by 52 B per dispatch with pushed constants, by 0
without them or with a dynamic uniform buffer instead). On such a driver
(``Target.params_binding == "uniform"``) each launch copies its parameter block
into the next slot of a small host-visible ring and binds the one descriptor
set with that slot's dynamic offset; the shader reads the block from a
``Uniform`` variable at set 0, binding 0 (:mod:`kdsl.codegen.spirv.abi`).

Launches wait for their fence before the next one is recorded, so a slot is
free again long before the ring wraps around.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import vulkan as vk

from kdsl.codegen.spirv.abi import UNIFORM_PARAM_BYTES
from kdsl.runtime.vulkan.memory import Allocator

ffi = vk.ffi
RING_SLOTS = 16
_DYNAMIC_UBO = vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC
_COMPUTE = vk.VK_PIPELINE_BIND_POINT_COMPUTE


class UniformParams:
    """The descriptor set layout every "uniform" pipeline uses, its one set and the slot ring."""

    def __init__(self, allocator: Allocator) -> None:
        device = allocator.device
        dev = device.device
        binding = vk.VkDescriptorSetLayoutBinding(binding=0, descriptorType=_DYNAMIC_UBO, descriptorCount=1,
                                                  stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
        binding.binding = 0  # the package drops zero-valued fields
        self.set_layout = vk.vkCreateDescriptorSetLayout(dev, vk.VkDescriptorSetLayoutCreateInfo(pBindings=[binding]),
                                                         None)
        size = vk.VkDescriptorPoolSize(type=_DYNAMIC_UBO, descriptorCount=1)
        self.pool = vk.vkCreateDescriptorPool(dev, vk.VkDescriptorPoolCreateInfo(maxSets=1, pPoolSizes=[size]), None)
        info = vk.VkDescriptorSetAllocateInfo(descriptorPool=self.pool, pSetLayouts=[self.set_layout])
        self.sets = [vk.vkAllocateDescriptorSets(dev, info)[0]]
        self.ring = allocator.alloc(RING_SLOTS * UNIFORM_PARAM_BYTES, staging=True)
        self.host: np.ndarray = self.ring.host()
        buf = vk.VkDescriptorBufferInfo(buffer=self.ring.block.buffer, offset=self.ring.offset,
                                        range=UNIFORM_PARAM_BYTES)
        buf.offset = self.ring.offset
        write = vk.VkWriteDescriptorSet(dstSet=self.sets[0], dstBinding=0, descriptorType=_DYNAMIC_UBO,
                                        descriptorCount=1, pBufferInfo=[buf])
        write.dstBinding = 0
        vk.vkUpdateDescriptorSets(dev, 1, [write], 0, None)
        self.offset = ffi.new("uint32_t[1]")  # reused by every bind: no per-launch cffi objects
        self.next = 0
        self.device = device
        device.closers.append(self.release)

    def write(self, block: bytes | bytearray) -> int:
        """Copy ``block`` into the next ring slot; returns the slot's dynamic offset."""
        slot = self.next
        self.next = (slot + 1) % RING_SLOTS
        off = slot * UNIFORM_PARAM_BYTES
        self.host[off:off + len(block)] = np.frombuffer(block, np.uint8)
        return off

    def bind(self, cmd: Any, layout: Any, offset: int) -> None:
        self.offset[0] = offset
        vk.vkCmdBindDescriptorSets(cmd, _COMPUTE, layout, 0, 1, self.sets, 1, self.offset)

    def release(self) -> None:
        dev = self.device.device
        vk.vkDestroyDescriptorPool(dev, self.pool, None)
        vk.vkDestroyDescriptorSetLayout(dev, self.set_layout, None)
