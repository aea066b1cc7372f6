"""A small pool of native threads that run slices of a launch grid.

Each worker is a Python thread that calls the compiled ``kdsl_run`` through
ctypes, which releases the GIL for the duration of the call, so the slices
run truly in parallel. The calling thread runs the first slice itself and
then waits for the others: a launch returns when every program finished.
Pools are cached per size (the only module-level state).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

Task = Callable[[], None]


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


class Pool:
    """``size`` daemon worker threads fed from one queue."""

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

    def run(self, tasks: list[Task]) -> float:
        """Run ``tasks`` (the first in this thread) and wait for all of them.

        Returns the seconds the first task took (the caller's own share, a
        measurement free of the hand-off cost).
        """
        if not tasks:
            return 0.0
        if len(tasks) == 1:
            t0 = time.perf_counter()
            tasks[0]()
            return time.perf_counter() - t0
        launch = _Launch(len(tasks) - 1)
        for t in tasks[1:]:
            self.tasks.put((t, launch))
        first_error: BaseException | None = None
        t0 = time.perf_counter()
        try:
            tasks[0]()
        except BaseException as exc:
            first_error = exc
        own = time.perf_counter() - t0
        launch.done.wait()
        if first_error is not None:
            raise first_error
        if launch.error is not None:
            raise launch.error
        return own


_POOLS: dict[int, Pool] = {}
_POOLS_LOCK = threading.Lock()


def get_pool(threads: int) -> Pool:
    """The shared pool with ``threads - 1`` workers (the caller is the last thread)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = Pool(max(0, threads - 1))
        return pool


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
