"""Elementwise math (also reachable as ``kl.math.<name>``).

Transcendental functions take floating-point tensors (integers must be cast
explicitly, as in Triton); f16/bf16 inputs are computed through f32.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, PropagateNan, builtin, tensor, unwrap_constexpr

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


def _unary(name: str, what: str) -> Any:
    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
        return _semantic.math_unary(name, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {what} of a floating-point tensor."
    return builtin(fn)


exp = _unary("exp", "e**x")
exp2 = _unary("exp2", "2**x")
log = _unary("log", "natural logarithm")
log2 = _unary("log2", "base-2 logarithm")
sqrt = _unary("sqrt", "square root")
sqrt_rn = _unary("sqrt_rn", "correctly rounded square root")
rsqrt = _unary("rsqrt", "reciprocal square root")
sin = _unary("sin", "sine")
cos = _unary("cos", "cosine")
tanh = _unary("tanh", "hyperbolic tangent")
erf = _unary("erf", "error function")
floor = _unary("floor", "floor")
ceil = _unary("ceil", "ceiling")


@builtin
def abs(x: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Elementwise absolute value (integers wrap at the minimum value)."""
    return _semantic.abs(x)


@builtin
def fma(x: Any, y: Any, z: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Fused ``x * y + z`` with a single rounding."""
    return _semantic.fma(x, y, z)


@builtin
def maximum(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Elementwise maximum after promotion; with floats, ``propagate_nan=ALL``
    returns NaN if either is NaN, ``NONE`` (default) ignores a NaN operand."""
    return _semantic.minmax("max", x, y, propagate_nan)


@builtin
def minimum(x: Any, y: Any, propagate_nan: Any = PropagateNan.NONE, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Elementwise minimum; NaN handling as :func:`maximum`."""
    return _semantic.minmax("min", x, y, propagate_nan)


@builtin
def clamp(x: Any, min: Any, max: Any, propagate_nan: Any = PropagateNan.NONE,
          _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """``minimum(maximum(x, min), max)`` for floating-point tensors."""
    return _semantic.clamp(x, min, max, propagate_nan)


@builtin
def where(condition: Any, x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Elementwise ``condition ? x : y``; ``x``/``y`` are promoted like a binary
    operator and all three are broadcast together."""
    return _semantic.user_where(condition, x, y)


@builtin
def umulhi(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Most significant half of the 2N-bit product of two N-bit integers (N = 32 or 64)."""
    return _semantic.umulhi(x, y)


@builtin
def div_rn(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Correctly rounded division."""
    return _semantic.div_rn(x, y)


@builtin
def fdiv(x: Any, y: Any, ieee_rounding: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Floating-point division (correctly rounded if ``ieee_rounding``)."""
    return _semantic.fdiv(x, y, bool(unwrap_constexpr(ieee_rounding)))


@builtin
def sigmoid(x: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """``1 / (1 + exp(-x))``."""
    s = _semantic
    denom = s.add(1, s.math_unary("exp", s.neg(x)))
    return s.truediv(1, denom)


@builtin
def softmax(x: Any, dim: Any = None, keep_dims: Any = False, ieee_rounding: Any = False,
            _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim`` (default 0)."""
    s = _semantic
    d = 0 if unwrap_constexpr(dim) is None else unwrap_constexpr(dim)
    kd = bool(unwrap_constexpr(keep_dims))
    z = s.binary("sub", x, s.reduce_minmax(x, "max", d, False, kd))
    num = s.math_unary("exp", z)
    den = s.reduce_sum(num, d, kd)
    return s.fdiv(num, den, bool(unwrap_constexpr(ieee_rounding)))


@builtin
def inline_asm_elementwise(asm: Any, constraints: Any, args: Any, dtype: Any, is_pure: Any, pack: Any,
                           _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Triton's escape hatch to PTX/AMDGCN assembly. kdsl's targets are OpenCL C, SPIR-V and host
    LLVM IR, none of which runs a GPU's assembly, so this is a compile error that says what to do
    instead (every kdsl op is portable; the kernel's math should be written with them)."""
    raise _semantic.error(
        "kl.inline_asm_elementwise: inline assembly targets one GPU instruction set (PTX, AMDGCN); kdsl "
        "compiles to OpenCL C, SPIR-V and CPU LLVM IR, which cannot run it. Write the operation with kl "
        "arithmetic, math, bitcast (x.to(dtype, bitcast=True)) and where instead."
    )


@builtin
def map_elementwise(scalar_fn: Any, *args: Any, pack: Any = 1, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """Triton 3.5's ``map_elementwise``: apply the ``@kdsl.jit`` function ``scalar_fn`` to each
    element of ``args`` (broadcast to one shape; Python numbers become Triton's literal types).

    ``scalar_fn`` is written on scalars and may branch, loop and return early on each
    element's value -- where ``kl.where`` would evaluate both sides. It returns one value
    (a tensor results) or a tuple (a tuple of tensors). With ``pack=p`` it receives ``p``
    consecutive elements of each argument, ``f(a0, .., a(p-1), b0, ..)``, and returns ``p``
    values per result (the result is then always a tuple). kdsl traces it as masked
    execution over the tile (``kdsl/frontend/lanes.py``); loads, stores and atomics in it
    touch memory only for the elements whose control flow reaches them.
    """
    return _semantic.map_elementwise(scalar_fn, args, pack)
