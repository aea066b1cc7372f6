"""Automatic streaming stores: a kernel's output far bigger than the caches is written without
first reading its lines.

Why: Triton code rarely says ``eviction_policy="evict_first"``, and on a GPU it need not. On a CPU
every plain store to an uncached line reads the line first (read-for-ownership), so a kernel
whose output is much larger than the last-level cache moves its output twice. Measured on this
machine: a vector add of 4M floats, 1.35 ms with plain stores against 0.90 ms streaming; Triton's
tutorial softmax on 4096 x 4096, 0.81 of the copy bandwidth against 1.04.

Two steps, on CPU targets (``Layout.stream_stores``):

1. While lowering (:func:`streamed_params`, :func:`may_stream`): a parameter qualifies when the
   launch marked its array large (the ``large`` attribute of the ``tile.func``, from
   :mod:`kdsl.runtime.streaming`) and no load or atomic of the kernel reads through it (by
   pointer provenance; a load of unknown provenance or a call disqualifies every parameter).
   A tile store without a cache hint (or with ``evict_normal`` / ``.wb``, the defaults) through
   a qualifying parameter gets the wi attribute ``stream``. Other hints are the user's choice.
2. After vectorisation (:func:`stream_whole_lines`): ``stream`` becomes ``nontemporal`` on the
   stores that fill whole cache lines: vector stores of a line or more, narrower vector stores
   (at least :data:`MIN_VECTOR_BYTES`) that a loop advances through memory one vector per
   iteration, and block stores whose rows span a line. Other stores stay plain, since a
   streaming store of a few bytes per line is slower than a plain one (one float per 64-byte
   line: 6.1 ms against 3.4 ms for 4M of them). The attribute is removed everywhere, so
   renderers never see it.
"""

from __future__ import annotations

from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, VectorType
from kdsl.lowering.align_stores import vector_run
from kdsl.transforms.provenance import Provenance

_READS = ("tile.load", "tile.atomic_rmw", "tile.atomic_cas")
_DEFAULT_HINTS = ("", "evict_normal", ".wb")
LINE_BYTES = 64
MIN_VECTOR_BYTES = 16  # in a run of vectors, four such fill a line


def streamed_params(func: Operation) -> frozenset[int]:
    """Indices of the entry parameters whose stores may stream (see the module doc, step 1)."""
    large = func.attributes.get("large")
    if not large or not any(large):
        return frozenset()
    prov = Provenance(func.regions[0].block)
    read: set[int] = set()
    for op in func.walk():
        if op.NAME == "tile.call":
            return frozenset()  # the callee may read any pointer it is given
        if op.NAME in _READS:
            srcs = prov.sources(op.operands[0])
            if srcs is None:
                return frozenset()  # a pointer made from an integer or memory may alias any array
            read |= srcs
    return frozenset(k for k, flag in enumerate(large) if flag and k not in read)


def may_stream(op: Operation, params: frozenset[int], prov: Provenance) -> bool:
    """Is ``op`` (a ``tile.store``) without a hint of its own, a store of a tile, through one of
    ``params``?"""
    if not params or not op.operands[0].type.shape:
        return False
    a = op.attributes
    if a.get("eviction", "") not in _DEFAULT_HINTS or a.get("cache", "") not in _DEFAULT_HINTS:
        return False
    return prov.param(op.operands[0]) in params


def stream_whole_lines(func: Operation) -> int:
    """Step 2 of the module doc on a vectorised ``wi.func``; returns how many stores now stream."""
    done = 0
    for op in func.walk():
        if not op.attributes.pop("stream", False):
            continue
        if _whole_lines(op) and not op.attributes.get("nontemporal"):
            op.attributes["nontemporal"] = True
            done += 1
    return done


def _whole_lines(op: Operation) -> bool:
    if op.NAME == "wi.gvstore":
        vt = op.operands[1].type
        assert isinstance(vt, VectorType)
        size = vt.lanes * vt.element.itemsize
        return size >= LINE_BYTES or (size >= MIN_VECTOR_BYTES and _run_of_vectors(op))
    if op.NAME == "wi.block_store":
        mem = op.operands[0].type
        assert isinstance(mem, MemRefType)
        return int(op.attributes["shape"][-1]) * mem.element.itemsize >= LINE_BYTES
    return False


def _run_of_vectors(store: Operation) -> bool:
    """Is ``store`` in a loop that stores consecutive vectors (:func:`~.align_stores.vector_run`)?"""
    block = store.parent
    loop = block.parent_op if block is not None else None
    return loop is not None and loop.NAME == "scf.for" and vector_run(store, loop) is not None
