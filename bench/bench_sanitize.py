"""The price of sanitiser mode: vector add and matmul with bounds checks off and on.

For each device backend, times the same launch with ``kdsl.set_sanitize(False)``
and ``kdsl.set_sanitize(True)``, interleaved (off, on, off, on, ...) in one
process, and reports the median of each and their ratio (the slowdown). Also
reports the first-call (compile) time of each mode. Results are checked against
numpy before timing. Vector add uses numpy arguments (sanitiser mode makes every
launch synchronous anyway: it reads the report after the kernel); matmul is
``kdsl.ops.matmul`` (the Triton tutorial kernel with masks and a K loop).

Usage: python bench/bench_sanitize.py [--quick] [--backends cpu,opencl,vulkan] [--n N] [--size S]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops.matmul import matmul


@kdsl.kernel
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


def first_call(fn: Callable[[], None]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def interleaved(fns: dict[bool, Callable[[], None]], repeats: int) -> dict[bool, float]:
    """Median seconds of each mode, timed alternately so machine noise hits both."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        for mode, fn in fns.items():
            kdsl.set_sanitize(mode)
            t = time.perf_counter()
            fn()
            times[mode].append(time.perf_counter() - t)
    return {mode: statistics.median(ts) for mode, ts in times.items()}


def measure(label: str, fn: Callable[[], None], check: Callable[[], None], repeats: int) -> tuple[str, ...]:
    firsts = {}
    for mode in (False, True):
        kdsl.set_sanitize(mode)
        firsts[mode] = first_call(fn)
        check()
    med = interleaved({False: fn, True: fn}, repeats)
    return (
        label,
        f"{med[False] * 1e3:.2f}",
        f"{med[True] * 1e3:.2f}",
        f"{med[True] / med[False]:.2f}x",
        f"{firsts[False]:.2f}",
        f"{firsts[True]:.2f}",
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    ap.add_argument("--backends", default="cpu,opencl,vulkan")
    ap.add_argument("--n", type=int, default=0, help="vector length (default 4M, quick 256K)")
    ap.add_argument("--size", type=int, default=0, help="matmul M = N = K (default 512, quick 128)")
    ap.add_argument("--repeats", type=int, default=0)
    opts = ap.parse_args()
    n = opts.n or (1 << 18 if opts.quick else 1 << 22)
    size = opts.size or (128 if opts.quick else 512)
    repeats = opts.repeats or (3 if opts.quick else 9)
    rng = np.random.default_rng(0)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    out = np.empty_like(x)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    ref = a @ b
    grid = (kdsl.cdiv(n, 1024),)
    res: list[np.ndarray] = []

    def run_add() -> None:
        add[grid](x, y, out, n, BLOCK=1024)

    def check_add() -> None:
        assert np.array_equal(out, x + y)

    def run_mm() -> None:
        res[:] = [matmul(a, b)]
        kdsl.synchronize()

    def check_mm() -> None:
        np.testing.assert_allclose(np.asarray(res[0]), ref, rtol=1e-3, atol=1e-3)

    rows = []
    avail = kdsl.available_backends()
    for name in [s for s in opts.backends.split(",") if s]:
        if name not in avail:
            print(f"note: backend {name!r} is not available here")
            continue
        with kdsl.backend(name):
            rows.append(measure(f"{name} vector add n={n}", run_add, check_add, repeats))
            rows.append(measure(f"{name} matmul {size}^3", run_mm, check_mm, repeats))
    kdsl.set_sanitize(None)
    head = ("kernel", "off ms", "on ms", "slowdown", "1st off s", "1st on s")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


if __name__ == "__main__":
    main()
