"""Contract the scalar ``tile.dot`` accumulation into one fused multiply-add, as cpu and opencl do.

Why: the cpu and opencl renderers run a dot's inner product as ``acc = fma(a, b, acc)`` (the
product is not rounded before the add: ``llvm.fmuladd`` / OpenCL ``fma`` in their micro-kernels).
The SPIR-V emitter receives the lowering's scalar form ``acc + a * b`` and, printed literally,
rounds the product first: when products overflow to ``+inf`` and ``-inf`` in one row, vulkan
returned NaN where the other backends return ``inf`` (difftest seeds 700632, 800223). lavapipe's
``GLSL.std.450 Fma`` is *not* fused (``fma(3e38, 2, -inf)`` gives NaN there), so a contracted
f32 step is computed in f64: the product of two f32 values is exact there (and cannot overflow),
the sum is rounded to f64, then to f32. Overflow, infinities and NaN therefore behave exactly as
a fused multiply-add; the value can differ from one only by double rounding (at most 1 ulp, when
the f64 sum falls within 2**-29 ulp of an f32 rounding midpoint). The exactly rounded form
(:func:`kdsl.codegen.spirv.mathlib.fma_f32_exact`, used by ``math.fma``) measured 1.5x slower
on the register-resident matmul mapping (docs/VULKAN.md), where this step is the inner loop.

What is a dot step (the shape :func:`kdsl.lowering.ops_collective.lower_dot` emits, and what the
cpu renderer's ``codegen/llvm/dot.py`` matches): an ``scf.for`` with one carried float value ``s``
whose only use is ``arith.add(s, p)``, the add yielded, ``p = arith.mul(x, y)`` of that loop body
with no other use, and ``x``, ``y`` each a ``wi.load`` of a private/local array (possibly through
an ``arith.cast``): the dot's operand tiles. A user's own ``acc += x * y`` over global loads keeps
its two roundings, as on the other backends (OpenCL's ``FP_CONTRACT OFF``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdsl.ir.core import Operation, Value
from kdsl.ir.types import ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.spirv.emit import Emitter

CONTRACTED = frozenset({"f32"})  # f64: no exact fallback (lavapipe's Fma is unfused), left as is


def _tile_operand(v: Value) -> bool:
    op = v.owner_op
    if op is not None and op.NAME == "arith.cast":
        op = op.operands[0].owner_op
    return op is not None and op.NAME == "wi.load"


def dot_steps(func: Operation) -> dict[int, Operation]:
    """``id(add op) -> mul op`` for every dot accumulation step of ``func`` (see module doc)."""
    out: dict[int, Operation] = {}
    for loop in func.walk():
        if loop.NAME != "scf.for" or len(loop.results) != 1:
            continue
        t = loop.results[0].type
        if not isinstance(t, ScalarType) or t.name not in CONTRACTED:
            continue
        body = loop.regions[0].block
        s = body.args[1]
        term = body.terminator
        if term is None or len(s.uses) != 1:
            continue
        add = term.operands[0].owner_op
        if add is None or add.NAME != "arith.add" or s not in add.operands or add.parent_op is not loop:
            continue
        prod = add.operands[1] if add.operands[0] is s else add.operands[0]
        mul = prod.owner_op
        if mul is None or mul.NAME != "arith.mul" or len(prod.uses) != 1 or mul.parent_op is not loop:
            continue
        if all(_tile_operand(x) for x in mul.operands):
            out[id(add)] = mul
    return out


def emit_step(e: Emitter, add: Operation, mul: Operation) -> None:
    """Emit ``add``'s result as ``fma(x, y, s)`` (its ``mul`` is not emitted on its own)."""
    prod = mul.result
    s = add.operands[1] if add.operands[0] is prod else add.operands[0]
    x, y = (e.v(v) for v in mul.operands)
    f, f32 = e.f, e.t.f32
    if not e.target.shader_float64:  # no f64: the literal two roundings
        e.bind(add.result, f.binary("add", f32, e.v(s), f.binary("mul", f32, x, y)))
        return
    f64 = e.t.float_t(64)
    p = f.binary("mul", f64, f.convert(f64, f32, x), f.convert(f64, f32, y))  # exact: 48-bit product
    e.bind(add.result, f.convert(f32, f64, f.binary("add", f64, p, f.convert(f64, f32, e.v(s)))))
