"""Vector add of 16M floats: GB/s of kdsl versus numpy's ``np.add`` and copy bandwidth.

Bytes moved per add = 3 * 4 * n (two reads, one write). Rows: numpy ``np.add``
into a preallocated output, numpy copy (``np.copyto``: the machine's copy
bandwidth, 2 * 4 * n bytes), kdsl with device arrays (launch + synchronize)
and kdsl with numpy arguments (copy-in/write-back included). Ratios are to
``np.add`` in the same run. Usage: python bench/bench_vector_add.py [--n 16777216] [--backends opencl]
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
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


def best_seconds(fn: Callable[[], None], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) if repeats < 3 else statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--block", type=int, default=4096)
    ap.add_argument("--backends", default="", help="comma-separated (default: opencl and interpreter)")
    opts = ap.parse_args()
    n = opts.n
    rng = np.random.default_rng(0)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    out = np.empty_like(x)
    gb = 3 * 4 * n / 1e9
    rows: list[tuple[str, float, float]] = []
    t = best_seconds(lambda: np.add(x, y, out=out), 7)
    rows.append(("numpy np.add", gb / t, t))
    t_np = t
    t = best_seconds(lambda: np.copyto(out, x), 7)
    rows.append(("numpy copy (2*4*n bytes)", 2 * 4 * n / 1e9 / t, t))
    avail = kdsl.available_backends()
    wanted = [b for b in opts.backends.split(",") if b] or ["opencl", "interpreter"]
    backends = [b for b in wanted if b in avail]
    if "opencl" not in avail:
        print("note: the opencl backend is not available here: interpreter rows only")
    grid = (kdsl.cdiv(n, opts.block),)
    for name in backends:
        reps = 7 if name != "interpreter" else 2
        with kdsl.backend(name):
            dx, dy, do = kdsl.tensor(x), kdsl.tensor(y), kdsl.empty(n, np.float32)

            def on_device(dx: kdsl.DeviceArray = dx, dy: kdsl.DeviceArray = dy, do: kdsl.DeviceArray = do) -> None:
                add[grid](dx, dy, do, n, BLOCK=opts.block)
                kdsl.synchronize()

            t = best_seconds(on_device, reps)
            assert np.array_equal(do.numpy(), x + y)
            rows.append((f"kdsl {name} device arrays", gb / t, t))
            t = best_seconds(lambda: add[grid](x, y, out, n, BLOCK=opts.block), reps)
            assert np.array_equal(out, x + y)
            rows.append((f"kdsl {name} numpy arguments", gb / t, t))
    print(f"vector add, n = {n} float32 ({gb:.2f} GB moved per add)")
    print(f"{'variant':<34} {'GB/s':>7} {'ms':>8} {'vs np.add':>9}")
    for label, rate, t in rows:
        print(f"{label:<34} {rate:>7.2f} {t * 1e3:>8.2f} {t_np / t:>9.2f}")


if __name__ == "__main__":
    main()
