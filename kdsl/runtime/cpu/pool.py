"""The thread pools that run slices of a launch grid, and how a grid is cut into slices.

:func:`get_pool` gives the native pool (:mod:`kdsl.runtime.cpu.native_pool`,
a launch costs a few µs) where the machine supports it, else :class:`Pool`
below, in Python: each worker is a Python thread that calls the compiled
``kdsl_run`` through ctypes, which releases the GIL for the duration of the
call, so the slices run truly in parallel, but every hand-off wakes Python
threads (50-100 µs). A launch is cut into a few more slices than threads and
every thread -- the caller included -- claims the next unclaimed slice until
none is left (:meth:`Pool.run`): on a shared machine one core is often
slowed down by other load, and a fixed split would make the whole launch wait
for that core's half. A launch returns when every program finished. Pools are
cached per size (the only module-level state).
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from kdsl.runtime.cpu import native_pool

Task = Callable[[], object]


class GridPool(Protocol):
    """What the cpu backend needs of a pool."""

    handoff_s: float  # launches of less estimated single-thread work run on the calling thread

    def run_grid(
        self, kernel: Any, argv: int, gx: int, gy: int, gz: int, total: int, slices: int
    ) -> tuple[float, int] | None:
        """Run programs ``[0, total)`` of ``kernel`` (a ``LoadedObject``) in ``slices`` slices.

        Returns (seconds the calling thread spent in its own slices, programs in them): the
        per-program time the inline decision needs, free of the hand-off; None, having run
        nothing, when the pool is busy with another thread's launch.
        """
        ...


class _Launch:
    """Completion tracking of one launch's slices (and the first error)."""

    def __init__(self, pending: int) -> None:
        self.pending = pending
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def finish(self, error: BaseException | None) -> None:
        with self.lock:
            if error is not None and self.error is None:
                self.error = error
            self.pending -= 1
            if self.pending == 0:
                self.done.set()


class _Slices:
    """The slices of one dynamic launch and the index of the next unclaimed one."""

    def __init__(self, run: Callable[[int], None], count: int) -> None:
        self.run = run
        self.count = count
        self.next = 0
        self.lock = threading.Lock()

    def claim(self) -> int:
        """The next slice's index, or -1 when every slice is claimed."""
        with self.lock:
            i = self.next
            if i >= self.count:
                return -1
            self.next = i + 1
            return i

    def stop(self) -> None:
        """Leave the remaining slices unclaimed (a slice raised: the launch fails anyway)."""
        with self.lock:
            self.next = self.count

    def work(self) -> list[int]:
        """Run slices until none is left; the indices this thread ran."""
        mine = []
        while (i := self.claim()) >= 0:
            try:
                self.run(i)
            except BaseException:
                self.stop()
                raise
            mine.append(i)
        return mine


class Pool:
    """``size`` daemon worker threads fed from one queue (the fallback of the native pool)."""

    handoff_s = 100e-6

    def __init__(self, size: int) -> None:
        self.size = size
        self.tasks: queue.SimpleQueue[tuple[Task, _Launch]] = queue.SimpleQueue()
        for i in range(size):
            threading.Thread(target=self._work, name=f"kdsl-cpu-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            task, launch = self.tasks.get()
            try:
                task()
            except BaseException as exc:
                launch.finish(exc)
            else:
                launch.finish(None)

    def run(self, run: Callable[[int], None], count: int) -> tuple[float, list[int]]:
        """Run ``run(0) .. run(count - 1)``, each slice on whichever thread is free first.

        Returns the seconds the calling thread spent running slices and the indices of the
        slices it ran: its own share, a measurement free of the hand-off cost.
        """
        slices = _Slices(run, count)
        helpers = min(self.size, count - 1)
        launch = _Launch(helpers)
        for _ in range(helpers):
            self.tasks.put((slices.work, launch))
        first_error: BaseException | None = None
        mine: list[int] = []
        t0 = time.perf_counter()
        try:
            mine = slices.work()
        except BaseException as exc:
            first_error = exc
        own = time.perf_counter() - t0
        if helpers:
            launch.done.wait()
        if first_error is not None:
            raise first_error
        if launch.error is not None:
            raise launch.error
        return own, mine

    def run_grid(
        self, kernel: Any, argv: int, gx: int, gy: int, gz: int, total: int, slices: int
    ) -> tuple[float, int] | None:
        ranges = split(total, slices)
        run = kernel.run

        def one(i: int) -> None:
            s, e = ranges[i]
            run(argv, gx, gy, gz, s, e)

        own, mine = self.run(one, len(ranges))
        return own, sum(ranges[i][1] - ranges[i][0] for i in mine)


_POOLS: dict[int, GridPool] = {}
_POOLS_LOCK = threading.Lock()


def _forget_pools_in_child() -> None:
    """A forked child has none of its parent's worker threads: work queued to a copied pool would
    wait forever (the autotuner's ``isolate=True`` trials are such children). It starts its own."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()  # the parent may have held it while forking


os.register_at_fork(after_in_child=_forget_pools_in_child)


def close_pools() -> None:
    """Stop the native pools' workers (at interpreter exit, before modules and the JIT's code are
    freed under them; a pool busy in another thread is left alone after a second)."""
    for pool in list(_POOLS.values()):
        close = getattr(pool, "close", None)
        if close is not None:
            close(timeout=1.0)
    _POOLS.clear()


atexit.register(close_pools)


def get_pool(threads: int) -> GridPool:
    """The shared pool with ``threads - 1`` workers (the caller is the last thread)."""
    pool = _POOLS.get(threads)
    if pool is not None:
        return pool
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            size = max(0, threads - 1)
            pool = _POOLS[threads] = native_pool.NativePool(size) if native_pool.supported() else Pool(size)
        return pool


def handoff_s() -> float:
    """The estimated work below which a launch is not worth handing to this machine's pool."""
    return native_pool.NativePool.handoff_s if native_pool.supported() else Pool.handoff_s


def default_threads() -> int:
    """``KDSL_CPU_THREADS`` if set, else the CPUs this process may run on."""
    env = os.environ.get("KDSL_CPU_THREADS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n >= 1:
            return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def slice_count(total: int, threads: int) -> int:
    """How many slices a grid of ``total`` programs is cut into for ``threads`` threads.

    Four per thread: a thread slowed down by other load then holds up the launch by
    at most a quarter of its fair share, while each slice stays a contiguous run of
    program ids (grouped orderings keep their cache reuse) and the hand-offs stay a
    few µs against launches worth splitting (``INLINE_BELOW_S`` and up).
    """
    return max(1, min(total, 4 * threads))


def split(total: int, parts: int) -> list[tuple[int, int]]:
    """``[0, total)`` cut into ``parts`` contiguous near-equal ranges."""
    parts = max(1, min(parts, total))
    base, extra = divmod(total, parts)
    out = []
    start = 0
    for i in range(parts):
        end = start + base + (1 if i < extra else 0)
        out.append((start, end))
        start = end
    return out
