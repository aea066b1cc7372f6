"""``scf``: structured control flow with region-carried values (as MLIR's scf).

Values defined before a region may be used inside it; values flowing out of a
region leave through its terminator (``scf.yield`` / ``scf.condition``).
"""

from __future__ import annotations

from kdsl.ir.core import Dialect, Operation, Terminator
from kdsl.ir.dialects.common import require_bool, require_int


def _types(values: list) -> list:  # type: ignore[type-arg]
    return [v.type for v in values]


class YieldOp(Operation):
    """``scf.yield %v...``: ends a region of ``for``/``if``/``while.after``/``tile.reduce``/``tile.scan``."""

    NAME = "scf.yield"
    OPERANDS = ("*values",)
    RESULTS = ()
    TRAITS = (Terminator,)
    IS_TERMINATOR = True


class ConditionOp(Operation):
    """``scf.condition %cond, %v...``: ends ``while``'s before region; the loop
    continues into the after region with ``%v...`` while ``%cond`` (scalar i1)
    holds, else the while op returns ``%v...``."""

    NAME = "scf.condition"
    OPERANDS = ("cond", "*values")
    RESULTS = ()
    TRAITS = (Terminator,)
    IS_TERMINATOR = True

    def verify_(self) -> None:
        if self.cond.type.shape:
            raise self.error(f"condition must be a scalar i1, got {self.cond.type}")
        require_bool(self, self.cond.type)


class ForOp(Operation):
    """``scf.for %lb, %ub, %step, %init...`` with body ``^bb(%iv, %iter...)``.

    Iterates like Python's ``range(lb, ub, step)``: ``iv = lb, lb+step, ...``
    while ``iv < ub`` (step > 0) or ``iv > ub`` (step < 0). A zero step is
    undefined. lb, ub, step and iv share one scalar integer type. The body
    yields the next iteration values; the op returns the last ones (the inits
    if the loop runs zero times).
    """

    NAME = "scf.for"
    OPERANDS = ("lower", "upper", "step", "*inits")
    RESULTS = ("*results",)
    ATTRS = {"disable_licm?": bool}  # kl.range(disable_licm=True): the licm pass leaves this loop alone
    REGIONS = 1

    @property
    def body(self):  # type: ignore[no-untyped-def]
        return self.regions[0].block

    def verify_(self) -> None:
        iv_t = self.lower.type
        require_int(self, iv_t)
        if iv_t.shape or self.upper.type != iv_t or self.step.type != iv_t:
            raise self.error(f"bounds must share one scalar integer type, got {self.lower.type}, {self.upper.type}, {self.step.type}")
        body = self.body
        want = [iv_t, *_types(self.inits)]
        if _types(body.args) != want:
            raise self.error("body arguments must be (iv, iter_args...) matching the init types")
        if _types(self.results) != _types(self.inits):
            raise self.error("result types must match init types")
        _check_yield(self, body, _types(self.inits))


class IfOp(Operation):
    """``scf.if %cond`` with a then region and an else region, each yielding the results."""

    NAME = "scf.if"
    OPERANDS = ("cond",)
    RESULTS = ("*results",)
    REGIONS = 2

    def verify_(self) -> None:
        if self.cond.type.shape:
            raise self.error(f"condition must be a scalar i1, got {self.cond.type}")
        require_bool(self, self.cond.type)
        for r in self.regions:
            _check_yield(self, r.block, _types(self.results))


class WhileOp(Operation):
    """``scf.while %init...``: region 0 ``before(^bb(%args))`` ends in
    ``scf.condition``; region 1 ``after(^bb(%forwarded))`` ends in ``scf.yield``
    of the next ``before`` arguments. Results have the condition's value types."""

    NAME = "scf.while"
    OPERANDS = ("*inits",)
    RESULTS = ("*results",)
    ATTRS = {"disable_licm?": bool}  # kl.condition(c, disable_licm=True)
    REGIONS = 2

    def verify_(self) -> None:
        before, after = self.regions[0].block, self.regions[1].block
        if _types(before.args) != _types(self.inits):
            raise self.error("before-region arguments must match the init types")
        cond = before.terminator
        if not isinstance(cond, ConditionOp):
            raise self.error("before region must end in scf.condition")
        fwd = _types(cond.values)
        if _types(after.args) != fwd or _types(self.results) != fwd:
            raise self.error("after-region arguments and results must match the scf.condition values")
        _check_yield(self, after, _types(self.inits))


def _check_yield(op: Operation, block, want: list) -> None:  # type: ignore[no-untyped-def,type-arg]
    term = block.terminator
    if not isinstance(term, YieldOp):
        raise op.error("region must end in scf.yield")
    if _types(term.operands) != want:
        got = ", ".join(str(t) for t in _types(term.operands))
        exp = ", ".join(str(t) for t in want)
        raise op.error(f"region yields ({got}) but ({exp}) is expected")


SCF = Dialect("scf", [YieldOp, ConditionOp, ForOp, IfOp, WhileOp])
