"""The ``cpu`` backend (LLVM via llvmlite) next to ``opencl`` (PoCL) and numpy.

Workloads (Triton tutorial kernels written with ``@kdsl.kernel``): vector add
of 16M floats (BLOCK=4096), row softmax 4096x1024 (one program per row) and
matmul fp32 at 256^3, 512^3 and 1024^3 (64x64 tiles, K step 32; ``--quick``:
4M floats, 1024x1024, matmul 256 and 512). Every result is checked against
numpy first; then kdsl and numpy runs are interleaved ``--repeat`` times and
the best of each is kept (the machine is shared: interleaving exposes both to
the same load). Launch overhead: a trivial kernel with one array argument, µs
per synchronous launch through ``kernel[grid](...)``, for a 1-program grid and
a 64-program grid (on ``cpu`` small grids run on the calling thread once their
measured cost is below the pool's hand-off cost).

Ratios are printed as tables (cpu / numpy and cpu / opencl: > 1 means the
cpu backend is faster). The machine is shared: compare cells inside one run.
The ``opencl`` column is skipped (with the reason) when no OpenCL device is
present. Usage: ``python bench/bench_cpu.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.runtime import backends


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, BLOCK)
    mask = offs < n_cols
    x = kl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - kl.max(x, axis=0)
    e = kl.exp(x)
    kl.store(out_ptr + row * stride + offs, e / kl.sum(e, axis=0), mask=mask)


@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        a = kl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = kl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@kdsl.kernel
def noop_kernel(x_ptr):
    kl.store(x_ptr, kl.load(x_ptr) + 1.0)


def ensure_registered() -> list[str]:
    """Register cpu/opencl if the registry still has placeholders; return usable names."""
    if not backends.availability("cpu")[0]:
        from kdsl.runtime.cpu import CPUBackend

        backends.register_backend("cpu", CPUBackend)
    if not backends.availability("opencl")[0]:
        try:
            from kdsl.runtime.opencl import OpenCLBackend

            backends.register_backend("opencl", OpenCLBackend)
        except Exception:
            pass
    return [n for n in ("cpu", "opencl") if backends.availability(n)[0]]


def best_interleaved(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Best time of each function over ``repeat`` rounds that run every function once."""
    best = {k: float("inf") for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def workloads(quick: bool) -> dict[str, tuple[Callable[[str], Callable[[], Any]], Callable[[], Any], float]]:
    """name -> (kdsl runner factory per backend, numpy runner, work units for the metric)."""
    rng = np.random.default_rng(0)
    n = (1 << 22) if quick else (1 << 24)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    rows, cols = (1024, 1024) if quick else (4096, 1024)
    s_in = rng.standard_normal((rows, cols), dtype=np.float32)
    s_out = np.empty_like(s_in)
    sizes = (256, 512) if quick else (256, 512, 1024)

    def np_softmax() -> Any:
        e = np.exp(s_in - s_in.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def k_add(be: str) -> Callable[[], Any]:
        def run() -> Any:
            with kdsl.backend(be):
                add_kernel[(kdsl.cdiv(n, 4096),)](x, y, out, n, BLOCK=4096)
            return out
        return run

    def k_softmax(be: str) -> Callable[[], Any]:
        def run() -> Any:
            with kdsl.backend(be):
                softmax_kernel[(rows,)](s_out, s_in, cols, cols, BLOCK=cols)
            return s_out
        return run

    out_w: dict[str, tuple[Callable[[str], Callable[[], Any]], Callable[[], Any], float]] = {
        "vector add (GB/s)": (k_add, lambda: np.add(x, y, out=out), 12.0 * n / 1e9),
        "softmax (GB/s)": (k_softmax, np_softmax, 8.0 * rows * cols / 1e9),
    }
    for m in sizes:
        out_w[f"matmul fp32 {m}^3 (GFLOP/s)"] = _matmul_workload(rng, m)
    return out_w


def _matmul_workload(
    rng: np.random.Generator, m: int
) -> tuple[Callable[[str], Callable[[], Any]], Callable[[], Any], float]:
    a, b = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    c = np.empty((m, m), np.float32)

    def k_matmul(be: str) -> Callable[[], Any]:
        def run() -> Any:
            with kdsl.backend(be):
                matmul_kernel[(m // 64, m // 64)](a, b, c, m, m, m, BM=64, BN=64, BK=32)
            return c
        return run

    return k_matmul, lambda: np.matmul(a, b, out=c), 2.0 * m**3 / 1e9


def check(name: str, got: Any, want: Any) -> None:
    tol = 1e-3 if "matmul" in name else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


def launch_overhead(be: str, count: int, programs: int = 1) -> float:
    """Best of 3 averages of ``count`` synchronous launches of a trivial kernel, in µs."""
    x = np.zeros(1, np.float32)
    best = float("inf")
    with kdsl.backend(be):
        noop_kernel[(programs,)](x)
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(count):
                noop_kernel[(programs,)](x)
            best = min(best, (time.perf_counter() - t0) / count * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    names = ensure_registered()
    print(f"backends measured: {', '.join(names)} (+ numpy)")
    rows: list[tuple[str, dict[str, float]]] = []
    for wname, (factory, np_run, units) in workloads(args.quick).items():
        want = np.array(np_run(), copy=True)
        fns: dict[str, Callable[[], Any]] = {"numpy": np_run}
        for be in names:
            run = factory(be)
            check(f"{wname} on {be}", run(), want)
            fns[be] = run
        rows.append((wname, {k: units / t for k, t in best_interleaved(fns, args.repeat).items()}))
    cols = ["cpu", "opencl", "numpy"]
    print(f"\n| workload | {' | '.join(cols)} | cpu/numpy | cpu/opencl |")
    print("|---|" + "---|" * (len(cols) + 2))
    for wname, cells in rows:
        vals = " | ".join(f"{cells[c]:.1f}" if c in cells else "-" for c in cols)
        r_np = f"{cells['cpu'] / cells['numpy']:.2f}x" if "cpu" in cells else "-"
        r_cl = f"{cells['cpu'] / cells['opencl']:.2f}x" if "cpu" in cells and "opencl" in cells else "-"
        print(f"| {wname} | {vals} | {r_np} | {r_cl} |")
    count = 200 if args.quick else 2000
    print("\n| launch overhead (µs per synchronous launch of a trivial kernel) | 1 program | 64 programs |")
    print("|---|---|---|")
    for be in names:
        print(f"| {be} | {launch_overhead(be, count):.1f} | {launch_overhead(be, count, 64):.1f} |")


if __name__ == "__main__":
    main()
