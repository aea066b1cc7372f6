"""Device memory: big blocks, sub-allocated; one buffer per block, addressed by device address.

Shaders reach memory only through ``u64`` device addresses (see
``docs/VULKAN.md``), so a kernel argument is just ``block address + offset``:
no descriptor per argument and no 128 MiB storage-buffer range limit.

Blocks come from a memory type that is host-visible and coherent when the
device offers one (every CPU device and integrated GPUs): the block stays
mapped and numpy copies in and out directly. Otherwise blocks are
device-local and :class:`Allocator` keeps a separate host-visible staging
block; ``upload``/``download`` then go through ``vkCmdCopyBuffer``.
Allocation is first fit over a sorted free list per block with 256-byte
alignment; freeing merges neighbours. Blocks are released at teardown.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vulkan as vk

from kdsl.errors import KernelRuntimeError
from kdsl.runtime.vulkan import vkconst as vkc
from kdsl.runtime.vulkan.device import Device

ALIGN = 256
BLOCK_BYTES = 64 << 20

_USAGE = (vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vkc.BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT
          | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT  # parameter blocks on lavapipe (params.py)
          | vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
_HOST = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT


@dataclass(eq=False)
class Block:
    size: int
    memory: Any
    buffer: Any
    address: int
    mapped: np.ndarray | None
    free: list[tuple[int, int]] = field(default_factory=list)  # sorted (offset, size)


@dataclass(eq=False)
class Allocation:
    """``size`` bytes at ``offset`` of ``block``; ``address`` is what shaders use."""

    block: Block
    offset: int
    size: int

    @property
    def address(self) -> int:
        return self.block.address + self.offset

    def host(self) -> np.ndarray:
        """The bytes as a writable numpy view (host-visible blocks only)."""
        assert self.block.mapped is not None
        return self.block.mapped[self.offset:self.offset + self.size]


def _memory_type(device: Device, bits: int, want: int) -> int:
    props = vk.vkGetPhysicalDeviceMemoryProperties(device.physical)
    for i in range(props.memoryTypeCount):
        if bits & (1 << i) and props.memoryTypes[i].propertyFlags & want == want:
            return i
    return -1


class Allocator:
    """Sub-allocates buffers from large device-memory blocks (see module doc)."""

    def __init__(self, device: Device, force_staging: bool = False) -> None:
        self.device = device
        self.blocks: list[Block] = []
        self.staging_blocks: list[Block] = []
        self.force_staging = force_staging
        self.host_visible: bool | None = None
        device.closers.append(self.release)

    def _new_block(self, size: int, host: bool) -> Block:
        dev = self.device.device
        info = vk.VkBufferCreateInfo(size=size, usage=_USAGE, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE)
        info.sharingMode = vk.VK_SHARING_MODE_EXCLUSIVE
        buffer = vk.vkCreateBuffer(dev, info, None)
        req = vk.vkGetBufferMemoryRequirements(dev, buffer)
        index = _memory_type(self.device, req.memoryTypeBits, _HOST) if host else -1
        if index < 0:
            index = _memory_type(self.device, req.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
            host = False
        flags = vk.VkMemoryAllocateFlagsInfo(flags=vkc.MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT)
        flags.deviceMask = 0
        alloc = vk.VkMemoryAllocateInfo(allocationSize=req.size, memoryTypeIndex=index, pNext=flags)
        alloc.memoryTypeIndex = index
        try:
            memory = vk.vkAllocateMemory(dev, alloc, None)
        except vk.VkError as exc:
            vk.vkDestroyBuffer(dev, buffer, None)
            raise KernelRuntimeError(f"vulkan: cannot allocate {size} bytes of device memory ({exc!r})") from exc
        vk.vkBindBufferMemory(dev, buffer, memory, 0)
        addr_info = vk.ffi.new("VkBufferDeviceAddressInfo*")
        addr_info.sType = vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
        addr_info.buffer = buffer
        address = int(vk.lib.vkGetBufferDeviceAddress(dev, addr_info))  # the package's wrapper drops the result
        mapped = None
        if host:
            raw = vk.vkMapMemory(dev, memory, 0, size, 0)
            mapped = np.frombuffer(raw, dtype=np.uint8)
        return Block(size, memory, buffer, address, mapped, [(0, size)])

    def alloc(self, nbytes: int, staging: bool = False) -> Allocation:
        """``nbytes`` (>= 1) of device memory; ``staging`` asks for host-visible memory."""
        size = max(ALIGN, -(-nbytes // ALIGN) * ALIGN)
        host = staging or not self.force_staging
        pool = self.staging_blocks if staging else self.blocks
        for block in pool:
            a = self._take(block, size)
            if a is not None:
                return a
        block = self._new_block(max(BLOCK_BYTES, size), host)
        if not staging and self.host_visible is None:
            self.host_visible = block.mapped is not None
        pool.append(block)
        a = self._take(block, size)
        assert a is not None
        return a

    @staticmethod
    def _take(block: Block, size: int) -> Allocation | None:
        for i, (off, n) in enumerate(block.free):
            if n >= size:
                if n == size:
                    del block.free[i]
                else:
                    block.free[i] = (off + size, n - size)
                return Allocation(block, off, size)
        return None

    @staticmethod
    def free(a: Allocation) -> None:
        fl = a.block.free
        i = bisect.bisect(fl, (a.offset, a.size))
        off, size = a.offset, a.size
        if i < len(fl) and fl[i][0] == off + size:  # merge with the next free range
            size += fl.pop(i)[1]
        if i > 0 and fl[i - 1][0] + fl[i - 1][1] == off:  # and the previous one
            off, size = fl[i - 1][0], fl[i - 1][1] + size
            fl[i - 1] = (off, size)
            return
        fl.insert(i, (off, size))

    def release(self) -> None:
        dev = self.device.device
        for block in self.blocks + self.staging_blocks:
            if block.mapped is not None:
                block.mapped = None
                vk.vkUnmapMemory(dev, block.memory)
            vk.vkDestroyBuffer(dev, block.buffer, None)
            vk.vkFreeMemory(dev, block.memory, None)
        self.blocks.clear()
        self.staging_blocks.clear()

    def in_use(self) -> int:
        """Bytes currently allocated (for tests: everything is freed after a launch)."""
        return sum(b.size - sum(n for _, n in b.free) for b in self.blocks + self.staging_blocks)
