"""``wi.atomic_rmw`` / ``wi.atomic_cas`` as LLVM atomic instructions.

Integer kinds map to ``atomicrmw`` (``max``/``min`` by signedness). Float
``add``/``max``/``min`` (and every ``bf16`` kind) run a ``cmpxchg`` loop on
the element's bits whose combine step is the ordinary scalar op -- so float
``max``/``min`` propagate NaN exactly as the interpreter's atomics do and
``bf16`` results are rounded. Masked-off lanes touch nothing and return 0
(the interpreter's rule). Memory order: ``relaxed`` -> ``monotonic``, the
others by name; the scope is ignored (a CPU is one coherence domain).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm import scalar as sc
from kdsl.codegen.llvm.types import I8, intrinsic, reg, storage
from kdsl.errors import CompilationError
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer

_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
_INT_RMW = {"add": "add", "xchg": "xchg", "and": "and", "or": "or", "xor": "xor"}


def _order(op: Operation, for_load: bool = False) -> str:
    o = _ORDER[op.attributes.get("sem", "acq_rel")]
    if for_load:
        return "acquire" if o in ("acquire", "acq_rel") else "monotonic"
    return o


def atomic_rmw(fr: FuncRenderer, op: Operation) -> ir.Value:
    pt = op.ptr.type
    assert isinstance(pt, PointerType)
    e = pt.scalar_pointee
    kind = op.attributes["kind"]
    if e.name == "i1" and kind == "add":
        raise CompilationError("cpu: atomic add on i1 is not supported", op.loc)

    def body() -> ir.Value:
        return _rmw(fr, op, e, kind)

    return _masked_rmw(fr, op, e, body)


def _masked_rmw(fr: FuncRenderer, op: Operation, e: ScalarType, body: Callable[[], ir.Value]) -> ir.Value:
    """Run ``body()`` only where the mask holds; masked-off lanes give 0 (the interpreter's rule)."""
    if op.mask is None:
        return body()
    b = fr.b
    pre = b.block
    then, done = fr.new_block("atom"), fr.new_block("atom.end")
    b.cbranch(fr.v(op.mask), then, done)
    b.position_at_end(then)
    val = body()
    last = b.block
    b.branch(done)
    b.position_at_end(done)
    phi = b.phi(reg(e))
    phi.add_incoming(val, last)
    phi.add_incoming(ir.Constant(reg(e), 0.0 if e.is_float else 0), pre)
    return phi


def _rmw(fr: FuncRenderer, op: Operation, e: ScalarType, kind: str) -> ir.Value:
    b = fr.b
    ptr, val = fr.v(op.ptr), fr.v(op.val)
    order = _order(op)
    if e.is_float and (kind != "xchg" or e.name == "bf16"):
        return _cas_loop(fr, op, e, kind, ptr, val)
    if e.is_float:  # xchg on f16/f32/f64: on the bits
        it = ir.IntType(e.bitwidth)
        old = b.atomic_rmw("xchg", ptr, b.bitcast(val, it), order)
        return b.bitcast(old, reg(e))
    if e.name == "i1":
        wide = b.zext(val, I8)
        name = {"max": "umax", "min": "umin"}.get(kind, _INT_RMW.get(kind, kind))
        old = b.atomic_rmw(name, ptr, wide, order)
        return b.icmp_unsigned("!=", old, ir.Constant(I8, 0))
    name = (kind if e.is_signed else "u" + kind) if kind in ("max", "min") else _INT_RMW[kind]
    return b.atomic_rmw(name, ptr, val, order)


def _cas_loop(fr: FuncRenderer, op: Operation, e: ScalarType, kind: str, ptr: ir.Value, val: ir.Value) -> ir.Value:
    """old = *ptr; repeat: new = combine(old, val) until cmpxchg succeeds."""
    b = fr.b
    it = storage(e) if e.name == "bf16" else ir.IntType(e.bitwidth)
    first = b.load_atomic(ptr, "monotonic", e.itemsize, typ=it)
    pre = b.block
    loop, done = fr.new_block("cas"), fr.new_block("cas.end")
    b.branch(loop)
    b.position_at_end(loop)
    old_bits = b.phi(it)
    old_bits.add_incoming(first, pre)
    old = fr.from_mem(e, b.bitcast(old_bits, storage(e))) if e.name != "bf16" else fr.from_mem(e, old_bits)
    new = _combine(fr, e, kind, old, val)
    new_bits = fr.to_mem(e, new) if e.name == "bf16" else b.bitcast(new, it)
    pair = b.cmpxchg(ptr, old_bits, new_bits, _order(op), "monotonic")
    seen = b.extract_value(pair, 0)
    ok = b.extract_value(pair, 1)
    old_bits.add_incoming(seen, b.block)
    b.cbranch(ok, done, loop)
    b.position_at_end(done)
    return old


def _combine(fr: FuncRenderer, e: ScalarType, kind: str, old: ir.Value, val: ir.Value) -> ir.Value:
    b = fr.b
    t = reg(e)
    if kind == "xchg":
        return val
    if kind == "add":
        r = b.fadd(old, val)
        return sc.rbf(fr, r) if e.name == "bf16" else r
    if kind in ("max", "min"):
        base = "llvm.maximum" if kind == "max" else "llvm.minimum"
        return b.call(intrinsic(fr.module, base, t, [t, t], [t]), [old, val])
    raise CompilationError(f"cpu: atomic {kind} on {e} is not supported")


def atomic_cas(fr: FuncRenderer, op: Operation) -> ir.Value:
    pt = op.ptr.type
    assert isinstance(pt, PointerType)
    e = pt.scalar_pointee
    b = fr.b
    ptr, cmp, val = fr.v(op.ptr), fr.v(op.cmp), fr.v(op.val)
    if e.name == "i1":
        cmp, val = b.zext(cmp, I8), b.zext(val, I8)
    elif e.is_float:
        it = ir.IntType(16) if e.name == "bf16" else ir.IntType(e.bitwidth)
        cmp = fr.to_mem(e, cmp) if e.name == "bf16" else b.bitcast(cmp, it)
        val = fr.to_mem(e, val) if e.name == "bf16" else b.bitcast(val, it)
    pair = b.cmpxchg(ptr, cmp, val, _order(op), "monotonic")
    old = b.extract_value(pair, 0)
    if e.name == "i1":
        return b.icmp_unsigned("!=", old, ir.Constant(I8, 0))
    if e.name == "bf16":
        return fr.from_mem(e, old)
    if e.is_float:
        return b.bitcast(old, reg(e))
    return old


__all__ = ["atomic_cas", "atomic_rmw"]
