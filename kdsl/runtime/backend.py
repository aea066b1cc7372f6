"""The small interface every backend implements.

A backend turns an optimised, fully inlined ``builtin.module`` into something
launchable and launches it. The JIT (``kdsl.runtime.jit``) owns specialisation,
argument checking and caching; backends only see canonical launch arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kdsl.ir.core import ModuleOp


@dataclass(frozen=True)
class LaunchOptions:
    """Options that change generated code (part of every cache key).

    ``num_threads`` is the work-group size for device backends (0: backend
    default); ``extra`` holds backend/layout knobs as sorted (name, value) pairs.
    """

    num_threads: int = 0
    extra: tuple[tuple[str, Any], ...] = field(default_factory=tuple)


class CompiledKernel(Protocol):
    """A launchable specialisation of one kernel."""

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        """Run ``grid`` programs. ``args`` follow the entry ``tile.func``'s
        parameters: numpy arrays (or backend device arrays) for pointers,
        Python/numpy scalars for scalars. Arrays are updated in place."""
        ...


class Backend(Protocol):
    """A code generator plus runtime for one kind of device."""

    name: str

    def availability(self) -> tuple[bool, str]:
        """(present?, reason/install hint when not)."""
        ...

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> CompiledKernel:
        """Compile ``module`` (inlined, verified) with entry function ``entry``."""
        ...
