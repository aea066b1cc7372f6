"""libdevice's arithmetic with a chosen rounding direction (re-exported by
:mod:`kdsl.language.extra.libdevice`): ``add/sub/mul/div/rcp/sqrt`` with ``_rz`` (toward zero),
``_rd`` (toward -inf) and ``_ru`` (toward +inf) on f32 and f64, ``fma_r*`` on f32.

Why this works on every backend: no target kdsl runs on lets a kernel change the rounding mode,
so each function computes the round-to-nearest result ``r`` (IEEE arithmetic, ``div_rn``,
``sqrt_rn``) and then the *sign* of the exact error ``x op y - r``; a directed result is ``r`` or
its neighbour one ulp away in the direction that sign calls for. The sign is exact:

* f32 operands are widened to f64, where the exact result is a pair ``hi + lo`` (a product of two
  f32 is exact in f64; TwoSum gives a sum's error; the remainders ``a - q*b`` and ``x - s*s``,
  exact with Dekker's product, give the division's and square root's), and rounding that pair
  to f32 compares it with ``RN(hi)`` -- one subtraction, exact. This also covers f32 ``fma``.
* f64 operands use error-free transformations in f64: TwoSum for sums; for products, quotients
  and roots the operands are scaled to [1, 2) and ``r`` by the matching power of two, so that
  ``ma*mb - r'`` (resp. ``ma - r'*mb``, ``x' - r'*r'``, with Dekker's exact product) cannot
  underflow and has the sign of the exact error even when ``r`` is subnormal or zero.

No step uses ``fma`` (lavapipe's f64 ``Fma`` is not fused, docs/VULKAN.md).

Overflow follows IEEE: a finite result past the largest float is +-inf in the direction of
rounding and the largest finite value otherwise (``r`` = inf stepped down by one ulp is exactly
that); an exact zero sum is -0 under ``_rd``. ``fma_r*`` on f64 would need the exact error of an
f64 fma (four-term sums with underflow scaling) and is a compile error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kdsl.ir.types import f32, f64
from kdsl.language.extra.common import Ops, float_fn, ldexp_, next_down, next_up, split_exp

MODES = ("rz", "rd", "ru")


def finish(o: Ops, r: Any, below: Any, above: Any, mode: str) -> Any:
    """``r`` rounded in direction ``mode`` given whether the exact value is below/above it."""
    if mode == "rd":
        return o.where(below, next_down(o, r), r)
    if mode == "ru":
        return o.where(above, next_up(o, r), r)
    pos = o.gt(r, 0.0)
    toward_zero = o.or_(o.and_(pos, below), o.and_(o.lt(r, 0.0), above))
    return o.where(toward_zero, o.where(pos, next_down(o, r), next_up(o, r)), r)


def pair_to_f32(o: Ops, hi: Any, lo: Any, mode: str) -> Any:
    """The f64 value ``hi + lo`` (``|lo|`` below an f64 ulp of ``hi``) rounded to f32 in direction
    ``mode``: ``f = RN(hi)`` is one of the two f32 neighbours of the exact value, and
    ``(hi - f) + lo`` (the subtraction is exact) has the sign of ``exact - f``; an overflowed
    ``f`` = +-inf gives -+inf there, so it steps back to the largest finite value."""
    f = o.s.cast(hi, f32)
    t = o.add(o.sub(hi, o.s.cast(f, f64)), lo)
    return finish(Ops(o.s, f32), f, o.lt(t, 0.0), o.gt(t, 0.0), mode)


def two_sum_err(o: Ops, a: Any, b: Any, s: Any) -> Any:
    """The exact rounding error ``a + b - s`` of ``s = RN(a + b)`` (Knuth's TwoSum)."""
    bb = o.sub(s, a)
    return o.add(o.sub(a, o.sub(s, bb)), o.sub(b, bb))


def two_prod(o: Ops, a: Any, b: Any) -> tuple[Any, Any]:
    """``(p, e)`` with ``p = RN(a * b)`` and ``a * b = p + e`` exactly (Dekker's product with
    Veltkamp's splitting, no ``fma``: lavapipe's f64 ``Fma`` is not fused) -- for operands far
    enough from overflow and underflow, as the scaled ones here are."""
    split = 134217729.0 if o.dt == f64 else 4097.0  # 2**ceil(p/2) + 1
    p = o.mul(a, b)

    def halves(x: Any) -> tuple[Any, Any]:
        c = o.mul(x, split)
        h = o.sub(c, o.sub(c, x))
        return h, o.sub(x, h)

    (ah, al), (bh, bl) = halves(a), halves(b)
    e = o.add(o.add(o.add(o.sub(o.mul(ah, bh), p), o.mul(ah, bl)), o.mul(al, bh)), o.mul(al, bl))
    return p, e


def _finite(o: Ops, *xs: Any) -> Any:
    ok = o.lt(o.abs(xs[0]), float("inf"))
    for x in xs[1:]:
        ok = o.and_(ok, o.lt(o.abs(x), float("inf")))
    return ok


def _from_sign(o: Ops, r: Any, t: Any, valid: Any, overflow: Any | None, mode: str) -> Any:
    """f64: ``r`` rounded by the sign of ``t`` where ``valid``; an ``overflow`` to +-inf counts as
    an exact value below +inf (above -inf)."""
    below, above = o.and_(valid, o.lt(t, 0.0)), o.and_(valid, o.gt(t, 0.0))
    if overflow is not None:
        below = o.or_(below, o.and_(overflow, o.gt(r, 0.0)))
        above = o.or_(above, o.and_(overflow, o.lt(r, 0.0)))
    return finish(o, r, below, above, mode)


def _zero_sum_sign(o: Ops, r: Any, exact_zero: Any, a: Any, b: Any, mode: str) -> Any:
    """An exact zero sum is -0 under ``_rd`` unless both terms are +0 (IEEE 754 6.3)."""
    if mode != "rd":
        return r
    plus = o.and_(o.and_(o.eq(a, 0.0), o.s.unary("not_", o.signbit(a))),
                  o.and_(o.eq(b, 0.0), o.s.unary("not_", o.signbit(b))))  # fmt: skip
    return o.where(o.and_(exact_zero, o.s.unary("not_", plus)), -0.0, r)


# --- the operations ------------------------------------------------------------------------------
def _add(o: Ops, a: Any, b: Any, mode: str) -> Any:
    if o.dt == f32:
        w = Ops(o.s, f64)
        ha, hb = o.s.cast(a, f64), o.s.cast(b, f64)
        hi = w.add(ha, hb)
        lo = two_sum_err(w, ha, hb, hi)
        r = pair_to_f32(w, hi, lo, mode)
        return _zero_sum_sign(o, r, o.and_(o.eq(hi, 0.0), o.eq(lo, 0.0)), a, b, mode)
    s = o.add(a, b)
    fin = _finite(o, a, b)
    t = two_sum_err(o, a, b, s)
    r = _from_sign(o, s, t, o.and_(fin, _finite(o, s)), o.and_(fin, o.isinf(s)), mode)
    return _zero_sum_sign(o, r, o.and_(o.eq(s, 0.0), fin), a, b, mode)


def _sub(o: Ops, a: Any, b: Any, mode: str) -> Any:
    return _add(o, a, o.s.unary("neg", b), mode)


def _mul(o: Ops, a: Any, b: Any, mode: str) -> Any:
    if o.dt == f32:
        w = Ops(o.s, f64)
        return pair_to_f32(w, w.mul(o.s.cast(a, f64), o.s.cast(b, f64)), 0.0, mode)
    r = o.mul(a, b)
    (ma, ea), (mb, eb) = split_exp(o, a), split_exp(o, b)
    scaled = ldexp_(o, r, o.s.unary("neg", o.s.binary("add", ea, eb)))
    ph, pl = two_prod(o, ma, mb)
    t = o.add(o.sub(ph, scaled), pl)  # ph - scaled is exact (Sterbenz)
    fin = o.and_(_finite(o, a, b), o.and_(o.ne(a, 0.0), o.ne(b, 0.0)))
    return _from_sign(o, r, t, o.and_(fin, _finite(o, r)), o.and_(fin, o.isinf(r)), mode)


def _div(o: Ops, a: Any, b: Any, mode: str) -> Any:
    if o.dt == f32:
        w = Ops(o.s, f64)
        ha, hb = o.s.cast(a, f64), o.s.cast(b, f64)
        hi = o.s.div_rn(ha, hb)
        ph, pl = two_prod(w, hi, hb)
        lo = w.div(w.sub(w.sub(ha, ph), pl), hb)  # ha - ph is exact (Sterbenz)
        return pair_to_f32(w, hi, lo, mode)
    r = o.s.div_rn(a, b)
    (ma, ea), (mb, eb) = split_exp(o, a), split_exp(o, b)
    scaled = ldexp_(o, r, o.s.binary("sub", eb, ea))
    ph, pl = two_prod(o, scaled, mb)
    t = o.sub(o.sub(ma, ph), pl)
    t = o.where(o.lt(b, 0.0), o.s.unary("neg", t), t)
    fin = o.and_(_finite(o, a, b), o.and_(o.ne(a, 0.0), o.ne(b, 0.0)))
    return _from_sign(o, r, t, o.and_(fin, _finite(o, r)), o.and_(fin, o.isinf(r)), mode)


def _sqrt(o: Ops, x: Any, mode: str) -> Any:
    if o.dt == f32:
        w = Ops(o.s, f64)
        hx = o.s.cast(x, f64)
        hi = w.f("sqrt_rn", hx)
        ph, pl = two_prod(w, hi, hi)
        lo = w.div(w.sub(w.sub(hx, ph), pl), w.mul(hi, 2.0))
        return pair_to_f32(w, hi, lo, mode)
    r = o.f("sqrt_rn", x)
    _, e = split_exp(o, x)
    k = o.s.binary("rshift", e, 1)  # floor(e / 2): x / 4**k lies in [1, 4)
    xs = ldexp_(o, x, o.s.binary("mul", k, -2))
    rs = ldexp_(o, r, o.s.unary("neg", k))
    ph, pl = two_prod(o, rs, rs)
    t = o.sub(o.sub(xs, ph), pl)
    valid = o.and_(o.gt(x, 0.0), _finite(o, x))
    return _from_sign(o, r, t, valid, None, mode)


def _fma(o: Ops, a: Any, b: Any, c: Any, mode: str) -> Any:
    if o.dt == f64:
        raise o.s.error(f"libdevice.fma_{mode}: float64 is not available in kdsl (only float32, whose exact "
                        f"error kdsl computes in float64); use fma_rn or cast to float32")  # fmt: skip
    w = Ops(o.s, f64)
    p = w.mul(o.s.cast(a, f64), o.s.cast(b, f64))  # exact
    hc = o.s.cast(c, f64)
    hi = w.add(p, hc)
    lo = two_sum_err(w, p, hc, hi)
    r = pair_to_f32(w, hi, lo, mode)
    return _zero_sum_sign(w, r, o.and_(o.eq(hi, 0.0), o.eq(lo, 0.0)), p, hc, mode)


def _rcp(o: Ops, x: Any, mode: str) -> Any:
    return _div(o, o.const(1.0), x, mode)


_OPS: dict[str, tuple[int, Callable[..., Any], str]] = {
    "add": (2, _add, "``x + y``"),
    "sub": (2, _sub, "``x - y``"),
    "mul": (2, _mul, "``x * y``"),
    "div": (2, _div, "``x / y``"),
    "rcp": (1, _rcp, "``1 / x``"),
    "sqrt": (1, _sqrt, "``sqrt(x)``"),
    "fma": (3, _fma, "``x * y + z`` (one rounding; float32 only)"),
}
_DIRECTION = {"rz": "toward zero", "rd": "toward -inf", "ru": "toward +inf"}


def _directed(op: str, mode: str) -> Any:
    n, impl, what = _OPS[op]

    def body(o: Ops, *xs: Any) -> Any:
        return impl(o, *xs, mode)

    body.__name__ = body.__qualname__ = f"{op}_{mode}"
    body.__doc__ = f"{what} correctly rounded {_DIRECTION[mode]}."
    return float_fn(n)(body)


add_rz, add_rd, add_ru = (_directed("add", m) for m in MODES)
sub_rz, sub_rd, sub_ru = (_directed("sub", m) for m in MODES)
mul_rz, mul_rd, mul_ru = (_directed("mul", m) for m in MODES)
div_rz, div_rd, div_ru = (_directed("div", m) for m in MODES)
rcp_rz, rcp_rd, rcp_ru = (_directed("rcp", m) for m in MODES)
sqrt_rz, sqrt_rd, sqrt_ru = (_directed("sqrt", m) for m in MODES)
fma_rz, fma_rd, fma_ru = (_directed("fma", m) for m in MODES)

__all__ = [f"{op}_{m}" for op in _OPS for m in MODES]
