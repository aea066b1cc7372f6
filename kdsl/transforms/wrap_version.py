"""``wrap-version``: a copy of the kernel without the index wraps Triton matmuls write.

Triton's matmul tutorials (and most matmuls written after them) wrap their row/column
offsets so that the last, partial block reads valid memory instead of masking::

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M          # tutorial 03
    offs_am = tl.where(offs_am < M, offs_am, 0)                       # tutorial 09

The wrap makes the pointer tiles non-affine: the lowering then materialises every
pointer and loads element by element (3x slower than a blocked load on the cpu
backend for 1024^3). Yet only programs at the matrix edge wrap at all. When a wrap's
operand is ``splat(base) + c`` with lane constants ``0 <= lo <= c <= hi``, the wrap is
the identity exactly when ``base >= -lo`` and ``base + hi < n``. The pass evaluates that
condition (for every such wrap of the kernel's top-level block, conjoined, with no
overflow) where the last of their bases and bounds is known, and turns the rest of the
kernel into::

    scf.if cond { rest, each wrap replaced by its operand } else { rest, unchanged }

The then-branch is ordinary affine code (blocked loads, vectors); the else-branch is
the original, so every program computes what it did before. Wrapped forms recognised:
``arith.rem(x, splat(n))`` (signed, so ``x % n == x`` needs ``0 <= x < n``) and
``arith.select(x < splat(n), x, other)``. The rest of the kernel is duplicated, so
kernels larger than ``max-ops`` are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from kdsl.ir.core import Block, ModuleOp, Operation, Region, Value
from kdsl.ir.dialects.arith import AndOp, CmpOp, SubOp
from kdsl.ir.dialects.scf import IfOp, YieldOp
from kdsl.ir.rewriter import IRMapping, PatternRewriter, clone_op
from kdsl.ir.types import ScalarType
from kdsl.transforms.base import Option, Pass
from kdsl.transforms.facts import lanes, uniform_base
from kdsl.transforms.utils import make_constant

_I1 = ScalarType("i1")


@dataclass(frozen=True)
class Wrap:
    """``op`` equals ``value`` when ``base + lo >= 0`` (if ``nonneg``) and ``base + hi < bound``."""

    op: Operation
    value: Value
    base: Value | None
    lo: int
    hi: int
    bound: Value
    nonneg: bool


def _signed_int_tile(v: Value) -> bool:
    s = v.type.scalar
    return bool(v.type.shape) and isinstance(s, ScalarType) and s.is_integer and s.is_signed


def _wrap(op: Operation) -> Wrap | None:
    """The wrap ``op`` is, if it is one (see the module doc)."""
    if op.NAME == "arith.rem":
        x, n, nonneg = op.lhs, op.rhs, True
    elif op.NAME == "arith.select":
        cmp = op.cond.owner_op
        if cmp is None or cmp.NAME != "arith.cmp" or cmp.attributes["predicate"] != "lt":
            return None
        if cmp.lhs is not op.true_value:
            return None
        x, n, nonneg = cmp.lhs, cmp.rhs, False
    else:
        return None
    if not _signed_int_tile(x):
        return None
    d, bound = lanes(x), uniform_base(n)
    if d is None or bound is None or d.lo < 0 or bound.type != (d.base.type if d.base is not None else bound.type):
        return None
    return Wrap(op, x, d.base, d.lo, d.hi, bound, nonneg)


def _position(block: Block, v: Value) -> int:
    """Index in ``block`` after which ``v`` is available (-1: defined outside the block)."""
    op = v.owner_op
    while op is not None and op.parent is not block:
        op = op.parent_op
    return block.ops.index(op) if op is not None else -1


def _condition(rw: PatternRewriter, wraps: list[Wrap]) -> Value:
    """``and`` over the wraps of ``base >= -lo`` (if needed), ``bound > hi``, ``base < bound - hi``.

    Written so nothing overflows: ``bound - hi`` is only used when ``bound > hi >= 0``."""
    terms: list[Value] = []
    for w in wraps:
        t = w.bound.type
        hi = make_constant(rw, w.hi, t)
        terms.append(rw.create(CmpOp, [w.bound, hi], [_I1], {"predicate": "gt"}).result)
        limit = rw.create(SubOp, [w.bound, hi], [t]).result
        base = w.base if w.base is not None else make_constant(rw, 0, t)
        terms.append(rw.create(CmpOp, [base, limit], [_I1], {"predicate": "lt"}).result)
        if w.nonneg:
            lo = make_constant(rw, -w.lo, t)
            terms.append(rw.create(CmpOp, [base, lo], [_I1], {"predicate": "ge"}).result)
    cond = terms[0]
    for term in terms[1:]:
        cond = rw.create(AndOp, [cond, term], [_I1]).result
    return cond


def version_function(func: Operation, max_ops: int) -> bool:
    """Version ``func``'s top-level block on its wraps; False when there is nothing to do."""
    block = func.regions[0].block
    term = block.terminator
    if term is None or term.operands:
        return False
    wraps = [w for op in block.ops if (w := _wrap(op)) is not None]
    if not wraps:
        return False
    # the rest of the kernel starts where every wrap's base and bound are known
    split = 1 + max(_position(block, v) for w in wraps for v in (w.bound, w.base) if v is not None)
    rest = block.ops[split:-1]
    nested = [inner for op in rest for inner in op.walk()]
    if not rest or len(nested) > max_ops or any(inner.IS_TERMINATOR and inner.NAME == term.NAME for inner in nested):
        return False  # nothing after, too large, or an early return the scf.if could not hold

    rw = PatternRewriter()
    rw.set_insertion_point(rest[0])
    cond = _condition(rw, wraps)

    fast = Block()
    mapping = IRMapping()
    identity = {id(w.op): w.value for w in wraps}
    in_rest = {id(op) for op in rest}
    for w in wraps:
        if id(w.op) not in in_rest:
            mapping.map(w.op.result, w.value)  # a wrap before the split: its uses in the copy
    for op in rest:
        if id(op) in identity:
            mapping.map(op.result, mapping.lookup(identity[id(op)]))
            continue
        fast.append(clone_op(op, mapping))
    fast.append(YieldOp([], [], loc=func.loc))
    slow = Block()
    for op in rest:
        block.ops.remove(op)
        slow.append(op)
    slow.append(YieldOp([], [], loc=func.loc))
    block.insert(len(block.ops) - 1, IfOp([cond], [], None, [Region([fast]), Region([slow])], func.loc))
    return True


def wrap_version(module: ModuleOp, max_ops: int) -> int:
    done = 0
    for func in module.body.ops:
        if func.NAME == "tile.func" and func.attributes.get("kernel") and version_function(func, max_ops):
            done += 1
    return done


class WrapVersion(Pass):
    """Add a wrap-free copy of the kernel for the programs whose index wraps are identities."""

    name = "wrap-version"
    summary = "version a kernel on its `x % n` / `where(x < n, x, c)` index wraps being identities"
    OPTIONS = (Option("max-ops", int, 2000, "do not duplicate kernels with more ops after the first wrap (0: never)"),)

    def run(self, module: ModuleOp) -> None:
        # no autotuning knob: the copy only costs compile time, and the edge programs run the
        # code they ran before
        wrap_version(module, self.options["max-ops"])
