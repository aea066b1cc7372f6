"""``scratch`` arrays: a work-group's ``__local`` buffers kept in its slice of a global buffer.

The lowering moves ``__local`` buffers that do not fit the device's work-group memory to the
``scratch`` space (``kdsl/lowering/scratch.py``); here each becomes an address in the
``scratch_bytes`` slice of its work-group::

    slice  = (x + gx * (y + gy * z)) mod slices      (x, y, z: WorkgroupId; gx, gy: the grid)
    array  = scratch address + slice * scratch_bytes + the alloc's offset
    a[i]   = array + i * element size

The scratch address and ``slices`` come from the parameter block (``abi.param_layout``); the
runtime guarantees that the work-groups running at the same time have different slices
(``kdsl/runtime/vulkan/scratch.py``). Kernels with scratch arrays run one program per work-group
(``emit.programs_per_group`` treats them like ``__local`` buffers), so the work-group id is the
program id.

Memory model (the module declares ``GLSL450``): there, ``Workgroup`` variables are implicitly
coherent between the invocations of a group, global memory only where the declaration is
``Coherent``. A scratch array is therefore a pointer to a ``Block`` struct whose one member (the
array) is decorated ``Coherent`` -- what glslang emits for a ``coherent`` ``buffer_reference``
block -- so that ``wi.barrier`` (``OpControlBarrier`` with ``AcquireRelease | WorkgroupMemory |
UniformMemory``; ``UniformMemory`` covers ``PhysicalStorageBuffer``) makes one invocation's
stores visible to the group's other invocations as it does for ``Workgroup`` memory.

Elements are stored as in ``Workgroup`` arrays (``Types.array_elem``: ``i1`` a u32, ``bf16`` an
f32), so the byte sizes are :func:`~kdsl.codegen.spirv.target.array_itemsize`, the sizes the
lowering laid the slice out with; 8- and 16-bit elements need the storage-buffer access features.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kdsl.codegen.spirv.target import array_itemsize
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, PointerType, ScalarType

if TYPE_CHECKING:
    from kdsl.codegen.spirv.emit import Emitter


def group_base(e: Emitter, per_group: int) -> int:
    """u64 address of this work-group's slice (see module doc)."""
    f, u64 = e.f, e.t.u64

    def wide(v: int) -> int:  # i32 -> u64, zero-extended (ids and grid sizes are non-negative)
        return f.op("OpUConvert", u64, f.bitcast(e.t.u32, v))

    x, y, z = (wide(e.builtin_component("WorkgroupId", axis)) for axis in range(3))
    gx, gy = wide(e.grid[0]), wide(e.grid[1])
    linear = f.op("OpIAdd", u64, x, f.op("OpIMul", u64, gx, f.op("OpIAdd", u64, y, f.op("OpIMul", u64, gy, z))))
    slot = f.op("OpUMod", u64, linear, f.op("OpUConvert", u64, e.scratch_slices))
    return f.op("OpIAdd", u64, e.scratch_base, f.op("OpIMul", u64, slot, f.const(u64, per_group)))


def alloc(e: Emitter, op: Operation) -> None:
    """Bind a scratch ``wi.alloc`` to a ``PhysicalStorageBuffer`` pointer to its array."""
    t = op.result.type
    assert isinstance(t, MemRefType)
    m, f, u64 = e.m, e.f, e.t.u64
    struct = _struct(e, t)
    addr = f.op("OpIAdd", u64, e.scratch_group, f.const(u64, int(op.attributes["offset"])))
    ptr = f.op("OpConvertUToPtr", m.t_ptr("PhysicalStorageBuffer", struct), addr)
    e.arrays[id(op.result)] = (ptr, t, "PhysicalStorageBuffer")


def element_ptr(e: Emitter, base: int, t: MemRefType, index: int) -> int:
    """Pointer to element ``index`` of the scratch array at ``base``."""
    elem = e.t.array_elem(t.element)
    return e.f.op("OpAccessChain", e.m.t_ptr("PhysicalStorageBuffer", elem), base, e.ci32(0), index)


def itemsize(t: MemRefType) -> int:
    """Bytes per element (the ``Aligned`` operand of every access)."""
    return array_itemsize(t.element)


def _struct(e: Emitter, t: MemRefType) -> int:
    """``struct { coherent T a[n]; }`` laid out explicitly (one per element type and length)."""
    m = e.m
    elem = _element_type(e, t.element)
    key = (elem, t.size)
    sid = e.scratch_types.get(key)
    if sid is not None:
        return sid
    arr = m.t_array(elem, t.size, stride=itemsize(t))
    sid = m.t_struct([arr], f"scratch{len(e.scratch_types)}")
    m.decorate(sid, "Block")
    m.member_decorate(sid, 0, "Offset", 0)
    m.member_decorate(sid, 0, "Coherent")
    e.scratch_types[key] = sid
    return sid


def _element_type(e: Emitter, elem: ScalarType | PointerType) -> int:
    size = array_itemsize(elem)
    if size == 1:
        e.t.require("storage_buffer_8bit", f"an {elem} array in the scratch buffer")
        e.m.capability("StorageBuffer8BitAccess")
    elif size == 2:
        e.t.require("storage_buffer_16bit", f"an {elem} array in the scratch buffer")
        e.m.capability("StorageBuffer16BitAccess")
    return e.t.array_elem(elem)
