"""The price of kdsl's NaN-defined argmax: ``kl.argmax`` vs Triton's combine vs numpy.

``kl.argmax`` uses a combine that is a total order on (value, index) with NaN
ranked first (docs/RELIABILITY.md, *argmax/argmin and NaN*); Triton's combine
(``v1 > v2 or v1 == v2 and i1 < i2``, written here with ``kl.reduce``) needs
fewer comparisons but leaves NaN order-dependent. Row-wise argmax of a
float32 matrix (no NaN, so both give numpy's answer, checked first); the two
kernels and ``np.argmax(x, axis=1)`` are timed interleaved in one process and
the medians' ratios printed.

Usage: python bench/bench_argmax_nan.py [--backends cpu,opencl,vulkan] [--rows M] [--cols N] [--reps R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def triton_combine(v1, i1, v2, i2):
    gt = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return kl.where(gt, v1, v2), kl.where(gt, i1, i2)


@kdsl.kernel
def argmax_kdsl(x_ptr, o_ptr, N: kl.constexpr, R: kl.constexpr):
    rows = kl.program_id(0) * R + kl.arange(0, R)
    x = kl.load(x_ptr + rows[:, None] * N + kl.arange(0, N)[None, :])
    kl.store(o_ptr + rows, kl.argmax(x, axis=1))


@kdsl.kernel
def argmax_triton(x_ptr, o_ptr, N: kl.constexpr, R: kl.constexpr):
    rows = kl.program_id(0) * R + kl.arange(0, R)
    x = kl.load(x_ptr + rows[:, None] * N + kl.arange(0, N)[None, :])
    idx = kl.broadcast_to(kl.arange(0, N)[None, :], (R, N))
    _, i = kl.reduce((x, idx), 1, triton_combine)
    kl.store(o_ptr + rows, i)


def _timed(fn: Callable[[], object], times: list[float]) -> None:
    t = time.perf_counter()
    fn()
    times.append(time.perf_counter() - t)


def _launcher(kernel: kdsl.KernelFunction, x: np.ndarray, out: np.ndarray, n: int, r: int) -> Callable[[], object]:
    grid = (x.shape[0] // r,)
    return lambda: kernel[grid](x, out, N=n, R=r)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default="cpu,opencl,vulkan")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=1024)
    p.add_argument("--reps", type=int, default=15)
    args = p.parse_args()
    m, n, r = args.rows, args.cols, 4
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32)
    want = np.argmax(x, axis=1)
    for be in args.backends.split(","):
        if be not in kdsl.available_backends():
            print(f"{be:8s} unavailable")
            continue
        with kdsl.backend(be):
            o1, o2 = np.zeros(m, np.int32), np.zeros(m, np.int32)
            argmax_kdsl[(m // r,)](x, o1, N=n, R=r)
            argmax_triton[(m // r,)](x, o2, N=n, R=r)
            assert (o1 == want).all() and (o2 == want).all()
            tk: list[float] = []
            tt: list[float] = []
            tn: list[float] = []
            run_k, run_t = _launcher(argmax_kdsl, x, o1, n, r), _launcher(argmax_triton, x, o2, n, r)
            for _ in range(args.reps):
                _timed(run_k, tk)
                _timed(run_t, tt)
                _timed(lambda: np.argmax(x, axis=1), tn)
            k, t, nn = (statistics.median(v) for v in (tk, tt, tn))
            print(
                f"{be:8s} kdsl/triton-combine {k / t:.2f}x   kdsl/numpy {k / nn:.2f}x   triton-combine/numpy {t / nn:.2f}x"
            )


if __name__ == "__main__":
    main()
