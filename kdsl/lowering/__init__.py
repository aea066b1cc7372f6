"""Tile IR -> work-item IR: layouts, element loops, local memory, barriers.

``lower_to_wi(module, entry, layout)`` returns a new ``builtin.module`` holding
one ``wi.func`` (see :mod:`kdsl.ir.dialects.wi`). Every backend below the tile
level (OpenCL C now, SPIR-V and LLVM IR later) prints that IR; the decisions
-- which tiles are stored, how elements map to work-items, where barriers go
-- are all made here. Design notes: ``docs/LOWERING.md``.
"""

from __future__ import annotations

from kdsl.errors import CompilationError, OutOfResources
from kdsl.ir.core import ModuleOp
from kdsl.lowering import ops_collective, ops_control, ops_memory, ops_shape  # noqa: F401  (register lowerings)
from kdsl.lowering.align_stores import align_streaming_stores
from kdsl.lowering.coalesce import ItemSize, coalesce_local, coalesce_private, local_bytes
from kdsl.lowering.layout import TUNABLES, Layout
from kdsl.lowering.lowerer import Lowerer
from kdsl.lowering.prefetch import prefetch_next_rows
from kdsl.lowering.scratch import spill_to_scratch
from kdsl.lowering.simplify import simplify
from kdsl.lowering.stream_stores import stream_whole_lines
from kdsl.lowering.vectorize import vectorize


def lower_to_wi(
    module: ModuleOp,
    entry: str,
    layout: Layout,
    local_limit: int = 1 << 20,
    noalias: bool = True,
    local_itemsize: ItemSize | None = None,
    scratch: bool = False,
) -> ModuleOp:
    """Lower ``entry`` (an inlined ``tile.func`` of ``module``) to a module with one ``wi.func``.

    ``noalias``: assume pointer parameters never overlap memory another one
    writes (loads and stores then fuse into one element loop); with False,
    every load of a tile program completes before its next store. ``local_itemsize``: bytes
    per element of the target's ``__local`` arrays, for the ``local_limit`` check (default:
    at least 4). ``scratch``: the target can keep ``__local`` buffers in a per-work-group slice
    of a global scratch buffer; past ``local_limit`` the largest move there
    (:mod:`kdsl.lowering.scratch`) instead of the kernel being refused.
    """
    func = module.lookup(entry)
    if func is None or func.NAME != "tile.func":
        raise CompilationError(f"lowering: no tile.func named '{entry}'")
    wfunc = Lowerer(func, layout, noalias).run()
    simplify(wfunc)
    if layout.vector_width > 1:  # element loops -> vector<NxT> ops (docs/LOWERING.md "Vectorisation")
        vectorize(wfunc, layout.vector_width)
    if layout.stream_stores:  # CPU targets: vector stores to large write-only arrays stream
        stream_whole_lines(wfunc)
    if layout.vector_width > 1:
        if layout.align_stores:  # CPU targets: streaming stores as whole aligned vectors
            align_streaming_stores(wfunc)
        if layout.prefetch:  # CPU targets: the next row's lines during this row's compute passes
            prefetch_next_rows(wfunc)
    coalesce_private(wfunc)  # disjoint live ranges share private arrays (lowering/coalesce.py)
    coalesce_local(wfunc, layout.num_threads == 1)  # ... and __local buffers a barrier separates
    if scratch:
        spill_to_scratch(wfunc, local_limit, local_itemsize)
    used = local_bytes(wfunc, local_itemsize)
    if used > local_limit:
        raise OutOfResources(
            used, local_limit, "shared memory",
            f"lowering: kernel needs {used} bytes of __local memory (work-group shared memory), "
            f"the device has {local_limit} (use fewer threads or smaller tiles)",
            func.loc,
        )  # fmt: skip
    wfunc.attributes["local_bytes"] = used
    out = ModuleOp.empty(loc=module.loc)
    out.body.append(wfunc)
    return out


__all__ = ["TUNABLES", "Layout", "lower_to_wi"]
