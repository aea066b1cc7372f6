"""One OpenCL device: context, profiling queue, capabilities, program cache, buffer pool.

``get_device()`` picks the device once per process: ``KDSL_OPENCL_DEVICE``
(an index into the flat list of all devices of all platforms, or a substring
of the device name) or, by default, the first GPU, else the first device.
The :class:`Device` object implements ``kdsl.runtime.backend.Device`` for
device arrays and the disk cache: ``host_memory`` is False (buffers are
``cl`` buffers from a memory pool, never handed to kernels as numpy arrays,
so device-array launches stay asynchronous), ``key`` names the device, the
driver/PoCL version and the capabilities that change generated code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from kdsl.errors import BackendUnavailableError, CompilationError

if TYPE_CHECKING:
    from kdsl.codegen.opencl import DeviceCaps

INSTALL_HINT = (
    "no OpenCL platform/device found: install Debian 'pocl-opencl-icd' "
    "(apt-get install pocl-opencl-icd) or your GPU vendor's OpenCL driver"
)

BUILD_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt", "-cl-std=CL1.2"]
ALIGN = 64


@lru_cache(maxsize=1)
def all_devices() -> tuple[Any, ...]:
    """Every device of every platform, asked once per process.

    Enumerating initialises each ICD (PoCL: ~30 ms); ``availability()`` and
    ``get_device()`` both need the list, and drivers do not come and go
    within a process.
    """
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return ()
    out = []
    for p in platforms:
        try:
            out.extend(p.get_devices())
        except cl.Error:
            continue
    return tuple(out)


def _choose(devices: tuple[Any, ...]) -> Any:
    want = os.environ.get("KDSL_OPENCL_DEVICE", "").strip()
    if want:
        if want.isdigit():
            i = int(want)
            if i >= len(devices):
                raise BackendUnavailableError(f"KDSL_OPENCL_DEVICE={want}: only {len(devices)} OpenCL devices")
            return devices[i]
        for d in devices:
            if want.lower() in d.name.lower():
                return d
        raise BackendUnavailableError(f"KDSL_OPENCL_DEVICE={want!r} matches no device: {[d.name for d in devices]}")
    gpus = [d for d in devices if d.type & cl.device_type.GPU]
    return (gpus or devices)[0]


@dataclass
class PooledBuffer:
    buf: Any
    nbytes: int


class Device:
    """Context + in-order profiling queue + compiled-program cache + memory pool for one device."""

    host_memory = False

    def __init__(self, dev: Any) -> None:
        self.dev = dev
        self.name: str = dev.name
        self.driver: str = dev.driver_version
        self.platform_version: str = dev.platform.version
        self.ctx = cl.Context([dev])
        self.queue = cl.CommandQueue(self.ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        ext = dev.extensions
        self.fp64 = "cl_khr_fp64" in ext
        self.int64_atomics = "cl_khr_int64_base_atomics" in ext
        self.is_cpu = bool(dev.type & cl.device_type.CPU)
        self.shares_host_memory = bool(getattr(dev, "host_unified_memory", False)) or self.is_cpu
        self.local_mem = int(dev.local_mem_size)
        self.max_group = int(dev.max_work_group_size)
        self.c_version: str = str(getattr(dev, "opencl_c_version", "") or dev.version)
        self.key = (
            f"{self.name}|driver={self.driver}|platform={self.platform_version}|{self.c_version}"
            f"|fp64={int(self.fp64)}|i64atomics={int(self.int64_atomics)}"
            f"|max_group={self.max_group}|local={self.local_mem}|build={' '.join(BUILD_OPTIONS)}"
        )
        self._programs: dict[str, Any] = {}
        self._free: dict[int, list[Any]] = {}
        self._empty: Any = None
        self._pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        # Observability for tests/benchmarks: OpenCL C compiles vs program-binary loads.
        self.source_builds = 0
        self.binary_loads = 0

    @cached_property
    def caps(self) -> DeviceCaps:
        """What the code generator may use (imported lazily: a disk-cache hit never renders code)."""
        from kdsl.codegen.opencl import DeviceCaps

        return DeviceCaps(fp64=self.fp64, int64_atomics=self.int64_atomics)

    @property
    def default_num_threads(self) -> int:
        """One work-item per program on CPUs (explicit loops vectorise there), 64 elsewhere."""
        return 1 if self.is_cpu else 64

    def build(self, source: str) -> Any:
        """The built program for ``source`` (cached per process)."""
        prog = self._programs.get(source)
        if prog is not None:
            return prog
        try:
            prog = cl.Program(self.ctx, source).build(options=BUILD_OPTIONS)
        except cl.Error as e:  # a kdsl bug: generated code must build
            raise CompilationError(f"opencl: the generated OpenCL C failed to build on {self.name}:\n{e}") from e
        self.source_builds += 1
        self._programs[source] = prog
        return prog

    def load_binary(self, source: str, binary: bytes) -> Any:
        """The program for ``source`` from a binary this driver produced earlier (disk cache).

        Raises ``cl.Error`` if the driver rejects it (corrupt, other driver version).
        """
        prog = self._programs.get(source)
        if prog is not None:
            return prog
        prog = cl.Program(self.ctx, [self.dev], [binary]).build(options=BUILD_OPTIONS)
        self.binary_loads += 1
        self._programs[source] = prog
        return prog

    # --- the kdsl.runtime.backend.Device interface (device arrays) ----------------
    def allocate(self, nbytes: int) -> Any:
        """A pooled buffer of at least ``nbytes`` (never empty: kernels may get it unused).

        Pool buffers are whole ``cl_mem`` objects, so their base is aligned to the
        device's ``mem_base_addr_align`` (>= 128 bytes on PoCL and every GPU);
        the buffer goes back to the pool when the last reference dies.
        """
        return self._pool.allocate(max(int(nbytes), ALIGN))

    def write(self, buffer: Any, src: np.ndarray, offset: int = 0) -> None:
        """Copy ``src`` into ``buffer`` at byte ``offset``; blocking, so ``src`` may change afterwards."""
        if src.nbytes:
            cl.enqueue_copy(self.queue, buffer, np.ascontiguousarray(src), dst_offset=offset, is_blocking=True)

    def read(self, buffer: Any, dst: np.ndarray, offset: int = 0) -> None:
        """Copy ``buffer`` at byte ``offset`` into ``dst`` after every queued launch (blocking)."""
        if dst.nbytes:
            cl.enqueue_copy(self.queue, dst, buffer, src_offset=offset, is_blocking=True)

    # --- buffers -------------------------------------------------------------------
    def wrap_host(self, arr: np.ndarray) -> Any:
        """A buffer over ``arr``'s memory: zero-copy where the device shares host memory."""
        mf = cl.mem_flags
        if arr.nbytes == 0:  # nothing can be accessed through it: one shared stand-in
            if self._empty is None:
                self._empty = cl.Buffer(self.ctx, mf.READ_WRITE, ALIGN)
            return self._empty
        if not arr.flags.writeable:  # read-only memory (the JIT refuses it for written params): a copy
            return cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr.copy())
        if self.shares_host_memory:
            return cl.Buffer(self.ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=arr)
        return cl.Buffer(self.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)

    def write_back(self, buf: Any, arr: np.ndarray) -> None:
        """Make the kernel's writes to ``buf`` visible in ``arr`` (blocking)."""
        if arr.nbytes == 0:
            return
        if self.shares_host_memory:
            mapped, _ = cl.enqueue_map_buffer(self.queue, buf, cl.map_flags.READ, 0, arr.shape, arr.dtype,
                                              is_blocking=True)
            mapped.base.release()
            return
        cl.enqueue_copy(self.queue, arr, buf, is_blocking=True)

    def scratch(self, nbytes: int) -> Any:
        """A pooled device buffer of at least ``nbytes`` (give it back with :meth:`release`)."""
        size = 1 << max(2, (nbytes - 1).bit_length())
        free = self._free.get(size)
        if free:
            return free.pop()
        return cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size)

    def release(self, buf: Any) -> None:
        self._free.setdefault(int(buf.size), []).append(buf)

    def synchronize(self) -> None:
        self.queue.finish()


@lru_cache(maxsize=1)
def get_device() -> Device:
    devices = all_devices()
    if not devices:
        raise BackendUnavailableError(INSTALL_HINT)
    return Device(_choose(devices))
