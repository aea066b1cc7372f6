"""Per-device runtime state: allocator, pipelines, submitter, status buffer, scratch buffer, copies.

One :class:`Runtime` per :class:`~kdsl.runtime.vulkan.device.Device`; its
parts register their own teardown with the device, so
:func:`kdsl.runtime.vulkan.device.shutdown` (run at exit) destroys everything
in reverse order of creation.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import vulkan as vk

from kdsl.codegen.spirv import abi
from kdsl.runtime.vulkan.commands import Submitter
from kdsl.runtime.vulkan.device import Device, get_device
from kdsl.runtime.vulkan.inflight import InFlight
from kdsl.runtime.vulkan.memory import Allocation, Allocator
from kdsl.runtime.vulkan.params import UniformParams
from kdsl.runtime.vulkan.pipeline import Pipelines
from kdsl.runtime.vulkan.scratch import ScratchCache

ffi = vk.ffi


class Runtime:
    def __init__(self, device: Device, force_staging: bool = False) -> None:
        self.device = device
        self.submitter = Submitter(device)
        self.pipelines = Pipelines(device)
        self.allocator = Allocator(device, force_staging=force_staging)
        self.status = self.allocator.alloc(abi.STATUS_BYTES, staging=True)
        self.status.host()[:] = 0
        self.held: list[tuple[Any, list[Allocation]]] = []  # (retired fence, allocations it may use)
        # from collected device arrays (appended without the lock), each with the number of launches
        # submitted when it was freed: the memory is reused once those have finished
        self.to_free: list[tuple[Allocation, int]] = []
        self.inflight = InFlight(self.submitter, self.allocator)
        self._uniform_params: UniformParams | None = None
        self.scratch = ScratchCache(self.allocator)  # kernels with scratch arrays (vulkan/scratch.py)

    def scratch_buffer(self, nbytes: int) -> Allocation:
        """The scratch buffer, at least ``nbytes`` (call with the device lock held); a replaced
        buffer is freed once the launches submitted before now have finished."""
        return self.scratch.get(nbytes, lambda old: self.to_free.append((old, self.inflight.submitted)))

    def uniform_params(self) -> UniformParams:
        """The parameter ring of "uniform" kernels (created at first use)."""
        if self._uniform_params is None:
            self._uniform_params = UniformParams(self.allocator)
        return self._uniform_params

    def drain_frees(self) -> None:
        """Free what collected device arrays left behind and no launch in flight may still use
        (call with the device lock held)."""
        done = self.inflight.completed
        keep = []
        while self.to_free:
            alloc, tag = self.to_free.pop()
            if tag <= done:
                self.allocator.free(alloc)
            else:
                keep.append((alloc, tag))
        self.to_free.extend(keep)

    def hold(self, allocs: list[Allocation]) -> None:
        """Keep ``allocs`` reserved until the just-retired (timed-out) submission ends."""
        if self.submitter.retired:
            self.held.append((self.submitter.retired[-1][1], list(allocs)))
            allocs.clear()

    def release_held(self) -> None:
        """Free the allocations of timed-out submissions that have finished since."""
        if not self.held:
            return
        self.submitter.reap()
        pending = {id(f) for _, f in self.submitter.retired}
        keep = []
        for fence, allocs in self.held:
            if id(fence) in pending:
                keep.append((fence, allocs))
                continue
            for a in allocs:
                self.allocator.free(a)
        self.held = keep

    @property
    def staged(self) -> bool:
        return self.allocator.host_visible is False

    def upload(self, pairs: list[tuple[Allocation, np.ndarray]]) -> None:
        """Copy host bytes into allocations (mapped memcpy, or through a staging buffer)."""
        direct = [(a, h) for a, h in pairs if a.block.mapped is not None]
        for a, h in direct:
            a.host()[: h.nbytes] = h
        staged = [(a, h) for a, h in pairs if a.block.mapped is None]
        if not staged:
            return
        temps = [self.allocator.alloc(h.nbytes, staging=True) for _, h in staged]
        try:
            for t, (_, h) in zip(temps, staged):
                t.host()[: h.nbytes] = h

            def record(cmd: Any) -> None:
                for t, (a, h) in zip(temps, staged):
                    region = vk.VkBufferCopy(srcOffset=t.offset, dstOffset=a.offset, size=max(h.nbytes, 1))
                    region.srcOffset, region.dstOffset = t.offset, a.offset
                    vk.vkCmdCopyBuffer(cmd, t.block.buffer, a.block.buffer, 1, [region])

            self.submitter.run(record)
        finally:
            for t in temps:
                self.allocator.free(t)

    def download(self, a: Allocation, host: np.ndarray) -> None:
        """Copy an allocation back into the numpy view ``host`` (1-D, possibly strided)."""
        nbytes = host.nbytes
        if a.block.mapped is not None:
            _write_back(a.host()[:nbytes], host)
            return
        t = self.allocator.alloc(nbytes, staging=True)
        try:
            def record(cmd: Any) -> None:
                region = vk.VkBufferCopy(srcOffset=a.offset, dstOffset=t.offset, size=max(nbytes, 1))
                region.srcOffset, region.dstOffset = a.offset, t.offset
                vk.vkCmdCopyBuffer(cmd, a.block.buffer, t.block.buffer, 1, [region])

            self.submitter.run(record)
            _write_back(t.host()[:nbytes], host)
        finally:
            self.allocator.free(t)


def _write_back(raw: np.ndarray, host: np.ndarray) -> None:
    src = raw.view(host.dtype) if raw.nbytes else raw
    if host.flags.c_contiguous:
        host.view(np.uint8).reshape(-1)[:] = raw
    else:
        np.copyto(host, src)


_RUNTIMES: dict[int, Runtime] = {}  # cache: one runtime per live device
_LOCK = threading.Lock()


def get_runtime() -> Runtime:
    device = get_device()
    with _LOCK:
        rt = _RUNTIMES.get(id(device))
        if rt is not None and rt.device is device and rt.held:
            rt.release_held()
        if rt is None or rt.device is not device:
            rt = Runtime(device)
            _RUNTIMES.clear()
            _RUNTIMES[id(device)] = rt
        return rt
