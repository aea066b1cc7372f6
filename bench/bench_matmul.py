"""Matmul fp32 (the Triton-tutorial kernel of ``kdsl.ops.matmul``) and row softmax vs numpy.

Rows: GFLOP/s of kdsl on each backend (``opencl`` = PoCL, ``cpu``) and of
numpy/OpenBLAS in the same run, with the ratio to numpy; softmax 4096 x 4096
effective GB/s (one read + one write) vs the machine's copy bandwidth
(``np.copyto``) measured in the same run. numpy runs in this process with the
environment as it is: this machine sets ``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE``,
which select a slower OpenBLAS kernel; ``--numpy-best`` also times numpy in a
child process with both unset (its best kernel, the issue's reference).

``--kernel tutorial`` times Triton's tutorial-03 kernel as a user writes it (``% M`` wraps, masked
K tail, autotuned over the tutorial's configs: ``bench/tutorial_matmul.py``) instead of
``kdsl.ops.matmul``; the first call of each size tunes and is not timed.

``--handwritten`` adds same-run baselines on PoCL (``bench/handwritten/``): the
hand-written register-blocked kernel of ``/work/shared/PLATFORM.md`` (``sgemm.cl``)
and CLBlast (``libclblast1``; skipped with the reason when absent, or with
``--no-clblast``). The FMA peak (``peak.cl`` on PoCL) is measured in every run
with OpenCL. Each kdsl row is then checked against the issue's goals: >= 0.9x
numpy's best kernel (``--numpy-best``; else numpy in-process), >= 60% of the FMA
peak and >= 20x CLBlast.

Usage: python bench/bench_matmul.py [--quick] [--sizes 256 512] [--backends opencl cpu]
       [--blocks 64 64 32] [--numpy-best] [--handwritten] [--no-clblast] [--no-softmax]
       [--fastest] [--repeat-scale K] [--kernel op|tutorial]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "handwritten"))
import baselines
import tutorial_matmul

import kdsl
from kdsl.ops.matmul import matmul
from kdsl.ops.softmax import softmax

STAT: Callable[[list[float]], float] = statistics.median  # ``--fastest``: min (least disturbed by other load)
REPEAT_SCALE = 1  # ``--repeat-scale``: more repeats on a busy machine


SETTLE_S = 0.3  # quiet before each measurement: OpenBLAS's threads spin for a while after a numpy call


def seconds(fn: Callable[[], Any], repeats: int) -> float:
    time.sleep(SETTLE_S)
    fn()
    times = []
    for _ in range(repeats * REPEAT_SCALE):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return STAT(times)


def numpy_best(n: int, repeats: int) -> float:
    """numpy GFLOP/s at ``n`` in a child process with the OpenBLAS overrides unset."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    code = (
        "import numpy as np,time,statistics\n"
        f"n={n}\na=np.random.rand(n,n).astype(np.float32);b=np.random.rand(n,n).astype(np.float32)\n"
        "a@b\nts=[]\n"
        f"for _ in range({repeats}):\n t=time.perf_counter();a@b;ts.append(time.perf_counter()-t)\n"
        "print(2*n**3/statistics.median(ts)/1e9)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


GOALS = (("numpy", 0.9), ("peak", 0.6), ("clblast", 20.0))  # kdsl >= factor x reference


def bench_matmul(
    sizes: list[int],
    backends: list[str],
    blocks: tuple[int, int, int] | None,
    best: bool,
    hand: bool,
    clb: bool,
    peak: bool,
    kernel: str = "op",
) -> Iterator[dict[str, Any]]:
    for n in sizes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        rep = 3 if n >= 2048 else 5
        flop = 2.0 * n**3
        np_gf = flop / seconds(partial(np.matmul, a, b), rep) / 1e9
        row: dict[str, Any] = {"n": n, "numpy": np_gf}
        if best:
            row["numpy_best"] = numpy_best(n, rep)
        ref = a.astype(np.float64) @ b.astype(np.float64)
        if peak:  # per row: the machine is shared, so the peak is re-measured next to each size
            row["peak"] = baselines.fma_peak()
        if hand:
            row["hand"], row["hand_cfg"] = baselines.handwritten(a, b, ref, rep * REPEAT_SCALE)
        if clb:  # ~10-15 GFLOP/s: one timed call at 2048 and up
            row["clblast"] = baselines.clblast(a, b, ref, 1 if n >= 2048 else 2)
        for be in backends:
            with kdsl.backend(be):
                fn = partial(tutorial_matmul.matmul, a, b) if kernel == "tutorial" else partial(matmul, a, b, blocks=blocks)
                c = fn()  # compiles (and for the tutorial kernel: autotunes)
                err = float(np.abs(c - ref).max() / (np.abs(ref).max() + 1e-30))
                row[be] = flop / seconds(fn, rep) / 1e9
                row[be + "_err"] = err
        yield row  # printed as soon as it is measured


def bench_softmax(backends: list[str], rows_: int = 4096, cols: int = 4096) -> dict[str, float]:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows_, cols), dtype=np.float32)
    dst = np.empty_like(x)
    nbytes = 2.0 * x.nbytes
    out = {"copy": nbytes / seconds(lambda: np.copyto(dst, x), 5) / 1e9}

    def np_softmax() -> None:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        e /= e.sum(axis=1, keepdims=True)

    out["numpy"] = nbytes / seconds(np_softmax, 3) / 1e9
    for be in backends:
        with kdsl.backend(be):
            out[be] = nbytes / seconds(lambda: softmax(x), 5) / 1e9
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="sizes 256 and 512 only")
    ap.add_argument("--sizes", type=int, nargs="*")
    ap.add_argument("--backends", nargs="*", default=["opencl", "cpu"])
    ap.add_argument("--blocks", type=int, nargs=3, help="BLOCK_M BLOCK_N BLOCK_K (default: the op's choice)")
    ap.add_argument("--numpy-best", action="store_true", help="also time numpy with OPENBLAS_* unset (child)")
    ap.add_argument("--handwritten", action="store_true", help="hand-written OpenCL SGEMM + CLBlast rows (PoCL)")
    ap.add_argument("--no-clblast", action="store_true", help="with --handwritten: skip CLBlast")
    ap.add_argument("--no-softmax", action="store_true")
    ap.add_argument("--fastest", action="store_true", help="report the fastest repeat instead of the median")
    ap.add_argument("--repeat-scale", type=int, default=1, help="multiply the number of repeats")
    ap.add_argument("--kernel", choices=("op", "tutorial"), default="op",
                    help="kdsl.ops.matmul (default) or Triton's tutorial-03 kernel as written")
    args = ap.parse_args()
    global STAT, REPEAT_SCALE
    STAT = min if args.fastest else statistics.median
    REPEAT_SCALE = max(1, args.repeat_scale)
    sizes = args.sizes or ([256, 512] if args.quick else [256, 512, 1024, 2048])
    backends = [b for b in args.backends if b in kdsl.available_backends()]
    blocks: tuple[int, int, int] | None = (args.blocks[0], args.blocks[1], args.blocks[2]) if args.blocks else None
    print(
        f"numpy in-process env: OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')!r} "
        f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE')!r}"
    )
    peak = "opencl" in kdsl.available_backends()
    print("fp32 FMA peak: peak.cl on PoCL, next to each size" if peak else "fp32 FMA peak: not measured (no PoCL)")
    hand = args.handwritten and "opencl" in kdsl.available_backends()
    clb = hand and not args.no_clblast
    if clb:
        clb, why = baselines.clblast_available()
        if not clb:
            print(f"CLBlast row skipped: {why}")
    elif args.handwritten:
        print("CLBlast row skipped: " + ("--no-clblast" if hand else "no PoCL device"))
    cols = [("numpy", "numpy")] + ([("numpy_best", "np-best")] if args.numpy_best else [])
    cols += [("peak", "peak")] if peak else []
    cols += ([("hand", "hand")] if hand else []) + ([("clblast", "clblast")] if clb else [])
    head = f"{'n':>6}" + "".join(f" {h:>8}" for _, h in cols)
    head += "".join(f" {be:>8} {'ratio':>6} {'relerr':>8}" for be in backends)
    ref_name = "numpy_best" if args.numpy_best else "numpy"
    what = "Triton's tutorial-03 kernel, autotuned" if args.kernel == "tutorial" else "kdsl.ops.matmul"
    print(f"matmul fp32 ({what}), GFLOP/s (ratio = kdsl / {'numpy best kernel' if args.numpy_best else 'numpy in-process'})")
    print(head)
    rows = []
    for r in bench_matmul(sizes, backends, blocks, args.numpy_best, hand, clb, peak, args.kernel):
        rows.append(r)
        line = f"{r['n']:>6}" + "".join(f" {r[k]:>8.1f}" for k, _ in cols)
        line += "".join(f" {r[be]:>8.1f} {r[be] / r[ref_name]:>6.2f} {r[be + '_err']:>8.1e}" for be in backends)
        print(line + (f"   (hand: {r['hand_cfg']})" if hand else ""), flush=True)
    refs = {"numpy": ref_name, "peak": "peak", "clblast": "clblast"}
    print("goals: kdsl >= 0.9x numpy" + (" best" if args.numpy_best else "") + ", >= 60% FMA peak, >= 20x CLBlast")
    for r in rows:
        for be in backends:
            parts = []
            for goal, factor in GOALS:
                base = r.get(refs[goal])
                if not base:
                    parts.append(f"{goal}: n/a")
                    continue
                x = r[be] / base
                parts.append(f"{goal}: {x:.2f}x {'PASS' if x >= factor else 'FAIL'}")
            print(f"  n={r['n']:<5} {be:<7} " + " | ".join(parts))
    if not args.no_softmax:
        s = bench_softmax(backends)
        print("softmax 4096x4096 fp32, effective GB/s (read + write)")
        print(
            f"  copy {s['copy']:.1f}  numpy {s['numpy']:.1f}  "
            + "  ".join(f"{be} {s[be]:.1f} ({s[be] / s['copy']:.0%} of copy)" for be in backends)
        )


if __name__ == "__main__":
    main()
