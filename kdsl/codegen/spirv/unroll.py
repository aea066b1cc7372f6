"""Which ``scf.for`` loops the emitter asks the driver to unroll, and how many loop passes remain.

Why (lavapipe, Mesa 22.3, docs/VULKAN.md "Performance against OpenCL"): with one work-item per
program (``num_threads == 1``) every tile lives in private arrays, and the lowering's element
loops index them with the loop counter. Indexed that way, a private array is a stack array
gathered lane by lane; once a loop with a constant trip count is unrolled, every index is a
constant and the driver keeps the elements in registers. Unrolled loops also stop counting
against lavapipe's cap of 65,535 loop passes per invocation. ``OpLoopMerge``'s ``Unroll`` control
makes Mesa's NIR unroll a loop whose trip count it knows, whatever its size: the limits here keep
the shader (and the driver's LLVM compile at the first dispatch) bounded. Measured: matmul
16x16x16 blocks at one invocation per program 0.37 -> 0.91 GFLOP/s, vector add 0.21 -> 0.41 GB/s.

:func:`loop_passes` estimates the passes a program makes: the Vulkan backend uses it to choose the one-invocation mapping only where the cap leaves
room (``kdsl/runtime/vulkan/backend.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kdsl.ir.core import Block, Operation
from kdsl.ir.dialects import arith

BODY_FACTOR = 16  # an unrolled nest holds at most trips_limit * BODY_FACTOR copies of its innermost body
# all unrolled nests of a kernel together (first come, first served): one 16x16x16 dot (4,096) plus
# its tile loads/stores. Two such dots (attention) took lavapipe's first dispatch past 120 s.
TOTAL_FACTOR = 24


def trip_count(loop: Operation) -> int | None:
    """Iterations of an ``scf.for`` with constant bounds, else None."""
    vals = []
    for v in loop.operands[:3]:
        op = v.owner_op
        if not isinstance(op, arith.ConstantOp) or not isinstance(op.attributes["value"], int):
            return None
        vals.append(int(op.attributes["value"]))
    lo, hi, step = vals
    return max(0, -(-(hi - lo) // step)) if step > 0 else None


def _loops(block: Block) -> list[Operation]:
    """The loops directly nested in ``block`` (through ``scf.if`` regions, not through loops)."""
    out: list[Operation] = []
    for op in block.ops:
        if op.NAME in ("scf.for", "scf.while"):
            out.append(op)
        else:
            for r in op.regions:
                out.extend(_loops(r.block))
    return out


def unrolled_loops(func: Operation, trips_limit: int) -> set[int]:
    """``id`` of every ``scf.for`` to mark ``Unroll``: a constant trip count <= ``trips_limit``,
    every nested loop unrolled too, at most ``trips_limit * BODY_FACTOR`` copies of the
    innermost body per nest and ``trips_limit * TOTAL_FACTOR`` in the kernel (0: none)."""
    out: set[int] = set()
    if trips_limit <= 0:
        return out
    left = trips_limit * TOTAL_FACTOR

    def size(loop: Operation) -> int:
        """Copies of the innermost body if ``loop`` were unrolled (0: it cannot be)."""
        inner = [size(x) for r in loop.regions for x in _loops(r.block)]
        trips = trip_count(loop) if loop.NAME == "scf.for" else None
        if trips is None or trips > trips_limit or any(c == 0 for c in inner):
            return 0
        copies = trips * max([1, *inner])
        return copies if copies <= trips_limit * BODY_FACTOR else 0

    def visit(loop: Operation) -> None:
        nonlocal left
        copies = size(loop)
        if 0 < copies <= left:
            left -= copies
            out.update(id(x) for x in loop.walk() if x.NAME == "scf.for")
            return
        for r in loop.regions:
            for x in _loops(r.block):
                visit(x)

    for loop in _loops(func.regions[0].block):
        visit(loop)
    return out


DYNAMIC_TRIPS = 1024  # assumed iterations of a loop of unknown trip count (not grid-stride)


def _grid_stride(loop: Operation) -> bool:
    """``for r in range(program_id, n, num_programs)``: its trip count is the caller's choice
    (more programs, fewer iterations), so it is estimated as one iteration."""
    step = loop.operands[2].owner_op
    return step is not None and step.NAME == "wi.num_programs"


def loop_passes(func: Operation, unrolled: set[int]) -> int:
    """Estimated loop passes of one program: an unrolled loop costs none itself (its body's loops
    count once per copy), a loop of unknown trip count runs :data:`DYNAMIC_TRIPS` times, a
    grid-stride loop once (see :func:`grid_stride_loops`), an ``scf.while`` ``DYNAMIC_TRIPS`` times."""
    return loop_passes_block(func.regions[0].block, unrolled)


def loop_passes_block(block: Block, unrolled: set[int]) -> int:
    """:func:`loop_passes` of the ops of one block."""
    total = 0
    for op in block.ops:
        if op.NAME == "scf.for":
            trips = trip_count(op)
            body = loop_passes_block(op.regions[0].block, unrolled)
            if trips is None:
                trips = 1 if _grid_stride(op) else DYNAMIC_TRIPS
            total += trips * body if id(op) in unrolled else trips * (1 + body) + 1
        elif op.NAME == "scf.while":
            total += DYNAMIC_TRIPS * (1 + sum(loop_passes_block(r.block, unrolled) for r in op.regions))
        else:
            total += sum(loop_passes_block(r.block, unrolled) for r in op.regions)
    return total


@dataclass(frozen=True)
class GridStrideLoop:
    """A top-level grid-stride loop, whose real trip count only a launch knows.

    :func:`loop_passes` counts it once; a launch with ``grid`` and arguments ``args`` makes
    :meth:`extra_passes` more (``param``: the kernel parameter giving the upper bound, else the
    constant ``bound``; ``start``: the smallest lower bound, 0 for ``program_id``)."""

    param: int | None
    bound: int
    start: int
    axis: int
    passes: int  # loop passes per iteration: the loop's own plus its body's

    def extra_passes(self, grid: tuple[int, int, int], args: Sequence[object]) -> int:
        hi = self.bound if self.param is None else args[self.param]
        if not isinstance(hi, int) or isinstance(hi, bool):
            hi = int(hi)  # type: ignore[call-overload]  # numpy integers
        trips = -(-(hi - self.start) // max(1, grid[self.axis]))
        return max(0, trips - 1) * self.passes


def grid_stride_loops(func: Operation, unrolled: set[int]) -> list[GridStrideLoop]:
    """The grid-stride loops not nested in another loop whose bound a launch can evaluate (a
    constant or a parameter; see :class:`GridStrideLoop`)."""
    params = {id(a): i for i, a in enumerate(func.regions[0].block.args)}
    out: list[GridStrideLoop] = []
    for loop in _loops(func.regions[0].block):
        if loop.NAME != "scf.for" or not _grid_stride(loop):
            continue
        lo, hi, step = (v.owner_op for v in loop.operands[:3])
        axis = int(step.attributes.get("axis", 0)) if step is not None else 0
        if lo is not None and lo.NAME == "wi.program_id" and int(lo.attributes.get("axis", 0)) == axis:
            start = 0
        elif isinstance(lo, arith.ConstantOp) and isinstance(lo.attributes["value"], int):
            start = int(lo.attributes["value"])
        else:
            continue
        if isinstance(hi, arith.ConstantOp) and isinstance(hi.attributes["value"], int):
            param, bound = None, int(hi.attributes["value"])
        elif hi is None and id(loop.operands[1]) in params:
            param, bound = params[id(loop.operands[1])], 0
        else:
            continue
        body = loop_passes_block(loop.regions[0].block, unrolled)
        out.append(GridStrideLoop(param, bound, start, axis, 1 + body))
    return out
