"""The native thread pool (kdsl/runtime/cpu/native_pool.py): every slice once, sleeping and
waking workers, concurrent launchers, fork, and compiled kernels driven through it."""

from __future__ import annotations

import ctypes
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.cpu import native_pool
from kdsl.runtime.cpu.loader import RunFn
from tests.cpu._helpers import compile_cpu
from tests.subprocess_script import run_script

pytestmark = pytest.mark.skipif(not native_pool.supported(), reason="the native pool needs Linux futexes")


class _Recorder:
    """A "kernel" written in Python: records the program ranges each thread ran."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int, str]] = []
        self.lock = threading.Lock()
        self.fn = RunFn(self._run)
        self.address = ctypes.cast(self.fn, ctypes.c_void_p).value

    def _run(self, argv: Any, gx: int, gy: int, gz: int, start: int, end: int) -> None:
        with self.lock:
            self.ranges.append((start, end, threading.current_thread().name))


@pytest.fixture
def pool() -> Any:
    p = native_pool.NativePool(2, spin=200)
    yield p
    p.close()


@pytest.mark.parametrize(("total", "slices"), [(1, 1), (7, 7), (10, 4), (1000, 8), (3, 8)])
def test_every_program_runs_exactly_once(pool: Any, total: int, slices: int) -> None:
    rec = _Recorder()
    share = pool.run_grid(rec, 0, total, 1, 1, total, min(slices, total))
    assert share is not None
    own_s, mine = share
    assert mine == sum(e - s for s, e, name in rec.ranges if name == threading.current_thread().name)
    assert own_s >= 0.0
    spans = sorted((s, e) for s, e, _ in rec.ranges)
    assert spans[0][0] == 0 and spans[-1][1] == total
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert len(spans) == min(slices, total)


def test_workers_take_part_and_wake_from_sleep(pool: Any) -> None:
    """After a pause the workers sleep on the futex; the next launch must wake them."""
    rec = _Recorder()
    for _ in range(3):
        time.sleep(0.05)  # far longer than the spin: every worker is asleep
        rec.ranges.clear()
        deadline = time.monotonic() + 5
        while len({name for *_, name in rec.ranges}) < 2 and time.monotonic() < deadline:
            pool.run_grid(rec, 0, 64, 1, 1, 64, 8)  # slices block on the GIL: the workers get some
        assert len({name for *_, name in rec.ranges}) >= 2


def test_a_busy_pool_turns_a_second_launcher_away(pool: Any) -> None:
    entered, release = threading.Event(), threading.Event()

    @RunFn
    def slow(argv: Any, gx: int, gy: int, gz: int, start: int, end: int) -> None:
        entered.set()
        release.wait(10)

    class Slow:
        address = ctypes.cast(slow, ctypes.c_void_p).value

    t = threading.Thread(target=pool.run_grid, args=(Slow, 0, 1, 1, 1, 1, 1))
    t.start()
    assert entered.wait(10)
    assert pool.run_grid(_Recorder(), 0, 4, 1, 1, 4, 4) is None  # nothing ran: the caller runs it inline
    release.set()
    t.join(10)
    assert not t.is_alive()


def test_the_callers_share_excludes_waiting_for_the_workers(pool: Any) -> None:
    """The time returned is the calling thread's own slices: a slow worker slice is not in it."""

    @RunFn
    def slow_on_workers(argv: Any, gx: int, gy: int, gz: int, start: int, end: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            time.sleep(0.2)

    class K:
        address = ctypes.cast(slow_on_workers, ctypes.c_void_p).value

    t0 = time.perf_counter()
    share = pool.run_grid(K, 0, 64, 1, 1, 64, 8)
    wall = time.perf_counter() - t0
    assert share is not None
    own_s, mine = share
    if 0 < mine < 64:  # the workers took some slices (the usual case)
        assert wall >= 0.2 and own_s < 0.1


def test_close_stops_the_workers() -> None:
    p = native_pool.NativePool(3, spin=10)
    threads = list(p._threads)
    p.close()
    assert not any(t.is_alive() for t in threads)


@kdsl.kernel
def count_kernel(x_ptr, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(x_ptr + offs, kl.load(x_ptr + offs) + 1.0)


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_compiled_kernel_through_the_pool_many_launches(threads: int) -> None:
    """Back-to-back launches (workers spinning) and paused ones (workers asleep), several grid sizes,
    more threads than cores: every element is incremented exactly once per launch."""
    x = np.zeros(97 * 16, np.float32)
    kern = compile_cpu(count_kernel, [x], threads=threads, BLOCK=16)
    kern.inline_below = 0.0  # always hand off
    launches = 0
    for i in range(400):
        g = 1 + (i * 37) % 97
        kern.launch((g, 1, 1), [x])
        x[g * 16 :] += 1.0  # the programs past g did not run
        launches += 1
        if i % 100 == 99:
            time.sleep(0.01)
    np.testing.assert_array_equal(x, float(launches))


def test_launches_from_several_python_threads() -> None:
    xs = [np.zeros(64 * 16, np.float32) for _ in range(4)]
    kern = compile_cpu(count_kernel, [xs[0]], threads=2, BLOCK=16)
    kern.inline_below = 0.0
    errors: list[BaseException] = []

    def work(x: np.ndarray[Any, Any]) -> None:
        try:
            for _ in range(200):
                kern.launch((64, 1, 1), [x])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    ts = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in ts)
    for x in xs:
        np.testing.assert_array_equal(x, 200.0)


# the start of the subprocess scripts below: a kernel that adds 1 to every element, and its array
_SCRIPT_KERNEL = """
import os, threading, numpy as np, kdsl, kdsl.language as kl

@kdsl.kernel
def inc(x_ptr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    kl.store(x_ptr + offs, kl.load(x_ptr + offs) + 1.0)

x = np.zeros(4096 * 256, np.float32)
"""


def test_a_forked_child_starts_its_own_pool(tmp_path: Path) -> None:
    """The child of a fork has none of the parent's worker threads: it must not wait for them."""
    code = _SCRIPT_KERNEL + """with kdsl.backend("cpu"):
    for _ in range(3):
        inc[(4096,)](x, BLOCK=256)
    pid = os.fork()
    if pid == 0:
        for _ in range(3):
            inc[(4096,)](x, BLOCK=256)
        os._exit(0 if (x == 6.0).all() else 1)
    _, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status), "parent", float(x.min()), float(x.max()))
"""
    env = {"KDSL_CPU_THREADS": "2", "KDSL_CACHE_DIR": str(tmp_path / "cache")}
    assert run_script(tmp_path, code, env=env, timeout=120) == "child 0 parent 3.0 3.0"


def test_interpreter_exit_stops_the_workers(tmp_path: Path) -> None:
    """At exit the workers must be stopped before the interpreter frees the pool's memory and the
    JIT's code under them (a worker still spinning there would crash the exit)."""
    code = _SCRIPT_KERNEL + """
from kdsl.runtime.cpu.pool import close_pools
with kdsl.backend("cpu"):
    inc[(4096,)](x, BLOCK=256)
before = sum(t.name.startswith("kdsl-cpu") for t in threading.enumerate())
close_pools()  # what the atexit hook runs
after = sum(t.name.startswith("kdsl-cpu") for t in threading.enumerate())
with kdsl.backend("cpu"):
    inc[(4096,)](x, BLOCK=256)  # a new pool starts on demand
print(before, after, float(x.min()))
"""
    env = {"KDSL_CPU_THREADS": "3", "KDSL_CACHE_DIR": str(tmp_path / "cache")}
    assert run_script(tmp_path, code, env=env, timeout=120) == "2 0 2.0"
