"""The scaffolding every libdevice module is written on: :class:`Ops` (short names over the
semantic for formulas), the :func:`float_fn` / :func:`direct` factories that turn a formula into a
builtin over float tensors, and the helpers several modules share (rounding to an integral value,
powers of two, exponent extraction, stepping to the next float).

Why a module of its own: ``libdevice`` is split by subject (``libdevice.py`` for elementary
functions, ``rounding.py`` for directed rounding and conversions, ``special.py`` for special
functions, ``bits.py`` for integers), and all of them build on the same few pieces.
"""

from __future__ import annotations

import math as _m
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kdsl.ir.types import ScalarType, f32, f64, i32, u32, u64
from kdsl.language.core import NO_SEMANTIC, builtin, tensor

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


class Ops:
    """Short names over the semantic for the formulas below (all operands tensors or numbers)."""

    def __init__(self, s: Semantic, dt: ScalarType) -> None:
        self.s = s
        self.dt = dt
        self.bits_t = u32 if dt == f32 else u64
        self.width = dt.bitwidth

    def add(self, a: Any, b: Any) -> Any:
        return self.s.binary("add", a, b)

    def sub(self, a: Any, b: Any) -> Any:
        return self.s.binary("sub", a, b)

    def mul(self, a: Any, b: Any) -> Any:
        return self.s.binary("mul", a, b)

    def div(self, a: Any, b: Any) -> Any:
        return self.s.binary("truediv", a, b)

    def lt(self, a: Any, b: Any) -> Any:
        return self.s.compare("lt", a, b)

    def gt(self, a: Any, b: Any) -> Any:
        return self.s.compare("gt", a, b)

    def eq(self, a: Any, b: Any) -> Any:
        return self.s.compare("eq", a, b)

    def ne(self, a: Any, b: Any) -> Any:
        return self.s.compare("ne", a, b)

    def le(self, a: Any, b: Any) -> Any:
        return self.s.compare("le", a, b)

    def ge(self, a: Any, b: Any) -> Any:
        return self.s.compare("ge", a, b)

    def and_(self, a: Any, b: Any) -> Any:
        return self.s.logical_and(a, b)

    def or_(self, a: Any, b: Any) -> Any:
        return self.s.logical_or(a, b)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.s.where(c, a, b)

    def f(self, name: str, x: Any) -> Any:
        return self.s.math_unary(name, x)

    def fma(self, a: Any, b: Any, c: Any) -> Any:
        # kl.fma turns a Python number into an f32 tensor (Triton's rule): give it o.dt instead
        a, b, c = (v if isinstance(v, tensor) else self.const(v) for v in (a, b, c))
        return self.s.fma(a, b, c)

    def abs(self, x: Any) -> Any:
        return self.s.abs(x)

    def isnan(self, x: Any) -> Any:
        return self.ne(x, x)

    def isinf(self, x: Any) -> Any:
        return self.eq(self.abs(x), float("inf"))

    def bits(self, x: Any) -> Any:
        return self.s.bitcast(x, self.bits_t)

    def from_bits(self, b: Any) -> Any:
        return self.s.bitcast(b, self.dt)

    def copysign(self, x: Any, y: Any) -> Any:
        sign = 1 << (self.width - 1)
        b = self.s.binary(
            "or_", self.s.binary("and_", self.bits(x), sign - 1), self.s.binary("and_", self.bits(y), sign)
        )
        return self.from_bits(b)

    def signbit(self, x: Any) -> Any:
        return self.ne(self.s.binary("rshift", self.bits(x), self.width - 1), 0)

    def poly(self, x: Any, coeffs: tuple[float, ...]) -> Any:
        """sum coeffs[k] * x**k (Horner, highest degree first)."""
        acc: Any = coeffs[-1]
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c) if isinstance(acc, tensor) else self.add(self.mul(x, acc), c)
        return acc

    def const(self, v: float) -> Any:
        return self.s.full((), v, self.dt)


def float_fn(n_args: int = 1) -> Callable[[Callable[..., Any]], Any]:
    """Make ``body(ops, *xs)`` a builtin over float tensors: f16/bf16 go through f32 and back,
    integers are rejected as Triton's libdevice rejects them."""

    def deco(body: Callable[..., Any]) -> Any:
        def fn(*args: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
            s = _semantic
            if len(args) != n_args:
                raise s.error(f"libdevice.{body.__name__} takes {n_args} argument(s), got {len(args)}")
            xs = [s.to_tensor(a) for a in args]
            if n_args > 1:
                xs = list(s.broadcast_values(*xs))
            dts = [x.dtype for x in xs]
            for d in dts:
                if not (isinstance(d, ScalarType) and d.is_float):
                    raise s.error(f"libdevice.{body.__name__} expects floating-point tensors, got {d}")
            wide = f64 if f64 in dts else f32
            out = body(Ops(s, wide), *[s.cast(x, wide) for x in xs])
            narrow = dts[0] if all(d == dts[0] for d in dts) else wide
            if isinstance(out, tensor) and out.dtype == wide and narrow != wide:
                out = s.cast(out, narrow)
            return out

        fn.__name__ = fn.__qualname__ = body.__name__
        fn.__doc__ = body.__doc__
        return builtin(fn)

    return deco


def direct(name: str, op: str, doc: str) -> Any:
    """The libdevice function ``name`` that is the kl math op ``op`` itself."""

    def body(o: Ops, x: Any) -> Any:
        return o.f(op, x)

    body.__name__ = body.__qualname__ = name
    body.__doc__ = doc
    return float_fn()(body)


def as_int32(o: Ops, cond: Any) -> Any:
    return o.s.cast(cond, i32)


def trunc_(o: Ops, x: Any) -> Any:
    return o.where(o.lt(x, 0), o.f("ceil", x), o.f("floor", x))


def rint_(o: Ops, x: Any) -> Any:
    fl = o.f("floor", x)
    d = o.sub(x, fl)  # exact
    half = o.mul(fl, 0.5)
    even = o.eq(o.f("floor", half), half)
    r = o.where(o.gt(d, 0.5), o.add(fl, 1.0), o.where(o.lt(d, 0.5), fl, o.where(even, fl, o.add(fl, 1.0))))
    return o.where(o.isinf(x), x, o.copysign(r, x))


# --- the float format ---------------------------------------------------------------------------
def fmt(o: Ops) -> tuple[int, int, int]:
    """(precision p, minimum normal exponent emin, maximum exponent emax) of ``o.dt``."""
    return (24, -126, 127) if o.dt == f32 else (53, -1022, 1023)


def pow2(o: Ops, k: Any) -> Any:
    """``2**k`` for an int32 tensor ``k`` in [emin, emax], built from its bits (exact)."""
    p, _, emax = fmt(o)
    biased = o.s.cast(o.s.binary("add", k, emax), o.bits_t)
    return o.from_bits(o.s.binary("lshift", biased, p - 1))


def next_up(o: Ops, x: Any) -> Any:
    """The next float above ``x`` (``+min subnormal`` above +-0, ``-max`` above -inf)."""
    b = o.bits(x)
    r = o.where(o.gt(x, 0.0), o.from_bits(o.s.binary("add", b, 1)), o.from_bits(o.s.binary("sub", b, 1)))
    return o.where(o.eq(x, 0.0), o.from_bits(o.s.full((), 1, o.bits_t)), r)


def next_down(o: Ops, x: Any) -> Any:
    """The next float below ``x``."""
    return o.s.unary("neg", next_up(o, o.s.unary("neg", x)))


def split_exp(o: Ops, x: Any) -> tuple[Any, Any]:
    """``(m, e)`` with ``x = m * 2**e``, ``1 <= |m| < 2`` and ``e`` int32, exact for subnormals too
    (garbage for 0, inf and NaN: callers mask those)."""
    p, emin, emax = fmt(o)
    sub = o.lt(o.abs(x), 2.0**emin)
    xs = o.where(sub, o.mul(x, 2.0**p), x)
    b = o.bits(xs)
    field = o.s.cast(o.s.binary("and_", o.s.binary("rshift", b, p - 1), 2 * emax + 1), i32)
    e = o.s.binary("sub", o.s.binary("sub", field, emax), o.where(sub, p, 0))
    keep = (1 << (o.width - 1)) | ((1 << (p - 1)) - 1)  # sign and fraction
    m = o.from_bits(o.s.binary("or_", o.s.binary("and_", b, keep), emax << (p - 1)))
    return m, e


def ldexp_(o: Ops, x: Any, n: Any) -> Any:
    """``x * 2**n`` for an int32 ``n`` of any size, rounded once: large scalings are applied in
    steps that keep the intermediate normal (down by ``2**(emin + p)``, which leaves room for the
    final step to round a subnormal result only once), then one last step in [emin, emax]."""
    p, emin, emax = fmt(o)
    s = o.s
    big = s.minmax("min", n, 3 * emax)  # beyond this every finite non-zero x overflows
    n = s.minmax("max", big, 3 * (emin - p))  # ... or underflows to 0
    for _ in range(2):
        up = o.gt(n, emax)
        down = o.lt(n, emin)
        step = o.where(up, emax, o.where(down, emin + p, 0))
        x = o.mul(x, pow2(o, step))
        n = s.binary("sub", n, step)
    n = s.minmax("max", s.minmax("min", n, emax), emin)
    return o.mul(x, pow2(o, n))


# --- series shared by several modules ---------------------------------------------------------
def expm1_(o: Ops, x: Any) -> Any:
    """Taylor series for |x| <= 0.5 (no cancellation, independent of the backend's ``exp``
    accuracy near 0), ``exp(x) - 1`` beyond."""
    terms = 11 if o.dt == f32 else 18
    series = o.mul(x, o.poly(x, tuple(1.0 / _m.factorial(k + 1) for k in range(terms))))
    r = o.where(o.le(o.abs(x), 0.5), series, o.sub(o.f("exp", x), 1.0))
    return o.where(o.isnan(x), x, r)


def log1p_(o: Ops, x: Any) -> Any:
    """``2 atanh(s)``, ``s = x / (2 + x)``, as an odd series for x in [-0.3, 0.5] (|s| < 0.2: no
    cancellation, independent of the backend's ``log`` accuracy near 1); ``log(1 + x)`` beyond."""
    terms = 7 if o.dt == f32 else 13
    t = o.div(x, o.add(x, 2.0))
    series = o.mul(o.mul(t, 2.0), o.poly(o.mul(t, t), tuple(1.0 / (2 * k + 1) for k in range(terms))))
    near = o.and_(o.ge(x, -0.3), o.le(x, 0.5))
    r = o.where(near, series, o.f("log", o.add(x, 1.0)))
    return o.where(o.eq(x, float("inf")), x, r)
