"""The small interface every backend implements.

A backend turns an optimised, fully inlined ``builtin.module`` into something
launchable and launches it. The JIT (``kdsl.runtime.jit``) owns specialisation,
argument checking and caching; backends only see canonical launch arguments.

Required: :class:`Backend` (``name``, ``availability``, ``compile``) and
:class:`CompiledKernel` (``launch``). Optional, discovered with ``getattr``
so that a minimal backend keeps working:

* ``Backend.device() -> Device``: the device whose memory device arrays
  (``kdsl.tensor``) live in and whose identity goes into disk-cache keys.
  Without it the backend gets the shared host device: its device arrays are
  numpy arrays and its kernels receive them as numpy arrays.
* ``CompiledKernel.artifacts() -> (files, metadata)`` and
  ``Backend.load(files, metadata) -> CompiledKernel``: what the disk cache
  stores and how a kernel is rebuilt from it without compiling again. Without
  them the cache still stores the optimised tile IR and rebuilds by parsing it
  and calling ``compile`` (skipping the frontend and the passes).

See ``docs/CACHE.md`` for the cache layout and the exact contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kdsl.ir.core import ModuleOp


@dataclass(frozen=True)
class LaunchOptions:
    """Options that change generated code (part of every cache key).

    ``num_threads`` is the work-group size for device backends (0: backend
    default); ``extra`` holds backend/layout knobs as sorted (name, value) pairs.
    """

    num_threads: int = 0
    extra: tuple[tuple[str, Any], ...] = field(default_factory=tuple)


class CompiledKernel(Protocol):
    """A launchable specialisation of one kernel."""

    def launch(self, grid: tuple[int, int, int], args: Sequence[Any]) -> None:
        """Run ``grid`` programs. ``args`` follow the entry ``tile.func``'s
        parameters: Python/numpy scalars for scalars and, for pointers, either
        a numpy array (host memory: copied in and written back, or wrapped
        zero-copy; the launch is synchronous) or -- only on backends that have
        their own :class:`Device` -- a ``kdsl.runtime.device_array.DeviceArray``
        of this backend (use ``.buffer`` and the byte ``.offset``; a launch
        whose arrays are all device arrays should be asynchronous: enqueue and
        return, ordering is the device queue's job). Host-memory backends
        (no ``device()`` or ``Device.host_memory``) only ever get numpy arrays:
        the JIT passes a device array's numpy view."""
        ...


@runtime_checkable
class ArtifactKernel(Protocol):
    """Optional: a compiled kernel the disk cache can store."""

    def artifacts(self) -> tuple[dict[str, bytes], dict[str, Any]]:
        """(files, metadata): file name -> bytes for every stage this backend
        produced (e.g. ``wi.mlir``, ``kernel.cl``, ``program.bin``) and a
        JSON-serialisable dict with whatever ``Backend.load`` needs besides
        the files (entry name, layout, argument kinds...). Names must be plain
        file names (no ``/``); ``metadata.json``, ``tile.mlir`` and
        ``opt.mlir`` are reserved for the JIT."""
        ...


class Backend(Protocol):
    """A code generator plus runtime for one kind of device."""

    name: str

    def availability(self) -> tuple[bool, str]:
        """(present?, reason/install hint when not)."""
        ...

    def compile(self, module: ModuleOp, entry: str, options: LaunchOptions) -> CompiledKernel:
        """Compile ``module`` (inlined, verified) with entry function ``entry``."""
        ...


@runtime_checkable
class LoadingBackend(Protocol):
    """Optional: a backend that rebuilds kernels from disk-cache artefacts."""

    def load(self, files: dict[str, bytes], metadata: dict[str, Any]) -> CompiledKernel:
        """Rebuild the kernel whose ``artifacts()`` returned (files, metadata)
        without compiling again. ``files`` also holds the JIT's ``tile.mlir``
        and ``opt.mlir``. Checksums are verified before this is called; raise
        any exception if the artefacts cannot be used (e.g. a program binary
        the driver rejects): the JIT then recompiles and replaces the entry."""
        ...


@runtime_checkable
class Device(Protocol):
    """The memory and queue of one device, as device arrays and the cache see it.

    ``allocate`` returns an opaque buffer of at least ``nbytes`` bytes, aligned
    to at least 64 bytes (the JIT specialises on a device array's byte offset
    being a multiple of 16, assuming an aligned base). ``write``/``read`` copy
    between a C-contiguous numpy array and ``buffer`` at byte ``offset``;
    ``read`` blocks until the data is on the host (after every launch queued
    before it); ``write`` may return before the copy finished only if the
    backend keeps ``src`` alive until then. ``synchronize`` waits for all
    queued work. ``name`` is human readable; ``key`` identifies the device and
    driver for disk-cache keys (two devices that may run different binaries
    must have different keys: name, driver version, relevant capabilities).
    ``host_memory`` is True when buffers are numpy arrays of bytes that
    kernels receive as numpy arrays (interpreter, cpu).
    """

    name: str
    key: str
    host_memory: bool

    def allocate(self, nbytes: int) -> Any: ...

    def write(self, buffer: Any, src: np.ndarray[Any, Any], offset: int = 0) -> None: ...

    def read(self, buffer: Any, dst: np.ndarray[Any, Any], offset: int = 0) -> None: ...

    def synchronize(self) -> None: ...
