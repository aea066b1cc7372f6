"""Vulkan 1.1/1.2 core enum values that the ``vulkan`` package (1.3.275.1) leaves as ``None``.

The package generates constants for extension aliases but not for these
promoted core bits; the values are from the Vulkan specification's
``VkBufferUsageFlagBits``, ``VkMemoryAllocateFlagBits`` and
``VkPipelineCreateFlagBits``. A newer package that defines them wins.
"""

from __future__ import annotations

import vulkan as vk


def _get(name: str, spec_value: int) -> int:
    v = getattr(vk, name, None)
    return int(v) if isinstance(v, int) else spec_value


BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT = _get("VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT", 0x00020000)
MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT = _get("VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT", 0x00000002)
PIPELINE_CREATE_DISPATCH_BASE_BIT = _get("VK_PIPELINE_CREATE_DISPATCH_BASE_BIT", 0x00000010)
