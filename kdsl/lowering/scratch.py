"""``__local`` buffers that do not fit the device's work-group memory move to a scratch buffer.

Why: a Triton kernel runs on every backend whatever its tiles cost in shared memory; only the
speed may differ. The bitonic network of ``kl.sort`` over a 16x256 f32 tile keeps ~40 KiB of
``__local`` buffers alive at once, over the 32 KiB a Vulkan device (lavapipe) offers, and no
work-group size shrinks a buffer that holds a whole tile. Instead of refusing such a kernel, the
lowering marks some buffers ``scratch``: each work-group then keeps them in its own slice of a
global buffer the runtime allocates (``scratch_bytes`` per group), which behaves like work-group
memory to the group's work-items (same contents for all, ordered by the same barriers) and is
never seen by another group.

Which buffers: the largest first, until what stays ``__local`` fits. Moving all of them would be
as correct and hardly simpler; keeping the small ones (a reduction's one word per work-item, the
broadcast word of a scalar) in work-group memory keeps the accesses that every reduction step
makes on the fast path of a GPU, while the big tile copies -- touched once per element and
exchange -- go to global memory. Buffers already share storage where barriers separate them
(``coalesce_local`` runs first), so a scratch array may hold several tiles in turn.

Cost: a scratch access is a global-memory access (on lavapipe the same per-lane loop as a
work-group access; on a GPU a cached global access instead of shared memory), plus the
runtime's buffer of ``groups x scratch_bytes`` (docs/VULKAN.md, *Work-group memory beyond the
device limit*).
"""

from __future__ import annotations

from kdsl.ir.core import Operation
from kdsl.ir.dialects import wi
from kdsl.ir.types import MemRefType
from kdsl.lowering.coalesce import ItemSize, alloc_bytes, local_allocs


def spill_to_scratch(func: Operation, limit: int, itemsize: ItemSize | None = None) -> int:
    """Move the largest ``__local`` buffers of ``func`` to ``scratch`` until the rest needs at most
    ``limit`` bytes; set their offsets and ``func``'s ``scratch_bytes``. Returns the scratch bytes
    per work-group (0: everything fit, ``func`` unchanged)."""
    locals_ = local_allocs(func)
    used = sum(alloc_bytes(op, itemsize) for op in locals_)
    offset = 0
    for op in sorted(locals_, key=lambda a: alloc_bytes(a, itemsize), reverse=True):  # stable: equal sizes keep order
        if used <= limit:
            break
        nbytes = alloc_bytes(op, itemsize)
        t = op.result.type
        assert isinstance(t, MemRefType)
        op.result.type = MemRefType(t.size, t.element, "scratch")
        op.attributes["offset"] = offset
        offset += -(-nbytes // wi.SCRATCH_ALIGN) * wi.SCRATCH_ALIGN
        used -= nbytes
    if offset:
        func.attributes["scratch_bytes"] = offset
    return offset


def scratch_bytes(func: Operation) -> int:
    """Bytes of one work-group's scratch slice (0: the function has no scratch arrays)."""
    return int(func.attributes.get("scratch_bytes") or 0)
