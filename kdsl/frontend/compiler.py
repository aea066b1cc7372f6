"""Entry point of the frontend: a kernel plus a specialisation -> ``builtin.module``.

One ``ModuleGenerator`` builds one module: the entry kernel plus one
``tile.func`` per (callee, specialisation) reached through calls. Callees are
generated on first use, before the caller's body is finished, so they appear
earlier in the module; the ``inline`` pass later folds them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.errors import CompilationError, KdslError
from kdsl.frontend.specialization import ParamSpec, mangle
from kdsl.ir.core import Location, ModuleOp

if TYPE_CHECKING:
    from kdsl.frontend.generator import FuncInfo
    from kdsl.runtime.jit import KernelFunction


class ModuleGenerator:
    def __init__(self, debug: bool = False) -> None:
        self.module = ModuleOp.empty()
        self.debug = debug
        self.functions: dict[tuple[object, ...], FuncInfo] = {}
        self.names: set[str] = set()
        self.in_progress: set[tuple[object, ...]] = set()
        self.used_globals: dict[Any, Any] = {}  # filled by the name resolvers

    def function(
        self, kfn: KernelFunction, specs: list[ParamSpec], node_loc: Location | None = None, lanes: bool = False
    ) -> FuncInfo:
        """The callee specialisation for ``specs``, generating it on first use.

        ``lanes``: generate it in lane mode (called from a ``kl.map_elementwise`` function;
        ``specs[0]`` is then the mask of the active lanes, see ``frontend/lanes.py``)."""
        key = (id(kfn), lanes, tuple(s.key() for s in specs))
        info = self.functions.get(key)
        if info is not None:
            return info
        if key in self.in_progress:
            raise CompilationError(f"recursive call of kernel '{kfn.__name__}' is not supported", node_loc)
        name = self._unique(mangle(kfn.__name__, specs))
        self.in_progress.add(key)
        try:
            info = self._generate(kfn, specs, name, is_kernel=False, lanes=lanes)
        finally:
            self.in_progress.discard(key)
        self.functions[key] = info
        return info

    def entry(self, kfn: KernelFunction, specs: list[ParamSpec]) -> FuncInfo:
        name = self._unique(kfn.__name__)
        return self._generate(kfn, specs, name, is_kernel=True)

    def _generate(
        self, kfn: KernelFunction, specs: list[ParamSpec], name: str, is_kernel: bool, lanes: bool = False
    ) -> FuncInfo:
        from kdsl.frontend.generator import FunctionGenerator

        try:
            info = FunctionGenerator(self, kfn, specs, name, is_kernel, lanes).generate()
        except KdslError:
            raise
        except Exception as exc:  # anything else is still reported as a compile error
            loc = kfn.source_info.loc(kfn.source_info.tree)
            raise CompilationError(f"internal compiler error: {type(exc).__name__}: {exc}", loc) from exc
        self.module.body.append(info.op)
        return info

    def _unique(self, name: str) -> str:
        out, i = name, 1
        while out in self.names:
            out = f"{name}_{i}"
            i += 1
        self.names.add(out)
        return out


def generate_module(
    kfn: KernelFunction, specs: list[ParamSpec], debug: bool = False, used_globals: dict[Any, Any] | None = None
) -> tuple[ModuleOp, str]:
    """Generate the (unverified, unoptimised) module for ``kfn``; return it and the entry name.

    ``used_globals``, if given, receives the globals the code was compiled against
    (see ``KernelFunction.globals_key``).
    """
    gen = ModuleGenerator(debug)
    info = gen.entry(kfn, specs)
    if used_globals is not None:
        used_globals.update(gen.used_globals)
    return gen.module, info.name
