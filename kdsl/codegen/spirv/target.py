"""What the target Vulkan device offers, and kdsl types as SPIR-V types.

:class:`Target` lists the device features the emitter depends on (the runtime
fills it from ``vkGetPhysicalDeviceFeatures2``; tests override fields to
simulate a smaller device). :class:`Types` maps kdsl scalar types to SPIR-V
type ids in three representations and adds the capability each one needs --
raising :class:`~kdsl.errors.CompilationError` naming the missing feature when
the device lacks it:

* *register*: ``i1`` is ``OpTypeBool``; ``bf16`` is ``f32`` (rounded back to
  bf16 after every op, as the interpreter computes); pointers are ``u64``
  device addresses (physical storage buffer pointers, see ``docs/VULKAN.md``);
* *global memory*: ``i1`` is one byte (``u8``), ``bf16`` its 16-bit pattern;
* *private/local arrays*: ``i1`` is a ``u32`` 0/1 (no 8-bit type needed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kdsl.codegen.spirv.module import Module
from kdsl.errors import CompilationError
from kdsl.ir.types import PointerType, ScalarType, Type


@dataclass
class Target:
    """Device features relevant to code generation (names follow Vulkan's feature structs)."""

    spirv_version: tuple[int, int] = (1, 5)
    shader_float64: bool = True
    shader_float16: bool = True
    shader_int8: bool = True
    shader_int16: bool = True
    shader_int64: bool = True
    storage_buffer_8bit: bool = True
    storage_buffer_16bit: bool = True
    buffer_device_address: bool = True
    int64_atomics: bool = True
    float32_atomic_add: bool = True
    float64_atomic_add: bool = False
    preserve_float: tuple[bool, bool, bool] = (True, True, True)  # SignedZeroInfNanPreserve for 16/32/64 bits
    max_push_constants: int = 128
    max_workgroup_size: int = 1024
    max_shared_memory: int = 32768
    # the driver's cap on loop passes per invocation (llvmpipe: 65535; 0 = no cap). When set, every
    # loop exit checks whether the driver cut the loop short and reports it (docs/VULKAN.md)
    max_loop_iterations: int = 0
    # where the parameter block comes from: "push" (push constants) or "uniform" (a dynamic uniform
    # buffer at set 0, binding 0: lavapipe leaks host memory on every dispatch that pushes constants)
    params_binding: str = "push"
    # programs of a one-work-item kernel (num_threads == 1) packed into one work-group as its
    # invocations (1: one work-group per program). llvmpipe: its SIMD width, 8 (docs/VULKAN.md)
    programs_per_group: int = 1
    # scf.for loops with a constant trip count up to this get OpLoopMerge's Unroll control
    # (kdsl/codegen/spirv/unroll.py; 0: none). llvmpipe: 256
    unroll_trips: int = 0
    extra: dict[str, bool] = field(default_factory=dict)

    @property
    def env(self) -> str:
        """``spirv-val --target-env`` value matching ``spirv_version``."""
        return {(1, 3): "vulkan1.1", (1, 4): "vulkan1.1spv1.4", (1, 5): "vulkan1.2", (1, 6): "vulkan1.3"}[
            self.spirv_version
        ]


_FEATURE_NAMES = {
    "shader_float64": "shaderFloat64 (64-bit floats)",
    "shader_float16": "shaderFloat16 (16-bit floats)",
    "shader_int8": "shaderInt8 (8-bit integers)",
    "shader_int16": "shaderInt16 (16-bit integers)",
    "shader_int64": "shaderInt64 (64-bit integers, needed for pointers)",
    "storage_buffer_8bit": "storageBuffer8BitAccess (8-bit global memory)",
    "storage_buffer_16bit": "storageBuffer16BitAccess (16-bit global memory)",
    "buffer_device_address": "bufferDeviceAddress (pointers)",
    "int64_atomics": "shaderBufferInt64Atomics (64-bit atomics)",
}


class Types:
    """kdsl type -> SPIR-V type id, adding capabilities and checking device features."""

    def __init__(self, module: Module, target: Target) -> None:
        self.m = module
        self.target = target

    def require(self, feature: str, what: str) -> None:
        if not getattr(self.target, feature):
            raise CompilationError(
                f"vulkan: {what} needs the device feature {_FEATURE_NAMES.get(feature, feature)}, "
                "which this device does not report"
            )

    def int_t(self, bits: int, signed: bool) -> int:
        if bits == 8:
            self.require("shader_int8", "an 8-bit integer")
            self.m.capability("Int8")
        elif bits == 16:
            self.require("shader_int16", "a 16-bit integer")
            self.m.capability("Int16")
        elif bits == 64:
            self.require("shader_int64", "a 64-bit integer")
            self.m.capability("Int64")
        return self.m.t_int(bits, signed)

    def float_t(self, bits: int) -> int:
        if bits == 16:
            self.require("shader_float16", "an f16 value")
            self.m.capability("Float16")
        elif bits == 64:
            self.require("shader_float64", "an f64 value")
            self.m.capability("Float64")
        return self.m.t_float(bits)

    @property
    def bool(self) -> int:
        return self.m.t_bool()

    @property
    def i32(self) -> int:
        return self.m.t_int(32, True)

    @property
    def u32(self) -> int:
        return self.m.t_int(32, False)

    @property
    def u64(self) -> int:
        return self.int_t(64, False)

    @property
    def f32(self) -> int:
        return self.m.t_float(32)

    def reg(self, t: Type) -> int:
        """Register type of a scalar or pointer value."""
        if isinstance(t, PointerType):
            return self.u64
        assert isinstance(t, ScalarType), t
        if t.name == "i1":
            return self.bool
        if t.name == "bf16":
            return self.f32
        if t.is_float:
            return self.float_t(t.bitwidth)
        return self.int_t(t.bitwidth, t.is_signed)

    def mem(self, t: ScalarType | PointerType) -> int:
        """Type of an element in global memory (checks the storage-access features)."""
        if isinstance(t, PointerType):
            return self.u64
        if t.itemsize == 1:
            self.require("storage_buffer_8bit", f"{t} in global memory")
            self.m.capability("StorageBuffer8BitAccess")
            return self.int_t(8, t.is_signed and t.name != "i1")
        if t.itemsize == 2:
            self.require("storage_buffer_16bit", f"{t} in global memory")
            self.m.capability("StorageBuffer16BitAccess")
            if t.name == "bf16":
                return self.int_t(16, False)
            return self.float_t(16) if t.is_float else self.int_t(16, t.is_signed)
        return self.reg(t)

    def array_elem(self, t: ScalarType | PointerType) -> int:
        """Type of an element of a private/local array."""
        if isinstance(t, ScalarType) and t.name == "i1":
            return self.u32
        return self.reg(t)


def array_itemsize(t: ScalarType | PointerType) -> int:
    """Bytes of one element of a private/local array (:meth:`Types.array_elem`): ``i1`` is a
    u32, bf16 an f32, pointers u64; everything else its own width."""
    if isinstance(t, PointerType):
        return 8
    if t.name in ("i1", "bf16"):
        return 4
    return t.itemsize


def mem_size(t: ScalarType | PointerType) -> int:
    """Bytes of one element in global memory."""
    return 8 if isinstance(t, PointerType) else max(1, t.itemsize)
