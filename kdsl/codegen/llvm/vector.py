"""LLVM IR for the vector ops of the work-item IR (``vector<NxT>``, see ``wi_vector.py``).

``vector<NxT>`` is ``<N x T>``, lane masks ``<N x i1>``. Loads and stores are
whole-vector ``load``/``store`` with element alignment; with a lane count (the
lane-count iteration ending a vector loop) ``llvm.masked.load``/``llvm.masked.store``
(``llvm.masked.gather`` for a strided ``wi.vload``) under the mask ``lane_ids < count``:
single ``vmovups`` with a ``k`` mask on AVX-512, ``vmaskmovps`` on AVX2 (masked-off
lanes never fault). A counted store with the ``nontemporal`` hint is a loop of scalar
streaming stores (there is no masked one): a plain store into a line whose other half
went out through the write-combining buffers of streaming stores made a LayerNorm row of
781 columns 1.5x slower on Zen 4. ``wi.broadcast`` is
``insertelement`` + ``shufflevector``; ``wi.vreduce`` the op's halving tree
(shuffles of the low and high halves). Elementwise ops keep the scalar
path's semantics (:mod:`kdsl.codegen.llvm.scalar`): ``maxnum``/``maximum``,
saturating float -> int casts, no fast-math flags; an f32 division by a splat scalar is
correctly rounded without a vector divide (:func:`divide_by_uniform`). ``exp exp2 log log2 tanh``
on ``<N x float>`` use :mod:`vmath`'s lane-wise polynomials; the other
transcendentals (``sin``/``cos``'s table reduction, ``erf``, f64 functions)
run the scalar code lane by lane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from kdsl.codegen.llvm import scalar as sc
from kdsl.codegen.llvm import streaming, vmath
from kdsl.codegen.llvm.types import I32, I64, PTR, intrinsic, reg, storage, unsigned_to_float
from kdsl.codegen.uniform_div import S_RANGE, X_RANGE, uniform_divisor
from kdsl.ir.core import Operation
from kdsl.ir.types import PointerType, ScalarType, Type, VectorType

if TYPE_CHECKING:
    from kdsl.codegen.llvm.render import FuncRenderer

_WI_VECTOR = frozenset({"wi.vload", "wi.vstore", "wi.gvload", "wi.gvstore", "wi.broadcast", "wi.vreduce",
                        "wi.lane_ids"})  # fmt: skip
_KIND_OP = {"add": "arith.add", "mul": "arith.mul", "max": "arith.max", "min": "arith.min", "and": "arith.and",
            "or": "arith.or", "xor": "arith.xor"}  # fmt: skip
_FBIN = {"arith.add": "fadd", "arith.sub": "fsub", "arith.mul": "fmul", "arith.div": "fdiv", "math.div_rn": "fdiv",
         "arith.rem": "frem"}  # fmt: skip
_IBIN = {"arith.add": "add", "arith.sub": "sub", "arith.mul": "mul", "arith.and": "and_", "arith.or": "or_",
         "arith.xor": "xor"}  # fmt: skip
_INTRINSIC_UNARY = {"math.sqrt": "llvm.sqrt", "math.sqrt_rn": "llvm.sqrt", "math.floor": "llvm.floor",
                    "math.ceil": "llvm.ceil", "math.abs": "llvm.fabs"}  # fmt: skip


def handles(op: Operation) -> bool:
    """True for the wi vector ops and for arith/math ops on vectors."""
    if op.NAME in _WI_VECTOR:
        return True
    if op.NAME.startswith(("arith.", "math.")):
        return any(isinstance(v.type, VectorType) for v in (*op.operands, *op.results))
    return False


def _vt(t: Type) -> VectorType:
    assert isinstance(t, VectorType), t
    return t


def _store_type(t: VectorType) -> ir.VectorType:
    return ir.VectorType(storage(t.element), t.lanes)


def emit(fr: FuncRenderer, op: Operation) -> None:
    """Render ``op`` at ``fr.b`` and bind its result."""
    n, b = op.NAME, fr.b
    if n in _COUNTED_AT and len(op.operands) > _COUNTED_AT[n] and op.operands[_COUNTED_AT[n]].type == _COUNT:
        _counted(fr, op, fr.v(op.operands[_COUNTED_AT[n]]))
        return
    if n == "wi.gvstore":
        vt = _vt(op.value.type)
        if op.mask is not None:
            with b.if_then(fr.v(op.mask)):
                b.store(fr.v(op.value), fr.v(op.ptr), align=vt.element.itemsize)
        elif streaming.wanted(op):
            streaming.vector_store(fr.module, b, fr.v(op.value), fr.v(op.ptr), vt.element.itemsize)
        else:
            b.store(fr.v(op.value), fr.v(op.ptr), align=vt.element.itemsize)
        return
    if n == "wi.vstore":
        vt = _vt(op.value.type)
        p, _ = fr._elem_ptr(op.mem, op.index)
        b.store(fr.v(op.value), p, align=vt.element.itemsize)
        return
    if n == "wi.gvload":
        vt = _vt(op.result.type)
        if op.mask is None:
            fr.set(op.result, b.load(fr.v(op.ptr), typ=_store_type(vt), align=vt.element.itemsize))
        else:
            fr.set(op.result, _guarded_load(fr, op, vt))
        return
    if n == "wi.vload":
        vt = _vt(op.result.type)
        p, _ = fr._elem_ptr(op.mem, op.index)
        k = op.attributes.get("stride", 1)
        if k == 1:
            fr.set(op.result, b.load(p, typ=_store_type(vt), align=vt.element.itemsize))
            return
        et = _store_type(vt)  # a column: lane i at element index + i * k
        out: ir.Value = ir.Constant(et, ir.Undefined)
        for i in range(vt.lanes):
            q = b.gep(p, [ir.Constant(I64, i * k)], inbounds=True, source_etype=et.element)
            out = b.insert_element(out, b.load(q, typ=et.element), ir.Constant(I32, i))
        fr.set(op.result, out)
        return
    if n == "wi.broadcast":
        fr.set(op.result, splat(b, fr.v(op.operand), _vt(op.result.type).lanes))
        return
    if n == "wi.lane_ids":
        lanes = _vt(op.result.type).lanes
        fr.set(op.result, ir.Constant(ir.VectorType(I32, lanes), list(range(lanes))))
        return
    if n == "wi.vreduce":
        fr.set(op.result, _vreduce(fr, op))
        return
    fr.set(op.result, _elementwise(fr, op, [fr.v(x) for x in op.operands]))


_COUNT = ScalarType("i32")
_COUNTED_AT = {"wi.gvload": 1, "wi.gvstore": 2, "wi.vload": 2, "wi.vstore": 3}  # where a lane count sits


def _counted(fr: FuncRenderer, op: Operation, count: ir.Value) -> None:
    """A vector access limited to lanes ``i < count``: masked load/store/gather intrinsics."""
    b, n = fr.b, op.NAME
    vt = _vt(op.result.type if op.results else op.value.type)
    et = _store_type(vt)
    align = ir.Constant(I32, vt.element.itemsize)
    ids = ir.Constant(ir.VectorType(I32, vt.lanes), list(range(vt.lanes)))
    mask = b.icmp_signed("<", ids, splat(b, count, vt.lanes))
    mt = mask.type
    if n in ("wi.gvload", "wi.gvstore"):
        ptr = fr.v(op.ptr)
    else:
        ptr, _ = fr._elem_ptr(op.mem, op.index)
    if n == "wi.gvstore" and streaming.wanted(op):
        streaming.counted_store(fr.module, b, fr.v(op.value), ptr, count, vt.element.itemsize)
        return
    if n in ("wi.gvstore", "wi.vstore"):
        fn = intrinsic(fr.module, "llvm.masked.store", ir.VoidType(), [et, PTR, I32, mt], [et, PTR])
        b.call(fn, [fr.v(op.value), ptr, align, mask])
        return
    other = fr.v(op.other) if n == "wi.gvload" and op.other is not None else ir.Constant(et.element, 0)
    passthru = splat(b, other, vt.lanes)
    k = op.attributes.get("stride", 1)
    if k == 1:
        fn = intrinsic(fr.module, "llvm.masked.load", et, [PTR, I32, mt, et], [et, PTR])
        fr.set(op.result, b.call(fn, [ptr, align, mask, passthru]))
        return
    pv = ir.VectorType(PTR, vt.lanes)  # a column: lane i at element index + i * k
    ptrs: ir.Value = ir.Constant(pv, ir.Undefined)
    for i in range(vt.lanes):
        q = b.gep(ptr, [ir.Constant(I64, i * k)], inbounds=True, source_etype=et.element)
        ptrs = b.insert_element(ptrs, q, ir.Constant(I32, i))
    fn = intrinsic(fr.module, "llvm.masked.gather", et, [pv, I32, mt, et], [et, pv])
    fr.set(op.result, b.call(fn, [ptrs, align, mask, passthru]))


def _guarded_load(fr: FuncRenderer, op: Operation, vt: VectorType) -> ir.Value:
    """``wi.gvload`` with its scalar mask: the whole vector or, when the mask is false, ``other``
    splat (memory untouched)."""
    et = _store_type(vt)
    other = fr.v(op.other) if op.other is not None else ir.Constant(et.element, 0)
    ptr = fr.v(op.ptr)
    load = lambda: fr.b.load(ptr, typ=et, align=vt.element.itemsize)  # noqa: E731
    return fr.guarded(fr.v(op.mask), load, splat(fr.b, other, vt.lanes))


def splat(b: ir.IRBuilder, x: ir.Value, lanes: int) -> ir.Value:
    vt = ir.VectorType(x.type, lanes)
    one = b.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(I32, 0))
    return b.shuffle_vector(one, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))


def _half(b: ir.IRBuilder, v: ir.Value, lanes: int, high: bool) -> ir.Value:
    h = lanes // 2
    if h == 1:
        return b.extract_element(v, ir.Constant(I32, 1 if high else 0))
    idx = ir.Constant(ir.VectorType(I32, h), [i + (h if high else 0) for i in range(h)])
    return b.shuffle_vector(v, ir.Constant(v.type, ir.Undefined), idx)


def _vreduce(fr: FuncRenderer, op: Operation) -> ir.Value:
    vt = _vt(op.operand.type)
    name = _KIND_OP[op.attributes["kind"]]
    nan = bool(op.attributes.get("propagate_nan"))
    cur, lanes = fr.v(op.operand), vt.lanes
    while lanes > 1:
        cur = binary(fr, name, vt.element, _half(fr.b, cur, lanes, False), _half(fr.b, cur, lanes, True), nan)
        lanes //= 2
    return cur


def binary(fr: FuncRenderer, n: str, e: ScalarType, x: ir.Value, y: ir.Value, nan: bool = False) -> ir.Value:
    """``x op y`` lane by lane (vectors or scalars of element type ``e``)."""
    b = fr.b
    t = x.type
    if n in ("arith.max", "arith.min"):
        if e.is_float:
            base = (
                ("maximum" if n == "arith.max" else "minimum") if nan else ("maxnum" if n == "arith.max" else "minnum")
            )
        else:
            base = ("s" if e.is_signed else "u") + n[6:]
        return b.call(intrinsic(fr.module, f"llvm.{base}", t, [t, t], [t]), [x, y])
    if e.is_float:
        out: ir.Value = getattr(b, _FBIN[n])(x, y)
        return out
    out = getattr(b, _IBIN[n])(x, y)
    return out


def _elementwise(fr: FuncRenderer, op: Operation, a: list[ir.Value]) -> ir.Value:
    n, b = op.NAME, fr.b
    rt = op.result.type
    e = rt.scalar
    assert isinstance(e, ScalarType)
    if n == "arith.cmp":
        lhs = op.lhs.type.scalar
        assert isinstance(lhs, ScalarType)
        return sc.cmp(fr, op.attributes["predicate"], lhs, a[0], a[1])
    if n == "arith.select":
        return b.select(a[0], a[1], a[2])
    if n == "arith.cast":
        return _cast(fr, op, a[0])
    if n == "arith.bitcast":  # same-width 32/64-bit lanes (the vectoriser's element types)
        return b.bitcast(a[0], ir.VectorType(storage(e), _vt(rt).lanes))
    if n in ("arith.shl", "arith.shr"):  # the vectoriser only lets constant in-range amounts through
        if n == "arith.shl":
            return b.shl(a[0], a[1])
        return b.ashr(a[0], a[1]) if e.is_signed else b.lshr(a[0], a[1])
    if n == "math.umulhi":  # the high half of the double-width product, lane by lane
        lanes = _vt(rt).lanes
        wide = ir.VectorType(ir.IntType(2 * e.bitwidth), lanes)
        ext = b.sext if e.is_signed else b.zext
        prod = b.mul(ext(a[0], wide), ext(a[1], wide))
        return b.trunc(b.lshr(prod, ir.Constant(wide, e.bitwidth)), a[0].type)
    if n == "math.fma":
        t = a[0].type
        return b.call(intrinsic(fr.module, "llvm.fma", t, [t, t, t], [t]), a)
    if len(a) == 2:
        s = uniform_divisor(op)
        if s is not None:
            return divide_by_uniform(fr, a[0], a[1], fr.v(s))
        return binary(fr, n, e, a[0], a[1], bool(op.attributes.get("propagate_nan")))
    return _unary(fr, op, e, a[0])


def divide_by_uniform(fr: FuncRenderer, x: ir.Value, sv: ir.Value, s: ir.Value) -> ir.Value:
    """``x / s`` for f32 lanes and a uniform divisor, correctly rounded, without a divide per lane.

    A vector ``fdiv`` costs 10-16 cycles per 16 lanes on AVX-512 cores (the divider is not
    pipelined) -- the softmax's normalisation pass was a quarter of its time. One scalar
    reciprocal (hoisted out of the element loop by LLVM, as ``s`` is loop-invariant), a multiply
    and two fmas per vector give the same bits (measured: 1.7x per 16-lane division in an
    L1-resident kdsl loop, 2x in C on 1024-float rows; 4e8
    random pairs in the ranges above, mantissas of all ones included, matched ``fdiv`` exactly).
    A vector with any lane outside the ranges of :mod:`kdsl.codegen.uniform_div` (or a NaN/inf)
    is divided with ``fdiv``.
    """
    b = fr.b
    t = x.type
    lanes = t.count
    one = ir.Constant(s.type, 1.0)
    r = b.fdiv(one, s)
    rv = splat(b, r, lanes)
    fma = intrinsic(fr.module, "llvm.fma", t, [t, t, t], [t])
    fabs = intrinsic(fr.module, "llvm.fabs", t, [t], [t])
    q = b.fmul(x, rv)
    rem = b.call(fma, [b.fneg(q), sv, x])
    q1 = b.call(fma, [rem, rv, q])
    ax = b.call(fabs, [x])
    in_x = b.and_(
        b.fcmp_ordered(">=", ax, ir.Constant(t, [X_RANGE[0]] * lanes)),
        b.fcmp_ordered("<=", ax, ir.Constant(t, [X_RANGE[1]] * lanes)),
    )
    zero = b.fcmp_ordered("==", x, ir.Constant(t, [0.0] * lanes))
    mt = ir.VectorType(ir.IntType(1), lanes)
    all_ok = b.call(intrinsic(fr.module, "llvm.vector.reduce.and", ir.IntType(1), [mt], [mt]), [b.or_(in_x, zero)])
    sfabs = intrinsic(fr.module, "llvm.fabs", s.type, [s.type], [s.type])
    a_s = b.call(sfabs, [s])
    s_ok = b.and_(
        b.fcmp_ordered(">=", a_s, ir.Constant(s.type, S_RANGE[0])),
        b.fcmp_ordered("<=", a_s, ir.Constant(s.type, S_RANGE[1])),
    )
    fast = b.select(zero, q, q1)
    slow = _slow_divide(fr.module, t)  # a call: LLVM would hoist a plain fdiv out of the branch
    return fr.guarded(b.not_(b.and_(all_ok, s_ok)), lambda: b.call(slow, [x, sv]), fast)


def _slow_divide(module: ir.Module, t: ir.VectorType) -> ir.Function:
    """``kd_fdiv_v<N>``: a plain vector ``fdiv`` behind a call that is never inlined.

    LLVM speculates an ``fdiv`` out of a rarely taken branch (it cannot trap) and then selects,
    which would put the divide back on every vector; a call to a ``noinline`` function is not
    speculated, so the divide runs only for the vectors that need it.
    """
    name = f"kd_fdiv_v{t.count}"
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    fn = ir.Function(module, ir.FunctionType(t, [t, t]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    fb = ir.IRBuilder(fn.append_basic_block("entry"))
    fb.ret(fb.fdiv(fn.args[0], fn.args[1]))
    return fn


def _unary(fr: FuncRenderer, op: Operation, e: ScalarType, x: ir.Value) -> ir.Value:
    n, b = op.NAME, fr.b
    t = x.type
    if n == "arith.neg":
        return b.fneg(x) if e.is_float else b.sub(ir.Constant(t, 0), x)
    if e.is_integer:  # math.abs
        if not e.is_signed:
            return x
        return b.select(b.icmp_signed("<", x, ir.Constant(t, 0)), b.sub(ir.Constant(t, 0), x), x)
    if n in _INTRINSIC_UNARY:
        return b.call(intrinsic(fr.module, _INTRINSIC_UNARY[n], t, [t], [t]), [x])
    if n == "math.rsqrt":
        s = b.call(intrinsic(fr.module, "llvm.sqrt", t, [t], [t]), [x])
        return b.fdiv(ir.Constant(t, 1.0), s)
    lanes = _vt(op.result.type).lanes
    if e.name == "f32" and n[5:] in vmath.VECTOR_FUNCS:
        avx512 = fr.vector_bytes == 64  # the host target's +avx512f (runtime/cpu/target.py)
        return b.call(vmath.get(fr.module, n[5:], lanes, avx512), [x])
    out: ir.Value = ir.Constant(t, ir.Undefined)  # lane by lane through the scalar code
    for i in range(lanes):
        lane = b.extract_element(x, ir.Constant(I32, i))
        out = b.insert_element(out, sc.math_unary(fr, n[5:], e, lane), ir.Constant(I32, i))
    return out


def _cast(fr: FuncRenderer, op: Operation, x: ir.Value) -> ir.Value:
    b = fr.b
    s, d = op.operand.type.scalar, op.result.type.scalar
    assert isinstance(s, ScalarType) and isinstance(d, ScalarType) and not isinstance(d, PointerType)
    dt = reg(op.result.type)
    if s == d:
        return x
    if s.is_float and d.is_float:
        return b.fpext(x, dt) if d.bitwidth > s.bitwidth else b.fptrunc(x, dt)
    if d.is_float:
        return b.sitofp(x, dt) if s.is_signed else unsigned_to_float(b, x, dt)
    if s.is_float:
        kind = "llvm.fptosi.sat" if d.is_signed else "llvm.fptoui.sat"
        return b.call(intrinsic(fr.module, kind, dt, [x.type], [dt, x.type]), [x])
    if s.bitwidth == d.bitwidth:
        return x
    if s.bitwidth > d.bitwidth:
        return b.trunc(x, dt)
    return b.sext(x, dt) if s.is_signed else b.zext(x, dt)
