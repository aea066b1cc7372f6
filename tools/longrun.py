#!/usr/bin/env python3
"""Long runs: launch one kernel N times per backend and watch memory.

For each backend (default: every available one) the vector-add kernel is
launched ``--count`` times (default 100,000) with numpy arrays (the
synchronous copy-in/copy-out path) or, with ``--arrays device``, with device
arrays. Resident set size (``/proc/self/statm``) is sampled every
``--every`` launches; the figure that matters is the growth between the
first sample after warm-up (compile, first allocations) and the last one.
On Vulkan the allocator's device-memory blocks (``vkAllocateMemory`` calls
still live) and bytes in use are reported too. Results are checked at the end.

Examples::

    python tools/longrun.py                       # 100,000 launches on every backend
    python tools/longrun.py --backend cpu --count 1000000
    python tools/longrun.py --arrays device --count 20000
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT  # noqa: F401  (sys.path set-up)

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def vulkan_memory() -> tuple[int, int] | None:
    """(live vkAllocateMemory blocks, bytes in use) of the Vulkan runtime, if it is up."""
    try:
        from kdsl.runtime.vulkan import runtime as vrt
    except Exception:
        return None
    runtimes: dict[Any, Any] = getattr(vrt, "_RUNTIMES", {})
    if not runtimes:
        return None
    alloc = next(iter(runtimes.values())).allocator
    return len(alloc.blocks) + len(alloc.staging_blocks), int(alloc.in_use())


def run_backend(name: str, count: int, every: int, arrays: str, trace: bool = False) -> dict[str, Any]:
    import kdsl
    import kdsl.language as kl

    @kdsl.kernel
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
        offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
        m = offs < n
        kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) + kl.load(y_ptr + offs, mask=m), mask=m)

    n = 4096
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    y = np.random.default_rng(1).random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    with kdsl.backend(name):
        args: list[Any] = [x, y, out]
        if arrays == "device":
            args = [kdsl.tensor(a, backend=name) for a in (x, y, out)]
        grid = (n // 1024,)
        samples: list[tuple[int, int, float]] = []
        vk: list[tuple[int, tuple[int, int] | None]] = []
        t0 = time.monotonic()
        snap0 = None
        for i in range(count):
            if trace and i == min(every, count - 1):
                import tracemalloc

                tracemalloc.start(8)
                snap0 = tracemalloc.take_snapshot()
            add[grid](*args, n, BLOCK=1024)
            if (i + 1) % every == 0 or i == 0:
                if arrays == "device":
                    kdsl.synchronize()
                gc.collect()
                samples.append((i + 1, rss_bytes(), time.monotonic() - t0))
                vk.append((i + 1, vulkan_memory()))
        if arrays == "device":
            kdsl.synchronize()
            result = args[2].numpy()
        else:
            result = out
    ok = bool(np.array_equal(result, x + y))
    top: list[str] = []
    if snap0 is not None:
        import tracemalloc

        diff = tracemalloc.take_snapshot().compare_to(snap0, "traceback")
        tracemalloc.stop()
        for stat in diff[:5]:
            frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(stat.traceback)[::-1][:5])
            top.append(f"{stat.size_diff // 1024:+d} KiB in {stat.count_diff:+d} blocks at {frames}")
    warm = samples[1] if len(samples) > 1 else samples[0]
    last = samples[-1]
    return {
        "backend": name,
        "launches": count,
        "arrays": arrays,
        "correct": ok,
        "seconds": round(last[2], 1),
        "us_per_launch": round(1e6 * last[2] / count, 1),
        "rss_first_mb": round(samples[0][1] / 2**20, 1),
        "rss_warm_mb": round(warm[1] / 2**20, 1),
        "rss_last_mb": round(last[1] / 2**20, 1),
        "rss_growth_after_warmup_kb": (last[1] - warm[1]) // 1024,
        "rss_max_mb": round(max(s[1] for s in samples) / 2**20, 1),
        "rss_samples_mb": [round(s[1] / 2**20, 1) for s in samples],
        "python_heap_growth_top": top or None,
        "vulkan_blocks_and_bytes": [v for v in vk if v[1] is not None][-2:] if any(v[1] for v in vk) else None,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=100_000, help="launches per backend")
    p.add_argument("--seconds", type=float, default=None, help="stop each backend early after this long (approx.)")
    p.add_argument("--every", type=int, default=10_000, help="sample memory every N launches")
    p.add_argument("--backend", default="", help="one backend (default: every available)")
    p.add_argument("--arrays", choices=("numpy", "device"), default="numpy", help="argument kind")
    p.add_argument("--seed", type=int, default=0, help="unused (the inputs are fixed); kept for a uniform CLI")
    p.add_argument("--tracemalloc", action="store_true", help="report the Python-heap growth after warm-up (slow)")
    args = p.parse_args(argv)
    os.environ.setdefault("KDSL_CACHE_DIR", "/tmp/kdsl-longrun-cache")
    import kdsl

    names = [args.backend] if args.backend else kdsl.available_backends()
    bad = 0
    for name in names:
        count = args.count
        if args.seconds is not None:  # calibrate: how many launches fit
            probe = run_backend(name, 200, 100, args.arrays)
            count = min(count, max(1000, int(args.seconds / max(probe["seconds"], 1e-3) * 200)))
        r = run_backend(name, count, min(args.every, max(count // 10, 1)), args.arrays, args.tracemalloc)
        bad += not r["correct"]
        print(" ".join(f"{k}={v}" for k, v in r.items()), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
