"""Detect loops the driver cut short (llvmpipe's loop cap), exactly, at each loop's exit.

WHY: Mesa's llvmpipe/lavapipe gives every shader invocation (really each SIMD
group of invocations) one counter, decremented by every pass of every loop
and starting at 65535; when it reaches 0 the loop being run is left as if it
had finished -- silently, so the kernel returns wrong results. Measured on
Mesa 22.3 (``docs/VULKAN.md``): a loop of N iterations takes N + 1 passes
(the last one only tests the condition), the first pass of every loop entry
always runs, ``range(65535)`` alone is right and ``range(65536)`` stops after
65535, nested ``255 x 255`` is right and ``256 x 255`` is not, two loops in
a row are right while ``A + 1 + B <= 65535``.

Counting passes in the shader cannot match that exactly (the driver unrolls
short constant loops, which then cost no pass, and a SIMD group shares one
counter), so instead every loop exit asks the question directly: *would this
loop still run?* Under correct execution the answer is always no; a yes means
the driver cut it, and the emitter writes ``STATUS_LOOP_CUT + k`` (``k``
indexes ``SpirvKernel.loops``, the loop's source location) into the status
word, which the runtime turns into a ``KernelRuntimeError``. A loop whose last
iteration completed and only the final condition test was cut is *not*
reported: its results are right.

* ``scf.for``: the exit condition is evaluated again on the header's values
  (the loop-carried registers, already advanced by the last completed
  iteration) plus an opaque zero -- otherwise the driver would merge the
  comparison with the header's or fold it away knowing the loop exited.
* ``scf.while``: the ``before`` region is emitted once more after the loop on
  the header's values (opaque copies); its condition is the check and its
  forwarded values become the loop's results (equal to the last ones after a
  normal exit; the right ones when only the last condition test was cut). A
  ``before`` region with effects (global stores, atomics, prints, asserts)
  cannot be run twice: then the loop's condition is branched on
  through an opaque integer so that the driver cannot fold the last value of
  the condition after the loop, and that value is the check (a cut there
  always skipped the region's effects, so reporting it is right).
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.codegen.spirv import abi
from kdsl.codegen.spirv.emit import Emitter
from kdsl.ir.core import Block, Operation, Pure
from kdsl.ir.types import MemRefType

# ops a ``before`` region may hold and still be run a second time after the loop. Stores to
# private/local arrays are allowed: the lowering writes such a buffer before reading it in the same
# region (a value's storage), so running the region again writes the same values. A barrier is
# allowed: the loop holding it is work-group uniform, and so is its merge block.
_REPLAYABLE = frozenset({"wi.load", "wi.gload", "wi.block_load", "wi.alloc", "wi.barrier", "scf.for", "scf.if",
                         "scf.while"})


def enabled(e: Emitter) -> bool:
    """Whether the target's driver cuts loops (then every loop exit is checked)."""
    return e.target.max_loop_iterations > 0


def report_if(e: Emitter, op: Operation, still: int) -> None:
    """At ``op``'s merge block: ``still`` true means the driver left the loop early."""
    code = abi.STATUS_LOOP_CUT + len(e.loops)
    e.loops.append((op.loc.file, op.loc.line, op.loc.col))
    e.structured_if(still, lambda: e.record_status(code))


def opaque(e: Emitter, value: int, rt: int) -> int:
    """``value`` again, through an operation the driver cannot fold or merge with an earlier one."""
    f, info = e.f, e.m.info[rt]
    if info.kind == "int":
        return f.op("OpIAdd", rt, value, e.int_zero(rt))
    false = f.cmp("ne", e.t.u32, e.opaque_zero, e.cu32(0))
    if info.kind == "bool":
        return f.op("OpLogicalNotEqual", rt, value, false)
    return f.select(rt, false, f.const(rt, 0), value)


def replayable(block: Block) -> bool:
    """Whether running ``block`` again after its loop only recomputes values (no effects)."""
    for outer in block.ops:
        for op in outer.walk():
            if op.IS_TERMINATOR or op.has_trait(Pure) or op.NAME in _REPLAYABLE:
                continue
            if op.NAME == "wi.store":
                t = op.operands[-2].type
                if isinstance(t, MemRefType) and t.space in ("private", "local", "scratch"):
                    continue
            return False
    return True


def guarded_condition(e: Emitter, cond: int) -> tuple[int, int]:
    """(branch condition, value to check after the loop) for a ``before`` region with effects."""
    f, u32 = e.f, e.t.u32
    as_int = f.select(u32, cond, e.cu32(1), e.cu32(0))
    branch = f.cmp("ne", u32, f.op("OpIAdd", u32, as_int, e.opaque_zero), e.cu32(0))
    return branch, f.cmp("ne", u32, as_int, e.cu32(0))


def replay_before(e: Emitter, op: Operation, header_values: list[int], emit_region: Callable[[], None]) -> None:
    """Bind ``before``'s arguments to opaque copies of ``header_values`` and emit it again."""
    before = op.regions[0].block
    for arg, hv in zip(before.args, header_values):
        e.bind(arg, opaque(e, hv, e.reg(arg.type)))
    emit_region()
