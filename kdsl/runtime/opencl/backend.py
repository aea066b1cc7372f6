"""The ``opencl`` backend: tile IR -> wi IR -> OpenCL C -> program -> launch.

``OpenCLBackend.compile`` lowers with the layout chosen by the launch options
(``num_threads`` = work-group size, default 1 on CPUs; ``extra`` may set
``chunk``), renders OpenCL C and builds it once per distinct source. The
returned :class:`~kdsl.runtime.opencl.kernel.OpenCLKernel` keeps its
``cl_kernel`` (created once through :mod:`~kdsl.runtime.opencl.clapi`) and a
generated launch function.

Disk cache: ``OpenCLKernel.artifacts()`` gives ``wi.mlir``, ``kernel.cl`` and
``program.bin`` (the driver's binary) plus JSON metadata; ``OpenCLBackend.load``
rebuilds the kernel from the binary -- no lowering, no rendering, no OpenCL C
compile, and no pyopencl import (clapi creates the program and the kernel). A binary the driver rejects raises, so the JIT recompiles and
replaces the entry. The device key (name, driver and PoCL version,
capabilities) is part of the cache key, so binaries never cross drivers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kdsl.errors import CompilationError
from kdsl.ir.core import ModuleOp
from kdsl.ir.types import PointerType, ScalarType
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.opencl.device import INSTALL_HINT, PYOPENCL_HINT, Device, all_devices, get_device, pyopencl_installed
from kdsl.runtime.opencl.kernel import KernelInfo, OpenCLKernel

if TYPE_CHECKING:  # the code generator is imported on first compile: a disk-cache hit never needs it
    from kdsl.codegen.opencl import DeviceCaps, Rendered
    from kdsl.lowering import Layout


@dataclass
class CompiledStages:
    """Every artefact of one compilation (for dumps and the disk cache)."""

    wi_module: ModuleOp
    rendered: Rendered
    layout: Layout
    claim: int = 0  # the lower.claim divisor the kernel was rendered for (0: plain kernel)


def render_stages(
    module: ModuleOp,
    entry: str,
    options: LaunchOptions,
    caps: DeviceCaps,
    *,
    default_num_threads: int = 1,
    max_group: int = 4096,
    local_limit: int = 1 << 20,
    noalias: bool = True,
    private_limit: int | None = None,
) -> CompiledStages:
    """Lower and render for a device described by its limits (no device needed: golden tests)."""
    from kdsl.codegen.opencl import render_opencl
    from kdsl.lowering import Layout, lower_to_wi
    from kdsl.lowering.layout import CPU_STEPS

    nt = options.num_threads or dict(options.extra).get("num_threads") or default_num_threads
    layout = Layout.from_options(int(nt), options.extra, target="opencl")
    if caps.is_cpu:  # the lowering steps of CPU targets, unless the launch says otherwise
        given = dict(options.extra)
        layout = replace(layout, **{k: 1 for k in CPU_STEPS if f"lower.{k}" not in given})
    if layout.num_threads > max_group:
        raise CompilationError(
            f"opencl: num_threads={layout.num_threads} exceeds the device's maximum work-group size {max_group}"
        )
    wmod = lower_to_wi(module, entry, layout, local_limit=local_limit, noalias=noalias)
    if private_limit is not None:
        from kdsl.runtime.limits import check_private

        check_private(wmod, layout.num_threads, private_limit, "opencl")
    # claimed program ids: asked for by the launch option, and the device must be able to
    claim = int(dict(options.extra).get("lower.claim", 0)) if caps.claim_programs else 0
    rendered = render_opencl(wmod, replace(caps, claim_programs=claim > 0))
    return CompiledStages(wmod, rendered, layout, claim if rendered.claims else 0)


def compile_stages(
    module: ModuleOp, entry: str, options: LaunchOptions, device: Device, noalias: bool = True
) -> CompiledStages:
    from kdsl.runtime.limits import CPU_PRIVATE_LIMIT

    return render_stages(
        module,
        entry,
        options,
        device.caps,
        default_num_threads=device.default_num_threads,
        max_group=device.max_group,
        local_limit=device.local_mem,
        noalias=noalias,
        private_limit=CPU_PRIVATE_LIMIT if device.is_cpu else None,
    )


def kernel_info(stages: CompiledStages) -> KernelInfo:
    from kdsl.ir.analysis import unused_pointer_args, written_pointer_args

    func = stages.wi_module.body.ops[0]
    written = written_pointer_args(func)
    params: list[tuple[str, str, bool]] = []
    for i, (a, n) in enumerate(zip(func.regions[0].block.args, func.attributes["arg_names"])):
        if isinstance(a.type, PointerType):
            params.append((str(n), "ptr", i in written))
        else:
            assert isinstance(a.type, ScalarType)
            params.append((str(n), str(a.type), False))
    asserts = [(str(m), str(f), int(ln), int(c)) for m, f, ln, c in (func.attributes.get("asserts") or ())]
    return KernelInfo(
        kernel_name=stages.rendered.kernel_name,
        num_threads=stages.layout.num_threads,
        params=params,
        asserts=asserts,
        prints=any(op.NAME == "wi.print" for op in func.walk()),
        claim=stages.claim,
        unused=sorted(unused_pointer_args(func)),
    )


def options_json(options: LaunchOptions) -> dict[str, Any]:
    """Launch options as JSON (layout knobs are plain values; anything else cannot change the layout)."""
    extra = [[k, v] for k, v in options.extra if v is None or isinstance(v, (bool, int, float, str))]
    return {"num_threads": options.num_threads, "extra": extra}


def options_from_json(d: dict[str, Any]) -> LaunchOptions:
    return LaunchOptions(num_threads=int(d["num_threads"]), extra=tuple((str(k), v) for k, v in d["extra"]))


class OpenCLBackend:
    """``kdsl.runtime.backend.Backend`` for OpenCL devices (PoCL here)."""

    name = "opencl"

    def availability(self) -> tuple[bool, str]:
        if not all_devices():
            return False, INSTALL_HINT if pyopencl_installed() else PYOPENCL_HINT
        return True, ""

    def device(self) -> Device:
        """The per-process device (device arrays, cache key)."""
        return get_device()

    def tunables(self) -> list[dict[str, tuple[Any, ...]]]:
        """The launch options worth sweeping on this device (``kdsl.autotune.space``), defaults first.

        A union of two products: one work-item per group, where the vector width
        and the register blocking of ``tile.dot`` apply (the default on CPU
        devices), and wider work-groups (the scalar lowering), where the chunk
        length of the blocked layout applies. Group sizes stay within the
        device's maximum.
        """
        from kdsl.lowering.layout import Layout, knob_choices

        dev = self.device()
        d = Layout.from_options(1, (), target="opencl")
        vector = {
            "lower.vector_width": knob_choices(d.vector_width, (4, 8, 16)),
            "lower.dot_block_m": knob_choices(d.dot_block_m, (2, 4, 8)),
            "lower.dot_block_n": knob_choices(d.dot_block_n, (16, 32, 64)),
        }
        groups = tuple(n for n in (16, 64, 256) if n <= dev.max_group and n != dev.default_num_threads)
        if dev.default_num_threads == 1:
            return [vector, {"num_threads": groups, "lower.chunk": (1, 4)}] if groups else [vector]
        return [{"num_threads": (0, *groups), "lower.chunk": (1, 2, 4)}, {"num_threads": (1,), **vector}]

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> OpenCLKernel:
        device = get_device()
        stages = compile_stages(module, entry, options, device)
        source = stages.rendered.source

        def rebuild_safe() -> str:
            return compile_stages(module, entry, options, device, noalias=False).rendered.source

        return OpenCLKernel(
            device,
            device.build(source),
            kernel_info(stages),
            source,
            rebuild_safe,
            stages=stages,
            cache_meta={"entry": entry, "options": options_json(options)},
        )

    def load(self, files: dict[str, bytes], metadata: dict[str, Any]) -> OpenCLKernel:
        """Rebuild from the program binary of a disk-cache entry (raises if the driver rejects it)."""
        device = get_device()
        if metadata.get("device") != device.key:
            raise ValueError("cache entry was built for another OpenCL device/driver")
        info = KernelInfo.from_json(metadata["info"])
        source = files["kernel.cl"].decode()
        program = device.load_binary(source, files["program.bin"])
        entry = str(metadata["entry"])
        options = options_from_json(metadata["options"])
        opt_text = files["opt.mlir"].decode()

        def rebuild_safe() -> str:
            from kdsl.ir.parser import parse_module

            module = parse_module(opt_text, "<kdsl cache opt.mlir>")
            return compile_stages(module, entry, options, device, noalias=False).rendered.source

        keep = {k: files[k] for k in ("wi.mlir",) if k in files}
        return OpenCLKernel(
            device,
            program,
            info,
            source,
            rebuild_safe,
            cache_meta={"entry": entry, "options": json.loads(json.dumps(metadata["options"]))},
            cache_files=keep,
        )
