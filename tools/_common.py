"""Shared plumbing of the long-running reliability harnesses in ``tools/``.

The generators and checkers live in ``tests/reliability/`` (the fast versions
run in the normal suite); the tools import them from there and add budgets,
seeds and summaries.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    # appended, not prepended: tests/ holds packages named like real ones (tests/vulkan)
    sys.path.append(str(ROOT / "tests"))

WIP = {
    "cpu": ("kdsl.runtime.cpu", "CPUBackend"),
    "opencl": ("kdsl.runtime.opencl", "OpenCLBackend"),
    "vulkan": ("kdsl.runtime.vulkan", "VulkanBackend"),
}


def register_wip_backends() -> list[str]:
    """Register device backends that exist in the tree but are not wired into the registry yet.

    Only names the registry still reports as "not implemented" are replaced, so
    once the lead wires a backend in, this does nothing for it.
    """
    import importlib

    from kdsl.runtime import backends as registry

    done = []
    for name, (module, cls) in WIP.items():
        ok, reason = registry.availability(name)
        if ok or "not implemented" not in reason:
            continue
        try:
            factory = getattr(importlib.import_module(module), cls)
        except Exception as exc:  # a half-written backend must not stop the harness
            print(f"note: cannot import {module}.{cls}: {exc}", file=sys.stderr)
            continue
        registry.register_backend(name, factory)
        done.append(name)
    return done


def budget(count: int | None, seconds: float | None) -> Iterator[int]:
    """0, 1, 2, ... until ``count`` items or ``seconds`` elapsed (whichever comes first)."""
    start = time.monotonic()
    i = 0
    while (count is None or i < count) and (seconds is None or time.monotonic() - start < seconds):
        yield i
        i += 1
