"""A compiled Vulkan kernel and its launch path.

``launch(grid, args)``: numpy arrays are copied into sub-allocated device
memory (a ``memcpy`` into mapped memory on host-visible devices such as
lavapipe; a staging copy elsewhere), the parameter block is packed (device
addresses + scalars), one command buffer dispatches the grid (split into
``vkCmdDispatchBase`` pieces beyond ``maxComputeWorkGroupCount``), the fence
is waited on, written arrays are copied back and the status buffer is read
for prints, failed asserts and loops the driver cut short.

A launch whose pointer arguments are all device arrays (and that does not
print) is submitted without waiting (:mod:`kdsl.runtime.vulkan.inflight`);
every synchronous launch first waits for those.
"""

from __future__ import annotations

import re
import struct
import sys
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import vulkan as vk

from kdsl.codegen.spirv import SpirvKernel, abi
from kdsl.codegen.spirv.unroll import GridStrideLoop
from kdsl.errors import DeviceAssertionError, KernelRuntimeError, LaunchError
from kdsl.ir.core import Location
from kdsl.ir.types import PointerType, ScalarType
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.hostmem import device_aliased
from kdsl.runtime.vulkan import inflight, scratch
from kdsl.runtime.vulkan.arrays import VulkanBuffer
from kdsl.runtime.vulkan.commands import KernelTimeout
from kdsl.runtime.vulkan.hostargs import HostArg, group_host_args, host_view
from kdsl.runtime.vulkan.memory import Allocation
from kdsl.runtime.vulkan.pipeline import Pipeline
from kdsl.runtime.vulkan.runtime import Runtime, get_runtime

ffi = vk.ffi
_PACK = {("ptr", 8): "Q", ("i", 4): "i", ("u", 4): "I", ("i", 8): "q", ("u", 8): "Q", ("f", 4): "f", ("f", 8): "d"}
_LENGTH_MOD = re.compile(r"%([-#0 +]*\d*(?:\.\d+)?)(hh|h|ll|l|z|j|t)?([diouxXeEfgGcs%])")


def _bf16(v: Any) -> float:
    bits = int(np.float32(v).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


def _scalar_binder(t: ScalarType, name: str) -> Callable[[Any], Any]:
    if t.name == "i1":
        return lambda v: int(bool(v))
    if t.name == "f16":
        return lambda v: float(np.float16(v))
    if t.name == "bf16":
        return _bf16
    conv = t.np_dtype.type

    def bind(v: Any) -> Any:
        try:
            x = conv(v)
        except (OverflowError, TypeError, ValueError) as e:
            raise LaunchError(f"cannot pass {v!r} as {t}: {e}", name) from e
        return float(x) if t.is_float else int(x)

    return bind


def _byte_view(a: np.ndarray) -> np.ndarray:
    if a.flags.c_contiguous:
        return a.view(np.uint8).reshape(-1)
    return np.ascontiguousarray(a).view(np.uint8).reshape(-1)


def _dispatch_pieces(grid: tuple[int, int, int], limit: tuple[int, int, int]) -> list[tuple[int, ...]]:
    pieces: list[tuple[int, ...]] = []
    for z0 in range(0, grid[2], limit[2]):
        for y0 in range(0, grid[1], limit[1]):
            for x0 in range(0, grid[0], limit[0]):
                pieces.append(
                    (x0, y0, z0, min(limit[0], grid[0] - x0), min(limit[1], grid[1] - y0), min(limit[2], grid[2] - z0))
                )
    return pieces


class VulkanKernel:
    """A launchable specialisation (see module doc)."""

    def __init__(
        self, rt: Runtime, spirv: SpirvKernel, written: AbstractSet[int], safe: Callable[[], VulkanKernel] | None = None,
        unused: AbstractSet[int] = frozenset(),
    ) -> None:  # fmt: skip
        """``safe``: builds the variant lowered without the no-overlap assumption (for launches
        whose written memory is reachable through two parameters); None when this is it.
        ``unused``: pointer parameters the kernel never reads (no part in the aliasing check)."""
        self.rt = rt
        self.spirv = spirv
        self.name = spirv.name
        layout = spirv.params
        self.push_size = 8 if layout.in_buffer else layout.size
        self.uniform = spirv.params_binding == "uniform"  # see kdsl.runtime.vulkan.params
        self.pipeline = self._pipeline(rt)
        self.params: list[tuple[str, bool, Callable[[Any], Any] | None, str]] = []
        for i, (t, n, slot) in enumerate(zip(spirv.arg_types, spirv.arg_names, layout.slots)):
            fmt = _PACK[(slot.kind, slot.size)]
            if isinstance(t, PointerType):
                self.params.append((n, i in written, None, fmt))
            else:
                assert isinstance(t, ScalarType)
                self.params.append((n, False, _scalar_binder(t, n), fmt))
        self.pointers = [i for i, (_, _, bind, _) in enumerate(self.params) if bind is None]
        self._read = [i for i in self.pointers if i not in unused]  # the pointers that may alias
        self._safe_factory = safe
        self._safe: VulkanKernel | None = None
        self.check_alias = safe is not None and len(self._read) > 1 and bool(written)
        self.status_used = bool(spirv.prints or spirv.asserts or spirv.loops)
        self.profile = False
        self.last_elapsed_ns: float | None = None
        self._spread: tuple[int, tuple[GridStrideLoop, ...], int, Callable[[], VulkanKernel]] | None = None
        self._spread_kernel: VulkanKernel | None = None

    def spread_when(
        self, passes: int, loops: tuple[GridStrideLoop, ...], budget: int, build: Callable[[], VulkanKernel]
    ) -> None:
        """Launch ``build()``'s kernel (the work-group mapping, built on first need) instead of this
        one when ``passes`` plus what ``loops`` add for the launch's grid and arguments exceed
        ``budget``. WHY: one invocation per program runs every element loop of a persistent
        kernel's rows in one invocation; a small grid over many rows (Triton's tutorial 02 sizes
        it from the occupancy) passes lavapipe's loop cap, which the work-group mapping, sharing
        each row among its invocations, does not."""
        self._spread = (passes, loops, budget, build)

    def _spread_for(self, grid: tuple[int, int, int], args: Sequence[Any]) -> VulkanKernel | None:
        if self._spread is None:
            return None
        passes, loops, budget, build = self._spread
        if passes + sum(loop.extra_passes(grid, args) for loop in loops) <= budget:
            return None
        if self._spread_kernel is None:
            self._spread_kernel = self._adopt(build())
        return self._spread_kernel

    def _adopt(self, variant: VulkanKernel) -> VulkanKernel:
        """A variant built on first need (``safe_kernel``, ``spread_when``) profiles like this one."""
        variant.profile = self.profile
        return variant

    # --- launch -----------------------------------------------------------------------------
    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        if len(args) != len(self.params):
            raise LaunchError(f"expected {len(self.params)} arguments, got {len(args)}", kernel=self.name)
        if min(grid) <= 0:
            return
        if self.check_alias and self._aliased(args):
            self.safe_kernel().launch(grid, args)
            return
        spread = self._spread_for(grid, args)
        if spread is not None:
            spread.launch(grid, args)
            self.last_elapsed_ns = spread.last_elapsed_ns
            return
        rt = self.rt
        if not rt.device.alive or rt.device.lost:
            rt = self._rebind()
        with rt.device.lock:
            if rt.held:
                rt.release_held()
            flight = rt.inflight.acquire() if self._goes_async(args) else None
            if flight is None:
                rt.inflight.drain()  # a synchronous launch sees (and reports) every earlier one
            if rt.to_free:
                rt.drain_frees()
            allocs: list[Allocation] = []
            submitted = rt.inflight.submitted
            try:
                self._launch(grid, args, allocs, flight)
            except KernelTimeout:
                if self.spirv.scratch_bytes:  # the next launch must not share its slices
                    allocs.extend(a for a in [rt.scratch.detach()] if a is not None)
                rt.hold(allocs)  # the kernel may still write them
                raise
            except BaseException:
                if flight is not None and rt.inflight.submitted == submitted:
                    rt.inflight.give_back(flight)
                raise
            finally:
                for a in allocs:
                    rt.allocator.free(a)

    def _aliased(self, args: Sequence[Any]) -> bool:
        """Memory the kernel may write is reachable through two pointer parameters."""
        hosts: list[HostArg] = []
        devices: list[tuple[Any, bool]] = []
        for i in self._read:
            v, written = args[i], self.params[i][1]
            if isinstance(v, DeviceArray):
                devices.append((v, written))
            elif isinstance(v, np.ndarray):
                hosts.append(HostArg(0, host_view(v, self.params[i][0]), written))
        if len(hosts) > 1 and any(g.aliased for g in group_host_args(hosts)):
            return True
        return len(devices) > 1 and device_aliased(devices)

    def safe_kernel(self) -> VulkanKernel:
        """The variant for aliased arguments (every load of a tile before its stores), built on first need."""
        if self._safe is None:
            assert self._safe_factory is not None
            self._safe = self._adopt(self._safe_factory())
        return self._safe

    def _goes_async(self, args: Sequence[Any]) -> bool:
        """Only device arrays (nothing to copy back), no prints, no profiling: see ``inflight``."""
        if inflight.MAX_IN_FLIGHT <= 0 or self.spirv.prints or self.profile:
            return False
        return all(isinstance(args[i], DeviceArray) for i in self.pointers)

    def _rebind(self) -> Runtime:
        """After a lost device: the new device's runtime and a pipeline created on it."""
        self.rt = rt = get_runtime()
        self.pipeline = self._pipeline(rt)
        return rt

    def _pipeline(self, rt: Runtime) -> Pipeline:
        set_layout = rt.uniform_params().set_layout if self.uniform else None
        return rt.pipelines.get(self.spirv.binary, self.spirv.name, self.push_size, set_layout)

    def _launch(
        self, grid: tuple[int, int, int], args: Sequence[Any], allocs: list[Allocation], flight: Any = None
    ) -> None:
        """Copy in, pack, dispatch; synchronous (wait, copy back, check status) unless ``flight``
        (an ``InFlight`` slot: then submitted without waiting)."""
        rt = self.rt
        layout = self.spirv.params
        block = bytearray(layout.size)
        status = rt.status if flight is None else rt.inflight.status_slot(flight)
        struct.pack_into("<Qiii", block, 0, status.address, *grid)
        hosts: list[HostArg] = []
        for (name, written, bind, fmt), slot, v in zip(self.params, layout.slots, args):
            if bind is not None:
                struct.pack_into("<" + fmt, block, slot.offset, bind(v))
                continue
            if isinstance(v, DeviceArray):
                if isinstance(v.buffer, VulkanBuffer) and v.buffer.rt is not rt and v.buffer.gone:
                    raise LaunchError(
                        "this device array was allocated on a Vulkan device that has since been "
                        "lost; its memory and contents are gone (allocate it again)",
                        name,
                        self.name,
                    )
                if not isinstance(v.buffer, VulkanBuffer) or v.buffer.rt is not rt:
                    raise LaunchError("device array does not belong to this Vulkan device", name)
                struct.pack_into("<Q", block, slot.offset, v.buffer.address + v.offset)
                continue
            # isinstance first: reading ndarray.__array_interface__ is slow and grows a heap block (numpy 2.4)
            if not isinstance(v, np.ndarray) and not hasattr(v, "__array_interface__"):
                raise LaunchError(f"expected an array for a pointer parameter, got {type(v).__name__}", name)
            hosts.append(HostArg(slot.offset, host_view(v, name), written))
        # overlapping arrays share one copy (kdsl.runtime.vulkan.hostargs): stores through one
        # parameter are seen through the others and the memory is copied back once
        copies: list[tuple[Allocation, np.ndarray, bool]] = []
        for g in group_host_args(hosts) if hosts else ():
            whole = rt.allocator.alloc(max(g.pad + g.view.nbytes, 16))
            allocs.append(whole)
            a = Allocation(whole.block, whole.offset + g.pad, g.view.nbytes)
            copies.append((a, g.view, g.written))
            for slot_offset, delta in g.members:
                struct.pack_into("<Q", block, slot_offset, a.address + delta)
        rt.upload([(a, _byte_view(h)) for a, h, _ in copies])
        slices = self._pack_scratch(grid, block)
        push = block
        if layout.in_buffer:
            pa = rt.allocator.alloc(len(block))
            allocs.append(pa)
            rt.upload([(pa, np.frombuffer(bytes(block), np.uint8))])
            push = bytearray(struct.pack("<Q", pa.address))
        record = self._recorder(grid, push, slices)
        if flight is not None:
            rt.inflight.submit(
                flight, record, self._check_status if self.status_used else None, allocs, f"kernel '{self.name}'"
            )
            self.last_elapsed_ns = None
            return
        if self.status_used:
            rt.status.host()[:16] = 0
        self.last_elapsed_ns = rt.submitter.run(record, timing=self.profile, what=f"kernel '{self.name}'")
        for a, host, written in copies:
            if written:
                rt.download(a, host)
        if self.status_used:
            self._check_status(rt.status.host())

    def _pack_scratch(self, grid: tuple[int, int, int], block: bytearray) -> int:
        """For a kernel with scratch arrays: put the scratch buffer's address and slice count into
        the parameter ``block``; returns the slice count (0: no scratch). See vulkan/scratch.py."""
        per_group = self.spirv.scratch_bytes
        if not per_group:
            return 0
        slices = scratch.slices_for(grid, per_group)
        buf = self.rt.scratch_buffer(slices * per_group)
        struct.pack_into("<QI", block, self.spirv.params.scratch_offset, buf.address, slices)
        return slices

    def _recorder(self, grid: tuple[int, int, int], push: bytearray, slices: int = 0) -> Callable[[Any], None]:
        """The commands of one launch (the parameter block goes into the ring now). ``slices``:
        the scratch slices of a kernel with scratch arrays; a grid of more work-groups runs in
        pieces that reuse them one after the other (kdsl/runtime/vulkan/scratch.py)."""
        rt, p = self.rt, self.pipeline
        params = rt.uniform_params() if self.uniform else None
        offset = params.write(push) if params is not None else 0
        data = ffi.from_buffer(push) if params is None else None
        limit = rt.device.info.max_group_count
        serial = 0 < slices < grid[0] * grid[1] * grid[2]
        pieces = scratch.slice_pieces(grid, limit, slices) if serial else _dispatch_pieces(grid, limit)
        barrier = scratch.piece_barrier() if serial else None

        def record(cmd: Any) -> None:
            vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline)
            if params is not None:
                params.bind(cmd, p.layout, offset)
            else:
                vk.vkCmdPushConstants(cmd, p.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(push), data)
            if barrier is not None:
                scratch.record_pieces(cmd, pieces, barrier)
                return
            if len(pieces) == 1:
                vk.vkCmdDispatch(cmd, *grid)
                return
            for piece in pieces:
                vk.vkCmdDispatchBase(cmd, *piece)

        return record

    # --- status: prints and asserts -------------------------------------------------------------
    def _check_status(self, raw: np.ndarray) -> None:
        """Print what the launch printed; raise its failed assert or loop cut (``raw``: its status bytes)."""
        head = raw[:16].view(np.uint32)
        if self.spirv.prints:
            self._flush_prints(raw, int(head[1]))
        aid = int(head[0])
        if aid == 0:
            return
        if aid >= abi.STATUS_LOOP_CUT:
            raise self._loop_cut(aid - abi.STATUS_LOOP_CUT)
        message, file, line, col = self.spirv.asserts[aid - 1]
        raise DeviceAssertionError(
            f"device assertion failed in kernel '{self.name}': {message}", Location(file, line, col)
        )

    def _loop_cut(self, index: int) -> KernelRuntimeError:
        file, line, col = self.spirv.loops[index]
        return KernelRuntimeError(
            f"kernel '{self.name}' exceeded the Vulkan driver's loop limit: {self.rt.device.driver.description} "
            f"stops a shader invocation after {self.spirv.loop_limit} loop iterations in total (all loops of one "
            "program instance together, including the element loops kdsl generates), so this loop was cut short "
            "and the results would be wrong. Split the work over more programs (a bigger grid, shorter loops), "
            "or run this kernel on another backend (cpu, opencl)",
            Location(file, line, col),
        )

    def _flush_prints(self, raw: np.ndarray, used: int) -> None:
        records = raw[abi.STATUS_RECORDS : abi.STATUS_RECORDS + min(used, abi.PRINT_CAPACITY)]
        out: list[str] = []
        pos = 0
        while pos + 8 <= len(records):
            index = int(records[pos : pos + 4].view(np.uint32)[0])
            spec = self.spirv.prints[index]
            n = len(spec.arg_types)
            slots = records[pos + 8 : pos + 8 + 8 * n].view(np.uint64)
            out.append(
                _format(spec.format, [_decode(int(s), t) for s, t in zip(slots, spec.arg_types)], spec.arg_types)
            )
            pos += 8 + 8 * n
        if used > abi.PRINT_CAPACITY:
            out.append(f"[kdsl: device print buffer full, {used - abi.PRINT_CAPACITY} bytes of output dropped]\n")
        if out:
            sys.stdout.write("".join(out))
            sys.stdout.flush()


def _decode(bits: int, t: Any) -> Any:
    if isinstance(t, PointerType):
        return bits
    assert isinstance(t, ScalarType)
    if t.is_float:
        if t.name == "f64":
            return float(np.uint64(bits).view(np.float64))
        return float(np.uint32(bits & 0xFFFFFFFF).view(np.float32))
    if t.is_signed:
        return bits - (1 << 64) if bits >= 1 << 63 else bits
    return bits


def _format(fmt: str, values: list[Any], types: tuple[Any, ...]) -> str:
    """C printf: Python %-format without length modifiers; %x/%o show two's complement bits."""
    convs = [m.group(3) for m in _LENGTH_MOD.finditer(fmt) if m.group(3) != "%"]
    fixed = []
    for v, t, c in zip(values, types, convs):
        if c in "xXo" and isinstance(v, int) and v < 0:
            v += 1 << (t.bitwidth if isinstance(t, ScalarType) else 64)
        fixed.append(v)
    py = _LENGTH_MOD.sub(lambda m: "%" + m.group(1) + m.group(3), fmt)
    return py % tuple(fixed)
