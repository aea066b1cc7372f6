"""The ``vulkan`` backend: tile IR -> wi IR -> SPIR-V -> compute pipeline -> launch.

``compile`` runs the shared lowering (:func:`kdsl.lowering.lower_to_wi`) with
``num_threads`` from the launch options (default :data:`DEFAULT_NUM_THREADS`:
lavapipe vectorises across the invocations of a work-group, GPUs want a few
warps), emits SPIR-V for the device's features and creates the pipeline
(through the persistent pipeline cache). ``target`` overrides the device's
feature set (tests use it to simulate a device without, e.g., fp64).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kdsl.codegen.opencl.render import _written_args
from kdsl.codegen.spirv import SpirvKernel, Target, emit_spirv
from kdsl.errors import CompilationError
from kdsl.ir.core import ModuleOp
from kdsl.lowering import Layout, lower_to_wi
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan.device import INSTALL_HINT, probe
from kdsl.runtime.vulkan.kernel import VulkanKernel
from kdsl.runtime.vulkan.runtime import get_runtime

DEFAULT_NUM_THREADS = 64


@dataclass
class CompiledStages:
    """Every artefact of one compilation (for dumps, goldens and a disk cache)."""

    wi_module: ModuleOp
    spirv: SpirvKernel
    layout: Layout


def compile_stages(module: ModuleOp, entry: str, options: LaunchOptions, target: Target) -> CompiledStages:
    nt = options.num_threads or dict(options.extra).get("num_threads") or DEFAULT_NUM_THREADS
    layout = Layout.from_options(int(nt), options.extra)
    if layout.num_threads > target.max_workgroup_size:
        raise CompilationError(
            f"vulkan: num_threads={layout.num_threads} exceeds the device's maximum work-group size "
            f"{target.max_workgroup_size}"
        )
    wmod = lower_to_wi(module, entry, layout, local_limit=target.max_shared_memory)
    return CompiledStages(wmod, emit_spirv(wmod, target), layout)


class VulkanBackend:
    """``kdsl.runtime.backend.Backend`` for Vulkan compute devices (lavapipe here)."""

    name = "vulkan"

    def __init__(self, target_overrides: dict[str, object] | None = None) -> None:
        self.target_overrides = dict(target_overrides or {})

    def availability(self) -> tuple[bool, str]:
        ok, reason = probe()
        if not ok:
            return False, reason or INSTALL_HINT
        return True, ""

    def target(self) -> Target:
        base = get_runtime().device.target
        return dataclasses.replace(base, **self.target_overrides) if self.target_overrides else base  # type: ignore[arg-type]

    def compile_stages(self, module: ModuleOp, entry: str, options: LaunchOptions) -> CompiledStages:
        return compile_stages(module, entry, options, self.target())

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> VulkanKernel:
        stages = self.compile_stages(module, entry, options)
        func = stages.wi_module.body.ops[0]
        kernel = VulkanKernel(get_runtime(), stages.spirv, _written_args(func))
        kernel.stages = stages  # type: ignore[attr-defined]
        return kernel
