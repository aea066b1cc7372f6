"""A caching allocator for host-memory device arrays (the ``cpu`` and interpreter backends).

Why: a fresh 64 MiB ``np.empty`` costs a page fault (and the kernel zeroing the
page) per 4 KiB on first touch, about as much as a whole 4096x4096 softmax.
Like pyopencl's and torch's caching allocators, memory of dead arrays returns
to a pool bucketed by size class and the next allocation of that class reuses
it, pages already mapped.

Ownership: a block is handed out as a ``uint8`` numpy array whose base is a
:class:`_Lease` (an ndarray subclass: numpy's base collapsing stops there). Every numpy view of it (a
device array's ``buffer`` and ``_host``, a reshape sharing the buffer, a
user's view of ``_host``) keeps the lease alive through its ``base`` chain, so
the lease's ``__del__`` runs only when no array references the memory any
more -- the lifetime is the buffer's, not the
:class:`~kdsl.runtime.device_array.DeviceArray` wrapper's. Only then does the
block go back to the pool. (``__del__`` on a subclass view rather than a
``weakref.finalize`` on an ``__array_interface__`` object: those cost several
times the old ``np.empty``.)

Thread safety: one lock guards the free lists. A finalizer can run inside the
locked region (the garbage collector runs at any allocation), so it never
blocks on the lock: when it cannot take it, it queues the block and whoever
holds the lock next files it.

The pool keeps at most ``limit`` free bytes (env ``KDSL_CPU_POOL_BYTES``,
default 1 GiB; 0 disables pooling), releasing the least recently freed blocks
first; :func:`empty_cache` releases all of them.
"""

from __future__ import annotations

import collections
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

ALIGN = 64  # every block's base: the JIT specialises on offset % 16 assuming an aligned base
PAGE_ALIGN = 4096  # large blocks start on a page (whole cache lines and pages for streaming stores)
LARGE = 1 << 20
DEFAULT_LIMIT = 1 << 30


def _env_limit() -> int:
    raw = os.environ.get("KDSL_CPU_POOL_BYTES", "").strip()
    if not raw:
        return DEFAULT_LIMIT
    try:
        return max(int(float(raw)), 0)
    except ValueError as exc:
        raise ValueError(f"KDSL_CPU_POOL_BYTES must be a byte count, got {raw!r}") from exc


def size_class(nbytes: int) -> int:
    """The bucket ``nbytes`` is served from: a multiple of 64 below 4 KiB, else one of
    eight steps per power of two (at most 12.5 % slack, as jemalloc's classes)."""
    n = max(int(nbytes), 1)
    if n <= 4096:
        return -(-n // ALIGN) * ALIGN
    step = 1 << (n.bit_length() - 4)  # 1/8 of the enclosing power of two
    return -(-n // step) * step


class _Block(np.ndarray[Any, Any]):
    """A pooled block: an aligned ``uint8`` view that knows its pool, size class and address."""

    pool: HostPool
    cls: int
    addr: int  # ``.ctypes.data`` is slow: read once


class _Lease(np.ndarray[Any, Any]):
    """The base of one handed-out block (``block[:n].view(_Lease)``): its death returns the block.

    numpy's view collapsing stops at a change of array type, so the plain
    ``uint8`` array handed out (``lease.view(np.ndarray)``) and every view of it
    keep the lease alive. Only the root lease (whose base is the ``_Block``
    slice) returns the block: a view of the lease itself is never handed out,
    and would have the lease as its base.
    """

    def __del__(self) -> None:
        base = self.base
        if type(base) is _Block:
            block = base.base
            if type(block) is _Block:
                block.pool._give_back(block)


@dataclass(frozen=True)
class PoolStats:
    """A snapshot of the pool: free (pooled) bytes/blocks, bytes handed out, hits and misses."""

    pooled_bytes: int
    pooled_blocks: int
    in_use_bytes: int
    hits: int
    misses: int
    limit: int


class HostPool:
    """Size-class free lists of aligned ``uint8`` blocks with an LRU byte cap."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = _env_limit() if limit is None else max(int(limit), 0)
        self._lock = threading.Lock()
        # size class -> {id(block): block}, oldest first (dicts keep insertion order)
        self._free: dict[int, dict[int, _Block]] = {}  # address -> block, oldest first
        self._lru: collections.OrderedDict[int, int] = collections.OrderedDict()  # address -> class
        self._pending: collections.deque[_Block] = collections.deque()
        self._pooled = 0
        self._in_use = 0
        self.hits = 0
        self.misses = 0

    # --- public --------------------------------------------------------------------
    def allocate(self, nbytes: int) -> np.ndarray[Any, Any]:
        """``max(nbytes, 1)`` bytes, 64-byte aligned (page aligned from 1 MiB), uninitialised."""
        n = max(int(nbytes), 1)
        cls = size_class(n)
        block: _Block | None = None
        with self._lock:
            if self._pending:
                self._drain()
            bucket = self._free.get(cls)
            if bucket:
                key, block = bucket.popitem()  # the most recently freed: warmest in cache
                del self._lru[key]
                self._pooled -= cls
                self.hits += 1
            else:
                self.misses += 1
            self._in_use += cls
        if block is None:
            block = _new_block(self, cls)
        return block[:n].view(_Lease).view(np.ndarray)

    def empty_cache(self) -> int:
        """Release every pooled block; returns the bytes released."""
        with self._lock:
            self._drain()
            freed = self._pooled
            self._free.clear()
            self._lru.clear()
            self._pooled = 0
        return freed

    def set_limit(self, limit: int) -> None:
        """Change the cap on pooled bytes (releasing the oldest blocks beyond it)."""
        with self._lock:
            self.limit = max(int(limit), 0)
            self._drain()
            self._trim()

    def stats(self) -> PoolStats:
        with self._lock:
            self._drain()
            blocks = len(self._lru)
            return PoolStats(self._pooled, blocks, self._in_use, self.hits, self.misses, self.limit)

    # --- internals -----------------------------------------------------------------
    def _give_back(self, block: _Block) -> None:
        """A lease died: file its block, or queue it if the lock is busy (maybe by this thread)."""
        self._pending.append(block)
        if self._lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._lock.release()

    def _drain(self) -> None:
        """File queued blocks (lock held)."""
        while self._pending:
            try:
                block = self._pending.popleft()
            except IndexError:  # another thread's finalizer raced us to it: nothing left
                break
            cls = block.cls
            self._in_use -= cls
            if cls > self.limit:
                continue  # never fits: let numpy free it
            self._free.setdefault(cls, {})[block.addr] = block
            self._lru[block.addr] = cls
            self._pooled += cls
            self._trim()

    def _trim(self) -> None:
        """Release least recently freed blocks until the pooled bytes fit the cap (lock held)."""
        while self._pooled > self.limit and self._lru:
            key, cls = self._lru.popitem(last=False)
            bucket = self._free[cls]
            del bucket[key]
            if not bucket:
                del self._free[cls]
            self._pooled -= cls


def _new_block(pool: HostPool, cls: int) -> _Block:
    """``cls`` bytes at an aligned address (a view of a slightly larger numpy array)."""
    align = PAGE_ALIGN if cls >= LARGE else ALIGN
    raw = np.empty(cls + align, np.uint8)
    addr = int(raw.ctypes.data)
    skip = -addr % align
    block = raw[skip : skip + cls].view(_Block)
    block.pool, block.cls, block.addr = pool, cls, addr + skip
    return block


HOST_POOL = HostPool()


def empty_cache() -> int:
    """Release the host pool's cached blocks (memory of live arrays is untouched); returns bytes freed."""
    return HOST_POOL.empty_cache()
