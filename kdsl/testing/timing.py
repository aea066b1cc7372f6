"""``do_bench``: time a callable the way Triton's ``triton.testing.do_bench`` does.

Why it is shaped like this: a single launch is too short and too noisy to time,
and a warm cache flatters memory-bound kernels. So the per-call time is
estimated first, warm-up and repetition counts are derived from the requested
*milliseconds*, and a buffer the size of the last-level cache is written
before every timed call so that each run starts with a cold cache.

Clocks, best first:

* a device timer, if the current backend offers one: ``backend.timer()``
  returning an object with ``start()`` and ``stop() -> float`` (elapsed device
  milliseconds between the two calls, waiting for the work queued in between:
  OpenCL profiling events on markers, Vulkan timestamp queries);
* otherwise ``time.perf_counter`` around the call, with a device
  ``synchronize`` before starting and before stopping, so asynchronous
  launches are counted in full.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from kdsl.target import host_llc_bytes

RETURN_MODES = ("min", "max", "mean", "median", "all")
_FLUSH_ENV = "KDSL_BENCH_FLUSH_BYTES"


class DeviceTimer(Protocol):
    """Optional backend hook (``backend.timer()``): device-side elapsed time."""

    def start(self) -> None: ...

    def stop(self) -> float: ...


def last_level_cache_bytes() -> int:
    """Size of the largest CPU cache listed in sysfs (the LLC), or 32 MiB if unknown."""
    return host_llc_bytes()


def flush_bytes() -> int:
    """Bytes written between timed runs: ``KDSL_BENCH_FLUSH_BYTES`` or the LLC size (0 disables)."""
    env = os.environ.get(_FLUSH_ENV, "").strip()
    if env:
        return max(0, int(env))
    return last_level_cache_bytes()


@lru_cache(maxsize=4)
def _flush_buffer(nbytes: int) -> np.ndarray[Any, Any]:
    # cached: allocating (and page-faulting) ~100 MB per do_bench call would dominate short sweeps
    return np.ones(max(nbytes // 8, 1), dtype=np.int64)


def _synchronize() -> None:
    from kdsl.runtime.device_array import synchronize

    synchronize()


def _device_timer() -> DeviceTimer | None:
    """The current backend's timer hook, if it has one (and the backend resolves)."""
    try:
        from kdsl.runtime.backends import resolve_backend

        backend = resolve_backend()
    except Exception:  # no backend at all: plain wall-clock timing
        return None
    make = getattr(backend, "timer", None)
    if make is None:
        return None
    timer: DeviceTimer | None = make()
    return timer


class _Clock:
    """One timed call: device timer if available, else perf_counter around synchronize."""

    def __init__(self, device_timer: DeviceTimer | None) -> None:
        self.device_timer = device_timer

    def time(self, fn: Callable[[], Any]) -> float:
        dt = self.device_timer
        if dt is not None:
            dt.start()
            fn()
            return float(dt.stop())
        _synchronize()
        t0 = time.perf_counter()
        fn()
        _synchronize()
        return (time.perf_counter() - t0) * 1e3


def summarize(times: Sequence[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    """Triton's reduction of the sample: quantiles if given, else ``return_mode``."""
    if quantiles is not None:
        qs = [_quantile(sorted(times), float(q)) for q in quantiles]
        return qs[0] if len(qs) == 1 else qs
    if return_mode == "all":
        return list(times)
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "mean":
        return statistics.fmean(times)
    return statistics.median(times)


def _quantile(sorted_times: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (what ``torch.quantile``/``numpy.quantile`` compute)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} is outside [0, 1]")
    pos = q * (len(sorted_times) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_times) - 1)
    return sorted_times[lo] + (sorted_times[hi] - sorted_times[lo]) * (pos - lo)


def do_bench(
    fn: Callable[[], Any],
    warmup: float = 25,
    rep: float = 100,
    grad_to_none: Sequence[Any] | None = None,
    quantiles: Sequence[float] | None = None,
    return_mode: str = "mean",
    *,
    flush: bool = True,
    max_repeats: int | None = None,
) -> Any:
    """Run ``fn`` repeatedly and return its time in milliseconds.

    ``warmup``/``rep`` are budgets in ms: the per-call time is estimated from 5
    calls, then ``max(1, warmup/estimate)`` untimed and ``max(1, rep/estimate)``
    timed calls run. ``grad_to_none``: objects whose ``.grad`` is reset before
    each timed call (Triton compatibility). ``quantiles`` (e.g. ``[0.5, 0.2,
    0.8]``) returns those quantiles (a single float for one); otherwise
    ``return_mode`` is one of min, max, mean (default, as Triton), median or all (the list
    of samples). ``flush=False`` skips the cache flush; ``max_repeats`` caps
    the timed calls (the autotuner uses it to bound sweeps).
    """
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(RETURN_MODES)}, got {return_mode!r}")
    clock = _Clock(_device_timer())
    fn()
    _synchronize()
    cache = _flush_buffer(flush_bytes()) if flush and flush_bytes() > 0 else None

    def timed_call() -> float:
        """One timed iteration: reset the grads, evict fn's data, time fn."""
        for obj in grad_to_none or ():
            obj.grad = None
        if cache is not None:
            cache.fill(0)  # write every line of the LLC-sized buffer: evicts fn's data
        return clock.time(fn)

    # The estimate is the wall time of a whole timed iteration (cache flush included), as Triton's:
    # with fn's own time alone a ~0 ms fn would be repeated rep / 1e-6 times, each after a flush.
    start = time.perf_counter()
    for _ in range(5):
        timed_call()
    estimate = max((time.perf_counter() - start) * 1e3 / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate))
    n_repeat = max(1, int(rep / estimate))
    if max_repeats is not None:
        n_repeat = max(1, min(n_repeat, int(max_repeats)))
        n_warmup = min(n_warmup, n_repeat)
    for _ in range(n_warmup):
        fn()
    times = [timed_call() for _ in range(n_repeat)]
    return summarize(times, quantiles, return_mode)
