"""Benchmark Triton's tutorial kernels (those of ``python -m kdsl demo``) against numpy.

Times are taken interleaved (kdsl, numpy, kdsl, numpy, ...) in one process so
the ratio column is meaningful on a shared machine; absolute times are not.
Writes the raw numbers to ``bench/results/tutorials-<backend>.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kdsl.__main__ import version
from kdsl.cli.demo import Case, backend_name, chosen_backend, make_cases

RESULTS = Path(__file__).resolve().parent / "results"


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(case: Case, repeat: int) -> dict[str, Any]:
    first = timed(case.run)  # includes compilation
    got, want = case.run(), case.reference()
    error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    kdsl_t, numpy_t = [], []
    for _ in range(repeat):
        kdsl_t.append(timed(case.run))
        numpy_t.append(timed(case.reference))
    k, n = statistics.median(kdsl_t), statistics.median(numpy_t)
    return {
        "kernel": case.name,
        "shape": case.shape,
        "max_abs_error": error,
        "ok": error <= case.tolerance,
        "first_call_s": first,
        "kdsl_median_s": k,
        "numpy_median_s": n,
        "ratio_kdsl_over_numpy": k / n,
        "kdsl_times_s": kdsl_t,
        "numpy_times_s": numpy_t,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default=None, help="kdsl backend (default: kdsl's default)")
    p.add_argument("--quick", action="store_true", help="small shapes, few repetitions")
    p.add_argument("--repeat", type=int, default=None, help="timed calls per kernel (default 10, --quick 3)")
    args = p.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 10)
    with chosen_backend(args.backend):
        name = backend_name(args.backend)
        rows = [measure(c, repeat) for c in make_cases(small=args.quick, seed=0)]
    print(f"kdsl {version()} on '{name}', median of {repeat} (ratio = kdsl / numpy, lower is better)")
    print(f"{'kernel':<20} {'shape':<20} {'ratio':>9} {'kdsl ms':>9} {'numpy ms':>9} {'first s':>8}  check")
    for r in rows:
        print(
            f"{r['kernel']:<20} {r['shape']:<20} {r['ratio_kdsl_over_numpy']:>9.1f} {1e3 * r['kdsl_median_s']:>9.2f}"
            f" {1e3 * r['numpy_median_s']:>9.3f} {r['first_call_s']:>8.2f}  {'ok' if r['ok'] else 'WRONG'}"
        )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"tutorials-{name}.json"
    meta = {"kdsl": version(), "backend": name, "python": sys.version.split()[0], "machine": platform.platform()}
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"raw times: {out}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
