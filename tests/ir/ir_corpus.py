"""Verified IR modules, built with the Builder, that together use every registered op.

Each builder returns a module; ``CORPUS`` maps a name to its builder. The
round-trip tests print, parse and re-print every module, and a coverage test
checks that the ops used here are exactly ``registry.OPS``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kdsl.ir import types as T
from kdsl.ir.core import AttrValue, Block, Builder, Location, ModuleOp, Operation, Region, SymbolRef, Value
from kdsl.ir.registry import OPS
from kdsl.ir.types import PointerType, TileType, Type
from kdsl.ir.verifier import verify

F32, I32, I1 = T.f32, T.i32, T.i1


def tt(*shape_and_elem: object) -> TileType:
    *dims, elem = shape_and_elem
    assert isinstance(elem, (T.ScalarType, PointerType))
    return TileType(tuple(int(str(d)) for d in dims), elem)


class Kit:
    """A tiny helper around Builder so corpus code reads like IR."""

    def __init__(self, block: Block, loc: Location | None = None) -> None:
        self.b = Builder(block)
        if loc is not None:
            self.b.loc = loc

    def op(
        self,
        name: str,
        operands: Sequence[Value] = (),
        results: Sequence[Type] = (),
        attrs: dict[str, AttrValue] | None = None,
        regions: Sequence[Region] = (),
        hint: str | None = None,
    ) -> Operation:
        op = self.b.create(OPS[name], list(operands), list(results), attrs, list(regions))
        if hint is not None:
            op.results[0].name_hint = hint
        return op

    def v(self, name: str, operands: Sequence[Value], result: Type, attrs: dict[str, AttrValue] | None = None,
          hint: str | None = None) -> Value:
        return self.op(name, operands, [result], attrs, hint=hint).results[0]

    def const(self, value: bool | int | float, t: Type, hint: str | None = None) -> Value:
        return self.v("arith.constant", [], t, {"value": value}, hint)

    def inner(self, block: Block) -> Kit:
        k = Kit(block)
        k.b.loc = self.b.loc
        return k


def func(
    module: ModuleOp,
    name: str,
    args: Sequence[tuple[str | None, Type]],
    results: Sequence[Type] = (),
    extra: dict[str, AttrValue] | None = None,
    arg_names: bool = True,
) -> tuple[Kit, list[Value]]:
    block = Block()
    vals: list[Value] = [block.add_arg(t, n) for n, t in args]
    attrs: dict[str, AttrValue] = {"sym_name": name, "result_types": tuple(results)}
    if arg_names:
        attrs["arg_names"] = tuple(n or f"a{i}" for i, (n, _) in enumerate(args))
    attrs.update(extra or {})
    Builder(module.body).create(OPS["tile.func"], attributes=attrs, regions=[Region([block])])
    return Kit(block), vals


def region(arg_types: Sequence[Type], hints: Sequence[str | None] = ()) -> tuple[Region, Block]:
    block = Block()
    for i, t in enumerate(arg_types):
        block.add_arg(t, hints[i] if i < len(hints) else None)
    return Region([block]), block


# --- the modules -------------------------------------------------------------------


def arith_module() -> ModuleOp:
    m = ModuleOp.empty()
    k, (x, y, n) = func(m, "arith_ops", [("x", tt(128, F32)), ("y", tt(128, F32)), ("n", I32)], [tt(128, F32)])
    for name in ("arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem"):
        x = k.v(name, [x, y], tt(128, F32), hint="acc")
    x = k.v("arith.max", [x, y], tt(128, F32), {"propagate_nan": True})
    x = k.v("arith.min", [x, y], tt(128, F32))
    x = k.v("arith.neg", [x], tt(128, F32))
    i = n
    for name in ("arith.and", "arith.or", "arith.xor", "arith.shl", "arith.shr", "arith.add", "arith.rem", "arith.div"):
        i = k.v(name, [i, n], I32)
    i = k.v("arith.max", [i, k.const(-7, I32)], I32)
    u = k.v("arith.cast", [i], T.u64, hint="as_unsigned")
    u = k.v("arith.shr", [u, k.const(18446744073709551615, T.u64, "umax")], T.u64)
    k.v("arith.cast", [u], I1)
    b = k.const(True, I1, "flag")
    b2 = k.v("arith.xor", [b, k.const(False, I1)], I1)
    c = k.v("arith.cmp", [x, y], tt(128, I1), {"predicate": "lt"}, hint="mask")
    for pred in ("eq", "ne", "le", "gt", "ge"):
        k.v("arith.cmp", [i, n], I1, {"predicate": pred})
    del b2
    x = k.v("arith.select", [c, x, y], tt(128, F32))
    bits = k.v("arith.bitcast", [x], tt(128, T.i32))
    x = k.v("arith.bitcast", [bits], tt(128, F32))
    h = k.v("arith.cast", [x], tt(128, T.f16))
    x = k.v("arith.cast", [h], tt(128, F32))
    for val, t in ((float("nan"), F32), (float("inf"), T.f64), (float("-inf"), T.f16), (-0.0, F32), (1e-300, T.f64),
                   (0.1, F32), (3, T.bf16), (-(2**63), T.i64), (255, T.u8)):
        k.const(val, t)
    k.op("tile.return", [x])
    verify(m)
    return m


def math_module() -> ModuleOp:
    m = ModuleOp.empty()
    t = tt(16, 16, F32)
    k, (x, y, z) = func(m, "math_ops", [("x", t), ("y", t), ("z", T.f64)], [t, T.f64])
    for name in ("math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.sqrt_rn", "math.rsqrt",
                 "math.sin", "math.cos", "math.tanh", "math.erf", "math.floor", "math.ceil", "math.abs"):
        x = k.v(name, [x], t, hint=name.split(".")[1])
    x = k.v("math.pow", [x, y], t)
    x = k.v("math.div_rn", [x, y], t)
    x = k.v("math.fma", [x, y, x], t)
    z = k.v("math.abs", [z], T.f64)
    u = k.const(3, T.u32)
    k.v("math.umulhi", [u, u], T.u32)
    i = k.v("math.abs", [k.const(-5, T.i64)], T.i64)
    k.v("math.umulhi", [i, i], T.i64)
    k.op("tile.return", [x, z])
    verify(m)
    return m


def scf_module() -> ModuleOp:
    m = ModuleOp.empty()
    k, (n, x) = func(m, "loops", [("n", I32), ("x", F32)], [F32, I32])
    zero, one = k.const(0, I32, "zero"), k.const(1, I32, "one")
    # for with one iter arg; the body uses an outer value
    body_r, body = region([I32, F32], ["i", "acc"])
    for_op = k.op("scf.for", [zero, n, one, x], [F32], regions=[body_r], hint="total")
    kb = k.inner(body)
    fi = kb.v("arith.cast", [body.args[0]], F32)
    s = kb.v("arith.add", [body.args[1], fi], F32, hint="acc")
    kb.op("scf.yield", [s])
    # for without iter args, and an if without results nested in it
    body_r2, body2 = region([I32], ["i"])
    k.op("scf.for", [zero, n, one], [], regions=[body_r2])
    kb2 = k.inner(body2)
    cnd = kb2.v("arith.cmp", [body2.args[0], one], I1, {"predicate": "eq"})
    then_r, then_b = region([])
    else_r, else_b = region([])
    kb2.op("scf.if", [cnd], [], regions=[then_r, else_r])
    k.inner(then_b).op("tile.print", [body2.args[0]], [], {"prefix": "i = "})
    k.inner(else_b).op("scf.yield")
    k.inner(then_b).op("scf.yield")
    kb2.op("scf.yield")
    # if with two results
    c = k.v("arith.cmp", [n, zero], I1, {"predicate": "gt"}, hint="positive")
    then_r, then_b = region([])
    else_r, else_b = region([])
    if_op = k.op("scf.if", [c], [F32, I32], regions=[then_r, else_r])
    if_op.results[0].name_hint = "picked"
    k.inner(then_b).op("scf.yield", [for_op.results[0], n])
    k.inner(else_b).op("scf.yield", [x, zero])
    # while: count down
    before_r, before = region([I32, F32], ["j", "v"])
    after_r, after = region([I32, F32], ["j", "v"])
    wh = k.op("scf.while", [n, if_op.results[0]], [I32, F32], regions=[before_r, after_r])
    kbf = k.inner(before)
    go = kbf.v("arith.cmp", [before.args[0], zero], I1, {"predicate": "gt"}, hint="go")
    kbf.op("scf.condition", [go, before.args[0], before.args[1]])
    kaf = k.inner(after)
    j = kaf.v("arith.sub", [after.args[0], one], I32, hint="j")
    kaf.op("scf.yield", [j, after.args[1]])
    k.op("tile.return", [wh.results[1], if_op.results[1]])
    # while whose types all agree (short signature form) and a while without values
    k2, (a,) = func(m, "spin", [("a", I32)], [I32])
    before_r, before = region([I32])
    after_r, after = region([I32])
    w2 = k2.op("scf.while", [a], [I32], regions=[before_r, after_r])
    kb = k2.inner(before)
    t = kb.v("arith.cmp", [before.args[0], before.args[0]], I1, {"predicate": "ne"})
    kb.op("scf.condition", [t, before.args[0]])
    k2.inner(after).op("scf.yield", [after.args[0]])
    before_r, before = region([])
    after_r, after = region([])
    k2.op("scf.while", [], [], regions=[before_r, after_r])
    kb = k2.inner(before)
    kb.op("scf.condition", [kb.const(False, I1)])
    k2.inner(after).op("scf.yield")
    k2.op("tile.return", [w2.results[0]])
    verify(m)
    return m


def tile_module() -> ModuleOp:
    m = ModuleOp.empty()
    m.attributes["sym_name"] = "tiles"
    # a helper function called by the kernel, with folded arg names
    kh, (ha, hb) = func(m, "combine", [("a", F32), ("b", F32)], [F32])
    kh.op("tile.return", [kh.v("arith.add", [ha, hb], F32)])
    # a function without arg_names: its arguments print as numbers
    kn, (na,) = func(m, "noname", [("ignored_hint", I32)], [I32], arg_names=False)
    kn.op("tile.return", [na])
    # a zero-argument, zero-result function
    kz, _ = func(m, "nothing", [])
    kz.op("tile.return")

    P = PointerType(F32)
    k, (xp, yp, outp, ip, n) = func(
        m,
        "kernel",
        [("x_ptr", P), ("y_ptr", P), ("out", P), ("i_ptr", PointerType(T.i32)), ("n_elements", I32)],
        extra={"kernel": True, "divisibility": (16, 16, 16, 16, 1)},
    )
    k.b.loc = Location("kernel.py", 12, 5)
    pid = k.v("tile.program_id", [], I32, {"axis": 0}, hint="pid")
    k.v("tile.program_id", [], I32, {"axis": 2}, hint="pid")
    npg = k.v("tile.num_programs", [], I32, {"axis": 1})
    offs = arange = k.v("tile.arange", [], tt(128, I32), {"start": 0, "end": 128}, hint="offsets")
    base = k.v("arith.mul", [pid, npg], I32)
    offs = k.v("arith.add", [k.v("tile.splat", [base], tt(128, I32)), offs], tt(128, I32), hint="offsets")
    offs = k.v("tile.hint", [offs], tt(128, I32), {"multiple_of": (16,), "max_contiguous": (128,)})
    mask = k.v("arith.cmp", [offs, k.v("tile.splat", [n], tt(128, I32))], tt(128, I1), {"predicate": "lt"}, hint="mask")
    xs = k.v("tile.addptr", [k.v("tile.splat", [xp], tt(128, P)), offs], tt(128, P))
    ys = k.v("tile.addptr", [k.v("tile.splat", [yp], tt(128, P)), offs], tt(128, P))
    os_ = k.v("tile.addptr", [k.v("tile.splat", [outp], tt(128, P)), offs], tt(128, P))
    other = k.const(float("-inf"), tt(128, F32))
    x = k.v("tile.load", [xs], tt(128, F32), {"volatile": True, "cache": ".ca"}, hint="x")
    y = k.v("tile.load", [ys, mask], tt(128, F32), hint="y")
    z = k.v("tile.load", [ys, mask, other], tt(128, F32), {"eviction": "evict_last"})
    s = k.v("arith.add", [x, y], tt(128, F32))
    s = k.v("arith.add", [s, z], tt(128, F32))
    k.op("tile.store", [os_, s, mask], [], {"cache": ".wb"})
    k.op("tile.store", [os_, s])
    # shapes
    col = k.v("tile.expand_dims", [s], tt(128, 1, F32), {"axis": 1})
    wide = k.v("tile.broadcast", [col], tt(128, 4, F32))
    tr = k.v("tile.permute", [wide], tt(4, 128, F32), {"order": (1, 0)})
    flat = k.v("tile.reshape", [tr], tt(512, F32))
    pair = k.v("tile.join", [flat, flat], tt(512, 2, F32))
    split = k.op("tile.split", [pair], [tt(512, F32), tt(512, F32)])
    split.results[0].name_hint = "lo"
    split.results[1].name_hint = "hi"
    k.v("tile.gather", [split.results[0], arange], tt(128, F32), {"axis": 0}, hint="picked")
    one = k.v("tile.reshape", [k.v("tile.reshape", [k.const(1.0, F32)], tt(1, F32))], F32)
    k.v("tile.expand_dims", [one], tt(1, F32), {"axis": 0})
    # dot
    a = k.v("tile.reshape", [split.results[0]], tt(16, 32, F32))
    bmat = k.v("tile.reshape", [split.results[1]], tt(32, 16, F32))
    acc = k.const(0.0, tt(16, 16, F32), "acc")
    acc = k.v("tile.dot", [a, bmat, acc], tt(16, 16, F32), {"input_precision": "ieee"}, hint="acc")
    a8 = k.const(1, tt(2, 4, 8, T.i8))
    b8 = k.const(2, tt(2, 8, 4, T.i8))
    k.v("tile.dot", [a8, b8, k.const(0, tt(2, 4, 4, I32))], tt(2, 4, 4, I32))
    # reduce with a region and two inputs (argmax-like), and a scan
    idx = k.v("tile.arange", [], tt(16, I32), {"start": 0, "end": 16})
    idx2 = k.v("tile.broadcast", [k.v("tile.expand_dims", [idx], tt(1, 16, I32), {"axis": 0})], tt(16, 16, I32))
    red_r, red_b = region([F32, I32, F32, I32], ["v0", "i0", "v1", "i1"])
    red = k.op("tile.reduce", [acc, idx2], [tt(16, F32), tt(16, I32)], {"axis": 1}, regions=[red_r])
    kr = k.inner(red_b)
    gt = kr.v("arith.cmp", [red_b.args[2], red_b.args[0]], I1, {"predicate": "gt"})
    kr.op("scf.yield", [kr.v("arith.select", [gt, red_b.args[2], red_b.args[0]], F32),
                        kr.v("arith.select", [gt, red_b.args[3], red_b.args[1]], I32)])
    tot_r, tot_b = region([F32, F32])
    total = k.op("tile.reduce", [red.results[0]], [F32], {"axis": 0}, regions=[tot_r])
    kt = k.inner(tot_b)
    kt.op("scf.yield", [kt.op("tile.call", [tot_b.args[0], tot_b.args[1]], [F32], {"callee": SymbolRef("combine")}).results[0]])
    scan_r, scan_b = region([I32, I32])
    k.op("tile.scan", [idx], [tt(16, I32)], {"axis": 0, "reverse": True}, regions=[scan_r])
    ks = k.inner(scan_b)
    ks.op("scf.yield", [ks.v("arith.add", [scan_b.args[0], scan_b.args[1]], I32)])
    # atomics
    ips = k.v("tile.addptr", [k.v("tile.splat", [ip], tt(16, PointerType(I32))), idx], tt(16, PointerType(I32)))
    small_mask = k.v("arith.cmp", [idx, k.const(8, tt(16, I32))], tt(16, I1), {"predicate": "lt"})
    k.v("tile.atomic_rmw", [ips, idx], tt(16, I32), {"kind": "add"})
    k.v("tile.atomic_rmw", [ips, idx, small_mask], tt(16, I32), {"kind": "xor", "sem": "relaxed", "scope": "sys"})
    k.v("tile.atomic_rmw", [xp, total.results[0]], F32, {"kind": "max", "sem": "acquire", "scope": "cta"})
    k.v("tile.atomic_cas", [ips, idx, idx], tt(16, I32), {"sem": "acq_rel", "scope": "gpu"})
    k.v("tile.atomic_cas", [ip, n, pid], I32)
    # calls, debug ops
    k.v("tile.call", [total.results[0], total.results[0]], F32, {"callee": SymbolRef("combine")})
    k.op("tile.call", [], [], {"callee": SymbolRef("nothing")})
    k.op("tile.print", [pid, red.results[1]], [], {"prefix": 'pid "quoted"\n\ttab \\ back', "hex": True})
    k.op("tile.print", [], [], {"prefix": "λ ünïcode \x00\x7f\u2028"})
    k.op("tile.assert", [mask], [], {"message": "n must be positive: {n}"})
    k.op("tile.return")
    verify(m)
    return m


def wi_module() -> ModuleOp:
    m = ModuleOp.empty()
    block = Block()
    xp, n = block.add_arg(PointerType(F32), "x_ptr"), block.add_arg(I32, "n")
    attrs: dict[str, AttrValue] = {
        "sym_name": "wi_kernel",
        "arg_names": ("x_ptr", "n"),
        "num_threads": 64,
        "divisibility": (16, 1),
        "asserts": (("x must be positive", "k.py", 7, 5),),
        "local_bytes": 256,
    }
    Builder(m.body).create(OPS["wi.func"], attributes=attrs, regions=[Region([block])])
    k = Kit(block)
    pid = k.v("wi.program_id", [], I32, {"axis": 0}, hint="pid")
    k.v("wi.num_programs", [], I32, {"axis": 1})
    lid = k.v("wi.local_id", [], I32, hint="lid")
    priv = k.v("wi.alloc", [], T.MemRefType(4, F32), hint="acc")
    shared = k.v("wi.alloc", [], T.MemRefType(64, F32, "local"))
    p = k.v("wi.addptr", [xp, k.v("arith.add", [pid, lid], I32)], PointerType(F32))
    inb = k.v("arith.cmp", [lid, n], I1, {"predicate": "lt"})
    x = k.v("wi.gload", [p], F32)
    x = k.v("wi.gload", [p, inb], F32)
    x = k.v("wi.gload", [p, inb, x], F32, hint="x")
    k.op("wi.store", [x, priv, lid])
    k.op("wi.store", [k.v("wi.load", [priv, lid], F32), shared, lid])
    k.op("wi.barrier")
    # c (2x4) += a (2x2) @ b (2x4), one 2x4 block of 4-wide vectors
    ma = k.v("wi.alloc", [], T.MemRefType(4, F32), hint="ma")
    mb = k.v("wi.alloc", [], T.MemRefType(8, F32), hint="mb")
    mc = k.v("wi.alloc", [], T.MemRefType(8, F32), hint="mc")
    k.op("wi.mma", [ma, mb, mc], [], {"m": 2, "n": 4, "k": 2, "block_m": 2, "block_n": 4, "vector_width": 4})
    # md = mc + a @ b: the accumulators start from mc, md is only written
    md = k.v("wi.alloc", [], T.MemRefType(8, F32), hint="md")
    k.op("wi.mma", [ma, mb, md, mc], [], {"m": 2, "n": 4, "k": 2, "block_m": 2, "block_n": 4, "vector_width": 4})
    # 2x4 block rows 4 floats apart (3 valid rows, 2 valid columns), and back
    four, three, two = k.const(4, I32), k.const(3, I32), k.const(2, I32)
    k.op("wi.block_load", [mb, p, x, four, three, two], [], {"shape": (2, 4)})
    k.op("wi.block_store", [mb, p, four, three, two], [], {"shape": (2, 4)})
    k.op("wi.block_load", [ma, p, x, n], [], {"shape": (4,)})
    k.op("wi.block_store", [ma, p, n], [], {"shape": (4,)})
    k.op("wi.block_store", [ma, p, n], [], {"shape": (4,), "nontemporal": True})
    y = k.v("wi.load", [shared, k.const(0, I32)], F32)
    k.op("wi.gstore", [p, y, inb])
    k.op("wi.gstore", [p, y])
    k.op("wi.gstore", [p, y, inb], [], {"nontemporal": True})
    k.op("wi.prefetch", [p])
    k.v("wi.align_gap", [p], I32, {"bytes": 64})
    k.v("wi.atomic_rmw", [p, y], F32, {"kind": "add"})
    k.v("wi.atomic_rmw", [p, y, inb], F32, {"kind": "max", "sem": "relaxed", "scope": "gpu"})
    k.v("wi.atomic_cas", [p, y, x], F32, {"sem": "acquire"})
    k.op("wi.print", [pid, x], [], {"format": "pid %d x %f\n"})
    k.op("wi.print", [], [], {"format": ""})
    k.op("wi.assert", [k.v("arith.cmp", [x, y], I1, {"predicate": "gt"})], [], {"id": 1})
    k.op("wi.return")
    verify(m)
    return m


def wi_vector_module() -> ModuleOp:
    """The vector ops of the wi dialect (what ``kdsl.lowering.vectorize`` emits)."""
    m = ModuleOp.empty()
    block = Block()
    xp, n = block.add_arg(PointerType(F32), "x_ptr"), block.add_arg(I32, "n")
    attrs: dict[str, AttrValue] = {"sym_name": "wi_vector", "arg_names": ("x_ptr", "n"), "num_threads": 1}
    Builder(m.body).create(OPS["wi.func"], attributes=attrs, regions=[Region([block])])
    k = Kit(block)
    V16, M16 = T.VectorType(16, F32), T.VectorType(16, I1)
    priv = k.v("wi.alloc", [], T.MemRefType(64, F32), hint="row")
    zero = k.const(0, I32)
    p = k.v("wi.addptr", [xp, n], PointerType(F32))
    x = k.v("wi.gvload", [p], V16, hint="x")
    k.op("wi.vstore", [x, priv, zero])
    y = k.v("wi.vload", [priv, zero], V16)
    s = k.v("wi.broadcast", [k.const(2.0, F32)], V16, hint="s")
    lanes = k.v("wi.lane_ids", [], T.VectorType(16, I32), hint="lanes")
    k.v("wi.gvload", [p, k.v("arith.cmp", [n, zero], I1, {"predicate": "gt"}), k.const(1.0, F32)], V16)
    k.v("wi.vload", [priv, zero], V16, {"stride": 4})
    k.v("arith.add", [lanes, lanes], T.VectorType(16, I32))
    z = k.v("arith.mul", [y, s], V16)
    big = k.v("arith.cmp", [z, x], M16, {"predicate": "gt"})
    k.op("wi.gvstore", [p, k.v("arith.select", [big, z, x], V16)])
    k.op("wi.gvstore", [p, x], [], {"nontemporal": True})
    count = k.v("arith.sub", [n, zero], I32, hint="count")  # lane counts: the lane-count iteration
    k.v("wi.gvload", [p, count], V16)
    k.v("wi.gvload", [p, count, k.const(1.0, F32)], V16)
    k.op("wi.gvstore", [p, x, count])
    k.op("wi.gvstore", [p, x, count], [], {"nontemporal": True})
    k.op("wi.vstore", [x, priv, zero, count])
    k.v("wi.vload", [priv, zero, count], V16)
    k.v("wi.vload", [priv, zero, count], V16, {"stride": 4})
    k.v("wi.vreduce", [z], F32, {"kind": "add"})
    k.v("wi.vreduce", [z], F32, {"kind": "max", "propagate_nan": True})
    k.op("wi.return")
    verify(m)
    return m


CORPUS: dict[str, Callable[[], ModuleOp]] = {
    "arith": arith_module,
    "math": math_module,
    "scf": scf_module,
    "tile": tile_module,
    "wi": wi_module,
    "wi_vector": wi_vector_module,
}


def ops_used(module: Operation) -> set[str]:
    return {op.NAME for op in module.walk()}
