"""Affine forms of index/pointer tiles and per-dimension bound forms of masks.

Triton's ``AxisInfo`` idea at the lowering level: besides its element
expression, a :class:`~kdsl.lowering.reps.Lazy` tile may carry a *form* that
describes all its elements at once with uniform (work-item scalar) values:

* :class:`Affine` -- an integer or pointer tile equal to
  ``base + sum_d idx_d * strides[d]`` (``base`` a wi scalar, each stride a wi
  integer scalar or a Python constant; 0 on broadcast dimensions);
* :class:`Bounds` -- a boolean tile equal to ``cond and all_d starts[d] <= idx_d < limits[d]``
  (``limits[d]``/``starts[d]`` None: no bound on that side; ``cond`` None: true). Lower
  bounds come from tensor descriptors, which check both ends of every dimension.

The forms are built bottom-up while the tile ops are lowered (``splat``,
``arange``, constants, ``+ - *`` by a uniform, ``addptr``, ``broadcast``,
``expand_dims``, ``permute``, ``<``/``<=``/``>``/``>=`` of an affine index
against a uniform bound, ``&`` of bound masks); any other op gives no form.
Their scalar code is emitted before the open element loop and deleted by
``simplify`` when nothing uses it. ``ops_memory`` turns a load or store whose
pointer tile is affine with a contiguous innermost dimension and whose mask
has bounds into one ``wi.block_load`` / ``wi.block_store``, so the pointer
tile is never stored element by element.

Integer arithmetic is reassociated (``(o + i) * s`` as ``o*s + i*s``): exact
in wrapping arithmetic; a bound ``idx < n - o`` equals ``o + idx < n`` unless
``o + idx`` overflows, where the original index would already be wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdsl.ir.core import Operation, Value
from kdsl.ir.dialects import arith, wi
from kdsl.ir.types import PointerType, ScalarType, Type

if TYPE_CHECKING:
    from kdsl.lowering.lowerer import Lowerer
    from kdsl.lowering.reps import Rep

Stride = Value | int
_I1 = ScalarType("i1")
_LIMIT = 1 << 31


@dataclass(frozen=True, eq=False)
class Affine:
    """``base + sum_d idx_d * strides[d]`` (see module doc)."""

    base: Value
    strides: tuple[Stride, ...]

    @property
    def uniform(self) -> bool:
        return all(isinstance(s, int) and s == 0 for s in self.strides)


@dataclass(frozen=True, eq=False)
class Bounds:
    """``cond and all_d starts[d] <= idx_d < limits[d]`` (see module doc)."""

    limits: tuple[Value | None, ...]
    cond: Value | None = None
    starts: tuple[Value | None, ...] | None = None  # None: no lower bound on any dimension

    def start(self, d: int) -> Value | None:
        return None if self.starts is None else self.starts[d]

    def with_dims(self, limits: list[Value | None], starts: list[Value | None], cond: Value | None) -> Bounds:
        return Bounds(tuple(limits), cond, tuple(starts) if any(x is not None for x in starts) else None)


Form = Affine | Bounds


def form(rep: Rep | None) -> Form | None:
    return getattr(rep, "form", None)


# --- scalar helpers (uniform code, before the open element loop) -----------------------------
def _emit(
    lw: Lowerer, cls: type[Operation], operands: list[Value], t: Type, attrs: dict[str, Any] | None = None
) -> Value:
    with lw.at(lw.sb()):
        return lw.emit(cls, operands, t, attrs)


def value(lw: Lowerer, s: Stride, t: Type) -> Value:
    """A stride as a wi scalar of type ``t``."""
    return lw.const(s, t) if isinstance(s, int) else s


def _combine(lw: Lowerer, a: Stride, b: Stride, t: Type, sign: int) -> Stride | None:
    """``a + sign * b`` of type ``t`` (None when the types disagree)."""
    a, b = _known(lw, a), _known(lw, b)
    if isinstance(a, int) and isinstance(b, int):
        r = a + sign * b
        return r if abs(r) < _LIMIT else None
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0 and sign == 1:
        return b
    va, vb = value(lw, a, t), value(lw, b, t)
    if va.type != t or vb.type != t:
        return None
    return _emit(lw, arith.AddOp if sign == 1 else arith.SubOp, [va, vb], t)


def _known(lw: Lowerer, s: Stride) -> Stride:
    """A wi scalar known to be an integer constant, as that constant."""
    if isinstance(s, int):
        return s
    c = lw.cval.get(id(s))
    return s if c is None or isinstance(c, bool) else c


def _scale(lw: Lowerer, s: Stride, by: Value, t: Type) -> Stride:
    s, c = _known(lw, s), _known(lw, by)
    if isinstance(c, int):
        if isinstance(s, int):
            return s * c if abs(s * c) < _LIMIT else _emit(lw, arith.MulOp, [value(lw, s, t), by], t)
        return s if c == 1 else 0 if c == 0 else _emit(lw, arith.MulOp, [s, by], t)
    if isinstance(s, int) and s == 0:
        return 0
    if isinstance(s, int) and s == 1:
        return by
    return _emit(lw, arith.MulOp, [value(lw, s, t), by], t)


# --- forms of the tile ops ---------------------------------------------------------------------
def of_splat(v: Value, rank: int) -> Form:
    if v.type == _I1:
        return Bounds((None,) * rank, v)
    return Affine(v, (0,) * rank)


def of_constant(lw: Lowerer, val: object, t: ScalarType | PointerType, rank: int) -> Form | None:
    if not isinstance(t, ScalarType):
        return None
    if t == _I1:
        return Bounds((None,) * rank, None if val else lw.const(False, t))
    if t.is_integer and isinstance(val, int) and not isinstance(val, bool):
        return Affine(lw.const(val, t), (0,) * rank)
    return None


def of_elementwise(lw: Lowerer, op: Operation, reps: list[Rep]) -> Form | None:
    """The form of an ``arith``/``tile.addptr`` op on tiles, from its operands' forms."""
    forms = [form(r) for r in reps]
    if len(forms) != 2 or forms[0] is None or forms[1] is None:
        return None
    a, b = forms
    t = op.results[0].type.scalar
    name = op.NAME
    if isinstance(a, Bounds) and isinstance(b, Bounds):
        return _and(lw, a, b) if name == "arith.and" else None
    if not (isinstance(a, Affine) and isinstance(b, Affine)):
        return None
    if name == "tile.addptr":
        return _addptr(lw, a, b, t)
    if not ((isinstance(t, ScalarType) and t.is_integer) or name == "arith.cmp"):
        return None
    if name in ("arith.add", "arith.sub"):
        return _sum(lw, a, b, t, 1 if name == "arith.add" else -1)
    if name == "arith.mul":
        return _mul(lw, a, b, t)
    if name == "arith.cmp":
        return _cmp(lw, op.attributes["predicate"], a, b)
    return None


def _sum(lw: Lowerer, a: Affine, b: Affine, t: Type, sign: int) -> Affine | None:
    parts = [_combine(lw, x, y, t, sign) for x, y in zip((a.base, *a.strides), (b.base, *b.strides))]
    if any(p is None for p in parts):
        return None
    base = value(lw, parts[0], t)  # type: ignore[arg-type]
    return Affine(base, tuple(parts[1:]))  # type: ignore[arg-type]


def _mul(lw: Lowerer, a: Affine, b: Affine, t: Type) -> Affine | None:
    if not b.uniform:
        a, b = b, a
    if not b.uniform:
        return None
    base = _scale(lw, a.base, b.base, t)
    return Affine(value(lw, base, t), tuple(_scale(lw, s, b.base, t) for s in a.strides))


def _addptr(lw: Lowerer, p: Affine, o: Affine, t: Type) -> Affine | None:
    strides = []
    for sp, so in zip(p.strides, o.strides):
        if isinstance(sp, int) and sp == 0:
            strides.append(so)
        elif isinstance(so, int) and so == 0:
            strides.append(sp)
        else:
            s = _combine(lw, sp, so, o.base.type, 1)
            if s is None:
                return None
            strides.append(s)
    if _known(lw, o.base) == 0:
        return Affine(p.base, tuple(strides))
    return Affine(_emit(lw, wi.AddPtrOp, [p.base, o.base], t), tuple(strides))


def _cmp(lw: Lowerer, pred: str, a: Affine, b: Affine) -> Bounds | None:
    """``a pred b`` for a signed index: uniform, or ``idx_d < limit`` on one dimension."""
    t = a.base.type
    if not (isinstance(t, ScalarType) and t.is_integer and t.is_signed):
        return None
    rank = len(a.strides)
    if a.uniform and b.uniform:
        return Bounds((None,) * rank, _emit(lw, arith.CmpOp, [a.base, b.base], _I1, {"predicate": pred}))
    if pred in ("gt", "ge"):  # a > b  <=>  b < a
        a, b, pred = b, a, "lt" if pred == "gt" else "le"
    if pred not in ("lt", "le"):
        return None
    lower = a.uniform and not b.uniform  # u < idx (+ base): a lower bound on the index
    var, uni = (b, a) if lower else (a, b)
    if not uni.uniform:
        return None
    dims = [d for d, s in enumerate(var.strides) if not (isinstance(s, int) and s == 0)]
    if len(dims) != 1 or not (isinstance(var.strides[dims[0]], int) and var.strides[dims[0]] == 1):
        return None
    # upper: var.base + idx < uni.base  <=>  idx < uni.base - var.base   (le: + 1)
    # lower: uni.base < var.base + idx  <=>  idx >= uni.base - var.base + 1   (le: + 0)
    diff = _combine(lw, uni.base, var.base, t, -1)
    if diff is not None and (pred == "le") != lower:
        diff = _combine(lw, diff, 1, t, 1)
    if diff is None:
        return None
    bound = value(lw, diff, t)
    none: list[Value | None] = [None] * rank
    bounds = list(none)
    bounds[dims[0]] = bound
    return Bounds(tuple(none), None, tuple(bounds)) if lower else Bounds(tuple(bounds))


def _and(lw: Lowerer, a: Bounds, b: Bounds) -> Bounds | None:
    def meet(x: Value | None, y: Value | None, op: type[Operation]) -> tuple[bool, Value | None]:
        if x is None or y is None:
            return True, x if y is None else y
        if x.type != y.type:
            return False, None
        return True, _emit(lw, op, [x, y], x.type)

    limits: list[Value | None] = []
    starts: list[Value | None] = []
    for d, (x, y) in enumerate(zip(a.limits, b.limits)):
        ok, lim = meet(x, y, arith.MinOp)
        ok2, start = meet(a.start(d), b.start(d), arith.MaxOp)
        if not (ok and ok2):
            return None
        limits.append(lim)
        starts.append(start)
    cond = a.cond if b.cond is None else b.cond if a.cond is None else _emit(lw, arith.AndOp, [a.cond, b.cond], _I1)
    return a.with_dims(limits, starts, cond)


# --- shape ops -----------------------------------------------------------------------------------
def broadcast(lw: Lowerer, f: Form | None, src: tuple[int, ...], dst: tuple[int, ...]) -> Form | None:
    """Broadcast size-1 dimensions: the value no longer depends on their index."""
    if f is None or len(src) != len(dst):
        return None
    grown = [s == 1 and d != 1 for s, d in zip(src, dst)]
    if isinstance(f, Affine):
        return Affine(f.base, tuple(0 if g else s for g, s in zip(grown, f.strides)))
    cond = f.cond
    limits: list[Value | None] = []
    starts: list[Value | None] = []
    for d, (g, lim) in enumerate(zip(grown, f.limits)):
        start = f.start(d)
        if g:  # idx was always 0 there: the bounds become start <= 0 < lim, uniform
            checks = []
            if lim is not None:
                checks.append(_emit(lw, arith.CmpOp, [lw.const(0, lim.type), lim], _I1, {"predicate": "lt"}))
            if start is not None:
                checks.append(_emit(lw, arith.CmpOp, [start, lw.const(0, start.type)], _I1, {"predicate": "le"}))
            for c in checks:
                cond = c if cond is None else _emit(lw, arith.AndOp, [cond, c], _I1)
            lim = start = None
        limits.append(lim)
        starts.append(start)
    return f.with_dims(limits, starts, cond)


def expand_dims(f: Form | None, axis: int) -> Form | None:
    if isinstance(f, Affine):
        return Affine(f.base, (*f.strides[:axis], 0, *f.strides[axis:]))
    if isinstance(f, Bounds):
        starts = None if f.starts is None else (*f.starts[:axis], None, *f.starts[axis:])
        return Bounds((*f.limits[:axis], None, *f.limits[axis:]), f.cond, starts)
    return None


def permute(f: Form | None, order: tuple[int, ...]) -> Form | None:
    """Result dimension ``i`` is source dimension ``order[i]``."""
    if isinstance(f, Affine):
        return Affine(f.base, tuple(f.strides[o] for o in order))
    if isinstance(f, Bounds):
        starts = None if f.starts is None else tuple(f.starts[o] for o in order)
        return Bounds(tuple(f.limits[o] for o in order), f.cond, starts)
    return None


def pointee(f: Affine) -> ScalarType | None:
    t = f.base.type
    return t.pointee if isinstance(t, PointerType) and isinstance(t.pointee, ScalarType) else None
