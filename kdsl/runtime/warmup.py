"""``kernel.warmup(...)``: compile a specialisation without running it (Triton's ``JITFunction.warmup``).

Why: Triton's tutorials compile ahead of the first launch to read what the compiler decided
(tutorial 02 sizes its persistent grid from ``kernel.n_regs`` and ``kernel.metadata.shared``)
and to print the generated code (``kernel.asm[...]``); ahead-of-time warming also moves the
compile out of a timed region. :class:`WarmedKernel` answers those questions for kdsl's
backends and is launchable itself (``warmed[grid](*args)``), like Triton's ``CompiledKernel``.

``asm`` maps stage names to text: ``"ttir"`` (the tile IR from the frontend) and ``"ttgir"``
(after the optimiser), Triton's names for the matching levels, plus every artefact the backend
keeps (``wi.mlir``, ``kernel.cl``, ``kernel.ll``, SPIR-V as bytes). ``metadata.shared`` is the
bytes of on-chip working memory one program holds: its ``__local`` buffers plus its work-items'
private tile arrays. On a GPU those arrays are registers and only ``__local`` counts; on the CPU
devices kdsl runs on, ``__local`` memory is ordinary cached memory too, and a program's private
tiles (a softmax row, say) are what compete for the cache -- so ``SIZE_SMEM // size_smem``
(tutorial 02) means, as on a GPU, how many programs' working sets fit on one compute unit. A
kernel with neither reports 0, as Triton does for a kernel without shared memory. The
interpreter reports what the cpu backend's lowering allocates. ``n_regs`` is the target's
vector registers per work-item -- kdsl leaves register allocation to the device compiler, so
it is the budget the code generator blocks for, not a count reported by a driver.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kdsl.frontend.specialization import ParamSpec
    from kdsl.ir.core import ModuleOp
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.runtime.compile import Compiled
    from kdsl.runtime.jit import KernelFunction


# compiled kernel -> ``metadata.shared``: tutorial 02's host code warms the kernel up on every
# call, and the bytes come from a walk of the work-item IR (for the interpreter, from a lowering)
_SHARED_BYTES: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


@dataclass(eq=False)
class WarmedKernel:
    """A compiled specialisation (see the module doc)."""

    fn: KernelFunction
    compiled: Compiled
    specs: list[ParamSpec]
    options: LaunchOptions
    backend: str
    debug: bool

    @property
    def name(self) -> str:
        return self.fn.__name__

    @cached_property
    def _kernel_stages(self) -> dict[str, Any]:
        """The backend's own stages: its cache artefacts, else what its kernel object keeps."""
        from kdsl.ir.printer import print_op
        from kdsl.runtime.backend import ArtifactKernel

        kernel = self.compiled.kernel
        if isinstance(kernel, ArtifactKernel):
            files, _ = kernel.artifacts()
            return {name: _text(data) for name, data in files.items()}
        out: dict[str, Any] = {}
        wi = self._wi_module
        if wi is not None:
            out["wi.mlir"] = print_op(wi)
        rendered = getattr(getattr(kernel, "stages", None), "rendered", None)
        if rendered is not None:
            out["llir"] = rendered.ir  # the cpu backend's LLVM IR
        spirv = getattr(kernel, "spirv", None)
        if spirv is not None:
            out["spirv"] = spirv.binary
        return out

    @cached_property
    def _wi_module(self) -> ModuleOp | None:
        """The work-item IR the backend rendered (None on the interpreter): kept by a kernel compiled
        in this process, else parsed back from the cached ``wi.mlir``."""
        from kdsl.runtime.backend import ArtifactKernel

        kernel = self.compiled.kernel
        wi = getattr(getattr(kernel, "stages", None), "wi_module", None)
        if wi is not None:
            return wi  # type: ignore[no-any-return]
        text = self._kernel_stages.get("wi.mlir") if isinstance(kernel, ArtifactKernel) else None
        if not isinstance(text, str):
            return None
        from kdsl.ir.parser import parse_module

        return parse_module(text)

    @cached_property
    def asm(self) -> dict[str, Any]:
        """Stage name -> generated code (see the module doc)."""
        from kdsl.runtime.jit import pass_options

        stages: dict[str, bytes] = {}  # one frontend + optimiser run, as the compile did it
        self.fn.compile_module(self.specs, optimize=True, debug=self.debug, stages=stages,
                               pass_options=pass_options(self.options))  # fmt: skip
        out: dict[str, Any] = {"ttir": stages["tile.mlir"].decode(), "ttgir": stages["opt.mlir"].decode()}
        out.update(self._kernel_stages)
        return out

    @cached_property
    def metadata(self) -> SimpleNamespace:
        """Triton's ``CompiledKernel.metadata`` fields that mean something here."""
        extra = dict(self.options.extra)
        return SimpleNamespace(
            name=self.name,
            shared=self._shared_bytes(),
            num_warps=extra.get("num_warps", 4),
            num_stages=extra.get("num_stages", 3),
            num_ctas=1,
            num_threads=self.options.num_threads,
            backend=self.backend,
        )

    def _shared_bytes(self) -> int:
        kernel = self.compiled.kernel
        known = _SHARED_BYTES.get(kernel)
        if known is not None:
            return known
        wi = self._wi_module if self.backend != "interpreter" else self._cpu_wi_module()
        shared = _program_bytes(wi) if wi is not None else 0
        _SHARED_BYTES[kernel] = shared
        return shared

    def _cpu_wi_module(self) -> ModuleOp:
        """The interpreter runs no lowering; the cpu backend's is the one it stands for."""
        from kdsl.lowering import lower_to_wi
        from kdsl.runtime.cpu.backend import cpu_layout
        from kdsl.runtime.jit import pass_options

        module, entry = self.fn.compile_module(self.specs, optimize=True, debug=self.debug,
                                               pass_options=pass_options(self.options))  # fmt: skip
        return lower_to_wi(module, entry, cpu_layout(self.options))

    @property
    def n_regs(self) -> int:
        from kdsl.target import target_for

        return target_for(self.backend).registers

    n_spills: int = 0

    def __repr__(self) -> str:
        return f"<kdsl compiled kernel {self.name} ({self.backend})>"

    def _init_handles(self) -> None:
        """Triton loads the binary lazily here; kdsl's kernel is loaded already."""

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        def launch(*args: Any, **kwargs: Any) -> None:
            self.fn[grid](*args, **kwargs)

        return launch


def _program_bytes(wi: ModuleOp) -> int:
    """``__local`` bytes plus private arrays x work-items, for the largest kernel in ``wi``."""
    from kdsl.runtime.limits import private_bytes

    best = 0
    for func in wi.body.ops:
        local = int(func.attributes.get("local_bytes", 0))
        threads = max(1, int(func.attributes.get("num_threads", 1)))
        best = max(best, local + private_bytes(func) * threads)
    return best


def _text(data: bytes) -> str | bytes:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


__all__ = ["WarmedKernel"]
