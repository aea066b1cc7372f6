"""Benchmark kdsl's numpy interpreter (the "interpreter" backend) per program instance.

Workloads (Triton tutorial kernels written with ``@kdsl.kernel``): vector add
of 2**20 floats with BLOCK=1024 (1024 programs), row softmax 1823x781 (one
program per row) and matmul 256^3 (64x64x32 blocks, 16 programs). Each is
checked against numpy first, then timed (median of several runs after one
warm-up launch, which also pays compilation).

The comparison row is Triton 3.9's interpreter (``TRITON_INTERPRET=1``) as
*published* for this machine type in ``../shared/PLATFORM.md``: vector add
of 98,432 floats 51 ms (~0.5 ms per program), softmax 1823x781 2.1 s, matmul
256^3 0.7 s. Ratios are per program instance for vector add (the published
run used a different size) and per launch for the same-size workloads. If
``triton`` is importable, vector add is also timed live under
``TRITON_INTERPRET=1``. Per-program times and speedups use process CPU time,
which a busy shared machine inflates far less than wall time (both are shown).

Usage: ``python bench/bench_interpreter.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl

RESULTS = Path(__file__).resolve().parent / "results"


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    y = kl.load(y_ptr + offs, mask=mask)
    kl.store(out_ptr + offs, x + y, mask=mask)


@kdsl.kernel
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK)
    mask = cols < n_cols
    x = kl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - kl.max(x, axis=0)
    num = kl.exp(x)
    den = kl.sum(num, axis=0)
    kl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,  # type: ignore[no-untyped-def]
                  BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):  # fmt: skip
    pid_m = kl.program_id(0)
    pid_n = kl.program_id(1)
    rm = pid_m * BM + kl.arange(0, BM)
    rn = pid_n * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        a = kl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k < K), other=0.0)
        b = kl.load(b_ptrs, mask=(rk[:, None] + k < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(a, b)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    kl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@dataclass
class Workload:
    name: str
    programs: int
    run: Callable[[], None]
    check: Callable[[], None]
    triton_published_s: float  # published Triton-interpreter time for the workload below
    triton_published_programs: int
    triton_note: str


def make_workloads() -> list[Workload]:
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros_like(x)

    def add() -> None:
        add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)

    def add_check() -> None:
        np.testing.assert_array_equal(out, x + y)

    rows, cols = 1823, 781
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    sm = np.zeros_like(a)

    def softmax() -> None:
        softmax_kernel[(rows,)](sm, a, a.strides[0] // 4, sm.strides[0] // 4, cols, BLOCK=1024)

    def softmax_check() -> None:
        e = np.exp(a - a.max(axis=1, keepdims=True))
        np.testing.assert_allclose(sm, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)

    s = 256
    ma, mb = rng.standard_normal((s, s)).astype(np.float32), rng.standard_normal((s, s)).astype(np.float32)
    mc = np.zeros((s, s), np.float32)
    bm = bn = 64

    def matmul() -> None:
        matmul_kernel[(s // bm, s // bn)](ma, mb, mc, s, s, s, s, 1, s, 1, s, 1, BM=bm, BN=bn, BK=32)

    def matmul_check() -> None:
        np.testing.assert_allclose(mc, ma @ mb, rtol=1e-4, atol=1e-3)

    return [
        Workload("vector add 2^20 (BLOCK 1024)", n // 1024, add, add_check, 0.051, 97, "98,432 floats: 51 ms"),
        Workload("softmax 1823x781", rows, softmax, softmax_check, 2.1, rows, "2.1 s"),
        Workload("matmul 256^3 (64x64x32)", (s // bm) * (s // bn), matmul, matmul_check, 0.7, 0, "0.7 s"),
    ]


def median_time(fn: Callable[[], None], repeat: int) -> float:
    return median_times(fn, repeat)[0]


def median_times(fn: Callable[[], None], repeat: int) -> tuple[float, float]:
    """(median wall time, median process CPU time): on a shared machine the CPU
    time is the steadier of the two."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def live_triton(repeat: int) -> dict[str, float] | None:
    """Time Triton's interpreter on vector add if triton is installed (else None)."""
    try:
        os.environ["TRITON_INTERPRET"] = "1"
        import triton  # type: ignore[import-not-found]
        import triton.language as tl  # type: ignore[import-not-found]
    except ImportError:
        return None

    @triton.jit  # type: ignore[misc]
    def t_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 98_432
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    out = np.zeros_like(x)
    grid = (triton.cdiv(n, 1024),)
    t_add[grid](x, y, out, n, BLOCK=1024)
    t = median_time(lambda: t_add[grid](x, y, out, n, BLOCK=1024), max(1, repeat // 2))
    return {"vector add 98,432": t, "per_program_ms": t / grid[0] * 1e3}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    rows: list[dict[str, Any]] = []
    with kdsl.backend("interpreter"):
        for w in make_workloads():
            t0 = time.perf_counter()
            w.run()  # warm-up: compiles
            first = time.perf_counter() - t0
            w.check()
            t, cpu = median_times(w.run, repeat)
            per_prog = cpu / w.programs  # CPU time: the shared machine inflates wall time
            if w.triton_published_programs:
                ratio = (w.triton_published_s / w.triton_published_programs) / per_prog
                basis = "per program"
            else:
                ratio = w.triton_published_s / cpu
                basis = "per launch"
            rows.append({"workload": w.name, "programs": w.programs, "median_s": t, "cpu_s": cpu, "first_call_s": first,
                         "per_program_us": per_prog * 1e6, "triton_published": w.triton_note,
                         "speedup_vs_triton": ratio, "basis": basis})  # fmt: skip
    print(f"{'workload':32} {'programs':>8} {'median':>10} {'cpu':>9} {'per program':>12} {'first call':>11}  "
          f"{'Triton interp (published)':>26} {'speedup':>8}")  # fmt: skip
    for r in rows:
        print(f"{r['workload']:32} {r['programs']:>8} {r['median_s'] * 1e3:>8.1f}ms {r['cpu_s'] * 1e3:>7.1f}ms "
              f"{r['per_program_us']:>10.1f}us "
              f"{r['first_call_s'] * 1e3:>9.1f}ms  {r['triton_published']:>26} {r['speedup_vs_triton']:>7.0f}x"
              f" ({r['basis']})")  # fmt: skip
    print("per program and speedup use process CPU time (wall time is inflated when the shared machine is busy).")
    print("Triton figures: published for this machine type (../shared/PLATFORM.md), Triton 3.9 TRITON_INTERPRET=1.")
    live = live_triton(repeat)
    if live is None:
        print("live Triton measurement: skipped (triton is not installed)")
    else:
        print(f"live Triton interpreter: vector add 98,432 floats {live['vector add 98,432'] * 1e3:.1f} ms "
              f"({live['per_program_ms']:.2f} ms per program)")  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    payload = {"machine": platform.platform(), "python": sys.version, "rows": rows, "live_triton": live}
    (RESULTS / "interpreter.json").write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
