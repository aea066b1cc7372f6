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
    grid-stride loop once, an ``scf.while`` ``DYNAMIC_TRIPS`` times."""

    def block_passes(block: Block) -> int:
        total = 0
        for op in block.ops:
            if op.NAME == "scf.for":
                trips = trip_count(op)
                body = block_passes(op.regions[0].block)
                if trips is None:
                    trips = 1 if _grid_stride(op) else DYNAMIC_TRIPS
                total += trips * body if id(op) in unrolled else trips * (1 + body) + 1
            elif op.NAME == "scf.while":
                total += DYNAMIC_TRIPS * (1 + sum(block_passes(r.block) for r in op.regions))
            else:
                total += sum(block_passes(r.block) for r in op.regions)
        return total

    return block_passes(func.regions[0].block)
