"""Shader modules, pipeline layouts, compute pipelines and the persistent pipeline cache.

No per-array descriptors: every kernel parameter (pointers are device
addresses) travels in one block, so a pipeline layout is one push-constant
range -- or, on lavapipe, the one dynamic-uniform-buffer set layout of
:mod:`kdsl.runtime.vulkan.params`.
Pipelines are created with ``VK_PIPELINE_CREATE_DISPATCH_BASE_BIT`` so that
grids larger than ``maxComputeWorkGroupCount`` run as several
``vkCmdDispatchBase`` calls whose ``WorkgroupId`` continues where the last
one stopped.

The ``VkPipelineCache`` is loaded from and saved to
``$KDSL_CACHE_DIR/vulkan/pipelines-<vendor>-<device>-<driver>.bin`` (directory
created 0700, atomic write); the driver validates the blob's header and
ignores a mismatching or corrupted one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vulkan as vk

from kdsl.runtime.vulkan import vkconst as vkc
from kdsl.runtime.vulkan.device import Device

ffi = vk.ffi


def cache_dir() -> Path:
    base = os.environ.get("KDSL_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kdsl")
    path = Path(base) / "vulkan"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(base, 0o700)
        os.chmod(path, 0o700)
    return path


@dataclass(eq=False)
class Pipeline:
    pipeline: Any
    layout: Any
    module: Any
    push_size: int


class Pipelines:
    """Creates and owns the compute pipelines of one device (one per distinct shader)."""

    def __init__(self, device: Device) -> None:
        self.device = device
        info = device.info
        self.cache_path = cache_dir() / f"pipelines-{info.vendor_id:x}-{info.device_id:x}-{info.driver_version:x}.bin"
        self.cache = self._load_cache()
        self.by_key: dict[tuple[str, int], Pipeline] = {}
        device.closers.append(self.release)

    def _load_cache(self) -> Any:
        data = b""
        with contextlib.suppress(OSError):
            data = self.cache_path.read_bytes()
        info = vk.VkPipelineCacheCreateInfo()
        if data:
            blob = ffi.new("char[]", data)
            info.initialDataSize = len(data)
            info.pInitialData = blob
        try:
            return vk.vkCreatePipelineCache(self.device.device, info, None)
        except vk.VkError:  # a blob the driver refuses: start empty
            return vk.vkCreatePipelineCache(self.device.device, vk.VkPipelineCacheCreateInfo(), None)

    def save(self) -> None:
        dev = self.device.device
        size = ffi.new("size_t*")
        vk.lib.vkGetPipelineCacheData(dev, self.cache, size, ffi.NULL)
        buf = ffi.new("char[]", size[0])
        vk.lib.vkGetPipelineCacheData(dev, self.cache, size, buf)
        data = bytes(ffi.buffer(buf, size[0]))
        fd, tmp = tempfile.mkstemp(dir=self.cache_path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self.cache_path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def get(self, spirv: bytes, entry: str, push_size: int, set_layout: Any = None) -> Pipeline:
        """The pipeline of ``spirv``; parameters in push constants, or in the set of ``set_layout``."""
        key = (hashlib.sha256(spirv).hexdigest() + entry, push_size if set_layout is None else -1)
        if key in self.by_key:
            return self.by_key[key]
        dev = self.device.device
        smi = vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv)
        module = vk.vkCreateShaderModule(dev, smi, None)
        if set_layout is not None:
            pli = vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout])
        else:
            rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=push_size)
            rng.offset = 0
            pli = vk.VkPipelineLayoutCreateInfo(pPushConstantRanges=[rng])
        layout = vk.vkCreatePipelineLayout(dev, pli, None)
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry)
        cpi = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout,
                                             flags=vkc.PIPELINE_CREATE_DISPATCH_BASE_BIT)
        cpi.basePipelineIndex = -1
        pipeline = vk.vkCreateComputePipelines(dev, self.cache, 1, [cpi], None)[0]
        p = Pipeline(pipeline, layout, module, push_size)
        self.by_key[key] = p
        return p

    def release(self) -> None:
        dev = self.device.device
        with contextlib.suppress(OSError, vk.VkError):
            self.save()
        for p in self.by_key.values():
            vk.vkDestroyPipeline(dev, p.pipeline, None)
            vk.vkDestroyPipelineLayout(dev, p.layout, None)
            vk.vkDestroyShaderModule(dev, p.module, None)
        self.by_key.clear()
        vk.vkDestroyPipelineCache(dev, self.cache, None)
