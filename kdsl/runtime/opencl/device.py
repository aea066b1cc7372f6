"""One OpenCL device: context, profiling queue, capabilities, program cache, buffer pool.

``get_device()`` picks the device once per process: ``KDSL_OPENCL_DEVICE``
(an index into the flat list of all devices of all platforms, or a substring
of the device name) or, by default, the first GPU, else the first device.
The :class:`Device` object implements ``kdsl.runtime.backend.Device`` for
device arrays and the disk cache: ``host_memory`` is False (buffers are
``cl`` buffers from a memory pool, never handed to kernels as numpy arrays,
so device-array launches stay asynchronous), ``key`` names the device, the
driver/PoCL version and the capabilities that change generated code.

Two bindings, one context. Platforms, the device, its context and queue,
programs (from source or from a cached binary) and kernels are created with
:mod:`kdsl.runtime.opencl.clapi` (ctypes, no import cost), so a warm start
with numpy arguments never imports pyopencl (~90 ms). pyopencl is imported on
first use by what needs it -- device arrays (its memory pool, copies), the
checked launch path -- and then *wraps* the same handles (``ctx``, ``queue``,
``dev`` below; ``from_int_ptr(handle, retain=True)``), so its objects and
ours interoperate.

Every object kdsl creates is released by :meth:`Device.close`, which :func:`shutdown` runs at
interpreter exit (registered when this module is imported, so ``atexit`` runs it after the
handlers of the program that imported kdsl): kernels, programs, pooled buffers, the pyopencl
views, then the queue and the context (checked with PoCL's object log by
``tools/exitcheck.py``). A launch after that raises a clear error instead of touching freed
handles. A process forked from the one that created the device never closes it (the parent
owns the driver's objects; PoCL does not survive ``fork()``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import threading
import weakref
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib.util import find_spec
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from kdsl.errors import BackendUnavailableError, CompilationError
from kdsl.runtime.opencl import clapi
from kdsl.target import host_cpu_flags

if TYPE_CHECKING:
    from kdsl.codegen.opencl import DeviceCaps

INSTALL_HINT = (
    "no OpenCL platform/device found: install Debian 'pocl-opencl-icd' "
    "(apt-get install pocl-opencl-icd) or your GPU vendor's OpenCL driver"
)
PYOPENCL_HINT = "the opencl backend needs pyopencl (pip install pyopencl) and an OpenCL driver (pocl-opencl-icd)"

# -w: the source is generated; a compiler warning about it means nothing to the user, and
# PoCL's clang prints "N warnings generated." to the process's stderr on every build
BUILD_OPTIONS = ["-cl-fp32-correctly-rounded-divide-sqrt", "-cl-std=CL1.2", "-w"]
_BUILD_OPTIONS = " ".join(BUILD_OPTIONS)
ALIGN = 64
_CLAIM_ENV = "KDSL_OPENCL_CLAIM"  # "0": ignore the lower.claim launch option (A/B runs)
_char, _byref = ctypes.c_char, ctypes.byref


def pyopencl() -> ModuleType:
    """``pyopencl``, imported on first need (device arrays, the checked launch path)."""
    import pyopencl as cl

    return cl


def pyopencl_installed() -> bool:
    try:
        return find_spec("pyopencl") is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class DeviceRef:
    """One device of one platform, as OpenCL handles (what ``all_devices`` lists)."""

    handle: int
    platform: int

    @property
    def name(self) -> str:
        return clapi.device_str(self.handle, clapi.DEVICE_NAME)

    @property
    def type(self) -> int:
        return clapi.device_int(self.handle, clapi.DEVICE_TYPE)


# clapi calls release the GIL (pyopencl's enumeration did not): the ICD loader's first enumeration is
# not thread-safe (two threads at once may see zero platforms), so first uses are serialised.
_INIT_LOCK = threading.RLock()


@lru_cache(maxsize=1)
def all_devices() -> tuple[DeviceRef, ...]:
    """Every device of every platform, asked once per process (in pyopencl's order).

    Enumerating initialises each ICD (PoCL: ~30 ms); ``availability()`` and
    ``get_device()`` both need the list, and drivers do not come and go
    within a process. No ICD loader, or no pyopencl: no devices.
    """
    if not pyopencl_installed():
        return ()
    with _INIT_LOCK:
        try:
            platforms = clapi.platforms()
        except (OSError, clapi.CLError):
            return ()
        out: list[DeviceRef] = []
        for p in platforms:
            try:
                out.extend(DeviceRef(d, p) for d in clapi.devices(p))
            except clapi.CLError:
                continue
        return tuple(out)


def _choose(devices: tuple[DeviceRef, ...]) -> DeviceRef:
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
    gpus = [d for d in devices if d.type & clapi.DEVICE_TYPE_GPU]
    return (gpus or list(devices))[0]


@dataclass
class PooledBuffer:
    buf: Any
    nbytes: int


class Device:
    """Context + in-order profiling queue + compiled-program cache + memory pool for one device."""

    host_memory = False

    def __init__(self, ref: DeviceRef) -> None:
        h = self.handle = ref.handle
        self.platform_handle = ref.platform
        self.name: str = clapi.device_str(h, clapi.DEVICE_NAME)
        self.driver: str = clapi.device_str(h, clapi.DRIVER_VERSION)
        self.platform_version: str = clapi.platform_str(ref.platform, clapi.PLATFORM_VERSION)
        ext = clapi.device_str(h, clapi.DEVICE_EXTENSIONS)
        self.fp64 = "cl_khr_fp64" in ext
        self.int64_atomics = "cl_khr_int64_base_atomics" in ext
        self.is_cpu = bool(clapi.device_int(h, clapi.DEVICE_TYPE) & clapi.DEVICE_TYPE_CPU)
        try:  # deprecated since OpenCL 2.0: a driver may refuse the query
            unified = bool(clapi.device_int(h, clapi.DEVICE_HOST_UNIFIED_MEMORY))
        except clapi.CLError:
            unified = False
        self.shares_host_memory = unified or self.is_cpu
        self.local_mem = clapi.device_int(h, clapi.DEVICE_LOCAL_MEM_SIZE)
        self.compute_units = max(1, clapi.device_int(h, clapi.DEVICE_MAX_COMPUTE_UNITS))
        # CPU devices with cores to share a launch between: work-groups claim program ids
        self.claims = (self.is_cpu and self.int64_atomics and self.compute_units > 1
                       and os.environ.get(_CLAIM_ENV, "").strip() != "0")  # fmt: skip
        # int8 dots with vpdpbusd (codegen/opencl/mma_i8.py): a CPU device runs on this host's cores
        self.int8_dot = self.is_cpu and {"avx512_vnni", "avx512bw"} <= host_cpu_flags()
        self.max_group = clapi.device_int(h, clapi.DEVICE_MAX_WORK_GROUP_SIZE)
        try:
            self.c_version: str = clapi.device_str(h, clapi.DEVICE_OPENCL_C_VERSION)
        except clapi.CLError:
            self.c_version = ""
        self.c_version = self.c_version or clapi.device_str(h, clapi.DEVICE_VERSION)
        # The same strings pyopencl reported (tests/opencl/test_clapi.py): cache entries stay valid.
        self.key = (
            f"{self.name}|driver={self.driver}|platform={self.platform_version}|{self.c_version}"
            f"|fp64={int(self.fp64)}|i64atomics={int(self.int64_atomics)}"
            f"|max_group={self.max_group}|local={self.local_mem}|build={_BUILD_OPTIONS}|claims={int(self.claims)}"
            f"|int8dot={int(self.int8_dot)}"
        )
        self._programs: dict[str, int] = {}
        self._free: dict[int, list[Any]] = {}
        self._empty: Any = None
        # numpy arguments: zero-copy where the device shares host memory, else copied in at creation
        self._wrap_flags = clapi.MEM_READ_WRITE | (
            clapi.MEM_USE_HOST_PTR if self.shares_host_memory else clapi.MEM_COPY_HOST_PTR
        )
        self._create_buffer = clapi.lib().clCreateBuffer
        self._launch_namespaces: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self._kernels: weakref.WeakSet[Any] = weakref.WeakSet()  # OpenCLKernels (drop_views() at close)
        self._owned: list[weakref.finalize[Any, Any]] = []  # kernel and program releases, in creation order
        self.closed = False
        self.pid = os.getpid()
        self._open()
        # Observability for tests/benchmarks: OpenCL C compiles vs program-binary loads.
        self.source_builds = 0
        self.binary_loads = 0
        self.resets = 0

    def _open(self) -> None:
        """Create the context and the queue; both are released when this object dies."""
        self.ctx_handle = clapi.create_context(self.handle)
        try:
            self.queue_handle = clapi.create_queue(self.ctx_handle, self.handle, clapi.QUEUE_PROFILING_ENABLE)
        except clapi.CLError:
            clapi.release("Context", self.ctx_handle)
            raise
        # not by weakref's exit hook: at exit close() runs it, after the kernels, in order
        self._handles = {"CommandQueue": self.queue_handle, "Context": self.ctx_handle}
        self._release_queue = weakref.finalize(self, _release_all, self._programs, self._handles)
        self._release_queue.atexit = False

    def own(self, kernel: Any, handle: int) -> None:
        """Release ``handle`` (its ``cl_kernel``) when ``kernel`` dies or the device closes, whichever is first."""
        fin = weakref.finalize(kernel, clapi.release, "Kernel", handle)
        fin.atexit = False
        self._owned.append(fin)
        self._kernels.add(kernel)
        if len(self._owned) > 64 and len(self._owned) > 2 * len(self._kernels):
            self._owned = [f for f in self._owned if f.alive]

    def close(self) -> None:
        """Wait for the queue, then release every OpenCL object kdsl holds on this device.

        Order matters to the driver only in that nothing may be used after its release: the
        generated launch functions are disarmed first (a later launch raises), then kernels
        (ours and the pyopencl views), programs, pooled buffers, the queue and the context.
        Buffers of device arrays still alive go back to the pool, which no longer holds them:
        they are freed when the last array dies (at the latest when the interpreter clears
        its modules, while the driver is still loaded).
        """
        if self.closed:
            return
        with contextlib.suppress(clapi.CLError):  # a lost device: release what we can
            clapi.finish(self.queue_handle)
        self.closed = True
        for ns in list(self._launch_namespaces.values()):
            ns.update(_k=None, _setm=None, _pack=None, _q=None, _kh=None, _try=False, _bind=_refuse_bind,
                      _wrap=self._closed, _pwrap=self._closed)  # fmt: skip
        for k in list(self._kernels):
            k.drop_views()
        for fin in [*self._owned, self._release_queue]:  # kernels; programs, the queue, the context
            _run_now(fin)
        self._owned.clear()
        self._free.clear()
        self._empty = None
        for name in ("sched_buffer", "sched_handle"):
            self.__dict__.pop(name, None)
        pool = self.__dict__.pop("_pool", None)
        if pool is not None:
            pool.stop_holding()
        for name in ("queue", "ctx", "dev"):
            self.__dict__.pop(name, None)

    def _closed(self, *_: Any) -> NoReturn:
        raise BackendUnavailableError(f"the OpenCL device {self.name} was closed (interpreter exit): nothing can run on it")

    def check_open(self) -> None:
        if self.closed:
            self._closed()

    # --- faults -------------------------------------------------------------------------
    def register_launch(self, namespace: dict[str, Any]) -> None:
        """A generated launch function's globals: :meth:`recover` points them at the new queue."""
        self._launch_namespaces[id(namespace)] = namespace

    def recover(self) -> None:
        """Replace the command queue after a fault, keeping the context.

        Programs, kernels and buffers belong to the context and stay valid;
        the pyopencl views (queue, memory pool) are recreated on next use and
        every generated launch function is pointed at the new queue.
        """
        old = self.queue_handle
        self.queue_handle = clapi.create_queue(self.ctx_handle, self.handle, clapi.QUEUE_PROFILING_ENABLE)
        self._handles["CommandQueue"] = self.queue_handle
        clapi.release("CommandQueue", old)
        for name in ("queue", "_pool"):
            self.__dict__.pop(name, None)
        for ns in list(self._launch_namespaces.values()):
            ns["_qh"] = self.queue_handle
            ns["_k"] = None  # the device-array branch binds again, to the new pyopencl queue
        self._zero_sched()
        self.resets += 1

    def fault(self, function: str, status: int, kernel: str | None = None) -> NoReturn:
        """Raise the failed call as a :class:`clapi.CLError` naming ``kernel``; recover first if the queue is lost."""
        self.check_open()
        detail = ""
        if status in clapi.FATAL:
            try:
                self.recover()
            except clapi.CLError as e:
                detail = f"the queue could not be recreated ({e.name}): the device is unusable"
            else:
                detail = "the command queue was recreated, later launches run on the new one"
        raise clapi.CLError(function, status, detail, f"kernel '{kernel}'" if kernel else "")

    # --- pyopencl views of the same objects (imported on first use) -------------------
    @cached_property
    def ctx(self) -> Any:
        """The context as a ``pyopencl.Context`` (the same ``cl_context``)."""
        self.check_open()
        return pyopencl().Context.from_int_ptr(self.ctx_handle, retain=True)

    @cached_property
    def queue(self) -> Any:
        """The queue as a ``pyopencl.CommandQueue`` (the same ``cl_command_queue``)."""
        self.check_open()
        return pyopencl().CommandQueue.from_int_ptr(self.queue_handle, retain=True)

    @cached_property
    def dev(self) -> Any:
        """The device as a ``pyopencl.Device``."""
        self.check_open()
        return pyopencl().Device.from_int_ptr(self.handle, retain=True)

    @cached_property
    def _pool(self) -> Any:
        import pyopencl.tools as cl_tools

        self.check_open()
        return cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))

    @cached_property
    def caps(self) -> DeviceCaps:
        """What the code generator may use (imported lazily: a disk-cache hit never renders code)."""
        from kdsl.codegen.opencl import DeviceCaps

        return DeviceCaps(fp64=self.fp64, int64_atomics=self.int64_atomics, claim_programs=self.claims,
                          int8_dot=self.int8_dot, is_cpu=self.is_cpu)  # fmt: skip

    # --- claimed launches (kdsl/codegen/opencl/claim.py) ------------------------------------
    def claim_geometry(self, grid: tuple[int, int, int], claim: int) -> tuple[tuple[int, int, int], int]:
        """(global size, ``kd_chunk``) of a claiming kernel's launch over ``grid``: one work-group
        per compute unit (fewer for smaller grids); each claim takes 1/``kd_chunk`` of the ids
        left (guided self-scheduling), ``kd_chunk = claim x units``."""
        total = grid[0] * grid[1] * grid[2]
        return (max(1, min(self.compute_units, total)), 1, 1), claim * self.compute_units

    def claim_args(self, grid: tuple[int, int, int], claim: int) -> tuple[tuple[int, int, int], list[Any]]:
        """(global size, trailing kernel arguments) of a claiming kernel's launch through pyopencl
        (the checked path; the fast path packs the same values itself)."""
        gsize, chunk = self.claim_geometry(grid, claim)
        return gsize, [self.sched_buffer, *(np.int32(g) for g in grid), np.uint64(chunk)]

    @cached_property
    def sched_handle(self) -> int:
        """The two zeroed ``ulong`` counters claiming kernels share (a ``cl_mem``; the in-order queue
        runs one launch at a time, and each launch leaves them at zero)."""
        self.check_open()
        zeros = (ctypes.c_uint64 * 2)()
        h = clapi.create_buffer(self.ctx_handle, clapi.MEM_READ_WRITE | clapi.MEM_COPY_HOST_PTR, 16,
                                ctypes.addressof(zeros))  # fmt: skip
        fin = weakref.finalize(self, clapi.release, "MemObject", h)
        fin.atexit = False
        self._owned.append(fin)
        return h

    @cached_property
    def sched_buffer(self) -> Any:
        """:attr:`sched_handle` as a ``pyopencl.Buffer`` (the checked and device-array launch paths)."""
        return pyopencl().Buffer.from_int_ptr(self.sched_handle, retain=True)

    def _zero_sched(self) -> None:
        """A launch that did not finish may leave the counters set: zero them for the next one."""
        if "sched_handle" in self.__dict__:
            zeros = np.zeros(2, np.uint64)
            clapi.write_buffer(self.queue_handle, self.sched_handle, zeros.nbytes, zeros.ctypes.data)

    @property
    def default_num_threads(self) -> int:
        """One work-item per program on CPUs (explicit loops vectorise there), 64 elsewhere."""
        return 1 if self.is_cpu else 64

    def build(self, source: str) -> int:
        """The built program (a ``cl_program`` handle, owned by the device) for ``source``, cached per process."""
        prog = self._programs.get(source)
        if prog is not None:
            return prog
        self.check_open()
        try:
            prog = clapi.program_from_source(self.ctx_handle, self.handle, source, _BUILD_OPTIONS)
        except clapi.CLError as e:  # a kdsl bug: generated code must build
            raise CompilationError(f"opencl: the generated OpenCL C failed to build on {self.name}:\n{e}") from e
        self.source_builds += 1
        self._keep(source, prog)
        return prog

    def load_binary(self, source: str, binary: bytes) -> int:
        """The program for ``source`` from a binary this driver produced earlier (disk cache).

        Raises :class:`clapi.CLError` if the driver rejects it (corrupt, other driver version).
        """
        prog = self._programs.get(source)
        if prog is not None:
            return prog
        self.check_open()
        prog = clapi.program_from_binary(self.ctx_handle, self.handle, binary, _BUILD_OPTIONS)
        self.binary_loads += 1
        self._keep(source, prog)
        return prog

    def _keep(self, source: str, prog: int) -> None:
        self._programs[source] = prog  # released by close(), or when the device dies

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
            pyopencl().enqueue_copy(self.queue, buffer, np.ascontiguousarray(src), dst_offset=offset, is_blocking=True)

    def read(self, buffer: Any, dst: np.ndarray, offset: int = 0) -> None:
        """Copy ``buffer`` at byte ``offset`` into ``dst`` after every queued launch (blocking)."""
        if dst.nbytes:
            pyopencl().enqueue_copy(self.queue, dst, buffer, src_offset=offset, is_blocking=True)

    # --- buffers (pyopencl objects: the checked launch path) -----------------------------
    def wrap_host(self, arr: np.ndarray) -> Any:
        """A buffer over ``arr``'s memory: zero-copy where the device shares host memory."""
        cl = pyopencl()
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
        cl = pyopencl()
        if self.shares_host_memory:
            mapped, _ = cl.enqueue_map_buffer(
                self.queue, buf, cl.map_flags.READ, 0, arr.shape, arr.dtype, is_blocking=True
            )
            mapped.base.release()
            return
        cl.enqueue_copy(self.queue, arr, buf, is_blocking=True)

    # --- buffers as clapi handles (the numpy launch path: no pyopencl) --------------------
    def wrap_host_handle(self, arr: np.ndarray) -> int:
        """:meth:`wrap_host` as a new ``cl_mem`` handle the caller releases (``clapi.release``).

        The common case (a non-empty writeable array) takes the array's address with
        ``c_char.from_buffer`` (about 3x cheaper than ``arr.ctypes.data``) and passes no
        error slot: a NULL handle sends it down the checked path, which reports the status.
        """
        n = arr.nbytes
        if n and arr.flags.writeable:
            ptr = _byref(_char.from_buffer(arr))  # type: ignore[arg-type]
            h: int | None = self._create_buffer(self.ctx_handle, self._wrap_flags, n, ptr, None)
            if h:
                return h
        return self._wrap_host_checked(arr)

    def _wrap_host_checked(self, arr: np.ndarray) -> int:
        n = arr.nbytes
        if n == 0:
            return clapi.create_buffer(self.ctx_handle, clapi.MEM_READ_WRITE, ALIGN, None)
        ptr = arr.ctypes.data
        if not arr.flags.writeable:  # the driver copies at creation: read-only memory is never written
            return clapi.create_buffer(self.ctx_handle, clapi.MEM_READ_ONLY | clapi.MEM_COPY_HOST_PTR, n, ptr)
        return clapi.create_buffer(self.ctx_handle, self._wrap_flags, n, ptr)

    def write_back_handle(self, buf: int, arr: np.ndarray) -> None:
        """:meth:`write_back` for a handle from :meth:`wrap_host_handle`."""
        n = arr.nbytes
        if n == 0:
            return
        try:
            if self.shares_host_memory:
                clapi.map_unmap_read(self.queue_handle, buf, n)
            else:
                clapi.read_buffer(self.queue_handle, buf, n, arr.ctypes.data)
        except clapi.CLError as e:
            self.fault(e.function, e.code)

    def scratch(self, nbytes: int) -> Any:
        """A pooled device buffer of at least ``nbytes`` (give it back with :meth:`release`)."""
        size = 1 << max(2, (nbytes - 1).bit_length())
        free = self._free.get(size)
        if free:
            return free.pop()
        cl = pyopencl()
        return cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size)

    def release(self, buf: Any) -> None:
        self._free.setdefault(int(buf.size), []).append(buf)

    def synchronize(self) -> None:
        status = clapi.lib().clFinish(self.queue_handle)
        if status:
            self.fault("clFinish", status)


def _release_all(programs: dict[str, int], handles: dict[str, int]) -> None:
    for prog in programs.values():
        clapi.release("Program", prog)
    programs.clear()
    for kind, h in handles.items():
        clapi.release(kind, h)


def _refuse_bind() -> bool:
    return False


def _run_now(fin: weakref.finalize[Any, Any]) -> None:
    """Run ``fin``'s callback now, also at interpreter exit.

    Calling a ``weakref.finalize`` does nothing once ``weakref``'s own exit hook has run (it may
    be registered after ours, so it runs first); ``detach`` still hands back the callback.
    """
    detached = fin.detach()
    if detached is not None:
        _, func, args, kwargs = detached
        func(*args, **kwargs)


def get_device() -> Device:
    """The per-process device (created once, also when several threads launch first at the same time)."""
    dev = _DEVICE[0]
    if dev is None:
        with _INIT_LOCK:
            dev = _DEVICE[0]
            if dev is None:
                devices = all_devices()
                if not devices:
                    raise BackendUnavailableError(INSTALL_HINT if pyopencl_installed() else PYOPENCL_HINT)
                dev = _DEVICE[0] = Device(_choose(devices))
    return dev


def shutdown() -> None:
    """Close the process's device (run at interpreter exit); nothing runs on OpenCL afterwards.

    The device stays the process's device, closed, so every later launch -- through a
    kernel compiled before or a new one -- raises the same clear error. Not in a process
    forked from the one that opened it: the parent owns those objects.
    """
    with _INIT_LOCK:
        dev = _DEVICE[0]
    if dev is not None and dev.pid == os.getpid():
        dev.close()


_DEVICE: list[Device | None] = [None]
atexit.register(shutdown)
