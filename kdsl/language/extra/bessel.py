"""libdevice's Bessel functions (re-exported by :mod:`kdsl.language.extra.libdevice`; the module
doc of :mod:`kdsl.language.extra.special` describes their methods and accuracy): ``j0``/``j1``/
``y0``/``y1``/``jn``/``yn``/``cyl_bessel_i0``/``cyl_bessel_i1``. A module of their own because
their fits and recurrences are as long as the gamma and error-function families together.
"""

from __future__ import annotations

import math as _m
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.ir.core import Block, Region
from kdsl.ir.dialects import scf
from kdsl.ir.types import ScalarType, f32, f64, i32
from kdsl.language.core import NO_SEMANTIC, builtin
from kdsl.language.extra.common import Ops, float_fn
from kdsl.language.extra.special import _INF, _NAN, _log, _tgamma

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

# --- Bessel functions ----------------------------------------------------------------------------
# Polynomials in d = s - 1/2 (mpmath.chebyfit on s in [0, 1]); maximum relative error 2e-20 or
# less, except where a function crosses zero (S0, S1: absolute). |x| <= 8, s = x*x / 64:
#   J0(x) = R0(s) prod_k (x*x - j0k**2) and J1(x) = x R1(s) prod_k (x*x - j1k**2) over their first
#   three zeros (kept as exact pairs, so J keeps relative accuracy at its zeros);
#   Y0(x) = 2/pi log(x) J0(x) + S0(s),  Y1(x) = 2/pi (log(x) J1(x) - 1/x) + x S1(s).
# x > 8, t = 64 / (x*x): the Hankel forms J = sqrt(2/(pi x)) (P cos chi - Q sin chi), Y = sqrt(2/(pi x))
#   (P sin chi + Q cos chi), chi = x - (2n+1) pi/4, with P = Pn(t), Q = 8/x Qn(t); the phase comes from
#   sin(x) and cos(x) themselves (cos(x - pi/4) = (cos x + sin x) / sqrt 2), never from a rounded x - pi/4.
# I0, I1: x <= 8 their Taylor series (positive terms); beyond, sqrt(x) e**-x In(x) = In(8/x - 1/2 ...).
_R0 = (-2.6662941994458524e-05, 5.906591485101347e-05, -5.769472605033003e-05, 3.357310658052664e-05,
       -1.3236486655653315e-05, 3.8056856638687932e-06, -8.375447245525402e-07, 1.4606699726868673e-07,
       -2.0722847449139254e-08, 2.441475552948053e-09, -2.4288980355210676e-10, 2.0688107494301493e-11,
       -1.5263474164927695e-12, 9.878939465837888e-14, -5.624110055316215e-15)  # fmt: skip
_R1 = (-2.7271448834411237e-06, 5.104476424929266e-06, -4.303727707216134e-06, 2.198641769985615e-06,
       -7.714982725612469e-07, 1.996533160416749e-07, -3.9921007597232703e-08, 6.375735405935424e-09,
       -8.339609853439978e-10, 9.111665103011391e-11, -8.44904026048717e-12, 6.737618137103989e-13,
       -4.6723611597934234e-14, 2.8516298549389487e-15, -1.5362037981265037e-16)  # fmt: skip
_S0 = (-0.382250654459425, -1.6568717807209175, 6.588385915498186, 1.1530105895441953, -17.240763741145592,
       21.509666506981514, -14.013278141549856, 5.934982103212429, -1.7985897106610755, 0.41275320630019297,
       -0.07454250887971445, 0.010898060561889522, -0.00131830079017326, 0.00013427560667756764,
       -1.1682638944190348e-05, 8.787794781808366e-07, -5.774068272553384e-08, 3.352873402171784e-09,
       -1.723341397235745e-10)  # fmt: skip
_S1 = (0.07075985882118005, -0.4867548615838623, 0.09347028688397434, 1.8805767365335804, -3.142374377588868,
       2.5135318151176143, -1.2562404373183635, 0.4380788147095098, -0.11361723993893574, 0.022873257026121793,
       -0.0036874238714341085, 0.00048752496463176263, -5.387600854692848e-05, 5.05425314884185e-06,
       -4.0775942484966385e-07, 2.8602565051004928e-08, -1.7610327366053822e-09, 9.619453890042035e-11,
       -4.669805474593719e-12)  # fmt: skip
_P0 = (0.9994572757882519, -0.0010727346384260066, 2.4549664320444573e-05, -1.6421958528175824e-06,
       2.0486018274223858e-07, -3.878777252168724e-08, 9.920367263652721e-09, -3.185125420727084e-09,
       1.2254294140050086e-09, -5.43672505255829e-10, 2.513537686995884e-10, -1.344203077667795e-10,
       1.3658519681784927e-10, -9.29540244708693e-11)  # fmt: skip
_Q0 = (-0.015555113879513518, 0.0001366629819868815, -5.908555330589498e-06, 5.684971881945821e-07,
       -9.06994574583098e-08, 2.0584925789571633e-08, -6.061047186860771e-09, 2.179768212395204e-09,
       -9.188288392175664e-10, 4.4485660859218636e-10, -2.3865722035730113e-10, 1.1807521856181243e-10,
       -7.068065043755215e-11, 1.0406574296235616e-10, -7.917503124880316e-11)  # fmt: skip
_P1 = (1.0009070262780821, 0.0017976098833411129, -3.183877879376012e-05, 1.9629412981434954e-06,
       -2.3533620753394894e-07, 4.3529775118439854e-08, -1.0963893524845133e-08, 3.4822676571458056e-09,
       -1.3288928125769026e-09, 5.858816179426292e-10, -2.698341797464837e-10, 1.4374922147366603e-10,
       -1.4501729700109277e-10, 9.840821678448612e-11)  # fmt: skip
_Q1 = (0.04677687402744898, -0.0001924291764410925, 7.284807404914171e-06, -6.633568561252034e-07,
       1.0272212068772974e-07, -2.2883562904434277e-08, 6.652843814610262e-09, -2.370663230534114e-09,
       9.923246467165642e-10, -4.777062433305933e-10, 2.5512260476864075e-10, -1.2603748838019887e-10,
       7.524659158890748e-11, -1.0993379479652629e-10, 8.344996627716535e-11)  # fmt: skip
_I0 = (0.4021765094450081, 0.006721103967335789, 0.0005448642975674682, 8.914427030036309e-05, 2.37415611006319e-05,
       9.515518791846792e-06, 5.6782171567691085e-06, 5.033520255402827e-06, 5.5165167661020925e-06,
       3.8739724737014975e-06, -6.912565537526051e-06, -2.757896795826987e-05, -2.2095694783526658e-05,
       6.338270850073341e-05, 0.00012134375504284093, -0.00012796659707780598, -0.0003876821771949546,
       0.00027594693193765254, 0.0009433346977141808, -0.000600246298018056, -0.0016704187713943077,
       0.0010742057448984309, 0.0018785944458142392, -0.0012638372179614031, -0.0009906987276322458,
       0.0006986313208057083)  # fmt: skip
_I1 = (0.38939845902587233, -0.019499154386471537, -0.0008769430553352913, -0.00012030837757886858,
       -2.935856217278649e-05, -1.1148341568393509e-05, -6.400820870521179e-06, -5.52035701781454e-06,
       -5.9838637753406665e-06, -4.320666063780541e-06, 6.899193275775829e-06, 2.885329050014812e-05,
       2.4427093189290833e-05, -6.403660404136262e-05, -0.00012882746896474204, 0.0001246434086268463,
       0.000406518766829597, -0.0002611054577193043, -0.0009839426633358717, 0.0005618023079292738,
       0.001738292277497109, -0.001006371138318426, -0.0019529349654576395, 0.0011892117201702133,
       0.0010294386958459311, -0.0006602533526282702)  # fmt: skip
_J0_ZEROS = (
    (2.404825557695773, -1.176691651530894e-16),
    (5.520078110286311, 8.088597146146722e-17),
    (8.653727912911013, -2.92812607320779e-16),
)
_J1_ZEROS = (
    (3.8317059702075125, -1.5269184090088067e-16),
    (7.015586669815619, -9.414165653410389e-17),
    (10.173468135062722, 4.482162274768888e-16),
)


def _zero_product(o: Ops, a: Any, zeros: tuple[tuple[float, float], ...]) -> Any:
    """``prod (a*a - z*z)`` with each zero as an exact pair: ``a - z_hi`` is exact near ``z``."""
    acc: Any = None
    for hi, lo in zeros:
        zh = hi if o.dt == f64 else float(np.float32(hi))
        zl = (hi - zh) + lo
        f = o.mul(o.sub(o.sub(a, zh), zl), o.add(a, hi))
        acc = f if acc is None else o.mul(acc, f)
    return acc


def _bessel_small(o: Ops, a: Any) -> tuple[Any, Any, Any, Any]:
    """(J0, J1, S0, S1 parts) for 0 <= a <= 8: J0(a), J1(a), Y0(a), Y1(a) (Y at a > 0)."""
    d = o.sub(o.mul(o.mul(a, a), 1.0 / 64.0), 0.5)
    j0 = o.mul(_zero_product(o, a, _J0_ZEROS), o.poly(d, _R0))
    j1 = o.mul(o.mul(_zero_product(o, a, _J1_ZEROS), o.poly(d, _R1)), a)
    lg = o.mul(_log(o, a), 2.0 / _m.pi)
    y0 = o.fma(lg, j0, o.poly(d, _S0))
    y1 = o.add(o.sub(o.mul(lg, j1), o.div(2.0 / _m.pi, a)), o.mul(a, o.poly(d, _S1)))
    return j0, j1, y0, y1


def _bessel_large(o: Ops, a: Any, order: int) -> tuple[Any, Any]:
    """(J, Y) of ``order`` 0 or 1 for a > 8 (0 at +inf)."""
    big = o.s.minmax("max", a, o.const(8.0))
    r = o.div(8.0, big)
    d = o.sub(o.mul(r, r), 0.5)
    p = o.poly(d, _P0 if order == 0 else _P1)
    q = o.mul(r, o.poly(d, _Q0 if order == 0 else _Q1))
    fin = o.where(o.isinf(big), 0.0, big)
    c, sn = o.f("cos", fin), o.f("sin", fin)
    amp = o.div(1.0 / _m.sqrt(_m.pi), o.f("sqrt", big))  # sqrt(2 / (pi x)) / sqrt(2)
    if order == 0:  # sqrt 2 cos(chi) = c + sn, sqrt 2 sin(chi) = sn - c
        cs, sc = o.add(c, sn), o.sub(sn, c)
    else:  # chi = x - 3 pi/4: sqrt 2 cos(chi) = sn - c, sqrt 2 sin(chi) = -(sn + c)
        cs, sc = o.sub(sn, c), o.s.unary("neg", o.add(sn, c))
    j = o.mul(amp, o.sub(o.mul(p, cs), o.mul(q, sc)))
    y = o.mul(amp, o.add(o.mul(p, sc), o.mul(q, cs)))
    return o.where(o.isinf(big), 0.0, j), o.where(o.isinf(big), 0.0, y)


def _j(o: Ops, x: Any, order: int) -> Any:
    a = o.abs(x)
    small = _bessel_small(o, o.s.minmax("min", a, o.const(8.0)))[order]
    r = o.where(o.le(a, 8.0), small, _bessel_large(o, a, order)[0])
    if order == 1:
        r = o.where(o.signbit(x), o.s.unary("neg", r), r)  # odd (+0 at -inf, as C's j1)
    return o.where(o.isnan(x), x, o.where(o.isinf(x), 0.0, r))


def _y(o: Ops, x: Any, order: int) -> Any:
    small = _bessel_small(o, o.s.minmax("min", x, o.const(8.0)))[2 + order]
    r = o.where(o.le(x, 8.0), small, _bessel_large(o, x, order)[1])
    r = o.where(o.eq(x, 0.0), -_INF, r)
    return o.where(o.or_(o.lt(x, 0.0), o.isnan(x)), _NAN, r)


@float_fn()
def j0(o: Ops, x: Any) -> Any:
    """Bessel function of the first kind of order 0."""
    return _j(o, x, 0)


@float_fn()
def j1(o: Ops, x: Any) -> Any:
    """Bessel function of the first kind of order 1."""
    return _j(o, x, 1)


@float_fn()
def y0(o: Ops, x: Any) -> Any:
    """Bessel function of the second kind of order 0 (-inf at 0, NaN below)."""
    return _y(o, x, 0)


@float_fn()
def y1(o: Ops, x: Any) -> Any:
    """Bessel function of the second kind of order 1 (-inf at 0, NaN below)."""
    return _y(o, x, 1)


def _bessel_i(o: Ops, x: Any, order: int) -> Any:
    a = o.abs(x)
    terms = 26 if o.dt == f64 else 18
    u = o.mul(o.mul(a, a), 0.25)
    if order == 0:
        small = o.poly(u, tuple(1.0 / _m.factorial(k) ** 2 for k in range(terms)))
    else:
        small = o.mul(
            o.mul(a, 0.5), o.poly(u, tuple(1.0 / (_m.factorial(k) * _m.factorial(k + 1)) for k in range(terms)))
        )
    big = o.s.minmax("max", a, o.const(8.0))
    scaled = o.div(o.poly(o.sub(o.div(8.0, big), 0.5), _I0 if order == 0 else _I1), o.f("sqrt", big))
    half = o.f("exp", o.mul(big, 0.5))  # e**x as a square: In overflows only where it must
    r = o.where(o.le(a, 8.0), small, o.mul(o.mul(half, scaled), half))
    r = o.where(o.isinf(a), _INF, r)
    if order == 1:
        r = o.where(o.signbit(x), o.s.unary("neg", r), r)
    return o.where(o.isnan(x), x, r)


@float_fn()
def cyl_bessel_i0(o: Ops, x: Any) -> Any:
    """Modified Bessel function of the first kind of order 0."""
    return _bessel_i(o, x, 0)


@float_fn()
def cyl_bessel_i1(o: Ops, x: Any) -> Any:
    """Modified Bessel function of the first kind of order 1."""
    return _bessel_i(o, x, 1)


# --- Bessel functions of integer order n: recurrences ----------------------------------------------
def _loop(o: Ops, lb: Any, ub: Any, inits: list[Any], body: Callable[[Any, list[Any]], list[Any]]) -> list[Any]:
    """``for k in range(lb, ub)`` (int32 scalars) carrying the tensors ``inits`` through ``body``:
    an ``scf.for`` like a kernel's own loop, as the trip count is only known at run time."""
    s = o.s
    types = [t.type for t in inits]
    block = Block([i32, *types])
    saved = (s.builder.block, s.builder.index, s.builder.loc)
    s.builder.set_insertion_point_to_end(block)
    try:
        outs = body(s.wrap(block.args[0]), [s.wrap(a) for a in block.args[1:]])
        s.emit(scf.YieldOp, [s.cast(t, i.dtype).handle for t, i in zip(outs, inits)], [])
    finally:
        s.builder.block, s.builder.index, s.builder.loc = saved
    bounds = [s.cast(s.to_tensor(b), i32).handle for b in (lb, ub, 1)]
    op = s.builder.create(scf.ForOp, [*bounds, *[t.handle for t in inits]], types, {}, [Region([block])])
    return [s.wrap(r) for r in op.results]


def _tile_max(o: Ops, n: Any) -> Any:
    """The largest element of the int32 tensor ``n`` (a loop bound for every lane)."""
    return o.s.reduce_minmax(n, "max") if n.shape else n


def _jn_pos(o: Ops, na: Any, a: Any) -> Any:
    """``J_na(a)`` for na >= 0 and a >= 0: forward recurrence from J0, J1 where na < a (stable there),
    else Miller's backward recurrence from ``m = na + sqrt(c na) + 10`` normalised by J0 or J1
    (whichever is larger); the power series' first term below 2**-30 (no step of 2k/a overflows)."""
    s = o.s
    nf = s.cast(na, o.dt)
    j0a, j1a = _j(o, a, 0), _j(o, a, 1)
    two_over = o.div(2.0, o.where(o.eq(a, 0.0), 1.0, a))

    def forward(k: Any, st: list[Any]) -> list[Any]:
        prev, cur = st
        nxt = o.sub(o.mul(o.mul(s.cast(k, o.dt), two_over), cur), prev)
        on = s.compare("lt", k, na)
        return [o.where(on, cur, prev), o.where(on, nxt, cur)]

    fwd = o.lt(nf, a)
    fw = _loop(o, 1, _tile_max(o, o.where(fwd, na, 0)), [j0a, j1a], forward)[1]
    acc = 160.0 if o.dt == f64 else 40.0
    m = s.cast(o.add(o.add(nf, o.f("ceil", o.f("sqrt", o.mul(nf, acc)))), 10.0), i32)
    m = o.where(fwd, 0, m)
    shift = 500 if o.dt == f64 else 60  # rescale by an exact power of two before anything overflows
    down = 2.0**-shift

    def backward(i: Any, st: list[Any]) -> list[Any]:
        jp1, jk, cap = st
        k = s.binary("sub", top, i)
        start = s.compare("eq", k, m)
        jk = o.where(start, 1.0, jk)
        jp1 = o.where(start, 0.0, jp1)
        jkm1 = o.sub(o.mul(o.mul(s.cast(k, o.dt), two_over), jk), jp1)
        on = s.compare("le", k, m)
        jp1, jk = o.where(on, jk, jp1), o.where(on, jkm1, jk)
        cap = o.where(o.and_(on, s.compare("eq", s.binary("sub", k, 1), na)), jk, cap)
        big = o.gt(o.abs(jk), 2.0**shift)
        return [
            o.where(big, o.mul(jp1, down), jp1),
            o.where(big, o.mul(jk, down), jk),
            o.where(big, o.mul(cap, down), cap),
        ]

    top = _tile_max(o, m)
    zero = s.full(a.shape, 0.0, o.dt)
    jp1, jk, cap = _loop(o, 0, top, [zero, zero, zero], backward)
    bw = o.where(o.ge(o.abs(j0a), o.abs(j1a)), o.mul(o.div(cap, jk), j0a), o.mul(o.div(cap, jp1), j1a))
    series = o.div(o.s.power(o.mul(a, 0.5), nf), _tgamma(o, o.add(nf, 1.0)))
    r = o.where(fwd, fw, o.where(o.lt(a, 2.0**-30), series, bw))
    r = o.where(s.compare("eq", na, 0), j0a, o.where(s.compare("eq", na, 1), j1a, r))
    return o.where(o.isinf(a), 0.0, r)


def _yn_pos(o: Ops, na: Any, x: Any) -> Any:
    """``Y_na(x)`` for na >= 0: forward recurrence from Y0, Y1 (stable: Y grows with the order),
    held at -inf once it overflows."""
    s = o.s
    y0x, y1x = _y(o, x, 0), _y(o, x, 1)
    two_over = o.div(2.0, o.where(o.gt(x, 0.0), x, 1.0))

    def forward(k: Any, st: list[Any]) -> list[Any]:
        prev, cur = st
        nxt = o.sub(o.mul(o.mul(s.cast(k, o.dt), two_over), cur), prev)
        on = o.and_(s.compare("lt", k, na), o.lt(o.abs(cur), _INF))
        return [o.where(on, cur, prev), o.where(on, nxt, cur)]

    r = _loop(o, 1, _tile_max(o, na), [y0x, y1x], forward)[1]
    return o.where(s.compare("eq", na, 0), y0x, r)


def _integer_order(name: str, doc: str, body: Callable[[Ops, Any, Any], Any]) -> Any:
    def fn(n: Any, x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        nt, xt = s.broadcast_values(s.to_tensor(n), s.to_tensor(x))
        if nt.dtype != i32:
            raise s.error(f"libdevice.{name} expects an int32 order n, got {nt.dtype}")
        if not (isinstance(xt.dtype, ScalarType) and xt.dtype.is_float):
            raise s.error(f"libdevice.{name} expects a floating-point x, got {xt.dtype}")
        wide = f64 if xt.dtype == f64 else f32
        o = Ops(s, wide)
        xw = s.cast(xt, wide)
        na = s.abs(nt)  # J_-n = (-1)**n J_n, Y_-n = (-1)**n Y_n
        r = body(o, na, xw)
        odd = s.compare("ne", s.binary("and_", nt, 1), 0)
        flip = s.compare("ne", s.compare("lt", nt, 0), o.signbit(xw)) if name == "jn" else s.compare("lt", nt, 0)
        r = o.where(o.and_(odd, flip), s.unary("neg", r), r)
        return s.cast(r, xt.dtype) if xt.dtype != wide else r

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return builtin(fn)


def _jn(o: Ops, na: Any, x: Any) -> Any:
    return o.where(o.isnan(x), x, _jn_pos(o, na, o.abs(x)))


def _yn(o: Ops, na: Any, x: Any) -> Any:
    r = o.where(o.eq(x, 0.0), -_INF, _yn_pos(o, na, x))
    return o.where(o.or_(o.lt(x, 0.0), o.isnan(x)), _NAN, r)


jn = _integer_order("jn", "Bessel function of the first kind of int32 order ``n``: ``jn(n, x)``.", _jn)
yn = _integer_order("yn", "Bessel function of the second kind of int32 order ``n`` (-inf at 0, NaN below).", _yn)


__all__ = ["cyl_bessel_i0", "cyl_bessel_i1", "j0", "j1", "jn", "y0", "y1", "yn"]
