"""``scf.if``, ``scf.for`` and ``scf.while`` over a batch of programs.

A condition or loop bound that is the same for the whole batch runs the
region once for everyone (the common case: bounds from constexprs or scalar
arguments). When programs disagree the batch splits:

* ``if``: the programs taking each branch run it as a sub-batch; results are
  merged back row by row.
* ``for``: each program's trip count is computed; every iteration runs on
  the programs that still have iterations left (the active set only shrinks,
  so a sub-batch frame is rebuilt only when it does).
* ``while``: the before-region runs on the active programs; those whose
  condition is false leave with their forwarded values, the rest run the
  after-region.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kdsl.errors import KernelRuntimeError
from kdsl.interpreter.compiler import Compiler, register
from kdsl.interpreter.frames import BlockCode, Frame, OpFn
from kdsl.interpreter.values import Array, broadcast_lead, value_dtype
from kdsl.ir.core import Operation, Value


def _uniform(x: Array) -> bool:
    return x.shape[0] == 1 or bool((x == x[0]).all())


class _Finished:
    """Per-result arrays collecting programs' final values as they finish."""

    def __init__(self, results: Sequence[Value], size: int) -> None:
        self.size = size
        self.results = results
        self.out: list[Array] | None = None

    def put(self, rows: Array, values: list[Array]) -> None:
        if self.out is None:
            self.out = [np.empty((self.size, *r.type.shape), dtype=value_dtype(r.type)) for r in self.results]
        for o, v in zip(self.out, values):
            o[rows] = v

    def finish(self, fr: Frame, rows: Array | None, values: list[Array]) -> None:
        """Bind the op's results; ``rows`` None means every program is still in ``values``."""
        if rows is None or (rows.size == self.size and self.out is None):
            for r, v in zip(self.results, values):
                fr.vals[r] = v
            return
        if rows.size:
            self.put(rows, values)
        assert self.out is not None
        for r, o in zip(self.results, self.out):
            fr.vals[r] = o


@register("scf.if")
def _if(op: Operation, c: Compiler) -> OpFn:
    then_code, else_code = c.region(op, 0), c.region(op, 1)
    cond = op.cond
    results = list(op.results)

    def run(fr: Frame) -> None:
        cv = fr.get(cond)
        if cv.ndim > 1:  # inside a reduce/scan combiner: elements, not programs
            _if_elementwise(fr, cv, then_code, else_code, results)
            return
        if cv.all():
            outs = then_code.run(fr.child(), [])
        elif not cv.any():
            outs = else_code.run(fr.child(), [])
        else:
            t_rows, f_rows = np.flatnonzero(cv), np.flatnonzero(~cv)
            t_outs = then_code.run(fr.subset(t_rows), [])
            f_outs = else_code.run(fr.subset(f_rows), [])
            fin = _Finished(results, fr.batch.size)
            fin.put(t_rows, t_outs)
            fin.put(f_rows, f_outs)
            outs = fin.out or []
        for r, v in zip(results, outs):
            fr.vals[r] = v

    return run


def _if_elementwise(fr: Frame, cv: Array, then_code: BlockCode, else_code: BlockCode, results: Sequence[Value]) -> None:
    t_outs = then_code.run(Frame(fr.batch, fr), [])
    f_outs = else_code.run(Frame(fr.batch, fr), [])
    for r, t, f in zip(results, t_outs, f_outs):
        fr.vals[r] = np.where(cv, t, f)


def _trip_counts(lb: Array, ub: Array, st: Array, n: int) -> Array:
    out = np.empty(n, dtype=np.int64)
    lbs, ubs, sts = (broadcast_lead(x, n).tolist() for x in (lb, ub, st))
    for i, (lo, hi, s) in enumerate(zip(lbs, ubs, sts)):
        out[i] = _trips(int(lo), int(hi), int(s))
    return out


def _trips(lo: int, hi: int, step: int) -> int:
    if step > 0:
        return max(0, (hi - lo + step - 1) // step)
    if step < 0:
        return max(0, (lo - hi - step - 1) // -step)
    return 0 if lo >= hi else -1  # -1: infinite (reported by the caller)


@register("scf.for")
def _for(op: Operation, c: Compiler) -> OpFn:
    body = c.region(op, 0)
    lower, upper, step = op.lower, op.upper, op.step
    inits = list(op.inits)
    results = list(op.results)
    iv_dtype = value_dtype(lower.type)
    loc = op.loc
    kernel = c.kernel

    def zero_step() -> KernelRuntimeError:
        return KernelRuntimeError(f"scf.for in kernel '{kernel}' has step 0 with lower < upper (infinite loop)", loc)

    def run(fr: Frame) -> None:
        lb, ub, st = fr.get(lower), fr.get(upper), fr.get(step)
        carried = [fr.get(v) for v in inits]
        if _uniform(lb) and _uniform(ub) and _uniform(st):
            lo, hi, s = int(lb[0]), int(ub[0]), int(st[0])
            if _trips(lo, hi, s) < 0:
                raise zero_step()
            for i in range(lo, hi, s) if s else ():
                carried = body.run(fr.child(), [np.array([i], dtype=iv_dtype), *carried])
            for r, v in zip(results, carried):
                fr.vals[r] = v
            return
        _for_divergent(fr, body, lb, ub, st, carried, results, zero_step)

    return run


def _for_divergent(
    fr: Frame, body: BlockCode, lb: Array, ub: Array, st: Array, carried: list[Array], results: Sequence[Value], err: Any
) -> None:
    n = fr.batch.size
    trips = _trip_counts(lb, ub, st, n)
    if (trips < 0).any():
        raise err()
    lb, st = broadcast_lead(lb, n), broadcast_lead(st, n)
    fin = _Finished(results, n)
    rows = np.arange(n)
    frame = fr
    carried = [broadcast_lead(v, n) for v in carried]
    k = 0
    while True:
        alive = trips[rows] > k
        if not alive.all():
            done = ~alive
            fin.put(rows[done], [v[done] if v.shape[0] != 1 else v for v in carried])
            rows = rows[alive]
            carried = [v[alive] if v.shape[0] != 1 else v for v in carried]
            lb, st = lb[alive], st[alive]
            frame = fr.subset(rows)
        if rows.size == 0:
            break
        iv = lb + st * np.asarray(k).astype(lb.dtype)
        carried = body.run(frame.child(), [iv, *carried])
        k += 1
    fin.finish(fr, rows, carried)


@register("scf.while")
def _while(op: Operation, c: Compiler) -> OpFn:
    before, after = c.region(op, 0), c.region(op, 1)
    inits = list(op.inits)
    results = list(op.results)

    def run(fr: Frame) -> None:
        n = fr.batch.size
        vals = [fr.get(v) for v in inits]
        fin = _Finished(results, n)
        rows: Array | None = None  # None: all programs, frame == fr
        frame = fr
        while True:
            cond, *fwd = before.run(frame.child(), vals)
            if cond.all():
                vals = after.run(frame.child(), fwd)
                continue
            if not cond.any():
                fin.finish(fr, rows, fwd)
                return
            cur = rows if rows is not None else np.arange(n)
            cond = broadcast_lead(cond, cur.size)
            stop = ~cond
            fin.put(cur[stop], [v[stop] if v.shape[0] != 1 else v for v in fwd])
            rows = cur[cond]
            fwd = [v[cond] if v.shape[0] != 1 else v for v in fwd]
            frame = fr.subset(rows)
            vals = after.run(frame.child(), fwd)

    return run
