"""The ``cpu`` backend: tile IR -> wi IR -> LLVM IR -> host object -> launch.

``CPUBackend.compile`` lowers with a one-work-item-per-program layout
(``num_threads = 1``: each program's tiles live in private arrays, element
loops are vectorised by LLVM; a requested ``num_threads`` -- a GPU work-group
size -- is ignored), renders LLVM IR, gets object code from the disk cache or
LLVM (O3, host CPU), and links it into the process.

A launch packs the arguments into one block of 8-byte slots (array data
pointers: zero copy; scalars converted to the parameter type), splits the
linearised grid into contiguous slices, which the thread pool's threads claim
one at a time while any is left, and returns when all programs finished. Threads: ``LaunchOptions.extra``
``("cpu_threads", n)``, else env ``KDSL_CPU_THREADS``, else the CPUs available.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import struct
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kdsl.codegen.llvm import RenderedLLVM, render_llvm
from kdsl.errors import DeviceAssertionError, LaunchError
from kdsl.ir.analysis import unused_pointer_args, written_pointer_args
from kdsl.ir.core import Location, ModuleOp
from kdsl.ir.types import PointerType, ScalarType, Type
from kdsl.lowering import Layout, lower_to_wi
from kdsl.lowering.layout import CPU_STEPS, knob_choices
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.cpu import compiler
from kdsl.runtime.cpu.loader import LoadedObject
from kdsl.runtime.cpu.pool import default_threads, get_pool, handoff_s, slice_count
from kdsl.runtime.cpu.target import host
from kdsl.runtime.device_array import HostDevice
from kdsl.runtime.hostmem import byte_span
from kdsl.runtime.limits import CPU_PRIVATE_LIMIT, check_private

_SLOT_FMT = {"i1": "B7x", "i8": "b7x", "i16": "h6x", "i32": "i4x", "i64": "q", "u8": "B7x", "u16": "H6x",
             "u32": "I4x", "u64": "Q", "f16": "e6x", "bf16": "f4x", "f32": "f4x", "f64": "d"}  # fmt: skip

_LOADED: dict[str, LoadedObject] = {}  # object-code cache: IR hash -> linked object


@dataclass
class CompiledStages:
    """Every artefact of one compilation (for dumps and tests)."""

    wi_module: ModuleOp
    rendered: RenderedLLVM
    object_code: bytes
    cache_hit: bool


def compile_stages(module: ModuleOp, entry: str, options: LaunchOptions, noalias: bool = True) -> CompiledStages:
    """Lower (``noalias``: pointer parameters assumed not to overlap), render, compile."""
    layout = cpu_layout(options)
    wmod = lower_to_wi(module, entry, layout, noalias=noalias)
    # private arrays live on the worker thread's stack: an oversized tile would segfault
    check_private(wmod, layout.num_threads, CPU_PRIVATE_LIMIT, "cpu")
    rendered = render_llvm(wmod, vector_bytes=host().vector_bytes, int8_dot=host().int8_dot)
    func = module.lookup(entry)
    loc = func.loc if func is not None else None
    obj, hit = compiler.compile_object(rendered.ir, kernel=rendered.kernel_name, loc=loc)
    return CompiledStages(wmod, rendered, obj, hit)


def cpu_layout(options: LaunchOptions) -> Layout:
    """One work-item per program; ``tile.dot`` as ``wi.mma`` blocked for this host's registers.

    Defaults (AVX-512: 32 vector registers): 4 rows x 4 vectors of ``c`` held
    in registers (16 accumulators); with 16 registers (AVX2), 4 x 2. The
    autotuner's ``lower.dot_block_m`` / ``lower.dot_block_n`` /
    ``lower.vector_width`` keys in ``options.extra`` override them; ``lower.prefetch=0`` turns off
    the software prefetch of the next row (:mod:`kdsl.lowering.prefetch`), ``lower.align_stores=0``
    the aligning head of streaming-store loops (:mod:`kdsl.lowering.align_stores`),
    ``lower.stream_stores=0`` the streaming stores to large outputs (:mod:`kdsl.lowering.stream_stores`).
    """
    lanes = host().vector_bytes // 4
    fields = {"vector_width": lanes, "dot_block_m": 4, "dot_block_n": lanes * (4 if lanes >= 16 else 2),
              **dict.fromkeys(CPU_STEPS, 1)}  # fmt: skip
    extra = dict(options.extra)
    for name in fields:
        if f"lower.{name}" in extra:
            fields[name] = int(extra[f"lower.{name}"])
    return Layout(num_threads=1, chunk=1, **fields)


def _bf16(v: Any) -> float:
    bits = int(np.float32(v).view(np.uint32))
    if np.isnan(np.float32(v)):
        return float(np.float32(v))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.uint32(bits).view(np.float32))


def _scalar_binder(t: ScalarType, name: str) -> Callable[[Any], Any]:
    if t.name == "i1":
        return lambda v: int(bool(v))
    if t.name == "bf16":
        return _bf16
    conv = t.np_dtype.type
    py = float if t.is_float else int
    # the common cases without numpy's error-state context (a third of a small launch's host time)
    if t.is_float:
        fmax = float(np.finfo(t.np_dtype).max)  # type: ignore[type-var]
        lo_i, hi_i = 1, 0
    else:
        info = np.iinfo(t.np_dtype)  # type: ignore[type-var]
        lo_i, hi_i, fmax = int(info.min), int(info.max), 0.0

    def bind(v: Any) -> Any:
        tv = type(v)
        if tv is int and lo_i <= v <= hi_i:
            return v
        if tv is float and -fmax < v < fmax:  # NaN and out-of-range values take the checked path
            return py(conv(v))
        try:
            with np.errstate(all="ignore"):
                return py(conv(v))
        except (OverflowError, TypeError, ValueError) as e:
            raise LaunchError(f"cannot pass {v!r} as {t}: {e}", name) from e

    return bind


def _array_data_offset() -> int | None:
    """Where a numpy array object keeps its data pointer, if this interpreter allows reading it.

    ``arr.ctypes.data`` builds a helper object per call (~1 µs, a sixth of a small
    launch); numpy's array struct starts with the data pointer right after the object
    header, a layout numpy has kept since 1.7. Used only on CPython (where ``id`` is the
    address) and only if probe arrays, one of them a view, read back right.
    """
    if platform.python_implementation() != "CPython":
        return None
    off = object.__basicsize__
    base = np.arange(12, dtype=np.float32)
    for probe in (base, base[5:], np.zeros((2, 3), np.float64).T):
        if ctypes.c_void_p.from_address(id(probe) + off).value != probe.ctypes.data:
            return None
    return off


_DATA_OFFSET = _array_data_offset()
_read_pointer = ctypes.c_void_p.from_address


def _address(v: Any, name: str) -> int:
    if _DATA_OFFSET is not None and type(v) is np.ndarray:  # not a subclass: its layout is unchecked
        return _read_pointer(id(v) + _DATA_OFFSET).value or 0
    if isinstance(v, np.ndarray):
        return int(v.ctypes.data)
    iface = getattr(v, "__array_interface__", None)
    if iface is not None:
        return int(iface["data"][0])
    raise LaunchError(f"expected an array for a pointer parameter, got {type(v).__name__}", name)


def _threads(options: LaunchOptions) -> int:
    extra = dict(options.extra)
    n = extra.get("cpu_threads")
    return int(n) if n else default_threads()


class CPUKernel:
    """A compiled specialisation, launchable with numpy arrays and scalars."""

    def __init__(self, stages: CompiledStages, threads: int, safe: Callable[[], CPUKernel] | None = None) -> None:
        self.stages = stages
        self._safe_factory = safe
        self._safe: CPUKernel | None = None
        r = stages.rendered
        key = compiler.cache_key(r.ir, host())
        loaded = _LOADED.get(key)
        if loaded is None:
            try:
                loaded = LoadedObject(stages.object_code)
            except RuntimeError as exc:  # the JIT linker rejected the object: nothing was cached
                raise compiler.LLVMBuildError(r.kernel_name, "load the object code of", str(exc).strip()) from None
            _LOADED[key] = loaded
        self.loaded = loaded
        self.run = loaded.run
        self.kernel_name = r.kernel_name
        self.threads = max(1, threads)
        # seconds per program, measured on every launch (the calling thread's share);
        # grids whose estimated total is below ``inline_below`` run on the calling thread
        self.program_s = float("inf")
        self.inline_below = handoff_s()
        func = stages.wi_module.body.ops[0]
        self.asserts: tuple[tuple[str, str, int, int], ...] = tuple(func.attributes.get("asserts") or ())
        self.prints = r.has_print
        names = [str(n) for n in func.attributes["arg_names"]]
        self.params: list[tuple[str, Callable[[Any], Any] | None]] = []
        fmt = "<"
        for t, n in zip(r.param_types, names):
            fmt += _param(t, n, self.params)
        self.fmt = struct.Struct(fmt + "Q")
        self.nslots = len(self.params) + 1
        written = written_pointer_args(func)
        self.noalias = bool(func.attributes.get("noalias"))
        self.written = [i in written for i in range(len(self.params))]
        # pointers the kernel never reads take no part in the overlap check (an absent bias passed
        # as the output must not send every launch to the safe variant)
        self.unused = unused_pointer_args(func)
        used = [i for i, (_, b) in enumerate(self.params) if b is None and i not in self.unused]
        self.check_alias = self.noalias and len(used) > 1 and any(self.written)

    def safe_kernel(self) -> CPUKernel:
        """The variant compiled without the no-overlap assumption (built on first need)."""
        if self._safe is None:
            assert self._safe_factory is not None
            self._safe = self._safe_factory()
        return self._safe

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        if len(args) != len(self.params):
            raise LaunchError(f"expected {len(self.params)} arguments, got {len(args)}", kernel=self.kernel_name)
        gx, gy, gz = (int(g) for g in grid)
        if min(gx, gy, gz) <= 0:
            return
        values: list[Any] = []
        for (name, bind), v in zip(self.params, args):
            values.append(_address(v, name) if bind is None else bind(v))
        if self.check_alias and _overlap(self.params, self.written, args, values, self.unused):
            self.safe_kernel().launch(grid, args)
            return
        status = ctypes.c_int32(0)
        values.append(ctypes.addressof(status) if self.asserts else 0)
        buf = ctypes.create_string_buffer(self.fmt.size)
        self.fmt.pack_into(buf, 0, *values)
        argv = ctypes.addressof(buf)
        total = gx * gy * gz
        if self.prints:
            sys.stdout.flush()
        if total == 1 or self.threads == 1 or self.program_s * total < self.inline_below:
            self._run_inline(argv, gx, gy, gz, total)
        else:
            slices = slice_count(total, self.threads)
            t0 = time.perf_counter()
            share = get_pool(self.threads).run_grid(self.loaded, argv, gx, gy, gz, total, slices)
            if share is None:  # another thread's launch holds the pool: run this one here meanwhile
                self._run_inline(argv, gx, gy, gz, total)
            elif share[1]:  # the calling thread's own slices: a time free of the hand-off
                self._measured(*share)
            elif self.program_s == float("inf"):  # the workers took every slice: a wall-time bound
                self._measured((time.perf_counter() - t0) * min(self.threads, slices), total)
        if self.prints:
            _libc_fflush()
        if status.value:
            self._raise_assert(status.value)

    def _run_inline(self, argv: int, gx: int, gy: int, gz: int, total: int) -> None:
        """Every program on the calling thread: no hand-off, the cheapest small launch."""
        t0 = time.perf_counter()
        self.run(argv, gx, gy, gz, 0, total)
        self._measured(time.perf_counter() - t0, total)

    def _measured(self, seconds: float, programs: int) -> None:
        """Update the per-program time estimate that decides inline vs pool launches."""
        if programs > 0:
            self.program_s = seconds / programs

    def _raise_assert(self, aid: int) -> None:
        message, file, line, col = self.asserts[aid - 1]
        raise DeviceAssertionError(
            f"device assertion failed in kernel '{self.kernel_name}': {message}", Location(file, line, col)
        )


def _param(t: Type, name: str, params: list[tuple[str, Callable[[Any], Any] | None]]) -> str:
    if isinstance(t, PointerType):
        params.append((name, None))
        return "Q"
    assert isinstance(t, ScalarType)
    params.append((name, _scalar_binder(t, name)))
    return _SLOT_FMT[t.name]


def _overlap(
    params: list[tuple[str, Callable[[Any], Any] | None]],
    written: list[bool],
    args: Sequence[Any],
    addresses: list[Any],
    unused: frozenset[int] = frozenset(),
) -> bool:
    """True when memory written through one pointer parameter is reachable through another
    (parameters in ``unused`` are never read: they reach nothing)."""
    spans = []
    for i, ((_, bind), w, v, lo) in enumerate(zip(params, written, args, addresses)):
        if bind is None and i not in unused:
            first, end = _byte_span(v)
            spans.append((lo + first, lo + end, w))
    spans.sort()
    group_hi, group_written, group_size = -1, False, 0
    for lo, hi, w in spans:
        if lo < group_hi:
            group_hi, group_written, group_size = max(group_hi, hi), group_written or w, group_size + 1
            if group_written and group_size > 1:
                return True
        else:
            group_hi, group_written, group_size = hi, w, 1
    return False


def _byte_span(v: Any) -> tuple[int, int]:
    """Bytes ``v`` reaches relative to its first element: ``[first, end)``.

    A strided view reaches further than its ``nbytes`` (``a[::2]`` spans twice as
    much memory) and a negative stride reaches below its first element; both
    must count, or an overlap with another argument goes unseen. numpy arrays and
    kdsl device arrays carry byte strides; anything else counts ``nbytes``.
    """
    if type(v) is np.ndarray and v.flags.c_contiguous:
        return 0, max(1, v.nbytes)
    shape, strides = getattr(v, "shape", None), getattr(v, "strides", None)
    item = getattr(getattr(v, "dtype", None), "itemsize", None)
    if not isinstance(v, np.ndarray) and type(v).__name__ != "DeviceArray":
        shape = None
    if shape is None or not isinstance(strides, tuple) or not isinstance(item, int):
        return 0, max(1, int(getattr(v, "nbytes", 1)))
    lo, hi = byte_span(shape, strides, item)
    return (lo, hi) if hi > lo else (0, 1)


def _libc_fflush() -> None:
    ctypes.CDLL(None).fflush(None)


class CPUDevice(HostDevice):
    """Host memory (numpy buffers, ``host_memory = True``) identified by the code it runs.

    ``key`` is the LLVM host fingerprint (llvmlite version, triple, CPU name,
    feature string): the JIT's disk cache keys compiled kernels with it, so an
    entry built for one CPU (e.g. with AVX-512) is never used on another.
    """

    def __init__(self) -> None:
        super().__init__()
        h = host()
        self.name = f"llvm-{h.cpu}"
        self.key = h.fingerprint


@functools.cache
def cpu_device() -> CPUDevice:
    """The per-process device of the ``cpu`` backend."""
    return CPUDevice()


class CPUBackend:
    """``kdsl.runtime.backend.Backend`` for the host CPU through llvmlite."""

    name = "cpu"

    def device(self) -> CPUDevice:
        return cpu_device()

    def availability(self) -> tuple[bool, str]:
        try:
            import llvmlite.binding  # noqa: F401
        except ImportError as exc:
            return False, f"llvmlite is not importable ({exc}); install it with 'pip install llvmlite'"
        return True, ""

    def tunables(self) -> list[dict[str, tuple[Any, ...]]]:
        """The launch options worth sweeping here (``kdsl.autotune.space``), defaults first.

        Always one work-item per program: the register blocking of ``tile.dot``
        and the vector width are what :func:`cpu_layout` lets a launch change.
        """
        d = cpu_layout(LaunchOptions())
        return [
            {
                "lower.vector_width": knob_choices(d.vector_width, (4, 8, 16)),
                "lower.dot_block_m": knob_choices(d.dot_block_m, (2, 4, 8)),
                "lower.dot_block_n": knob_choices(d.dot_block_n, (16, 32, 64)),
            }
        ]

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> CPUKernel:
        threads = _threads(options)

        def safe() -> CPUKernel:
            return CPUKernel(compile_stages(module, entry, options, noalias=False), threads)

        return CPUKernel(compile_stages(module, entry, options), threads, safe)
