"""Print one ``wi.func`` as an OpenCL C 1.2 kernel.

A thin printer: every op result becomes a ``const`` local (constants are
inlined as literals), ``scf`` ops become ``for``/``if``/``while`` with their
region-carried values as mutable locals, memory ops become array accesses,
``vload_half``/``vstore_half`` or OpenCL atomics. Nothing here decides how
work is mapped -- that happened in :mod:`kdsl.lowering`.

The kernel takes the tile function's parameters in order (pointers as
``__global T*``, ``const`` when never written; scalars by value) plus, when the
kernel has device asserts, a trailing ``__global int* kd_status``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kdsl.codegen.opencl import claim, exprs, streaming, vector
from kdsl.codegen.opencl import ctypes as ct
from kdsl.codegen.opencl.block import render_block
from kdsl.codegen.opencl.mma import render_mma
from kdsl.codegen.opencl.prelude import FIXED, HEADER, float_atomic, narrow_atomic
from kdsl.errors import CompilationError
from kdsl.ir.analysis import written_pointer_args
from kdsl.ir.core import Block, Operation, Value
from kdsl.ir.dialects import scf
from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type

_IDENT = re.compile(r"[^A-Za-z0-9_]")
_ATOMIC_FN = {"add": "add", "max": "max", "min": "min", "xchg": "xchg", "and": "and", "or": "or", "xor": "xor"}


@dataclass
class DeviceCaps:
    """What the target device offers (decides fp64 availability and extensions)."""

    fp64: bool = True
    int64_atomics: bool = True
    # CPU devices: programs are claimed at run time (see :mod:`kdsl.codegen.opencl.claim`)
    claim_programs: bool = False
    # a CPU device on a host with AVX-512 VNNI: int8 dots use ``vpdpbusd`` (:mod:`.mma_i8`)
    int8_dot: bool = False
    # a CPU device: the lowering's steps for CPU targets apply (kdsl/lowering/layout.py CPU_STEPS:
    # the next row's prefetch, aligned streaming-store loops)
    is_cpu: bool = False


@dataclass
class Rendered:
    source: str
    kernel_name: str
    has_status: bool
    uses: set[str] = field(default_factory=set)
    claims: bool = False  # the kernel takes the trailing program-claim arguments (claim.py)


_PREFETCH = """\
#ifdef __clang__
#define KD_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define KD_PREFETCH(p) prefetch((p), 1)
#endif
"""


class Renderer:
    def __init__(self, func: Operation, caps: DeviceCaps) -> None:
        self.func = func
        self.caps = caps
        self.names: dict[int, str] = {}
        self.helpers: dict[str, str] = {}
        self.lines: list[str] = []
        self.counter = 0
        self.features: set[str] = set()
        self.const_vals: dict[int, object] = {}
        self.claims = caps.claim_programs and caps.int64_atomics and claim.claimable(func)
        if self.claims:
            self.features.add("int64_atomics")  # the claim counters are 64-bit

    # --- naming -------------------------------------------------------------------
    def fresh(self, v: Value) -> str:
        self.counter += 1
        name = f"v{self.counter}"
        self.names[id(v)] = name
        return name

    def name(self, v: Value) -> str:
        return self.names[id(v)]

    def const_of(self, v: Value) -> object:
        return self.const_vals.get(id(v))

    def need(self, helper: str) -> str:
        self.helpers.setdefault(helper, FIXED[helper])
        return helper

    def helper(self, name: str, src: str) -> str:
        self.helpers.setdefault(name, src)
        return name

    def note_type(self, t: Type) -> None:
        e = t.scalar
        if isinstance(e, PointerType):
            e = e.pointee
        if isinstance(e, ScalarType) and e.name == "f64":
            if not self.caps.fp64:
                raise CompilationError("opencl: this kernel uses f64 but the device does not report cl_khr_fp64")
            self.features.add("fp64")

    # --- top level ------------------------------------------------------------------
    def render(self) -> Rendered:
        f = self.func
        kname = str(f.attributes["sym_name"])
        if not _ok_kernel_name(kname):  # e.g. Triton's usual ``def kernel(...)``: a keyword in OpenCL C
            kname = "kd_k_" + _IDENT.sub("_", kname)
        written = _written_args(f)
        params: list[str] = []
        names: list[str] = []
        for i, (arg, pname) in enumerate(zip(f.body.args, f.attributes["arg_names"])):
            self.note_type(arg.type)
            cname = "a_" + _IDENT.sub("_", str(pname)) + f"_{i}" if not _ok_ident(str(pname)) else str(pname)
            self.names[id(arg)] = cname
            t = arg.type
            if isinstance(t, PointerType):
                # (buffer, byte offset): one buffer may serve several overlapping array arguments
                const = "" if i in written else "const "
                params.append(f"{const}__global uchar* {cname}_base")
                params.append(f"ulong {cname}_off")
                names += [f"{cname}_base", f"{cname}_off"]
                restrict = " restrict" if f.attributes.get("noalias") else ""
                self.emit(1, f"{ct.reg(t)}{restrict} const {cname} = ({ct.reg(t)})({cname}_base + {cname}_off);")
            else:
                params.append(f"{ct.reg(t)} {cname}")
                names.append(cname)
        has_status = bool(f.attributes.get("asserts"))
        if has_status:
            params.append("__global int* kd_status")
            names.append("kd_status")
        self.block(f.body, 1)
        out = [HEADER]
        if "fp64" in self.features:
            out.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n")
        if "int64_atomics" in self.features:
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n")
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n")
        out.extend(self.helpers.values())
        if self.claims:
            out.extend(claim.kernel(kname, params, names, self.lines))
        else:
            sig = ",\n    ".join(params)
            out.append(f"__kernel void {kname}(\n    {sig})\n{{\n")
            out.extend(self.lines)
            out.append("}\n")
        return Rendered("".join(out), kname, has_status, claims=self.claims)

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text + "\n")

    def block(self, block: Block, depth: int) -> None:
        for op in block.ops:
            if op.IS_TERMINATOR:
                continue
            self.op(op, depth)

    # --- ops ---------------------------------------------------------------------------
    def op(self, op: Operation, depth: int) -> None:
        for r in op.results:
            self.note_type(r.type)
        if vector.handles(op):
            vector.render(self, op, depth)
            return
        handler = getattr(self, "op_" + op.NAME.replace(".", "_"), None)
        if handler is not None:
            handler(op, depth)
            return
        expr = self.expr(op)
        t = op.result.type
        decl = f"{ct.reg(t)} const" if isinstance(t, PointerType) else f"const {ct.reg(t)}"
        self.emit(depth, f"{decl} {self.fresh(op.result)} = {expr};")

    def expr(self, op: Operation) -> str:
        a = [self.name(v) for v in op.operands]
        n = op.NAME
        if n in ("arith.add", "arith.sub", "arith.mul", "arith.div", "arith.rem", "arith.and", "arith.or",
                 "arith.xor", "arith.shl", "arith.shr", "arith.max", "arith.min", "math.pow", "math.div_rn"):
            return exprs.binary(self, op, a[0], a[1])
        if n == "arith.neg":
            return exprs.neg(self, op, a[0])
        if n == "arith.cmp":
            return exprs.cmp(op, a[0], a[1])
        if n == "arith.select":
            return f"({a[0]} ? {a[1]} : {a[2]})"
        if n == "arith.cast":
            return exprs.cast(self, op, a[0])
        if n == "arith.bitcast":
            return exprs.bitcast(self, op, a[0])
        if n == "math.fma":
            return exprs.fma(self, op, *a)
        if n == "math.umulhi":
            return exprs.umulhi(op, a[0], a[1])
        if n.startswith("math."):
            return exprs.math_unary(self, op, a[0])
        return self.wi_expr(op, a)

    def wi_expr(self, op: Operation, a: list[str]) -> str:
        n = op.NAME
        if n == "wi.program_id":
            axis = op.attributes["axis"]
            return f"{claim.PID}{axis}" if self.claims else f"((int)get_group_id({axis}))"
        if n == "wi.num_programs":
            axis = op.attributes["axis"]
            return f"{claim.NPROGRAMS}{axis}" if self.claims else f"((int)get_num_groups({axis}))"
        if n == "wi.local_id":
            return "((int)get_local_id(0))"
        if n == "wi.addptr":
            return f"(({ct.reg(op.result.type)}){a[0]} + {a[1]})"
        if n == "wi.align_gap":
            pt = op.operands[0].type
            assert isinstance(pt, PointerType)
            size = pt.pointee.itemsize
            return f"(({ct.reg(op.result.type)})(((0 - (ulong)({a[0]})) & {op.attributes['bytes'] - 1}) / {size}))"
        if n == "wi.load":
            return f"{a[0]}[{a[1]}]"
        if n == "wi.gload":
            return self.gload(op, a)
        if n == "wi.atomic_rmw":
            return self.atomic_rmw(op, a)
        if n == "wi.atomic_cas":
            return self.atomic_cas(op, a)
        raise CompilationError(f"opencl: cannot render op '{n}'", op.loc)

    def op_arith_constant(self, op: Operation, depth: int) -> None:
        t = op.result.type
        assert isinstance(t, ScalarType)
        self.names[id(op.result)] = ct.literal(op.attributes["value"], t)
        self.const_vals[id(op.result)] = op.attributes["value"]

    def op_wi_alloc(self, op: Operation, depth: int) -> None:
        t = op.result.type
        assert isinstance(t, MemRefType)
        if t.space == "scratch":  # OpenCL lowers with the device's local limit and never spills
            raise CompilationError("opencl: scratch arrays (__local buffers moved to global memory, "
                                   "kdsl/lowering/scratch.py) are not supported by this renderer", op.loc)
        self.emit(depth, ct.array_decl(t, self.fresh(op.result)) + ";")

    def op_wi_store(self, op: Operation, depth: int) -> None:
        v, mem, idx = (self.name(x) for x in op.operands)
        self.emit(depth, f"{mem}[{idx}] = {v};")

    def op_wi_gstore(self, op: Operation, depth: int) -> None:
        a = [self.name(x) for x in op.operands]
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        e = pt.pointee
        if isinstance(e, PointerType):  # a pointer written to memory
            val = a[1]
        elif e.name == "f16":
            self.need("kd_half")
            val = f"kd_f2h({a[1]})"
        elif e.name == "bf16":
            self.need("kd_rbf")
            val = f"kd_bfbits({a[1]})"
        else:
            val = a[1]
        st = streaming.scalar(val, a[0]) if op.attributes.get("nontemporal", False) else f"*{a[0]} = {val};"
        self.emit(depth, f"if ({a[2]}) {st}" if len(a) > 2 else st)

    def op_wi_mma(self, op: Operation, depth: int) -> None:
        self.counter += 1
        render_mma(op, [self.name(v) for v in op.operands], self.counter, lambda line: self.emit(depth, line), self.helper,
                   vnni=self.caps.int8_dot)  # fmt: skip

    def op_wi_block_load(self, op: Operation, depth: int) -> None:
        self.counter += 1
        render_block(op, [self.name(v) for v in op.operands], self.counter, lambda line: self.emit(depth, line),
                     self.helper)

    op_wi_block_store = op_wi_block_load

    def op_wi_barrier(self, op: Operation, depth: int) -> None:
        self.emit(depth, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    def op_wi_prefetch(self, op: Operation, depth: int) -> None:
        """Clang's ``__builtin_prefetch`` (``prefetcht0`` on x86: PoCL's ``prefetch()`` builtin
        does nothing); OpenCL's own ``prefetch`` for other compilers."""
        self.helper("kd_prefetch", _PREFETCH)
        self.emit(depth, f"KD_PREFETCH({self.name(op.ptr)});")

    def op_wi_print(self, op: Operation, depth: int) -> None:
        fmt = op.attributes["format"].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        args = "".join(", " + self.name(v) for v in op.operands)
        self.emit(depth, f'printf("{fmt}"{args});')

    def op_wi_assert(self, op: Operation, depth: int) -> None:
        self.emit(depth, f"if (!{self.name(op.cond)}) atomic_cmpxchg(kd_status, 0, {op.attributes['id']});")

    def gload(self, op: Operation, a: list[str]) -> str:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        e = pt.pointee
        if isinstance(e, PointerType):  # a pointer read from memory
            ld = f"*{a[0]}"
        elif e.name == "f16":
            self.need("kd_half")
            ld = f"kd_h2f(*{a[0]})"
        elif e.name == "bf16":
            self.need("kd_rbf")
            ld = f"kd_bffrom(*{a[0]})"
        elif e.name == "i1":
            ld = f"((uchar)(*{a[0]} != 0))"
        else:
            ld = f"*{a[0]}"
        if len(a) == 1:
            return ld
        other = a[2] if len(a) > 2 else "0" if isinstance(e, PointerType) else ct.literal(0, e)
        return f"({a[1]} ? {ld} : {other})"

    def atomic_rmw(self, op: Operation, a: list[str]) -> str:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        e = pt.scalar_pointee
        kind = op.attributes["kind"]
        c = ct.reg(e)
        if e.is_float and e.name in ("f32", "f64") and kind != "xchg":
            if e.name == "f64":
                self.features.add("int64_atomics")
            fn = self.helper(*float_atomic(kind, c))
            call = f"{fn}((volatile __global {c}*){a[0]}, {a[1]})"
        elif e.bitwidth == 32 or (kind == "xchg" and e.name == "f32"):
            call = f"atomic_{_ATOMIC_FN[kind]}((volatile __global {c}*){a[0]}, {a[1]})"
        elif e.bitwidth == 64 and e.is_integer:
            self._int64_atomics(op)
            call = f"atom_{_ATOMIC_FN[kind]}((volatile __global {c}*){a[0]}, {a[1]})"
        elif e.bitwidth == 16 and e.is_float and kind == "add":
            self.need("kd_half" if e.name == "f16" else "kd_rbf")
            call = f"{self.helper(*narrow_atomic('add', e, c))}({a[0]}, {a[1]})"
        elif e.name == "f64" and kind == "xchg":
            self._int64_atomics(op)
            call = f"as_double(atom_xchg((volatile __global ulong*){a[0]}, as_ulong({a[1]})))"
        else:
            raise CompilationError(f"opencl: atomic {kind} on {e} is not supported", op.loc)
        return f"({a[2]} ? {call} : {a[1]})" if len(a) > 2 else call

    def atomic_cas(self, op: Operation, a: list[str]) -> str:
        pt = op.ptr.type
        assert isinstance(pt, PointerType)
        e = pt.scalar_pointee
        if e.bitwidth == 32:
            if e.is_float:
                return f"as_float(atomic_cmpxchg((volatile __global uint*){a[0]}, as_uint({a[1]}), as_uint({a[2]})))"
            return f"atomic_cmpxchg((volatile __global {ct.reg(e)}*){a[0]}, {a[1]}, {a[2]})"
        if e.bitwidth == 64:
            self._int64_atomics(op)
            if e.is_float:
                return f"as_double(atom_cmpxchg((volatile __global ulong*){a[0]}, as_ulong({a[1]}), as_ulong({a[2]})))"
            return f"atom_cmpxchg((volatile __global {ct.reg(e)}*){a[0]}, {a[1]}, {a[2]})"
        if e.bitwidth == 16:
            if e.is_float:
                self.need("kd_half" if e.name == "f16" else "kd_rbf")
            return f"{self.helper(*narrow_atomic('cas', e, ct.reg(e)))}({a[0]}, {a[1]}, {a[2]})"
        raise CompilationError(f"opencl: atomic_cas on {e} is not supported (16/32/64-bit only)", op.loc)

    def _int64_atomics(self, op: Operation) -> None:
        if not self.caps.int64_atomics:
            raise CompilationError("opencl: 64-bit atomics need cl_khr_int64_base_atomics", op.loc)
        self.features.add("int64_atomics")

    # --- control flow --------------------------------------------------------------------
    def _declare(self, depth: int, values: list[Value], inits: list[str] | None = None) -> list[str]:
        names = []
        for i, v in enumerate(values):
            name = self.fresh(v)
            init = f" = {inits[i]}" if inits is not None else ""
            self.emit(depth, f"{ct.reg(v.type)} {name}{init};")
            names.append(name)
        return names

    def _assign(self, depth: int, names: list[str], values: list[Value]) -> None:
        # Skip values assigned to themselves; each pair keeps its own value (for the temporary's type).
        pairs = [(n, self.name(v), v) for n, v in zip(names, values) if n != self.name(v)]
        if len(pairs) <= 1:
            for n, s, _ in pairs:
                self.emit(depth, f"{n} = {s};")
            return
        tmps = []
        for k, (_, s, v) in enumerate(pairs):
            tmp = f"t{self.counter}_{k}"
            self.emit(depth, f"const {ct.reg(v.type)} {tmp} = {s};")
            tmps.append(tmp)
        for (n, _, _), tmp in zip(pairs, tmps):
            self.emit(depth, f"{n} = {tmp};")

    def op_scf_for(self, op: Operation, depth: int) -> None:
        lo, hi, step = (self.name(v) for v in op.operands[:3])
        inits = [self.name(v) for v in op.operands[3:]]
        res = self._declare(depth, list(op.results), inits)
        body = op.regions[0].block
        for arg, name in zip(body.args[1:], res):
            self.names[id(arg)] = name
        iv = self.fresh(body.args[0])
        cst = self.const_of(op.operands[2])
        ivt = ct.reg(body.args[0].type)
        if isinstance(cst, int) and cst > 0:
            cond = f"{iv} < {hi}"
        elif isinstance(cst, int) and cst < 0:
            cond = f"{iv} > {hi}"
        else:
            cond = f"({step} > 0 ? {iv} < {hi} : {iv} > {hi})"
        self.emit(depth, f"for ({ivt} {iv} = {lo}; {cond}; {iv} += {step}) {{")
        self.block(body, depth + 1)
        term = body.terminator
        assert term is not None
        self._assign(depth + 1, res, list(term.operands))
        self.emit(depth, "}")

    def op_scf_if(self, op: Operation, depth: int) -> None:
        res = self._declare(depth, list(op.results))
        self.emit(depth, f"if ({self.name(op.cond)}) {{")
        for k, region in enumerate(op.regions):
            if k == 1:
                self.emit(depth, "} else {")
            blk = region.block
            self.block(blk, depth + 1)
            term = blk.terminator
            assert term is not None
            self._assign(depth + 1, res, list(term.operands))
        self.emit(depth, "}")

    def op_scf_while(self, op: Operation, depth: int) -> None:
        before, after = op.regions[0].block, op.regions[1].block
        cur = self._declare(depth, list(before.args), [self.name(v) for v in op.operands])
        res = self._declare(depth, list(op.results))
        self.emit(depth, "for (;;) {")
        self.block(before, depth + 1)
        cond = before.terminator
        assert cond is not None
        fwd = list(cond.operands)[1:]
        self.emit(depth + 1, f"if (!{self.name(cond.operands[0])}) {{")
        self._assign(depth + 2, res, fwd)
        self.emit(depth + 2, "break;")
        self.emit(depth + 1, "}")
        for arg, v in zip(after.args, fwd):
            self.names[id(arg)] = self.name(v)
        self.block(after, depth + 1)
        term = after.terminator
        assert term is not None
        self._assign(depth + 1, cur, list(term.operands))
        self.emit(depth, "}")


def _ok_ident(name: str) -> bool:
    return _ok_kernel_name(name) and not name.startswith(("v", "t"))


def _ok_kernel_name(name: str) -> bool:
    """Usable as is in the OpenCL C source: not a keyword, nor a builtin or helper it calls."""
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name)) and name not in _C_WORDS \
        and not name.startswith(("kd_", "get_", "as_", "convert_", "atom", "vload", "vstore", "__"))


_C_WORDS = {
    "int", "float", "double", "char", "short", "long", "half", "bool", "uint", "uchar", "ushort", "ulong",
    "if", "else", "for", "while", "do", "return", "break", "continue", "const", "restrict", "volatile",
    "kernel", "global", "local", "private", "constant", "switch", "case", "default", "struct", "union",
    "signed", "unsigned", "void", "sizeof", "static", "inline", "goto", "typedef", "enum", "extern",
    "register", "auto", "read_only", "write_only", "image2d_t", "sampler_t", "size_t", "max", "min",
    "exp", "log", "sqrt", "abs", "fabs", "fmax", "fmin", "pow", "printf", "barrier",
    "any", "all", "select", "fma", "fmod", "isinf", "isnan", "mul_hi", "sin", "cos", "tan", "exp2", "log2",
    "rsqrt", "floor", "ceil", "erf", "tanh", "trunc", "round", "rint", "clamp", "mix", "dot", "sign", "mad",
    "copysign", "ldexp", "hypot", "atan2", "main",
}


def _written_args(func: Operation) -> set[int]:
    """Indices of pointer parameters that may be written (stores, atomics): the shared
    provenance analysis (``kdsl.ir.analysis``), also used by every runtime."""
    return set(written_pointer_args(func))


def render_opencl(module: Operation, caps: DeviceCaps | None = None) -> Rendered:
    """OpenCL C source for the single ``wi.func`` of ``module``."""
    funcs = [op for op in module.regions[0].block.ops if op.NAME == "wi.func"]
    if len(funcs) != 1:
        raise CompilationError(f"opencl: expected one wi.func, got {len(funcs)}")
    return Renderer(funcs[0], caps or DeviceCaps()).render()


__all__ = ["DeviceCaps", "Rendered", "Type", "render_opencl", "scf"]
