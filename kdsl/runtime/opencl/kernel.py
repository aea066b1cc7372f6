"""``OpenCLKernel``: one built specialisation and its launch paths.

A kernel is described by a :class:`KernelInfo` (JSON-serialisable, so the disk
cache can store it and rebuild the kernel from a program binary without
lowering again) plus its built program.

Launch paths:

* all pointer arguments are device arrays -> the generated fast function
  (``fastlaunch``): set arguments, enqueue, return (asynchronous);
* all pointer arguments are C-contiguous numpy arrays (no written one
  overlapping another) -> the same function's numpy branch: wrap zero-copy,
  launch, make writes visible, synchronously; through clapi while pyopencl is
  not imported (so a warm start does not pay for it), else through pyopencl;
* anything else -> :meth:`OpenCLKernel.launch_checked`: numpy arrays are
  wrapped zero-copy (``hostargs``), device arrays passed as (buffer, offset),
  scalars converted with per-parameter binders; the launch is synchronous when
  any numpy array is involved, or when the kernel has asserts or prints (their
  results live on the host).

Written memory reachable through two parameters (``add(x, x, x)``, or
overlapping views) switches to the aliasing-safe variant, built on first need.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from kdsl.errors import DeviceAssertionError, LaunchError
from kdsl.ir.core import Location
from kdsl.ir.types import ScalarType, parse_type
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.hostmem import device_aliased
from kdsl.runtime.opencl import clapi
from kdsl.runtime.opencl.device import Device, pyopencl
from kdsl.runtime.opencl.fastlaunch import make_fast_launch
from kdsl.runtime.opencl.hostargs import bind_arrays, host_view
from kdsl.runtime.opencl.stdout import capture_stdout

_NOTHING = np.empty(0, np.uint8)


@dataclass
class KernelInfo:
    """What a launch needs besides the program (stored as disk-cache metadata)."""

    kernel_name: str
    num_threads: int
    params: list[tuple[str, str, bool]]  # (name, "ptr" or scalar type, written)
    asserts: list[tuple[str, str, int, int]]  # per assert id: message, file, line, column
    prints: bool
    claim: int = 0  # > 0: work-groups claim program ids, 1/(claim x units) of those left at a time (claim.py)
    unused: list[int] = field(default_factory=list)  # pointer parameters the kernel never reads: no aliasing

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any]) -> KernelInfo:
        return KernelInfo(
            kernel_name=str(d["kernel_name"]),
            num_threads=int(d["num_threads"]),
            params=[(str(n), str(t), bool(w)) for n, t, w in d["params"]],
            asserts=[(str(m), str(f), int(ln), int(c)) for m, f, ln, c in d["asserts"]],
            prints=bool(d["prints"]),
            claim=int(d.get("claim", 0)),
            unused=[int(i) for i in d.get("unused", [])],
        )


def scalar_binder(t: ScalarType, name: str) -> Callable[[Any], Any]:
    """Python/numpy value -> the numpy scalar the kernel parameter expects."""
    if t.name == "i1":
        return lambda v: np.uint8(bool(v))
    if t.name == "f16":
        return lambda v: np.float32(np.float16(v))
    if t.name == "bf16":

        def bf16(v: Any) -> Any:
            bits = int(np.float32(v).view(np.uint32))
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            return np.uint32(bits).view(np.float32)

        return bf16
    conv = t.np_dtype.type

    def bind(v: Any) -> Any:
        try:
            return conv(v)
        except (OverflowError, TypeError, ValueError) as e:
            raise LaunchError(f"cannot pass {v!r} as {t}: {e}", name) from e

    return bind


Params = list[tuple[str, bool, Callable[[Any], Any] | None, ScalarType | None]]


def _params(info: KernelInfo) -> Params:
    out: Params = []
    for name, tname, written in info.params:
        if tname == "ptr":
            out.append((name, written, None, None))
            continue
        t = parse_type(tname)
        assert isinstance(t, ScalarType)
        out.append((name, False, scalar_binder(t, name), t))
    return out


class OpenCLKernel:
    """A compiled specialisation, launchable with device arrays, numpy arrays and scalars."""

    def __init__(
        self,
        device: Device,
        program: int,
        info: KernelInfo,
        source: str,
        rebuild_safe: Callable[[], str],
        stages: Any = None,
        cache_meta: dict[str, Any] | None = None,
        cache_files: dict[str, bytes] | None = None,
    ) -> None:
        self.device = device
        self.program_handle = program  # a cl_program owned by the device's program cache
        self.info = info
        self.source = source
        self.stages = stages  # CompiledStages when compiled in this process (None when loaded)
        self._rebuild_safe = rebuild_safe
        self._safe: Any = None
        self.cache_meta = dict(cache_meta or {})
        self.cache_files = dict(cache_files or {})
        self.kernel_handle = clapi.create_kernel(program, info.kernel_name)
        device.own(self, self.kernel_handle)
        self.kernel_name = info.kernel_name
        self.num_threads = info.num_threads
        self.asserts = tuple(info.asserts)
        self.prints = info.prints
        self.params = _params(info)
        self._last_args: list[Any] = [None]  # what the fast path last set on self.kernel
        fast = None
        if not self.asserts and not self.prints:
            fast = make_fast_launch(
                self.kernel_handle,
                self.kernel_name,
                lambda: self.kernel,
                device,
                self.num_threads,
                self.params,
                info.claim,
                self.launch_checked,
                self._last_args,
                frozenset(info.unused),
            )
        self.launch = fast or self.launch_checked  # type: ignore[method-assign,assignment]

    @cached_property
    def kernel(self) -> Any:
        """The ``pyopencl.Kernel`` view of our ``cl_kernel`` (once: ``program.name`` builds anew each time)."""
        return pyopencl().Kernel.from_int_ptr(self.kernel_handle, retain=True)

    def drop_views(self) -> None:
        """Let go of the pyopencl kernels (this one's view and the aliasing-safe variant) before
        the device releases the objects under them (``Device.close``)."""
        self.__dict__.pop("kernel", None)
        self._safe = None

    @property
    def program(self) -> Any:
        """The ``pyopencl.Program`` view of the built program."""
        return pyopencl().Program.from_int_ptr(self.program_handle, retain=True)

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:  # replaced per instance
        self.launch_checked(grid, args)

    def launch_checked(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        self.device.check_open()
        if len(args) != len(self.params):
            raise LaunchError(f"expected {len(self.params)} arguments, got {len(args)}", kernel=self.kernel_name)
        if min(grid) <= 0:
            return
        self._last_args[0] = None  # this path sets the kernel's arguments itself
        dev = self.device
        values, arrays, on_device = self._bind(args)
        back, aliased = bind_arrays(dev, arrays, values) if arrays else ([], False)
        aliased = aliased or (len(on_device) > 1 and device_aliased(on_device))
        kernel = self.kernel if not aliased else self.safe_kernel()
        status = None
        if self.asserts:
            status = dev.scratch(4)
            pyopencl().enqueue_fill_buffer(dev.queue, status, np.zeros(1, np.int32), 0, 4)
            values.append(status)
        nt = self.num_threads
        gsize = (grid[0] * nt, grid[1], grid[2])
        if self.info.claim:
            gsize, trailing = dev.claim_args(grid, self.info.claim)
            values += trailing
        kernel.set_args(*values)
        cl = pyopencl()
        with capture_stdout(self.prints, dev):
            try:
                cl.enqueue_nd_range_kernel(dev.queue, kernel, gsize, (nt, 1, 1))
                for buf, host in back:
                    dev.write_back(buf, host)
            except cl.Error as e:  # a driver fault: a kdsl error naming the kernel; the queue is replaced
                dev.fault(str(e.routine), int(e.code), self.kernel_name)
            if arrays and not back:
                dev.synchronize()  # numpy arguments: the launch is synchronous
        if status is not None:
            self._check_status(status)

    def _bind(self, args: Sequence[Any]) -> tuple[list[Any], list[tuple[int, np.ndarray, bool]], list[tuple[Any, bool]]]:
        """Kernel argument values (array slots left for :func:`bind_arrays`), the numpy arrays to
        wrap, and the device arrays the kernel reads or writes (for the aliasing check)."""
        dev = self.device
        values: list[Any] = []
        arrays: list[tuple[int, np.ndarray, bool]] = []
        on_device: list[tuple[Any, bool]] = []
        unused = self.info.unused
        for i, ((name, written, bind, _), v) in enumerate(zip(self.params, args)):
            if bind is not None:
                values.append(bind(v))
                continue
            if isinstance(v, DeviceArray):
                if v.device is not dev:
                    raise LaunchError(f"device array lives on another device ({v.device.name})", name, self.kernel_name)
                values.extend((v.buffer, np.uint64(v.offset)))
                if i not in unused:  # a pointer the kernel never reads cannot alias
                    on_device.append((v, written))
                continue
            if not isinstance(v, np.ndarray) and not hasattr(v, "__array_interface__"):
                raise LaunchError(f"expected an array for a pointer parameter, got {type(v).__name__}", name)
            if i in unused:  # never read: the shared empty stand-in, outside the aliasing groups
                values.extend((dev.wrap_host(_NOTHING), np.uint64(0)))
                continue
            arrays.append((len(values), host_view(v, name), written))
            values.extend((None, None))
        return values, arrays, on_device

    def safe_kernel(self) -> Any:
        """The variant for aliased arguments (every load before the next store), built on first need."""
        if self._safe is None:
            self.safe_source = self._rebuild_safe()
            handle = clapi.create_kernel(self.device.build(self.safe_source), self.kernel_name)
            self._safe = pyopencl().Kernel.from_int_ptr(handle, retain=False)  # pyopencl releases it
        return self._safe

    def _check_status(self, status: Any) -> None:
        out = np.zeros(1, np.int32)
        pyopencl().enqueue_copy(self.device.queue, out, status, is_blocking=True)
        self.device.release(status)
        aid = int(out[0])
        if aid == 0:
            return
        message, file, line, col = self.asserts[aid - 1]
        raise DeviceAssertionError(
            f"device assertion failed in kernel '{self.kernel_name}': {message}", Location(file, line, col)
        )

    # --- disk cache ---------------------------------------------------------------
    def program_binary(self) -> bytes:
        return clapi.program_binary(self.program_handle)

    def artifacts(self) -> tuple[dict[str, bytes], dict[str, Any]]:
        """Disk-cache stages: work-item IR, OpenCL C, the driver's program binary; metadata for ``load``."""
        files = dict(self.cache_files)
        if self.stages is not None:
            from kdsl.ir.printer import print_op

            files["wi.mlir"] = print_op(self.stages.wi_module).encode()
        files["kernel.cl"] = self.source.encode()
        files["program.bin"] = self.program_binary()
        meta = {**self.cache_meta, "info": self.info.to_json(), "device": self.device.key}
        return files, meta
