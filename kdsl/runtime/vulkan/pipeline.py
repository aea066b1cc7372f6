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

A driver failing to build a pipeline (``vkCreateShaderModule`` /
``vkCreateComputePipelines`` returning an error) is a kdsl or driver bug, not
the user's: it raises :class:`PipelineBuildError` naming the kernel, with the
driver's result code and, since Vulkan drivers return no build log, the report
of ``spirv-val`` (Khronos' validator, when installed) on the module; whatever
was created for it is destroyed, so the next pipeline builds from a clean state.
A ``VK_ERROR_DEVICE_LOST`` there is reported as a lost device (``commands``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import vulkan as vk

from kdsl.errors import CompilationError
from kdsl.runtime.vulkan import vkconst as vkc
from kdsl.runtime.vulkan.commands import device_lost
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


class PipelineBuildError(CompilationError):
    """The Vulkan driver failed to build a kernel's pipeline; ``log`` is what is known of why."""

    def __init__(self, kernel: str, step: str, result: str, log: str) -> None:
        self.kernel = kernel
        self.log = log
        super().__init__(
            f"vulkan: the driver failed to build kernel '{kernel}' ({step} returned {result}; "
            f"a kdsl or driver bug: please report it with this message)\n{log}"
        )


def validator_log(spirv: bytes, timeout_s: float = 20.0) -> str:
    """``spirv-val``'s report on ``spirv`` (the closest thing to a build log Vulkan has)."""
    tool = shutil.which("spirv-val")
    if tool is None:
        return "spirv-val: not installed (Debian package spirv-tools), no validation report"
    with tempfile.TemporaryDirectory(prefix="kdsl-spv-") as tmp:
        path = Path(tmp) / "kernel.spv"
        path.write_bytes(spirv)
        try:
            res = subprocess.run(
                [tool, "--target-env", "vulkan1.3", str(path)],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"spirv-val: could not run ({exc})"
    out = (res.stdout + res.stderr).strip()
    return f"spirv-val: {out}" if out else "spirv-val: the module is valid"


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
        made: list[tuple[Callable[..., Any], Any]] = []  # (destroy, handle) of what this call created
        try:
            p = self._create(spirv, entry, push_size, set_layout, made)
        except vk.VkErrorDeviceLost as exc:
            raise device_lost(self.device, f"while building the pipeline of kernel '{entry}'", exc) from None
        except vk.VkError as exc:
            dev = self.device.device
            for destroy, handle in reversed(made):
                destroy(dev, handle, None)
            step = {0: "vkCreateShaderModule", 1: "vkCreatePipelineLayout"}.get(len(made), "vkCreateComputePipelines")
            raise PipelineBuildError(entry, step, type(exc).__name__, validator_log(spirv)) from None
        self.by_key[key] = p
        return p

    def _create(
        self, spirv: bytes, entry: str, push_size: int, set_layout: Any, made: list[tuple[Callable[..., Any], Any]]
    ) -> Pipeline:
        dev = self.device.device
        smi = vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv)
        module = vk.vkCreateShaderModule(dev, smi, None)
        made.append((vk.vkDestroyShaderModule, module))
        if set_layout is not None:
            pli = vk.VkPipelineLayoutCreateInfo(pSetLayouts=[set_layout])
        else:
            rng = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=push_size)
            rng.offset = 0
            pli = vk.VkPipelineLayoutCreateInfo(pPushConstantRanges=[rng])
        layout = vk.vkCreatePipelineLayout(dev, pli, None)
        made.append((vk.vkDestroyPipelineLayout, layout))
        stage = vk.VkPipelineShaderStageCreateInfo(stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry)
        cpi = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout, flags=vkc.PIPELINE_CREATE_DISPATCH_BASE_BIT)
        cpi.basePipelineIndex = -1
        pipeline = vk.vkCreateComputePipelines(dev, self.cache, 1, [cpi], None)[0]
        return Pipeline(pipeline, layout, module, push_size)

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
