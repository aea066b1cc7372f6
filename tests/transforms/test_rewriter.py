"""Cloning utilities, the PatternRewriter and the greedy driver."""

from __future__ import annotations

import pytest

from kdsl.ir.core import IRError, ModuleOp, Operation
from kdsl.ir.dialects.arith import AddOp, ConstantOp
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.rewriter import (
    IRMapping,
    PatternRewriter,
    RewriteListener,
    RewritePattern,
    clone_block_into,
    clone_op,
    clone_region,
)
from kdsl.ir.verifier import verify
from kdsl.transforms.greedy import apply_patterns_greedily, is_attached

LOOP = """
tile.func @f(%n: i32, %x: f32) -> (f32) {
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  %r = scf.for %zero, %n, %one, %x : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i: i32, %acc: f32):
    %c = arith.cast %i : (i32) -> f32
    %s = arith.add %acc, %c : f32
    scf.yield %s : f32
  }
  tile.return %r : f32
}
"""


def _func(m: ModuleOp) -> Operation:
    return m.body.ops[0]


def test_clone_op_is_deep_and_independent() -> None:
    m = parse_module(LOOP)
    body = _func(m).regions[0].block
    loop = body.ops[2]
    mapping = IRMapping()
    copy = clone_op(loop, mapping)
    assert copy is not loop and type(copy) is type(loop)
    assert copy.operands == loop.operands  # outer values are shared
    assert mapping.lookup(loop.results[0]) is copy.results[0]
    inner_old = loop.regions[0].block
    inner_new = copy.regions[0].block
    assert inner_new is not inner_old
    assert [a.name_hint for a in inner_new.args] == ["i", "acc"]
    # the copy's inner ops use the copy's block arguments, not the original's
    add = inner_new.ops[1]
    assert add.operands[0] is inner_new.args[1]
    # inserting the copy gives valid IR printing the same loop twice
    body.insert(3, copy)
    verify(m)
    text = print_op(m)
    assert text.count("scf.for") == 2
    # uses were recorded: erasing the copy leaves the original untouched
    copy.erase()
    verify(m)
    assert print_op(m) == print_op(parse_module(LOOP))


def test_clone_region_with_mapping_of_outer_values() -> None:
    m = parse_module(LOOP)
    func = _func(m)
    loop = func.regions[0].block.ops[2]
    n, x = func.regions[0].block.args
    mapping = IRMapping([(x, n)])
    region = clone_region(loop.regions[0], mapping)
    assert region.parent is None
    assert len(region.block.ops) == 3


def test_clone_block_into_returns_terminator_values() -> None:
    m = parse_module(LOOP)
    func = _func(m)
    loop = func.regions[0].block.ops[2]
    dest = func.regions[0].block
    n, x = dest.args
    index = dest.ops.index(loop)
    results = clone_block_into(loop.regions[0].block, dest, index, [n, x])
    assert len(results) == 1 and results[0].owner_op is dest.ops[index + 1]
    with pytest.raises(IRError, match="takes 2 arguments, got 1"):
        clone_block_into(loop.regions[0].block, dest, None, [n])


class _Recorder(RewriteListener):
    def __init__(self) -> None:
        self.events: list[str] = []

    def notify_inserted(self, op: Operation) -> None:
        self.events.append("insert " + op.NAME)

    def notify_erased(self, op: Operation) -> None:
        self.events.append("erase " + op.NAME)

    def notify_modified(self, op: Operation) -> None:
        self.events.append("modify " + op.NAME)


def test_rewriter_creates_at_anchor_with_its_location_and_notifies() -> None:
    m = parse_module(LOOP, "f.mlir")
    block = _func(m).regions[0].block
    anchor = block.ops[1]
    rec = _Recorder()
    rw = PatternRewriter(rec)
    rw.set_insertion_point(anchor)
    new = rw.create(ConstantOp, [], [anchor.result.type], {"value": 7})
    assert block.ops.index(new) == block.ops.index(anchor) - 1
    assert new.loc == anchor.loc and new.loc.file == "f.mlir"
    rw.replace_op(anchor, [new.result])
    assert new.result.name_hint == "one"  # a value made by the rewrite inherits the name
    assert rec.events == ["insert arith.constant", "erase arith.constant"]
    verify(m)


def test_replace_op_checks_types_and_counts() -> None:
    m = parse_module(LOOP)
    block = _func(m).regions[0].block
    rw = PatternRewriter()
    with pytest.raises(IRError, match="1 results"):
        rw.replace_op(block.ops[0], [])
    with pytest.raises(IRError, match="of type i32 with f32"):
        rw.replace_op(block.ops[0], [block.args[1]])


def test_inline_block_before_and_erase_block_arg() -> None:
    m = parse_module(LOOP)
    block = _func(m).regions[0].block
    loop = block.ops[2]
    n, x = block.args
    rw = PatternRewriter()
    inner = loop.regions[0].block
    vals = rw.inline_block_before(inner, loop, [n, x])
    rw.replace_op(loop, vals)
    verify(m)
    assert "scf.for" not in print_op(m)
    assert not inner.args[0].has_uses
    rw.erase_block_arg(inner, 0)
    assert [a.index for a in inner.args] == [0]
    with pytest.raises(IRError, match="still used"):
        rw.erase_block_arg(block, 0)  # %n now feeds the inlined cast


class _PingPong(RewritePattern):
    """A broken pattern pair (a+b <-> b+a) that never converges."""

    OPS = ("arith.add",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        a, b = op.operands
        rewriter.set_operand(op, 0, b)
        rewriter.set_operand(op, 1, a)
        return True


def test_driver_reports_non_convergence() -> None:
    m = parse_module(LOOP)
    with pytest.raises(IRError, match="did not converge"):
        apply_patterns_greedily(m, [_PingPong()], max_rewrites=50)


class _SubToAdd(RewritePattern):
    """x - y -> x + y (nonsense arithmetic, but a visible, terminating rewrite)."""

    OPS = ("arith.sub",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> bool:
        new = rewriter.create(AddOp, list(op.operands), [op.result.type])
        rewriter.replace_op(op, new)
        return True


def test_driver_reaches_fixpoint_and_revisits_new_ops() -> None:
    src = """
    tile.func @g(%a: i32, %b: i32) -> (i32) {
      %s = arith.sub %a, %b : i32
      %t = arith.sub %s, %b : i32
      %dead = arith.mul %a, %a : i32
      tile.return %t : i32
    }
    """
    m = parse_module(src)
    assert apply_patterns_greedily(m, [_SubToAdd()])
    text = print_op(m)
    assert "arith.sub" not in text and "arith.mul" not in text  # dead pure op erased too
    assert "%t = arith.add %s, %b : i32" in text
    assert not apply_patterns_greedily(m, [_SubToAdd()])


def test_is_attached() -> None:
    m = parse_module(LOOP)
    loop = _func(m).regions[0].block.ops[2]
    inner = loop.regions[0].block.ops[0]
    assert is_attached(inner, m)
    loop.results[0].replace_all_uses_with(_func(m).regions[0].block.args[1])
    loop.erase()
    assert not is_attached(inner, m)
