"""Sanitiser instrumentation: bounds checks before every load, store and atomic.

Device backends do not check memory accesses; an out-of-bounds store silently
corrupts the caller's data. In sanitiser mode (``KDSL_SANITIZE=1``,
``kdsl.set_sanitize(True)`` or ``@kdsl.kernel(sanitize=True)``) the JIT runs
:func:`instrument` on the optimised entry function, so every backend gets the
checks through the ops it already lowers (no renderer or runtime change):

* each pointer parameter ``p`` that an access derives from gets two hidden
  ``i64`` parameters ``lo``/``hi``: the byte range ``[p+lo, p+hi)`` of the
  array's memory (the view's span, as the interpreter checks it: ``lo < 0``
  for negative strides);
* one hidden ``ptr<i32>`` report parameter: ``[check id, byte offset lo/hi
  32 bits, program id x, y, z, -, ticket]``, zero-initialised by the launcher;
* before each access with pointers ``q`` (mask ``m``) derived from ``p``:
  ``off = int(q) - int(p)``; ``bad = m & (off < lo | off > hi - size)``; the
  failing lanes take a ticket (``atomic_add`` masked by ``bad``) and the lane
  holding ticket 0 -- the first failure of the launch -- writes the report;
* the access's mask becomes ``m & !bad``: a failing lane never touches memory
  (an out-of-bounds store corrupts nothing), so the launch finishes and the
  launcher raises. ``atomic_cas`` has no mask: it is reported, not blocked.

Everything is lane-wise: no reduction, local memory or barrier is added, so a
kernel that fits the device's limits still fits when sanitised.

*Provenance* is the pointer parameter an ``addptr`` chain starts from, followed
through splats/broadcasts/reshapes, ``select`` and values carried by
``scf.for``/``if``/``while``. An access whose pointers may come from several
parameters, or from memory or an integer, is not checked (counted in
:attr:`SanitizeInfo.unchecked`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdsl.ir.core import Block, Builder, Location, ModuleOp, Operation, Region, Value
from kdsl.ir.dialects import arith, scf, tile
from kdsl.ir.types import PointerType, ScalarType, TileType, Type
from kdsl.transforms.provenance import Provenance

I1, I32, I64 = ScalarType("i1"), ScalarType("i32"), ScalarType("i64")
_ACCESSES = ("tile.load", "tile.store", "tile.atomic_rmw", "tile.atomic_cas")

@dataclass(frozen=True)
class Check:
    """One instrumented access: what it is, where, and the parameter it reads."""

    what: str  # "load", "store", "atomic_add", ..., "atomic_cas" (the interpreter's words)
    param: int  # index of the pointer parameter among the entry's original parameters
    file: str
    line: int
    col: int


@dataclass(frozen=True)
class SanitizeInfo:
    """What the launcher needs: which parameters get bounds, and the check table.

    The entry's parameters become ``(*original, lo0, hi0, lo1, hi1, ..., report)``
    with one ``(lo, hi)`` pair per index in ``params``.
    """

    params: tuple[int, ...]
    checks: tuple[Check, ...]
    unchecked: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "params": list(self.params),
            "unchecked": self.unchecked,
            "checks": [[c.what, c.param, c.file, c.line, c.col] for c in self.checks],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> SanitizeInfo:
        checks = tuple(Check(str(w), int(p), str(f), int(ln), int(c)) for w, p, f, ln, c in d["checks"])
        return SanitizeInfo(tuple(int(i) for i in d["params"]), checks, int(d.get("unchecked", 0)))


def _access_what(op: Operation) -> str:
    if op.NAME == "tile.atomic_rmw":
        return f"atomic_{op.attributes['kind']}"
    return op.NAME.split(".", 1)[1]


def _with_elem(t: Type, e: ScalarType) -> Type:
    return TileType(t.shape, e) if isinstance(t, TileType) else e


class _Emitter:
    """Builds the check ops before one access."""

    def __init__(self, b: Builder) -> None:
        self.b = b

    def op(self, cls: type[Operation], operands: list[Value], rtype: Type | None, **attrs: Any) -> Value:
        created = self.b.create(cls, operands, [rtype] if rtype is not None else [], attrs or None)
        return created.result if rtype is not None else operands[0]

    def const(self, value: int, t: ScalarType) -> Value:
        return self.op(arith.ConstantOp, [], t, value=value)

    def splat(self, v: Value, shape: tuple[int, ...]) -> Value:
        return self.op(tile.SplatOp, [v], TileType(shape, v.type.scalar)) if shape else v

    def cmp(self, a: Value, c: Value, pred: str) -> Value:
        return self.op(arith.CmpOp, [a, c], _with_elem(a.type, I1), predicate=pred)


def _record(em: _Emitter, bad: Value, off: Value, report: Value, check_id: int) -> None:
    """Record one failing lane per launch, lane-wise (no reduction: no local memory, no barrier).

    ``ticket = atomic_add(report[7], 1)`` on the failing lanes elects the first
    one (``ticket == 0``), which alone writes ``[id, offset lo, offset hi, pid x, y, z]``.
    """
    shape = off.type.shape

    def slot(k: int) -> Value:
        return em.splat(em.op(tile.AddPtrOp, [report, em.const(k, I32)], report.type), shape)

    i32t = _with_elem(off.type, I32)
    ticket = em.op(tile.AtomicRMWOp, [slot(7), em.splat(em.const(1, I32), shape), bad], i32t, kind="add")
    win = em.op(arith.AndOp, [bad, em.cmp(ticket, em.splat(em.const(0, I32), shape), "eq")], bad.type)
    high = em.op(arith.ShrOp, [off, em.splat(em.const(32, I64), shape)], off.type)
    words = [
        em.splat(em.const(check_id, I32), shape),
        em.op(arith.CastOp, [off], i32t),
        em.op(arith.CastOp, [high], i32t),
    ]
    words += [em.splat(em.op(tile.ProgramIdOp, [], I32, axis=ax), shape) for ax in range(3)]
    for k, word in enumerate(words):
        em.b.create(tile.StoreOp, [slot(k), word, win], [])


_MASK_INDEX = {"tile.load": 1, "tile.store": 2, "tile.atomic_rmw": 2}  # atomic_cas has no mask


def _emit_check(
    op: Operation, base: Value, lo: Value, hi: Value, report: Value, check_id: int, gate: bool = False
) -> None:
    """Check ``op``'s lanes against ``[lo, hi)`` of ``base``, record a failure,
    and mask the failing lanes off so the access itself never leaves the array."""
    ptr = op.operands[0]
    mi = _MASK_INDEX.get(op.NAME)
    mask = op.operands[mi] if mi is not None and len(op.operands) > mi else None
    pt = ptr.type.scalar
    assert isinstance(pt, PointerType)
    size = pt.pointee.bitwidth // 8 if isinstance(pt.pointee, ScalarType) else 8
    b = Builder()
    b.set_insertion_point_before(op)
    b.loc = op.loc
    em = _Emitter(b)
    shape, i64t, i1t = ptr.type.shape, _with_elem(ptr.type, I64), _with_elem(ptr.type, I1)
    off = em.op(
        arith.SubOp, [em.op(arith.CastOp, [ptr], i64t), em.splat(em.op(arith.CastOp, [base], I64), shape)], i64t
    )
    lo_t = em.splat(lo, shape)
    hi_t = em.splat(em.op(arith.SubOp, [hi, em.const(max(size, 1), I64)], I64), shape)  # last valid start
    bad = em.op(arith.OrOp, [em.cmp(off, lo_t, "lt"), em.cmp(off, hi_t, "gt")], i1t)
    ok = em.op(arith.AndOp, [em.cmp(off, lo_t, "ge"), em.cmp(off, hi_t, "le")], i1t)
    if mask is not None:
        bad = em.op(arith.AndOp, [bad, mask], i1t)
        ok = em.op(arith.AndOp, [ok, mask], i1t)
    access = _set_mask(op, mi, ok) if mi is not None else op
    # Record after the access: the pointers are then only used next to the access, so
    # the lowering keeps check and access in one element loop (no pointer tile spilled).
    assert access.parent is not None
    b.set_insertion_point_before(access)
    b.index = (b.index or 0) + 1
    if not gate or not shape:
        _record(em, bad, off, report, check_id)
        return
    # Gated: the record's element loops (an atomic, six masked stores) run only when a lane
    # failed; the or-reduction deciding it is cheap where a tile lives in one work-item.
    if_op = b.create(
        scf.IfOp, [em.cmp(_any(em, bad), em.const(0, I32), "ne")], [], None, [Region([Block()]), Region([Block()])]
    )
    _record(_at(b, if_op.regions[0].block), bad, off, report, check_id)
    for region in if_op.regions:
        b.at_block(region.block).create(scf.YieldOp, [], [])


def _any(em: _Emitter, flags: Value) -> Value:
    """Scalar i32, non-zero if any lane of the i1 tile ``flags`` is set."""
    n = 1
    for d in flags.type.shape:
        n *= d
    x = em.op(arith.CastOp, [flags], _with_elem(flags.type, I32))
    if len(flags.type.shape) > 1:
        x = em.op(tile.ReshapeOp, [x], TileType((n,), I32))
    body = Block([I32, I32])
    inner = em.b.at_block(body)
    inner.create(scf.YieldOp, [inner.create(arith.OrOp, [body.args[0], body.args[1]], [I32]).result], [])
    return em.b.create(tile.ReduceOp, [x], [I32], {"axis": 0}, [Region([body])]).result


def _at(b: Builder, block: Block) -> _Emitter:
    return _Emitter(b.at_block(block))


def _set_mask(op: Operation, index: int, mask: Value) -> Operation:
    """Give ``op`` the mask ``mask`` (replacing the op when it had none); returns the access."""
    if len(op.operands) > index:
        op.set_operand(index, mask)
        return op
    assert op.parent is not None
    new = type(op)([*op.operands, mask], [r.type for r in op.results], dict(op.attributes), [], op.loc)
    op.parent.insert(op.parent.ops.index(op), new)
    for old_r, new_r in zip(op.results, new.results):
        old_r.replace_all_uses_with(new_r)
    op.erase()
    return new


def instrument(module: ModuleOp, entry: str, gate: bool = False) -> SanitizeInfo:
    """Add bounds checks to ``entry`` (in place); return what the launcher needs.

    ``gate`` wraps each tile access's record in ``if any(failing lanes)`` (an
    or-reduction): much faster where a tile lives in one work-item (the
    ``cpu`` and PoCL layouts), but a reduction may need local memory on
    many-thread layouts (Vulkan), so it is off there to keep a kernel that
    fits the device fitting it when sanitised.
    """
    func = module.lookup(entry)
    if not isinstance(func, tile.FuncOp):
        raise ValueError(f"sanitize: no tile.func @{entry}")
    body = func.body
    nparams = len(body.args)
    prov = Provenance(body)
    accesses: list[tuple[Operation, int | None]] = []
    for op in func.walk():
        if op.NAME in _ACCESSES:
            accesses.append((op, prov.param(op.operands[0])))
    params = sorted({p for _, p in accesses if p is not None})
    bounds: dict[int, tuple[Value, Value]] = {}
    names = list(func.attributes.get("arg_names") or [a.name_hint or f"arg{i}" for i, a in enumerate(body.args)])
    for k in params:
        bounds[k] = (body.add_arg(I64, f"__san_lo{k}"), body.add_arg(I64, f"__san_hi{k}"))
    report = body.add_arg(PointerType(I32), "__san_report")
    _extend_attrs(func, nparams, names, params)
    checks: list[Check] = []
    unchecked = 0
    for op, src in accesses:
        if src is None:
            unchecked += 1
            continue
        loc: Location = op.loc
        checks.append(Check(_access_what(op), src, loc.file, loc.line, loc.col))
        _emit_check(op, body.args[src], *bounds[src], report, len(checks), gate)
    return SanitizeInfo(tuple(params), tuple(checks), unchecked)


def _extend_attrs(func: Operation, nparams: int, names: list[str], params: list[int]) -> None:
    extra = 2 * len(params) + 1
    div = func.attributes.get("divisibility")
    if div is not None:
        func.attributes["divisibility"] = (*div, *([1] * extra))
    large = func.attributes.get("large")
    if large is not None:
        func.attributes["large"] = (*large, *([0] * extra))
    if func.attributes.get("arg_names") is not None:
        hidden = [f"__san_{k}{p}" for p in params for k in ("lo", "hi")]
        func.attributes["arg_names"] = (*names[:nparams], *hidden, "__san_report")
