"""The launch ABI shared by the SPIR-V emitter and the Vulkan runtime.

Parameters reach the shader in one ``Block`` struct, in push constants when it
fits the device's limit (128 bytes on lavapipe), otherwise in a small
host-written buffer whose address is the only push constant. With
``Target.params_binding == "uniform"`` (lavapipe, see ``docs/VULKAN.md``) a
dynamic uniform buffer (set 0, binding 0, at most :data:`UNIFORM_PARAM_BYTES`)
plays the role of the push constants::

    offset 0   u64  status buffer address (asserts, prints, masked-load scratch)
    offset 8   i32  num_programs x, y, z
    offset 20  u32  always 0 (an opaque zero, see ``Emitter.float_zero``)
    offset 24  ...  the kernel parameters in order, naturally aligned:
                    pointers as u64 device addresses; i1/i8/i16/u8/u16 widened
                    to 32 bits; f16/bf16 as f32; other scalars as themselves.
    then, only for a kernel with scratch arrays (``wi.func`` ``scratch_bytes``),
    8-aligned: u64 scratch buffer address, u32 number of work-group slices in it
               (work-group ``L`` of the launch, linear over the grid, uses slice
               ``L mod slices``: see ``kdsl/runtime/vulkan/scratch.py``).

Status buffer (host-visible, zeroed before every launch that uses it)::

    0   u32 status: id of the first failed ``wi.assert`` (0: none), or
            ``STATUS_LOOP_CUT + k``: loop ``k`` was cut short by the driver's loop cap
    4   u32 bytes of print records written (may exceed capacity: overflow)
    16  32 bytes of scratch: the address masked-off loads read instead
    64  print records: u32 print index, u32 pad, then one u64 slot per argument
"""

from __future__ import annotations

from dataclasses import dataclass

from kdsl.ir.types import PointerType, ScalarType, Type

HEADER_BYTES = 24
UNIFORM_PARAM_BYTES = 4096  # the range of the uniform-buffer descriptor (one ring slot)
HEADER_ZERO = 20
STATUS_ASSERT = 0
STATUS_PRINT_CURSOR = 4
STATUS_SCRATCH = 16
STATUS_RECORDS = 64
STATUS_LOOP_CUT = 0x8000_0000  # status codes from here on name a loop the driver cut short
SCRATCH_PARAM_BYTES = 12  # u64 scratch address + u32 slice count
PRINT_CAPACITY = 1 << 20
STATUS_BYTES = STATUS_RECORDS + PRINT_CAPACITY

# kdsl scalar -> (kind, bytes) of its parameter slot; kind: i (signed int), u (unsigned), f (float)
_WIDENED = {"i1": ("u", 4), "i8": ("i", 4), "i16": ("i", 4), "u8": ("u", 4), "u16": ("u", 4),
            "f16": ("f", 4), "bf16": ("f", 4)}


@dataclass(frozen=True)
class Slot:
    """Where parameter ``index`` sits in the parameter block."""

    index: int
    offset: int
    kind: str  # "ptr", "i", "u", "f"
    size: int


@dataclass(frozen=True)
class ParamLayout:
    slots: tuple[Slot, ...]
    size: int
    in_buffer: bool  # True: parameters live in a buffer whose address is the push constant
    scratch_offset: int = -1  # the scratch address and slice count (-1: the kernel has no scratch)


def slot_kind(t: Type) -> tuple[str, int]:
    if isinstance(t, PointerType):
        return "ptr", 8
    assert isinstance(t, ScalarType), t
    if t.name in _WIDENED:
        return _WIDENED[t.name]
    if t.is_float:
        return "f", t.itemsize
    return ("i" if t.is_signed else "u"), t.itemsize


def param_layout(types: list[Type], max_push: int, scratch: bool = False) -> ParamLayout:
    off = HEADER_BYTES
    slots = []
    for i, t in enumerate(types):
        kind, size = slot_kind(t)
        off = -(-off // size) * size
        slots.append(Slot(i, off, kind, size))
        off += size
    scratch_offset = -1
    if scratch:
        scratch_offset = off = -(-off // 8) * 8
        off += SCRATCH_PARAM_BYTES
    size = -(-off // 8) * 8
    return ParamLayout(tuple(slots), size, size > max_push, scratch_offset)
