"""The ``vulkan`` backend: tile IR -> wi IR -> SPIR-V -> compute pipeline -> launch.

``compile`` runs the shared lowering (:func:`kdsl.lowering.lower_to_wi`) with
``num_threads`` from the launch options (default :data:`DEFAULT_NUM_THREADS`,
doubled while :func:`barrier_state` says lavapipe's compile would explode,
halved while the work-group's shared memory does not fit), emits SPIR-V for the device's features and creates the pipeline
(through the persistent pipeline cache). ``target`` overrides the device's
feature set (tests use it to simulate a device without, e.g., fp64).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kdsl.codegen.spirv import SpirvKernel, Target, emit_spirv
from kdsl.codegen.spirv.target import array_itemsize
from kdsl.codegen.spirv.unroll import GridStrideLoop, grid_stride_loops, loop_passes, unrolled_loops
from kdsl.errors import CompilationError
from kdsl.ir.analysis import unused_pointer_args, written_pointer_args
from kdsl.ir.core import ModuleOp
from kdsl.ir.types import MemRefType
from kdsl.lowering import Layout, lower_to_wi
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan.arrays import VulkanDevice, get_vulkan_device
from kdsl.runtime.vulkan.device import INSTALL_HINT, probe
from kdsl.runtime.vulkan.kernel import VulkanKernel
from kdsl.runtime.vulkan.runtime import get_runtime

DEFAULT_NUM_THREADS = 64
MIN_NUM_THREADS = 8  # lavapipe's SIMD width (8 x 32 bit in 256-bit registers)
LAVAPIPE_PROGRAMS_PER_GROUP = 8  # one-work-item programs packed per work-group on llvmpipe (its SIMD width)
LAVAPIPE_UNROLL_TRIPS = 16  # constant loops the driver is asked to unroll (kdsl/codegen/spirv/unroll.py)
# Estimated loop passes (codegen/spirv/unroll.loop_passes) up to which the automatic choice is one
# invocation per program on a capped driver: half the cap (65,535), the rest for what the
# estimate cannot see (loops of unknown trip count are assumed to run 1024 times).
PASS_BUDGET = 32768
BARRIER_STATE_LIMIT = 300


def barrier_state(wi_module: ModuleOp) -> int:
    """Private-array slots per invocation times the number of barriers.

    WHY: lavapipe compiles a work-group with barriers as an LLVM coroutine
    (one suspend point per barrier) whose frame holds every value live across
    a barrier; Mesa scalarises private arrays, so the LLVM compile at the first
    dispatch grows with slots x barriers. The causal flash-attention kernel
    (32x32 tiles, ~20 barriers) at 64 invocations (16 slots per tile) spent
    over 85 s of CPU in ``CoroSplit`` and hit the fence timeout; 24 s at 256
    invocations, 5 s at 1024.
    """
    slots = barriers = 0
    for op in wi_module.walk():
        if op.NAME == "wi.barrier":
            barriers += 1
        elif op.NAME == "wi.alloc":
            t = op.results[0].type
            if isinstance(t, MemRefType) and t.space == "private":
                slots += t.size
    return slots * barriers


def _escalate(nt: int, wi_module: ModuleOp, target: Target) -> bool:
    return barrier_state(wi_module) > BARRIER_STATE_LIMIT and nt * 2 <= target.max_workgroup_size


@dataclass
class CompiledStages:
    """Every artefact of one compilation (for dumps, goldens and a disk cache)."""

    wi_module: ModuleOp
    spirv: SpirvKernel
    layout: Layout
    # one invocation per program only: the estimated loop passes, and the grid-stride loops
    # whose launch-time trip counts may push them past the driver's cap (see VulkanKernel.launch)
    passes: int = 0
    grid_stride: tuple[GridStrideLoop, ...] = ()


def compile_stages(
    module: ModuleOp, entry: str, options: LaunchOptions, target: Target, noalias: bool = True, packed: bool = True
) -> CompiledStages:
    """Lower, emit SPIR-V. ``noalias``: pointer parameters assumed not to overlap (the kernel's
    ``safe_kernel`` variant, used when a launch's arguments do overlap, is built with False).
    ``packed``: the automatic choice may be one invocation per program (False: the work-group
    mapping, the variant a launch takes when its grid-stride loops would exceed the loop cap)."""
    chosen = options.num_threads or dict(options.extra).get("num_threads")
    if not chosen and packed and target.programs_per_group > 1:
        one = _one_per_program(module, entry, options, target, noalias)
        if one is not None:
            return one
    nt = int(chosen) if chosen else DEFAULT_NUM_THREADS
    shrinking = spill = False
    while True:
        layout = Layout.from_options(nt, options.extra)
        if layout.num_threads > target.max_workgroup_size:
            raise CompilationError(
                f"vulkan: num_threads={layout.num_threads} exceeds the device's maximum work-group size "
                f"{target.max_workgroup_size}"
            )
        try:
            wmod = lower_to_wi(module, entry, layout, local_limit=target.max_shared_memory, noalias=noalias,
                               local_itemsize=array_itemsize, scratch=spill)
        except CompilationError as e:
            if "memory" not in str(e):
                raise
            if not chosen and nt > MIN_NUM_THREADS:
                nt //= 2  # the automatic choice may need less shared memory with a smaller group
                shrinking = True
                continue
            # no group size fits: the largest __local buffers go to the scratch buffer, and the
            # group size is chosen as for any kernel (a small group holding whole tiles in private
            # arrays took lavapipe 230 s to compile and ran into its loop cap)
            nt, shrinking, spill = int(chosen) if chosen else DEFAULT_NUM_THREADS, False, True
            continue
        if not chosen and not shrinking and _escalate(nt, wmod, target):
            nt *= 2  # see barrier_state: keep lavapipe's compile time bounded
            continue
        return CompiledStages(wmod, emit_spirv(wmod, target), layout)


def _one_per_program(
    module: ModuleOp, entry: str, options: LaunchOptions, target: Target, noalias: bool
) -> CompiledStages | None:
    """The automatic mapping where lavapipe runs it best: one invocation per program, 8 programs
    per work-group (emit.programs_per_group), tiles in private arrays, constant loops unrolled --
    when the loop-pass estimate leaves room under the driver's cap (None: use the group mapping).

    WHY (docs/VULKAN.md, *Performance against OpenCL*): lavapipe turns every shared-memory
    access into a loop over the 8 SIMD lanes; this mapping has no shared memory at all.
    Measured against the 64-invocation default: softmax/LayerNorm rows 25-250x, matmul with
    16x16x16 blocks 17x, vector add 2x."""
    if _waits_on_atomics(module):
        return None
    layout = Layout.from_options(1, options.extra)
    try:
        wmod = lower_to_wi(module, entry, layout, local_limit=target.max_shared_memory, noalias=noalias,
                               local_itemsize=array_itemsize)
    except CompilationError:
        return None
    func = wmod.body.ops[0]
    unrolled = unrolled_loops(func, target.unroll_trips)
    passes = loop_passes(func, unrolled)
    if target.max_loop_iterations and passes > PASS_BUDGET:
        return None
    strided = tuple(grid_stride_loops(func, unrolled)) if target.max_loop_iterations else ()
    return CompiledStages(wmod, emit_spirv(wmod, target), layout, passes, strided)


def _waits_on_atomics(module: ModuleOp) -> bool:
    """A ``while`` loop with an atomic in it (a spin lock, a ticket wait) needs programs that
    progress independently: Triton gives every program its own forward progress. Programs packed
    into one work-group run as SIMD lanes on llvmpipe, so the lane holding a lock waits at the
    loop's reconvergence point for lanes spinning on it -- a deadlock that ends at the driver's
    loop cap. Such kernels keep one work-group per program."""
    for op in module.walk():
        if op.NAME == "scf.while" and any(
            inner.NAME.startswith("tile.atomic_") for region in op.regions for inner in region.walk()
        ):
            return True
    return False


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

    def device(self) -> VulkanDevice:
        """Device arrays on this backend (see :mod:`kdsl.runtime.vulkan.arrays`)."""
        return get_vulkan_device()

    def tunables(self) -> list[dict[str, tuple[Any, ...]]]:
        """The launch options worth sweeping (``kdsl.autotune.space``), defaults first: the
        work-group size (0: the automatic choice, see :func:`compile_stages`) up to the
        device's maximum, and the chunk length of the blocked layout. The SPIR-V emitter
        has no vector ops, so the vector width and ``tile.dot`` blocking are not offered."""
        limit = self.target().max_workgroup_size
        return [{"num_threads": (0, *(n for n in (32, 128, 256) if n <= limit)), "lower.chunk": (1, 2, 4)}]

    def target(self) -> Target:
        base = get_runtime().device.target
        if base.max_loop_iterations and base.programs_per_group == 1:  # llvmpipe (the only capped driver)
            base = dataclasses.replace(
                base, programs_per_group=LAVAPIPE_PROGRAMS_PER_GROUP, unroll_trips=LAVAPIPE_UNROLL_TRIPS
            )
        return dataclasses.replace(base, **self.target_overrides) if self.target_overrides else base  # type: ignore[arg-type]

    def compile_stages(self, module: ModuleOp, entry: str, options: LaunchOptions) -> CompiledStages:
        return compile_stages(module, entry, options, self.target())

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> VulkanKernel:
        return self._kernel(module, entry, options, noalias=True)

    def _kernel(
        self, module: ModuleOp, entry: str, options: LaunchOptions, noalias: bool, packed: bool = True
    ) -> VulkanKernel:
        stages = compile_stages(module, entry, options, self.target(), noalias, packed)
        func = stages.wi_module.body.ops[0]

        def safe() -> VulkanKernel:
            return self._kernel(module, entry, options, noalias=False, packed=packed)

        def spread() -> VulkanKernel:
            return self._kernel(module, entry, options, noalias, packed=False)

        cls = PackedKernel if stages.spirv.programs_per_group > 1 else VulkanKernel
        kernel = cls(get_runtime(), stages.spirv, written_pointer_args(func), safe if noalias else None,
                     unused=unused_pointer_args(func))  # fmt: skip
        if stages.grid_stride:
            kernel.spread_when(stages.passes, stages.grid_stride, PASS_BUDGET, spread)
        kernel.stages = stages  # type: ignore[attr-defined]
        return kernel


class PackedKernel(VulkanKernel):
    """A kernel whose work-groups each run ``programs_per_group`` programs along x
    (:func:`kdsl.codegen.spirv.emit.programs_per_group`): the parameter block keeps the real
    grid (``num_programs``, the shader's bound check), the dispatch covers it in fewer groups."""

    def _recorder(self, grid: tuple[int, int, int], push: bytearray, slices: int = 0) -> Callable[[Any], None]:
        per = self.spirv.programs_per_group
        return super()._recorder((-(-grid[0] // per), grid[1], grid[2]), push, slices)
