"""Benchmarking helpers with Triton's ``triton.testing`` interface.

``do_bench`` times a callable (device timers when the backend has them, a
cache flush between runs); ``perf_report``/``Benchmark`` sweep parameters and
produce a table, a CSV and a PNG plot. ``assert_close`` compares results with
Triton's tolerances (absolute 1e-2, relative 0).
"""

from __future__ import annotations

from typing import Any

from kdsl.testing.compare import assert_close
from kdsl.testing.report import Benchmark, Mark, Table, perf_report
from kdsl.testing.timing import do_bench, last_level_cache_bytes

# Triton's GPU-only timers: named so that a ported script fails saying what to use instead.
_ABSENT = {
    "do_bench_cudagraph": "kdsl has no CUDA graphs to capture and replay; use kdsl.testing.do_bench "
                          "(flush=False times repeated calls without the cache flush, as a graph replay does)",
}


def __getattr__(name: str) -> Any:
    if name in _ABSENT:
        raise AttributeError(f"kdsl.testing.{name} does not exist: {_ABSENT[name]}")
    raise AttributeError(f"module 'kdsl.testing' has no attribute {name!r}")


__all__ = ["Benchmark", "Mark", "Table", "assert_close", "do_bench", "last_level_cache_bytes", "perf_report"]
