"""Asynchronous launches: kernels whose arguments are all device arrays do not wait.

A launch whose pointer arguments are all device arrays (nothing to copy back),
without ``print`` and without profiling, is recorded into one of
:data:`MAX_IN_FLIGHT` command buffers, submitted, and returned from at once.
Everything that lets the host see device memory waits for all of them first
(:meth:`InFlight.drain`): ``kdsl.synchronize()``, a device array's
``read``/``write``, every synchronous launch, and freeing the memory of a
collected device array once a later submission might still use it.

Ordering: each command buffer starts with a compute-to-compute memory
barrier, whose first scope is every command submitted earlier to the queue, so
a kernel sees what the kernels launched before it wrote.

Errors: each in-flight launch gets its own 64-byte status slot (assert /
loop-cut word and the masked-load scratch, see :mod:`kdsl.codegen.spirv.abi`).
The first failure found is raised by the next ``drain`` -- the next
synchronize, device-array read/write or synchronous launch -- naming the
kernel that failed, as CUDA reports asynchronous errors.

Timeouts: a launch still running after ``KDSL_VULKAN_TIMEOUT`` seconds is
reported once, by the waiting call that found it (``KernelTimeout`` naming
the kernel). Vulkan cannot cancel it, and its fence, command buffer, status
slot and memory may not be reset, re-recorded or reused while it is pending
(undefined behaviour), so the slot is *retired*: moved out of the pending
queue into :attr:`InFlight.stuck`, where it keeps all of them until its fence
signals (checked without waiting at every acquire and drain); then it is
released as a normal idle slot. Later waiting calls no longer wait for it;
later launches queue behind it on the device (each command buffer starts
with a barrier on all earlier work), so they finish only after it -- a wait
for one of them that also times out says so. While timed-out launches hold
every slot, launches fall back to the synchronous path. The device is not
marked lost: a slow kernel is not a driver failure, and at exit a device with
a stuck launch is left alive (``Device.close``) rather than destroyed under it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vulkan as vk

from kdsl.codegen.spirv import abi
from kdsl.errors import KernelRuntimeError
from kdsl.runtime.vulkan.commands import ENV_TIMEOUT, KernelTimeout, Submitter, device_lost, timeout_seconds
from kdsl.runtime.vulkan.memory import Allocation, Allocator

SLOTS = 8  # status slots (and at most this many command buffers) for launches in flight
MAX_IN_FLIGHT = 8  # submissions not yet waited for (<= SLOTS); 0 makes every launch synchronous
SLOT_BYTES = abi.STATUS_RECORDS  # status word, print cursor, scratch: no print records
_STAGES = vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
_ACCESS = vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT

# checks the status slot of a finished launch; raises the kernel's error
StatusCheck = Callable[[np.ndarray], None]


@dataclass
class _Slot:
    cmd: Any
    fence: Any
    index: int
    submit_info: Any = None
    seq: int = 0  # submission number (InFlight.submitted when it was submitted)
    name: str = ""  # what was submitted, for a timeout's message
    check: StatusCheck | None = None
    allocs: list[Allocation] = field(default_factory=list)


class InFlight:
    """The command buffers, fences and status slots of asynchronous launches (see module doc)."""

    def __init__(self, submitter: Submitter, allocator: Allocator) -> None:
        self.submitter = submitter
        self.allocator = allocator
        self.device = submitter.device
        self.status = allocator.alloc(SLOTS * SLOT_BYTES, staging=True)
        self.created = 0
        self.error: KernelRuntimeError | None = None  # the first failure found, raised by drain()
        self.idle: list[_Slot] = []
        self.pending: deque[_Slot] = deque()
        self.submitted = 0  # launches submitted so far (frees are tagged with it)
        self.stuck: list[_Slot] = []  # timed-out launches, kept until their fence signals
        self.barrier = vk.VkMemoryBarrier(srcAccessMask=_ACCESS, dstAccessMask=_ACCESS)
        self.begin_info = vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT)
        self.device.closers.append(self.release)
        self.device.pending.append(self.still_running)

    @property
    def completed(self) -> int:
        """Launches known finished, in submission order: every launch numbered below it is done
        (a timed-out one holds this back until it really ends)."""
        return min((s.seq for s in (*self.pending, *self.stuck)), default=self.submitted)

    def still_running(self) -> bool:
        """True while a timed-out launch has not finished (the device must not be destroyed)."""
        self._reap_stuck()
        return bool(self.stuck)

    # --- slots -------------------------------------------------------------------------------
    def acquire(self) -> _Slot | None:
        """A free slot (waiting for the oldest launch when :data:`MAX_IN_FLIGHT` are in flight);
        None when timed-out launches hold every slot (the launch then runs synchronously)."""
        self._reap()
        cap = min(MAX_IN_FLIGHT, SLOTS - len(self.stuck))
        if cap <= 0:
            return None
        while self.pending and len(self.pending) >= cap:
            self._retire(wait=True)  # the cap: wait for the oldest
        if self.idle:
            return self.idle.pop()
        cmd, fence = self.submitter.new_pair()
        self.created += 1
        return _Slot(cmd, fence, self.created - 1)

    def give_back(self, slot: _Slot) -> None:
        """Return a slot acquired for a launch that was not submitted after all."""
        self.idle.append(slot)

    def status_slot(self, slot: _Slot) -> Allocation:
        return Allocation(self.status.block, self.status.offset + slot.index * SLOT_BYTES, SLOT_BYTES)

    # --- submit ------------------------------------------------------------------------------
    def submit(
        self,
        slot: _Slot,
        record: Callable[[Any], None],
        check: StatusCheck | None,
        allocs: list[Allocation],
        name: str = "a launch",
    ) -> None:
        """Record ``record(cmd)`` after a barrier into ``slot`` and submit it without waiting.

        ``check`` gets the launch's status slot (zeroed here) once it has
        finished; ``allocs`` are freed then (they belong to the launch, e.g. a
        parameter buffer) and the list is emptied.
        """
        self.status_slot(slot).host()[:] = 0
        cmd = slot.cmd
        vk.vkBeginCommandBuffer(cmd, self.begin_info)
        vk.vkCmdPipelineBarrier(cmd, _STAGES, _STAGES, 0, 1, [self.barrier], 0, None, 0, None)
        record(cmd)
        vk.vkEndCommandBuffer(cmd)
        if slot.submit_info is None:
            slot.submit_info = vk.VkSubmitInfo(pCommandBuffers=[cmd])
        try:
            vk.vkQueueSubmit(self.device.queue, 1, [slot.submit_info], slot.fence)
        except vk.VkErrorDeviceLost as exc:
            raise device_lost(self.device, f"at the submission of {name} (asynchronous)", exc) from None
        slot.check, slot.allocs, slot.seq, slot.name = check, list(allocs), self.submitted, name
        allocs.clear()
        self.pending.append(slot)
        self.submitted += 1

    # --- completion ----------------------------------------------------------------------------
    def _reap(self) -> None:
        """Retire the finished launches at the head of the queue and finished stuck ones (no waiting)."""
        if self.stuck:
            self._reap_stuck()
        while self.pending and self._signalled(self.pending[0]):
            self._retire(wait=False)

    def _signalled(self, slot: _Slot) -> bool:
        return bool(vk.lib.vkGetFenceStatus(self.device.device, slot.fence) == vk.VK_SUCCESS)

    def _reap_stuck(self) -> None:
        """Release the timed-out launches that have finished since (their status was already reported)."""
        still = []
        for slot in self.stuck:
            if not self._signalled(slot):
                still.append(slot)
                continue
            vk.vkResetFences(self.device.device, 1, [slot.fence])
            for a in slot.allocs:
                self.allocator.free(a)
            slot.check, slot.allocs = None, []
            self.idle.append(slot)
        self.stuck = still

    def _timed_out(self, slot: _Slot, limit: float) -> KernelTimeout:
        """Move the oldest launch (still running) to :attr:`stuck`; the error reporting it, once."""
        self.pending.popleft()
        queued = (
            " (it was queued behind an earlier launch that timed out and may still be running)" if self.stuck else ""
        )
        self.stuck.append(slot)
        return KernelTimeout(
            f"vulkan: {slot.name} (asynchronous) did not finish within {limit:g} s ({ENV_TIMEOUT}){queued}; "
            "it may still be running: its memory stays reserved until it ends and later launches run after it"
        )

    def _retire(self, wait: bool) -> None:
        """Finish the oldest launch; a kernel failure is kept for :meth:`drain` to raise."""
        slot = self.pending[0]
        dev = self.device.device
        if wait:
            limit = timeout_seconds()
            try:
                vk.vkWaitForFences(dev, 1, [slot.fence], vk.VK_TRUE, int(limit * 1e9))
            except vk.VkTimeout:
                raise self._timed_out(slot, limit) from None
            except vk.VkErrorDeviceLost as exc:
                raise device_lost(self.device, f"while running {slot.name} (asynchronous)", exc) from None
        self.pending.popleft()
        vk.vkResetFences(dev, 1, [slot.fence])
        check, allocs = slot.check, slot.allocs
        slot.check, slot.allocs = None, []
        for a in allocs:
            self.allocator.free(a)
        raw = self.status_slot(slot).host().copy()
        self.idle.append(slot)
        if check is None:
            return
        try:
            check(raw)
        except KernelRuntimeError as exc:
            self.error = self.error or exc

    def drain(self) -> None:
        """Wait for every launch in flight; then raise the first failure of one of them, if any.

        A launch that times out is raised at once (and not waited for again, see module doc)."""
        if self.stuck:
            self._reap_stuck()
        while self.pending:
            self._retire(wait=True)
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def release(self) -> None:
        dev = self.device.device
        for slot in [*self.pending, *self.stuck, *self.idle]:
            vk.vkDestroyFence(dev, slot.fence, None)
            vk.vkFreeCommandBuffers(dev, self.submitter.pool, 1, [slot.cmd])
        self.pending.clear()
        self.stuck.clear()
        self.idle.clear()
