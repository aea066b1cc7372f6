"""Device resource limits that must be checked before a kernel reaches the driver.

Some drivers do not report an over-sized kernel as an error: PoCL aborts the
process above its 1 MiB of ``__local`` memory (the lowering checks that one,
``local_limit``) and segfaults when a work-group's private arrays outgrow the
stack of the thread running it. A kdsl configuration must fail with a
:class:`~kdsl.errors.CompilationError` naming the limit instead (the autotuner
then discards that configuration with the reason, see ``kdsl.autotune``).
"""

from __future__ import annotations

from kdsl.errors import OutOfResources
from kdsl.ir.core import ModuleOp, Operation
from kdsl.ir.types import MemRefType

# Measured on PoCL 3.1 (CPU device, 8 MiB worker-thread stacks): one work-item with
# 4 MiB of private arrays runs, 8 MiB segfaults the process. Half the stack is the limit.
CPU_PRIVATE_LIMIT = 4 << 20


def private_bytes(wmod: Operation) -> int:
    """Bytes of private (per work-item) arrays the work-item IR allocates."""
    total = 0
    for op in wmod.walk():
        if op.NAME != "wi.alloc":
            continue
        t = op.result.type
        if isinstance(t, MemRefType) and t.space == "private":
            total += t.nbytes
    return total


def check_private(wmod: ModuleOp, num_threads: int, limit: int, backend: str) -> None:
    """Raise if the work-group's private arrays (per work-item x work-items) exceed ``limit``."""
    per_item = private_bytes(wmod)
    need = per_item * max(num_threads, 1)
    if need <= limit:
        return
    raise OutOfResources(
        need, limit, "private memory",
        f"{backend}: the kernel needs {per_item} bytes per work-item x {num_threads} work-items "
        f"(the driver would crash above the limit): use smaller tiles (more programs) or fewer threads",
    )  # fmt: skip
