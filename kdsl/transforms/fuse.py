"""``fuse``: tile-level fusion that pays before lowering.

**Epilogue into dot.** ``dot(a, b, 0) + c`` (either operand order) becomes
``dot(a, b, c)``: the accumulator starts from ``c`` instead of zero, so the
lowering neither materialises a zero tile nor runs a second elementwise pass
over the (M, N) result -- for a register-blocked micro-kernel the bias is
loaded into the accumulator registers once. ``tile.dot`` computes
``acc + a @ b`` with an unspecified summation order, so adding ``c`` first
is one of the orders the op already allows (bit-exact for integer dots).
Applies only when the zero-accumulator dot has no other use.

**Accumulate into dot.** ``dot(a, b, 0) + dot(c, d, 0)``-style chains are
covered by the same rule applied twice (``dot(c, d, dot(a, b, 0))``), which
turns a sum of products into one accumulator chain.
"""

from __future__ import annotations

from kdsl.ir.core import ModuleOp, Operation
from kdsl.ir.dialects.tile import DotOp
from kdsl.ir.rewriter import PatternRewriter, RewritePattern
from kdsl.transforms.base import Option, Pass
from kdsl.transforms.greedy import apply_patterns_greedily
from kdsl.transforms.utils import const_value, defining


def _zero_acc_dot(v: object) -> Operation | None:
    dot = defining(v, "tile.dot")  # type: ignore[arg-type]
    if dot is None or len(dot.result.uses) != 1:
        return None
    c = const_value(dot.acc)
    if c is None or c != 0 or (isinstance(c, float) and str(c).startswith("-")):
        return None
    return dot


class EpilogueIntoDot(RewritePattern):
    """``add(dot(a, b, 0), c)`` -> ``dot(a, b, c)``."""

    OPS = ("arith.add",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        for this, other in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            dot = _zero_acc_dot(this)
            if dot is None or other.type != dot.result.type:
                continue
            new = rewriter.create(DotOp, [dot.a, dot.b, other], [dot.result.type], dict(dot.attributes), loc=dot.loc)
            rewriter.replace_op(op, new.results)
            rewriter.erase_op(dot)
            return True
        return False


class Fuse(Pass):
    """Fold elementwise epilogues into ``tile.dot`` accumulators."""

    name = "fuse"
    summary = "fuse elementwise epilogues (dot(a,b,0)+c -> dot(a,b,c)) before lowering"
    OPTIONS = (Option("dot-epilogue", bool, True, "fold dot(a,b,0)+c into dot(a,b,c)"),)

    def run(self, module: ModuleOp) -> None:
        if self.options["dot-epilogue"]:
            apply_patterns_greedily(module, [EpilogueIntoDot()])
