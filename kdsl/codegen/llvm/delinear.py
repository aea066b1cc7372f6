"""Render flat element loops over 2-D (N-D) tiles as loop nests.

The lowering walks a tile of any shape with one flat loop
``for i = 0 to T step 1`` and recovers coordinates with ``i % C`` and
``i / C`` for the row lengths ``C`` involved (e.g. 32 and 64 when a
``64 x 32`` tile of ``a`` and a ``32 x 64`` tile of ``b`` are loaded in the
same loop). LLVM's vectoriser cannot see that ``i / C`` is constant across a
vector of consecutive ``i``, so every such access becomes a gather.

When the divisors form a chain ``C1 | C2 | ... | Cn | T`` this module renders
the same iterations, in the same order, as a nest of loops over the "digits"
``i = d0 + C1*d1 + C2*d2 + ... + Cn*dn`` and substitutes each ``i % Cj`` and
``i / Cj`` by its closed form in the digits. The innermost loop (``d0``, of
``C1`` iterations) then has contiguous, vectorisable accesses. Since the
iteration order is unchanged this is a pure re-indexing: results are
bit-identical to the flat loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm.dot import loop
from kdsl.codegen.llvm.types import I32
from kdsl.ir.core import Operation

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer

MIN_INNER = 8  # a shorter innermost loop vectorises worse than the gathers it replaces


def _const(v: object) -> int | None:
    op = getattr(v, "owner_op", None)
    if op is None or op.NAME != "arith.constant" or isinstance(op.attributes["value"], float):
        return None
    return int(op.attributes["value"])


def plan(op: Operation) -> tuple[list[int], list[Operation]] | None:
    """(divisor chain C1 < ... < Cn, the rem/div ops of the iv) if ``op`` qualifies."""
    if len(op.operands) != 3 or op.results or _const(op.operands[0]) != 0 or _const(op.operands[2]) != 1:
        return None
    total = _const(op.operands[1])
    iv = op.regions[0].block.args[0]
    if total is None or total <= 0 or getattr(iv.type, "name", "") != "i32":
        return None
    users: list[Operation] = []
    divisors: set[int] = set()
    for user, pos in iv.uses:
        if user.NAME not in ("arith.rem", "arith.div") or pos != 0:
            continue
        c = _const(user.operands[1])
        if c is None or c <= 1 or c >= total:
            continue
        users.append(user)
        divisors.add(c)
    chain = sorted(divisors)
    if not chain or chain[0] < MIN_INNER:
        return None
    for lo, hi in zip(chain, [*chain[1:], total]):
        if hi % lo:
            return None
    return chain, users


def render(fr: FuncRenderer, op: Operation, chain: list[int], users: list[Operation]) -> None:
    """Emit the loop nest; the body is rendered once, in the innermost loop."""
    total = _const(op.operands[1])
    assert total is not None
    body = op.regions[0].block
    iv = body.args[0]
    bounds = [c // p for c, p in zip([*chain, total], [1, *chain])]  # trip count of each digit
    weights = [1, *chain]  # i = sum(d_j * weights[j])
    digits: list[ir.Value] = []

    def nest(level: int) -> None:
        def step(d: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            digits.append(d)
            if level == 0:
                _body(fr, op, iv, digits[::-1], weights, chain, users)
            else:
                nest(level - 1)
            digits.pop()
            return []

        loop(fr, ir.Constant(I32, 0), ir.Constant(I32, bounds[level]), 1, [], step)

    nest(len(bounds) - 1)
    del body


def _body(fr: FuncRenderer, op: Operation, iv: object, digits: list[ir.Value], weights: list[int],
          chain: list[int], users: list[Operation]) -> None:
    """Bind the iv and each rem/div of it from the digits (d0 first), then render the body."""
    b = fr.b

    def combine(lo: int, hi: int, base: int) -> ir.Value:
        """sum(d_j * weights[j] / base) for j in [lo, hi)."""
        acc: ir.Value | None = None
        for j in range(lo, hi):
            w = weights[j] // base
            term = digits[j] if w == 1 else b.mul(digits[j], ir.Constant(I32, w), flags=["nuw", "nsw"])
            acc = term if acc is None else b.add(acc, term, flags=["nuw", "nsw"])
        return acc if acc is not None else ir.Constant(I32, 0)

    n = len(digits)
    fr.set(iv, combine(0, n, 1))  # type: ignore[arg-type]
    for user in users:
        j = chain.index(_const(user.operands[1]) or 0) + 1  # digits below j make up i % C
        if user.NAME == "arith.rem":
            fr.set(user.result, combine(0, j, 1))
        else:
            fr.set(user.result, combine(j, n, weights[j]))
        fr.skip.add(id(user))
    fr.block(op.regions[0].block)
