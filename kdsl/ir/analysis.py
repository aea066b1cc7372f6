"""Whole-function analyses: pointer provenance and the parameters a kernel writes.

``written_pointer_args(func)`` answers "through which pointer parameters may
this kernel write?" for a ``tile.func`` *and* a ``wi.func`` -- the one
analysis every consumer uses:

* the launch path (``kdsl/runtime/compile.py``) rejects a read-only array
  passed where the kernel stores, before anything runs;
* every device runtime copies back / synchronises only written arguments and
  checks aliasing only when something is written (``cpu``, ``opencl``,
  ``vulkan``);
* the OpenCL renderer marks the other pointer parameters ``const``.

It must be *sound* (a parameter the kernel may write is always listed: the
renderer would emit ``const`` on a written pointer, a runtime would skip a
copy-back) and should be *precise*: an over-approximation made the Vulkan
runtime copy stale copies of unused aliased arguments back over a result (bug
9 in docs/RELIABILITY.md), and it makes the ``cpu``/``opencl`` runtimes take
their slower aliasing-safe variant needlessly.

Provenance (the parameters a pointer value may derive from) is a fixpoint over
a small lattice -- a set of parameter indices, or "anywhere" -- followed
through every op with pointer operands (``addptr``, ``select``, splat,
broadcast, reshapes, bitcasts, vector ops), values carried by
``scf.for``/``scf.if``/``scf.while``, and pointers kept in private or local
arrays (``wi.store``/``wi.vstore`` into a memref, ``wi.load``/``wi.vload``
from it: the lowering spills pointer tiles this way). A pointer made from
something that is not a pointer (an integer cast, a call's result) may point
anywhere: a store through it counts as writing every pointer parameter.
"""

from __future__ import annotations

from kdsl.ir.core import Block, Operation, Value
from kdsl.ir.types import PointerType

# Roots of a pointer value: the parameter indices it may derive from, or None
# when it may point anywhere (e.g. made from an integer).
Roots = frozenset[int] | None

# op -> name of the operand holding the address it writes through
_WRITES = {
    "tile.store": "ptr", "tile.atomic_rmw": "ptr", "tile.atomic_cas": "ptr",
    "wi.gstore": "ptr", "wi.gvstore": "ptr", "wi.atomic_rmw": "ptr", "wi.atomic_cas": "ptr",
    "wi.block_store": "base",
}
# writes into a private/local array (value, mem, index): the array holds what the value points to
_ARRAY_STORES = ("wi.store", "wi.vstore")
# global-memory reads: a pointer read from memory may point anywhere (pointees are scalars today)
_GLOBAL_READS = ("tile.load", "tile.atomic_rmw", "tile.atomic_cas", "wi.gload", "wi.gvload",
                 "wi.atomic_rmw", "wi.atomic_cas")
# ops whose pointer results start empty (contents undefined until stored)
_FRESH = ("wi.alloc",)


def _is_ptr(v: Value) -> bool:
    """``v`` holds pointers: a pointer, a tile/vector of pointers, or an array of them."""
    return isinstance(v.type.scalar, PointerType)


def _union(a: Roots, b: Roots) -> Roots:
    if a is None or b is None:
        return None
    return a | b


class _PointerOrigins:
    """Fixpoint of pointer roots through ops, block arguments, region results and arrays."""

    def __init__(self, func: Operation) -> None:
        self.roots: dict[int, Roots] = {}
        self.changed = False
        for i, arg in enumerate(func.regions[0].blocks[0].args):
            if _is_ptr(arg):
                self.roots[id(arg)] = frozenset({i})

    def get(self, v: Value) -> Roots:
        return self.roots.get(id(v), frozenset())

    def join(self, v: Value, r: Roots) -> None:
        if not _is_ptr(v):
            return
        old = self.roots.get(id(v), frozenset())
        new = _union(old, r)
        if new != old:
            self.roots[id(v)] = new
            self.changed = True

    def visit(self, op: Operation) -> None:
        name = op.NAME
        if name in ("scf.for", "scf.while", "scf.if"):
            self._region_op(op)
            return
        if name in _ARRAY_STORES:
            value, mem = op.operands[0], op.operands[1]
            if _is_ptr(value):
                self.join(mem, self.get(value))
            return
        if name == "wi.block_load":  # copies global memory (scalars) into a private array
            self.join(op.operands[0], None)
            return
        if not any(_is_ptr(r) for r in op.results) or name in _FRESH:
            return
        ptr_operands = [v for v in op.operands if _is_ptr(v)]
        src: Roots = frozenset()
        if name in _GLOBAL_READS or name == "tile.call" or not ptr_operands:
            src = None  # read from memory, returned by a call, made from an integer: anywhere
        for v in ptr_operands:
            src = _union(src, self.get(v))
        for r in op.results:
            self.join(r, src)

    def _region_op(self, op: Operation) -> None:
        if op.NAME == "scf.for":
            body = op.regions[0].blocks[0]
            carried = op.operands[3:]
            ys = _yielded(body)
            for i, init in enumerate(carried):
                r = _union(self.get(init), self.get(ys[i]) if i < len(ys) else frozenset())
                self.join(body.args[i + 1], r)
                self.join(op.results[i], r)
        elif op.NAME == "scf.if":
            for region in op.regions:
                if region.blocks:
                    for i, y in enumerate(_yielded(region.blocks[0])):
                        self.join(op.results[i], self.get(y))
        else:  # scf.while
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            ys = _yielded(after)
            for i, init in enumerate(op.operands):
                self.join(before.args[i], _union(self.get(init), self.get(ys[i]) if i < len(ys) else frozenset()))
            cond = before.ops[-1].operands[1:] if before.ops else []
            for i, c in enumerate(cond):
                self.join(after.args[i], self.get(c))
                self.join(op.results[i], self.get(c))


def _yielded(block: Block) -> list[Value]:
    return list(block.ops[-1].operands) if block.ops else []


def pointer_origins(func: Operation) -> dict[int, Roots]:
    """Provenance of every pointer-holding value of ``func`` (a ``tile.func`` or ``wi.func``),
    keyed by ``id(value)``: the parameter indices it may derive from, or None for anywhere.
    Values missing from the map hold no pointer yet (e.g. an array never stored to)."""
    origins = _PointerOrigins(func)
    ops = list(func.walk())[1:]
    for _ in range(len(ops) + 2):  # monotone over a finite lattice: terminates
        origins.changed = False
        for op in ops:
            origins.visit(op)
        if not origins.changed:
            break
    return origins.roots


def written_pointer_args(func: Operation) -> frozenset[int]:
    """Indices of ``func``'s pointer parameters that a store or atomic may write through.

    Works on tile and work-item IR alike. Conservative: a store through a
    pointer that may come from anywhere counts as writing every pointer
    parameter.
    """
    args = func.regions[0].blocks[0].args
    every = frozenset(i for i, a in enumerate(args) if _is_ptr(a))
    roots = pointer_origins(func)
    written: frozenset[int] = frozenset()
    for op in func.walk():
        operand = _WRITES.get(op.NAME)
        if operand is None:
            continue
        r = roots.get(id(getattr(op, operand)))
        if not r:  # may point anywhere, or provenance not traced (no valid pointer has none)
            return every
        written |= r
    return written & every


def unused_pointer_args(func: Operation) -> frozenset[int]:
    """Indices of ``func``'s pointer parameters the body never reads (after specialisation and
    dead-code elimination: ``bias_ptr`` under a false ``HAS_BIAS``).

    Why: Triton code passes some tensor for a pointer it does not use (``kdsl.ops.matmul`` passes
    the output as its absent bias), and such an argument cannot alias anything the kernel
    touches; counting it made every such launch take the aliasing-safe kernel and the slow
    checked launch path."""
    args = func.regions[0].blocks[0].args
    return frozenset(i for i, a in enumerate(args) if _is_ptr(a) and not a.uses)
