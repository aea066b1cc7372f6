"""The scratch buffer of kernels whose ``__local`` buffers exceed the device's work-group memory.

Such kernels keep those buffers in a per-work-group slice of one device buffer
(``kdsl/lowering/scratch.py``, ``kdsl/codegen/spirv/scratch.py``): work-group ``L`` (linear over
the launch's grid) uses slice ``L mod slices``. A launch gets ``slices = min(groups,
SCRATCH_BUDGET // bytes per group)`` (at least one); when the grid has more work-groups than
that, it is dispatched in pieces of at most ``slices`` *consecutive* linear ids (so every piece
uses distinct slices) with a compute-to-compute memory barrier between pieces (so a piece reuses
a slice only after the piece before it has finished with it). Groups never running at the same
time is the only way two of them share a slice.

The buffer itself belongs to the device's :class:`~kdsl.runtime.vulkan.runtime.Runtime` (see
:class:`ScratchCache`): reused by every launch, grown when one needs more. Launches on the queue
are ordered (asynchronous ones start with a barrier on all earlier work, synchronous ones wait
for everything before them), so consecutive launches may share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import vulkan as vk

from kdsl.runtime.vulkan.memory import Allocation, Allocator

# bytes of scratch one launch may use at once; more work-groups than fit run in pieces
SCRATCH_BUDGET = 16 << 20

_STAGE = vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
_ACCESS = vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT

Piece = tuple[int, int, int, int, int, int]  # base x, y, z and size x, y, z of one vkCmdDispatchBase


def slices_for(grid: tuple[int, int, int], per_group: int) -> int:
    """Slices a launch of ``grid`` work-groups uses (see module doc; tests lower the budget)."""
    return max(1, min(grid[0] * grid[1] * grid[2], SCRATCH_BUDGET // per_group))


def slice_pieces(grid: tuple[int, int, int], limit: tuple[int, int, int], slices: int) -> list[Piece]:
    """Boxes covering ``grid`` whose linear ids ``x + gx * (y + gy * z)`` are consecutive ranges of
    at most ``slices`` ids, each dimension within the device's ``limit`` (maxComputeWorkGroupCount)."""
    gx, gy, gz = grid
    lx, ly, lz = limit
    if gx > min(slices, lx):  # parts of one row
        step = min(slices, lx)
        return [(x0, y, z, min(step, gx - x0), 1, 1) for z in range(gz) for y in range(gy) for x0 in range(0, gx, step)]
    if gx * gy > slices or gy > ly:  # whole rows of one plane
        step = min(slices // gx, ly)
        return [(0, y0, z, gx, min(step, gy - y0), 1) for z in range(gz) for y0 in range(0, gy, step)]
    step = min(slices // (gx * gy), lz)  # whole planes
    return [(0, 0, z0, gx, gy, min(step, gz - z0)) for z0 in range(0, gz, step)]


def piece_barrier() -> Any:
    """The memory barrier recorded between two pieces that reuse scratch slices."""
    return vk.VkMemoryBarrier(srcAccessMask=_ACCESS, dstAccessMask=_ACCESS)


def record_pieces(cmd: Any, pieces: Sequence[tuple[int, ...]], barrier: Any) -> None:
    """Dispatch ``pieces`` one after the other, ``barrier`` between each two."""
    for k, piece in enumerate(pieces):
        if k:
            vk.vkCmdPipelineBarrier(cmd, _STAGE, _STAGE, 0, 1, [barrier], 0, None, 0, None)
        vk.vkCmdDispatchBase(cmd, *piece)


class ScratchCache:
    """The device's scratch buffer: one allocation, reused across launches, replaced by a larger
    one when a launch needs more. The old one is freed only after the launches submitted before
    the replacement have finished (``defer``: the runtime's deferred-free list)."""

    def __init__(self, allocator: Allocator) -> None:
        self.allocator = allocator
        self.current: Allocation | None = None

    def get(self, nbytes: int, defer: Any) -> Allocation:
        """An allocation of at least ``nbytes``; ``defer(old)`` receives a replaced one."""
        cur = self.current
        if cur is not None and cur.size >= nbytes:
            return cur
        if cur is not None:
            defer(cur)
        self.current = self.allocator.alloc(nbytes)
        return self.current

    def detach(self) -> Allocation | None:
        """Give up the current buffer (a timed-out launch may still use it: its owner holds it
        until that launch ends); the next launch allocates a fresh one."""
        cur, self.current = self.current, None
        return cur
