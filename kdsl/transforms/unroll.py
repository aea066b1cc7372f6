"""``unroll``: fully unroll ``scf.for`` loops with a small constant trip count.

``for i in kl.static_range(4)`` and loops over constexpr bounds run a fixed,
small number of times; unrolled, their iterations become straight-line code
the later passes (folding with the now-constant ``iv``, CSE, mask
elimination, vectorisation) can see across, and backends lose the loop's
carried-value plumbing. Limits keep code size sane: at most ``max-trip``
iterations and at most ``max-ops`` ops after unrolling. Loops are unrolled
innermost first, so a small nest unrolls completely.
"""

from __future__ import annotations

from kdsl.ir.core import ModuleOp, Operation, Value
from kdsl.ir.dialects.arith import ConstantOp
from kdsl.ir.rewriter import clone_block_into
from kdsl.transforms.base import Option, Pass, Tunable
from kdsl.transforms.utils import const_value


def trip_count(loop: Operation) -> int | None:
    """The constant number of iterations of ``scf.for`` (None if not constant)."""
    lb, ub, step = (const_value(v) for v in (loop.lower, loop.upper, loop.step))
    if lb is None or ub is None or step is None or int(step) == 0:
        return None
    lo, hi, s = int(lb), int(ub), int(step)
    if s > 0:
        return max(0, (hi - lo + s - 1) // s)
    return max(0, (lo - hi + (-s) - 1) // (-s))


def body_size(loop: Operation) -> int:
    return sum(1 for _ in loop.walk()) - 1


def unroll_loop(loop: Operation) -> None:
    """Replace ``loop`` (constant bounds) by copies of its body, one per iteration."""
    block = loop.parent
    assert block is not None
    n = trip_count(loop)
    assert n is not None
    lb, step = int(const_value(loop.lower)), int(const_value(loop.step))  # type: ignore[arg-type]
    iters: list[Value] = list(loop.inits)
    body = loop.regions[0].block
    for i in range(n):
        iv_op = ConstantOp([], [loop.lower.type], {"value": lb + i * step}, loc=loop.loc)
        iv_op.result.name_hint = body.args[0].name_hint
        block.insert(block.ops.index(loop), iv_op)
        iters = clone_block_into(body, block, block.ops.index(loop), [iv_op.result, *iters])
    for old, new in zip(loop.results, iters):
        old.replace_all_uses_with(new)
    loop.erase()


def unroll(root: Operation, max_trip: int, max_ops: int) -> int:
    """Unroll every eligible loop under ``root``, innermost first; returns how many."""
    done = 0
    for loop in reversed([op for op in root.walk() if op.NAME == "scf.for"]):
        n = trip_count(loop)
        if n is None or n > max_trip or n * body_size(loop) > max_ops or loop.parent is None:
            continue
        unroll_loop(loop)
        done += 1
    return done


class Unroll(Pass):
    """Fully unroll small constant-trip ``scf.for`` loops."""

    name = "unroll"
    summary = "full unrolling of scf.for loops with a small constant trip count"
    OPTIONS = (
        Option("max-trip", int, 8, "unroll loops running at most this many times (0: never)"),
        Option("max-ops", int, 512, "unroll only if the unrolled code has at most this many ops"),
    )

    def run(self, module: ModuleOp) -> None:
        unroll(module, self.options["max-trip"], self.options["max-ops"])

    def tunables(self) -> list[Tunable]:
        return [Tunable("max-trip", (0, 4, 8, 16), "largest trip count unrolled")]
