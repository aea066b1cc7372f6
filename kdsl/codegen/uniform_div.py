"""Which vector divisions skip the divide, and the ranges where that is exact (both renderers).

An f32 vector divided by a splat scalar (``wi.broadcast``) -- the normalisation pass of a softmax
-- is rendered as one reciprocal ``r = 1/s`` and Markstein's correction: ``q = x r``, the exact
remainder ``e = fma(-q, s, x)``, then ``fma(e, r, q)``, the correctly rounded quotient when
nothing underflows or overflows (the cpu backend: ``codegen/llvm/vector.py``
``divide_by_uniform``; OpenCL: ``codegen/opencl/vdiv.py``). The ranges below keep ``r``, ``q``,
``e`` and the result normal with room to spare: ``|s|`` in ``S_RANGE`` (checked once, ``s`` is
uniform) and every lane's ``|x|`` in ``X_RANGE`` or zero (``q = x r`` is then the exact,
correctly signed zero). A vector outside them is divided with a plain divide.
"""

from __future__ import annotations

from kdsl.ir.core import Operation, Value
from kdsl.ir.types import ScalarType

S_RANGE = (2.0**-40, 2.0**40)
X_RANGE = (2.0**-80, 2.0**80)


def uniform_divisor(op: Operation) -> Value | None:
    """The scalar an f32 vector ``arith.div``/``math.div_rn`` divides by when its divisor is a
    splat (``wi.broadcast``) of it, else None."""
    if op.NAME not in ("arith.div", "math.div_rn") or op.result.type.scalar != ScalarType("f32"):
        return None
    d = op.operands[1].owner_op
    return d.operand if d is not None and d.NAME == "wi.broadcast" else None


__all__ = ["S_RANGE", "X_RANGE", "uniform_divisor"]
