"""The ``opencl`` backend: tile IR -> wi IR -> OpenCL C -> program -> launch.

``OpenCLBackend.compile`` lowers with the layout chosen by the launch options
(``num_threads`` = work-group size, default 1 on CPUs; ``extra`` may set
``chunk``), renders OpenCL C and builds it once per distinct source. The
returned :class:`OpenCLKernel` keeps its ``cl.Kernel`` object (pyopencl builds
a new one on every ``program.name`` access) and a per-argument binder list,
so a launch is: convert scalars, wrap arrays, set args, enqueue, write back.

numpy arguments: each array is wrapped in a buffer (``USE_HOST_PTR``: zero
copy on devices sharing host memory such as PoCL; elsewhere a copy in) and,
if the kernel may write through that parameter, made visible again after the
launch (a map/unmap, which is free for host-pointer buffers; a copy out
elsewhere). A launch with numpy arguments is synchronous.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyopencl as cl

from kdsl.codegen.opencl import Rendered, render_opencl
from kdsl.codegen.opencl.render import _written_args
from kdsl.errors import CompilationError, DeviceAssertionError, LaunchError
from kdsl.ir.core import Location, ModuleOp
from kdsl.ir.types import PointerType, ScalarType, Type
from kdsl.lowering import Layout, lower_to_wi
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.opencl.device import INSTALL_HINT, Device, all_devices, get_device
from kdsl.runtime.opencl.stdout import capture_stdout


@dataclass
class CompiledStages:
    """Every artefact of one compilation (for dumps and the future disk cache)."""

    wi_module: ModuleOp
    rendered: Rendered
    layout: Layout


def compile_stages(
    module: ModuleOp, entry: str, options: LaunchOptions, device: Device, noalias: bool = True
) -> CompiledStages:
    nt = options.num_threads or dict(options.extra).get("num_threads") or device.default_num_threads
    layout = Layout.from_options(int(nt), options.extra)
    if layout.num_threads > device.max_group:
        raise CompilationError(
            f"opencl: num_threads={layout.num_threads} exceeds the device's maximum work-group size {device.max_group}"
        )
    wmod = lower_to_wi(module, entry, layout, local_limit=device.local_mem, noalias=noalias)
    return CompiledStages(wmod, render_opencl(wmod, device.caps), layout)


def _scalar_binder(t: ScalarType, name: str) -> Callable[[Any], Any]:
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


def _host_view(arr: Any, name: str) -> np.ndarray:
    """A contiguous view of the memory ``arr`` spans, starting at its first element."""
    if not isinstance(arr, np.ndarray):
        arr = np.asarray(arr)
    if arr.flags.c_contiguous:
        return arr.reshape(-1) if arr.ndim != 1 else arr
    if arr.size == 0:
        return arr.reshape(-1)
    if any(s < 0 for s in arr.strides) or any(s % arr.itemsize for s in arr.strides):
        raise LaunchError("arrays with negative or unaligned strides are not supported by the opencl backend", name)
    extent = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) // arr.itemsize + 1
    return np.lib.stride_tricks.as_strided(arr, shape=(extent,), strides=(arr.itemsize,))


def bind_arrays(
    dev: Device, arrays: list[tuple[int, np.ndarray, bool]], values: list[Any]
) -> tuple[list[tuple[Any, np.ndarray]], bool]:
    """Fill ``values[slot]``/``values[slot + 1]`` with (buffer, byte offset) for each array.

    Arrays whose memory overlaps (in-place ops, views of one array) share one
    buffer over the union of their extents, so the kernel sees one memory,
    as the interpreter does. Returns the (buffer, host view) pairs to write
    back, and whether some written memory is reachable through two parameters.
    """
    aliased = False
    spans = []
    for slot, host, written in arrays:
        lo = int(host.__array_interface__["data"][0])
        spans.append((lo, lo + host.nbytes, slot, host, written))
    spans.sort(key=lambda s: s[0])
    back: list[tuple[Any, np.ndarray]] = []
    i = 0
    while i < len(spans):
        lo, hi, _, host, written = spans[i]
        members = [spans[i]]
        j = i + 1
        while j < len(spans) and spans[j][0] < hi:
            hi = max(hi, spans[j][1])
            written = written or spans[j][4]
            members.append(spans[j])
            j += 1
        aliased = aliased or (written and len(members) > 1)
        view = host if len(members) == 1 else _raw_view(lo, hi - lo)
        buf = dev.wrap_host(view)
        for m_lo, _, slot, _, _ in members:
            values[slot] = buf
            values[slot + 1] = np.uint64(m_lo - lo)
        if written:
            back.append((buf, view))
        i = j
    return back, aliased


def _raw_view(addr: int, nbytes: int) -> np.ndarray:
    """A byte array over live memory owned by the launch's arguments."""
    return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(addr), np.uint8)


class OpenCLKernel:
    """A compiled specialisation, launchable with numpy arrays and scalars."""

    def __init__(self, device: Device, stages: CompiledStages, rebuild: Callable[[], CompiledStages]) -> None:
        self.device = device
        self.stages = stages
        self._rebuild_safe = rebuild
        self._safe: Any = None
        r = stages.rendered
        self.source = r.source
        self.kernel = cl.Kernel(device.build(r.source), r.kernel_name)  # once: program.name builds anew each time
        func = stages.wi_module.body.ops[0]
        self.prints = any(op.NAME == "wi.print" for op in func.walk())
        self.asserts: tuple[tuple[str, str, int, int], ...] = tuple(func.attributes.get("asserts") or ())
        self.kernel_name = r.kernel_name
        self.num_threads = stages.layout.num_threads
        arg_types: list[Type] = [a.type for a in func.regions[0].block.args]
        names = list(func.attributes["arg_names"])
        written = _written_args(func)
        self.params: list[tuple[str, bool, Callable[[Any], Any] | None]] = []
        for i, (t, n) in enumerate(zip(arg_types, names)):
            if isinstance(t, PointerType):
                self.params.append((str(n), i in written, None))
            else:
                assert isinstance(t, ScalarType)
                self.params.append((str(n), False, _scalar_binder(t, str(n))))

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        if len(args) != len(self.params):
            raise LaunchError(f"expected {len(self.params)} arguments, got {len(args)}", kernel=self.kernel_name)
        if min(grid) <= 0:
            return
        dev = self.device
        values: list[Any] = []
        arrays: list[tuple[int, np.ndarray, bool]] = []
        for (name, written, bind), v in zip(self.params, args):
            if bind is not None:
                values.append(bind(v))
                continue
            if not isinstance(v, np.ndarray) and not hasattr(v, "__array_interface__"):
                raise LaunchError(f"expected an array for a pointer parameter, got {type(v).__name__}", name)
            arrays.append((len(values), _host_view(v, name), written))
            values.extend((None, None))
        back, aliased = bind_arrays(dev, arrays, values)
        kernel = self.kernel if not aliased else self.safe_kernel()
        status = None
        if self.asserts:
            status = dev.scratch(4)
            cl.enqueue_fill_buffer(dev.queue, status, np.int32(0), 0, 4)
            values.append(status)
        kernel.set_args(*values)
        nt = self.num_threads
        with capture_stdout(self.prints, dev):
            cl.enqueue_nd_range_kernel(dev.queue, kernel, (grid[0] * nt, grid[1], grid[2]), (nt, 1, 1))
            for buf, host in back:
                dev.write_back(buf, host)
            if not back:
                dev.synchronize()
        if status is not None:
            self._check_status(status)

    def safe_kernel(self) -> Any:
        """The variant for aliased arguments (every load before the next store), built on first need."""
        if self._safe is None:
            self.safe_stages = self._rebuild_safe()
            self._safe = cl.Kernel(self.device.build(self.safe_stages.rendered.source), self.kernel_name)
        return self._safe

    def _check_status(self, status: Any) -> None:
        out = np.zeros(1, np.int32)
        cl.enqueue_copy(self.device.queue, out, status, is_blocking=True)
        self.device.release(status)
        aid = int(out[0])
        if aid == 0:
            return
        message, file, line, col = self.asserts[aid - 1]
        raise DeviceAssertionError(
            f"device assertion failed in kernel '{self.kernel_name}': {message}", Location(file, line, col)
        )


class OpenCLBackend:
    """``kdsl.runtime.backend.Backend`` for OpenCL devices (PoCL here)."""

    name = "opencl"

    def availability(self) -> tuple[bool, str]:
        if not all_devices():
            return False, INSTALL_HINT
        return True, ""

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> OpenCLKernel:
        device = get_device()
        stages = compile_stages(module, entry, options, device)
        return OpenCLKernel(device, stages, lambda: compile_stages(module, entry, options, device, noalias=False))
