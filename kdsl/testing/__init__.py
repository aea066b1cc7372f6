"""Benchmarking helpers with Triton's ``triton.testing`` interface.

``do_bench`` times a callable (device timers when the backend has them, a
cache flush between runs); ``perf_report``/``Benchmark`` sweep parameters and
produce a table, a CSV and a PNG plot. ``assert_close`` compares results with
numpy tolerances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kdsl.testing.report import Benchmark, Mark, Table, perf_report
from kdsl.testing.timing import do_bench, last_level_cache_bytes


def assert_close(x: Any, y: Any, atol: float | None = None, rtol: float | None = None, err_msg: str = "") -> None:
    """``numpy.testing.assert_allclose`` with Triton's defaults (atol=rtol=1e-2)."""
    a = np.asarray(x)
    b = np.asarray(y)
    np.testing.assert_allclose(a, b, atol=1e-2 if atol is None else atol, rtol=1e-2 if rtol is None else rtol,
                               err_msg=err_msg)


__all__ = ["Benchmark", "Mark", "Table", "assert_close", "do_bench", "last_level_cache_bytes", "perf_report"]
