"""Emit a SPIR-V GLCompute shader from the single ``wi.func`` of a work-item module.

The emitter is a visitor over our IR; the encoding lives in
:mod:`kdsl.codegen.spirv.module` / :mod:`~kdsl.codegen.spirv.function`. One
work-item of a ``wi.func`` is one shader invocation; the work-group is
``LocalSize(num_threads, 1, 1)``; ``wi.program_id`` is ``WorkgroupId``.

Design (see ``docs/VULKAN.md``):

* Pointers are ``u64`` device addresses (``PhysicalStorageBuffer64``
  addressing): kdsl's free pointer arithmetic, pointer ``select`` and pointer
  arrays become integer arithmetic, and no descriptor sets are needed.
  Parameters come in a push-constant block (:mod:`kdsl.codegen.spirv.abi`).
* Masked loads read a scratch word instead of the real address (branch-free,
  lavapipe vectorises it); masked stores and atomics are structured ``if``\\ s.
* ``scf`` ops become structured selections and loops with ``OpPhi`` for
  carried values; scalar semantics are in :mod:`kdsl.codegen.spirv.scalar`,
  memory and atomics in :mod:`kdsl.codegen.spirv.memory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kdsl.codegen.spirv import abi, contract, scratch, unroll
from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.function import FunctionBuilder
from kdsl.codegen.spirv.module import Module
from kdsl.codegen.spirv.target import Target, Types
from kdsl.errors import CompilationError
from kdsl.ir.core import Block, Operation, Value
from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type

Handler = Callable[["Emitter", Operation], None]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn

    return deco


@dataclass(frozen=True)
class PrintSpec:
    """One ``wi.print``: its C format and the kdsl types of its arguments (record decoding)."""

    format: str
    arg_types: tuple[Type, ...]


@dataclass
class SpirvKernel:
    """The emitted shader and what the runtime needs to launch it."""

    binary: bytes
    name: str
    num_threads: int
    arg_types: tuple[Type, ...]
    arg_names: tuple[str, ...]
    params: abi.ParamLayout
    prints: tuple[PrintSpec, ...]
    asserts: tuple[tuple[str, str, int, int], ...]
    local_bytes: int
    target_env: str
    loops: tuple[tuple[str, int, int], ...] = ()  # (file, line, col) of each loop checked for a driver cut
    loop_limit: int = 0  # Target.max_loop_iterations the shader was emitted for (0: no checks)
    params_binding: str = "push"  # Target.params_binding: "push" constants or a "uniform" buffer
    # programs run by one work-group (see programs_per_group): the launch dispatches
    # ceil(grid x / programs_per_group) work-groups along x
    programs_per_group: int = 1
    # bytes of each work-group's slice of the scratch buffer (0: no scratch arrays; codegen/spirv/scratch.py)
    scratch_bytes: int = 0


def programs_per_group(func: Operation, target: Target) -> int:
    """How many programs of ``func`` one work-group runs (``Target.programs_per_group``, else 1).

    WHY: a one-work-item program (``num_threads == 1``: the CPU-style mapping, tiles in private
    arrays, no shared memory) dispatched as a one-invocation work-group keeps one of lavapipe's
    8 SIMD lanes busy. Programs that share nothing can run as the lanes of one work-group
    instead: invocation ``i`` of group ``g`` is program ``g * P + i`` (those beyond the grid
    skip the body). Only for programs with no barrier, no work-group memory and no local id,
    so that the invocations of a group are independent exactly as separate work-groups are.
    """
    if target.programs_per_group <= 1 or int(func.attributes["num_threads"]) != 1:
        return 1
    for op in func.walk():
        if op.NAME in ("wi.barrier", "wi.local_id"):
            return 1
        if op.NAME == "wi.alloc" and getattr(op.results[0].type, "space", "") in ("local", "scratch"):
            return 1
    return target.programs_per_group


class Emitter:
    """Walks one ``wi.func`` and builds its shader module (see module doc)."""

    def __init__(self, func: Operation, target: Target) -> None:
        self.func = func
        self.target = target
        self.m = Module(target.spirv_version)
        self.t = Types(self.m, target)
        self.vals: dict[int, int] = {}
        self.const_vals: dict[int, object] = {}
        self.arrays: dict[int, tuple[int, MemRefType, str]] = {}  # id(value) -> (var, type, storage class)
        self.scratch_bytes = int(func.attributes.get("scratch_bytes") or 0)
        self.scratch_types: dict[tuple[int, int], int] = {}  # (element id, length) -> its scratch struct
        self.builtins: dict[str, int] = {}
        self.prints: list[PrintSpec] = []
        self.loops: list[tuple[str, int, int]] = []
        self.uses_float_atomics = False
        self.pack = 1  # programs per work-group (programs_per_group), set by run()
        self.program_x = 0  # their program id along x when pack > 1
        self.dot_steps = contract.dot_steps(func)  # id(add) -> mul: fused dot steps (contract.py)
        self.fused_muls = {id(mul) for mul in self.dot_steps.values()}
        # loops marked Unroll (unroll.py): one-invocation programs only (no barriers: lavapipe
        # compiles a work-group with barriers as a coroutine, whose compile time grows with the code)
        one = int(func.attributes["num_threads"]) == 1
        self.unrolled = unroll.unrolled_loops(func, target.unroll_trips) if one else set()
        self.f = FunctionBuilder(self.m, self.m.t_void(), name=str(func.attributes["sym_name"]))

    # --- values ---------------------------------------------------------------------------
    def v(self, value: Value) -> int:
        return self.vals[id(value)]

    def bind(self, value: Value, sid: int) -> None:
        self.vals[id(value)] = sid

    def const_of(self, value: Value) -> object:
        return self.const_vals.get(id(value))

    def reg(self, t: Type) -> int:
        return self.t.reg(t)

    def error(self, op: Operation, msg: str) -> CompilationError:
        return CompilationError(f"vulkan: {msg}", op.loc)

    # --- module skeleton --------------------------------------------------------------------
    def run(self) -> SpirvKernel:
        m, f = self.m, self.f
        m.capability("Shader")
        m.capability("PhysicalStorageBufferAddresses")
        self.t.require("buffer_device_address", "kernel pointers")
        if self.target.spirv_version < (1, 5):
            m.extension("SPV_KHR_physical_storage_buffer")
        m.memory_model("PhysicalStorageBuffer64", "GLSL450")
        arg_types = tuple(a.type for a in self.func.regions[0].block.args)
        self.layout = abi.param_layout(list(arg_types), self.root_bytes, self.scratch_bytes > 0)
        self._load_params(arg_types)
        self.pack = programs_per_group(self.func, self.target)
        if self.scratch_bytes:
            self.scratch_group = scratch.group_base(self, self.scratch_bytes)
        if self.pack > 1:  # programs pack.x .. pack.x + pack - 1 share a work-group; the last may overhang
            local = self.builtin_component("LocalInvocationId", 0)
            group = self.builtin_component("WorkgroupId", 0)
            self.program_x = f.binary(
                "add", self.t.i32, f.binary("mul", self.t.i32, group, self.ci32(self.pack)), local
            )
            inside = f.cmp("lt", self.t.i32, self.program_x, self.grid[0])
            self.structured_if(inside, lambda: self.block(self.func.regions[0].block))
        else:
            self.block(self.func.regions[0].block)
        f.emit("OpReturn")
        f.finish()
        name = str(self.func.attributes["sym_name"])
        nt = int(self.func.attributes["num_threads"])
        m.entry_point("GLCompute", f.id, name, m.interface)
        m.execution_mode(f.id, "LocalSize", nt * self.pack, 1, 1)
        self._float_controls(f.id)
        return SpirvKernel(
            binary=m.to_bytes(),
            name=name,
            num_threads=nt,
            arg_types=arg_types,
            arg_names=tuple(str(n) for n in self.func.attributes["arg_names"]),
            params=self.layout,
            prints=tuple(self.prints),
            asserts=tuple(self.func.attributes.get("asserts") or ()),
            local_bytes=int(self.func.attributes.get("local_bytes") or 0),
            target_env=self.target.env,
            loops=tuple(self.loops),
            loop_limit=self.target.max_loop_iterations,
            params_binding=self.target.params_binding,
            programs_per_group=self.pack,
            scratch_bytes=self.scratch_bytes,
        )

    @property
    def uniform_params(self) -> bool:
        return self.target.params_binding == "uniform"

    @property
    def root_bytes(self) -> int:
        """Bytes the root parameter storage (push constants or the uniform buffer) holds."""
        return abi.UNIFORM_PARAM_BYTES if self.uniform_params else self.target.max_push_constants

    def _root_variable(self, struct_t: int, name: str) -> tuple[int, str]:
        """The push-constant (or uniform-buffer) variable holding ``struct_t``, and its storage class."""
        storage = "Uniform" if self.uniform_params else "PushConstant"
        var = self.m.global_variable(self.m.t_ptr(storage, struct_t), storage, name)
        if self.uniform_params:
            self.m.decorate(var, "DescriptorSet", 0)
            self.m.decorate(var, "Binding", 0)
        return var, storage

    def _float_controls(self, fid: int) -> None:
        """Forbid the driver's unsafe float folds (``x*0 -> 0``, ``x-x -> 0``) for every float width used."""
        for bits, ok in zip((16, 32, 64), self.target.preserve_float):
            if ok and ("float", bits) in self.m.types:
                if self.target.spirv_version < (1, 4):
                    self.m.extension("SPV_KHR_float_controls")
                self.m.capability("SignedZeroInfNanPreserve")
                self.m.execution_mode(fid, "SignedZeroInfNanPreserve", bits)

    def _slot_type(self, kind: str, size: int) -> int:
        if kind == "ptr":
            return self.t.u64
        if kind == "f":
            return self.t.float_t(size * 8)
        return self.t.int_t(size * 8, kind == "i")

    def _load_params(self, arg_types: tuple[Type, ...]) -> None:
        m, f, t = self.m, self.f, self.t
        members = [t.u64, t.i32, t.i32, t.i32, t.u32] + [self._slot_type(s.kind, s.size) for s in self.layout.slots]
        offsets = [0, 8, 12, 16, abi.HEADER_ZERO] + [s.offset for s in self.layout.slots]
        if self.layout.scratch_offset >= 0:  # the scratch buffer's address and slice count
            members += [t.u64, t.u32]
            offsets += [self.layout.scratch_offset, self.layout.scratch_offset + 8]
        st = m.t_struct(members, "params")
        m.decorate(st, "Block")
        for k, off in enumerate(offsets):
            m.member_decorate(st, k, "Offset", off)
        m.name(st, "Params")
        if self.layout.in_buffer:
            push = m.t_struct([t.u64], "push")
            m.decorate(push, "Block")
            m.member_decorate(push, 0, "Offset", 0)
            pvar, root = self._root_variable(push, "push")
            addr = f.op("OpLoad", t.u64, f.op("OpAccessChain", m.t_ptr(root, t.u64), pvar, self.ci32(0)))
            base = f.op("OpConvertUToPtr", m.t_ptr("PhysicalStorageBuffer", st), addr)
            storage, access = "PhysicalStorageBuffer", [g.MEMORY_ACCESS["Aligned"], 8]
        else:
            base, storage = self._root_variable(st, "params")
            access = []

        def member(k: int) -> int:
            ptr = f.op("OpAccessChain", m.t_ptr(storage, members[k]), base, self.ci32(k))
            acc = [g.MEMORY_ACCESS["Aligned"], self._slot_size(k)] if access else []
            return f.op("OpLoad", members[k], ptr, *acc)

        self.status = member(0)
        self.grid = [member(1), member(2), member(3)]
        self.opaque_zero = member(4)
        m.name(self.opaque_zero, "zero")
        args = self.func.regions[0].block.args
        for k, a in enumerate(args):
            raw = member(5 + k)
            self.bind(a, self._from_slot(raw, members[5 + k], a.type))
            m.name(self.v(a), str(self.func.attributes["arg_names"][k]))
        if self.layout.scratch_offset >= 0:
            self.scratch_base, self.scratch_slices = member(5 + len(args)), member(6 + len(args))

    def _slot_size(self, k: int) -> int:
        if k == 0:
            return 8
        if k < 5:
            return 4
        if k - 5 < len(self.layout.slots):
            return self.layout.slots[k - 5].size
        return 8 if k - 5 == len(self.layout.slots) else 4  # the scratch address, then its slice count

    def float_zero(self, rt: int) -> int:
        """+0.0 that the driver cannot see as a constant.

        llvmpipe's code generator (gallivm) short-cuts ``x * 0.0 -> 0``,
        ``x + 0.0 -> x`` and ``0.0 / x -> 0`` for constant operands, ignoring
        NaN, infinities and signed zeros even under ``SignedZeroInfNanPreserve``;
        a zero read from the parameter block keeps IEEE results.
        """
        bits = self.m.info[rt].bits
        if bits == 32:
            return self.f.bitcast(rt, self.opaque_zero)
        wide = self.t.int_t(bits, False)
        return self.f.bitcast(rt, self.f.op("OpUConvert", wide, self.opaque_zero))

    def _from_slot(self, raw: int, slot_t: int, t: Type) -> int:
        f = self.f
        if isinstance(t, PointerType):
            return raw
        assert isinstance(t, ScalarType)
        if t.name == "i1":
            return f.cmp("ne", slot_t, raw, f.const(slot_t, 0))
        rt = self.reg(t)
        return f.convert(rt, slot_t, raw) if rt != slot_t else raw

    # --- small helpers ------------------------------------------------------------------------
    def ci32(self, v: int) -> int:
        return self.m.const(self.t.i32, v)

    def cu32(self, v: int) -> int:
        return self.m.const(self.t.u32, v)

    def int_zero(self, rt: int) -> int:
        """Integer 0 of type ``rt`` that the driver cannot fold (read from the parameter block)."""
        info = self.m.info[rt]
        z = self.opaque_zero
        if info.bits != 32:
            z = self.f.op("OpUConvert", self.t.int_t(info.bits, False), z)
        return self.f.bitcast(rt, z) if info.signed else z

    def record_status(self, code: int) -> None:
        """Write ``code`` into the status word unless an earlier failure is already recorded there."""
        ptr = self.f.op("OpConvertUToPtr", self.m.t_ptr("PhysicalStorageBuffer", self.t.u32), self.status)
        dev, relaxed = self.cu32(g.SCOPE["Device"]), self.cu32(0)
        self.f.op("OpAtomicCompareExchange", self.t.u32, ptr, dev, relaxed, relaxed, self.cu32(code), self.cu32(0))

    def builtin(self, name: str) -> int:
        """Load component-vector builtin ``name`` (a uvec3 Input variable)."""
        if name not in self.builtins:
            v3 = self.m.t_vector(self.t.u32, 3)
            var = self.m.global_variable(self.m.t_ptr("Input", v3), "Input", name)
            self.m.decorate(var, "BuiltIn", g.BUILTIN[name])
            self.builtins[name] = var
        return self.builtins[name]

    def builtin_component(self, name: str, axis: int) -> int:
        v3 = self.m.t_vector(self.t.u32, 3)
        vec = self.f.op("OpLoad", v3, self.builtin(name))
        comp = self.f.op("OpCompositeExtract", self.t.u32, vec, axis)
        return self.f.bitcast(self.t.i32, comp)

    def structured_if(self, cond: int, then: Callable[[], None]) -> None:
        """``if (cond) { then() }`` as a structured selection without results."""
        f = self.f
        body, merge = f.new_label(), f.new_label()
        f.selection_merge(merge)
        f.branch_cond(cond, body, merge)
        f.label(body)
        then()
        f.branch(merge)
        f.label(merge)

    # --- walking ----------------------------------------------------------------------------
    def block(self, block: Block) -> None:
        for op in block.ops:
            if op.IS_TERMINATOR or id(op) in self.fused_muls:
                continue
            mul = self.dot_steps.get(id(op))
            if mul is not None:
                contract.emit_step(self, op, mul)
                continue
            handler = HANDLERS.get(op.NAME)
            if handler is None:
                raise self.error(op, f"cannot emit op '{op.NAME}'")
            handler(self, op)


def emit_spirv(module: Operation, target: Target | None = None) -> SpirvKernel:
    """SPIR-V for the single ``wi.func`` of a work-item ``module``."""
    from kdsl.codegen.spirv import control, mathops, memory, scalar  # noqa: F401  (register handlers)

    funcs = [op for op in module.regions[0].block.ops if op.NAME == "wi.func"]
    if len(funcs) != 1:
        raise CompilationError(f"vulkan: expected one wi.func, got {len(funcs)}")
    return Emitter(funcs[0], target or Target()).run()
