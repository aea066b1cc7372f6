"""The cpu backend's thread pool (kdsl/runtime/cpu/pool.py): dynamic slices, errors, shares."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from kdsl.runtime.cpu.pool import Pool, slice_count, split


def test_every_slice_runs_exactly_once() -> None:
    ran: list[int] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        with lock:
            ran.append(i)

    own, mine = Pool(3).run(one, 37)
    assert sorted(ran) == list(range(37))
    assert set(mine) <= set(range(37)) and own >= 0.0


def test_a_slow_thread_does_not_hold_the_other_slices() -> None:
    """Slice 0 blocks its thread; the other thread must run every other slice meanwhile.

    This is why slices are claimed dynamically: with a fixed half each, the slow thread's
    half would wait for it (on a shared machine, one core is often slowed by other load).
    """
    others_done = threading.Event()
    count = 8
    done: list[int] = []

    def one(i: int) -> None:
        if i == 0:
            assert others_done.wait(10), "the other slices waited for the slow one"
            return
        done.append(i)
        if len(done) == count - 1:
            others_done.set()

    Pool(1).run(one, count)
    assert sorted(done) == list(range(1, count))


def test_an_error_in_a_worker_slice_reaches_the_caller() -> None:
    def one(i: int) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise ValueError(f"slice {i}")
        time.sleep(0.05)  # leave slices for the worker

    with pytest.raises(ValueError, match="slice"):
        Pool(1).run(one, 8)


def test_an_error_in_the_callers_slice_stops_the_launch() -> None:
    ran: list[int] = []

    def one(i: int) -> None:
        ran.append(i)
        if i == 0:
            raise KeyError("first")

    with pytest.raises(KeyError):
        Pool(0).run(one, 5)
    assert ran == [0]  # the remaining slices were left unclaimed


def test_the_pool_is_reusable_after_an_error() -> None:
    pool = Pool(1)
    with pytest.raises(RuntimeError):
        pool.run(lambda i: (_ for _ in ()).throw(RuntimeError("x")), 4)
    seen: list[int] = []
    pool.run(seen.append, 4)
    assert sorted(seen) == [0, 1, 2, 3]


@pytest.mark.parametrize(("total", "threads", "want"), [(1, 2, 1), (3, 2, 3), (16, 2, 8), (10_000, 2, 8), (5, 1, 4)])
def test_slice_count(total: int, threads: int, want: int) -> None:
    assert slice_count(total, threads) == want


def test_split_is_contiguous_and_covers_the_grid() -> None:
    ranges = split(1000, slice_count(1000, 2))
    assert ranges[0][0] == 0 and ranges[-1][1] == 1000
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert max(e - s for s, e in ranges) - min(e - s for s, e in ranges) <= 1
