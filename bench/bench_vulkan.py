"""Vulkan (lavapipe) next to OpenCL (PoCL) in the same run, as ratios.

Rows: dispatch latency of a trivial kernel (µs per waited launch, numpy
arguments), Vulkan's launch paths (``bench_vulkan_launches``), vector add (GB/s, device time from timestamp queries and wall time
including the copies in/out), row softmax (GB/s) and matmul (GFLOP/s). Each
result is checked against numpy before it is timed. Usage::

    .venv/bin/python bench/bench_vulkan.py [--quick] [--num-threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vulkan"))
import vk_kernels as K

import kdsl
from kdsl.runtime.backend import LaunchOptions


def _backends(nt: int) -> dict[str, tuple[Any, LaunchOptions]]:
    out: dict[str, tuple[Any, LaunchOptions]] = {}
    from kdsl.runtime.vulkan import VulkanBackend

    vb = VulkanBackend()
    ok, why = vb.availability()
    if ok:
        out["vulkan"] = (vb, LaunchOptions(num_threads=nt))
    else:
        print(f"vulkan unavailable: {why}")
    try:
        from kdsl.runtime.opencl import OpenCLBackend

        ob = OpenCLBackend()
        if ob.availability()[0]:
            out["opencl"] = (ob, LaunchOptions())
    except ImportError as exc:
        print(f"opencl unavailable: {exc}")
    return out


def _median_time(fn: Callable[[], None], reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _kernel(be: Any, opts: LaunchOptions, kernel: Any, args: tuple[Any, ...], meta: dict[str, Any]) -> Any:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    return be.compile(module, kernel.fn.__name__, opts)


def bench(name: str, be: Any, opts: LaunchOptions, quick: bool) -> dict[str, float]:
    res: dict[str, float] = {}
    reps = 5 if quick else 20
    # dispatch latency: 16 floats
    x = np.ones(16, np.float32)
    o = np.zeros(16, np.float32)
    k = _kernel(be, opts, K.add_kernel, (x, x, o, 16), {"BLOCK": 16})
    res["latency_us"] = _median_time(lambda: k.launch((1, 1, 1), [x, x, o, 16]), reps * 10) * 1e6
    # vector add
    n = (1 << 20) if quick else (4 << 20)
    a, b, c = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32), np.zeros(n, np.float32)
    k = _kernel(be, opts, K.add_kernel, (a, b, c, n), {"BLOCK": 1024})
    grid = (kdsl.cdiv(n, 1024), 1, 1)
    k.launch(grid, [a, b, c, n])
    assert np.array_equal(c, a + b), f"{name}: vector add is wrong"
    t = _median_time(lambda: k.launch(grid, [a, b, c, n]), reps)
    res["vadd_GBps_wall"] = 12 * n / t / 1e9
    if hasattr(k, "profile"):
        k.profile = True
        k.launch(grid, [a, b, c, n])
        dev = [k.launch(grid, [a, b, c, n]) or k.last_elapsed_ns for _ in range(reps)]
        res["vadd_GBps_device"] = 12 * n / (statistics.median(dev) * 1e-9) / 1e9
        k.profile = False
    # softmax
    rows, cols = (256, 1024) if quick else (1024, 1024)
    s = np.random.randn(rows, cols).astype(np.float32)
    so = np.zeros_like(s)
    k = _kernel(be, opts, K.softmax_kernel, (so, s, cols, cols, cols), {"BLOCK": cols})
    k.launch((rows, 1, 1), [so, s, cols, cols, cols])
    ref = np.exp(s - s.max(1, keepdims=True))
    assert np.allclose(so, ref / ref.sum(1, keepdims=True), rtol=1e-5, atol=1e-6), f"{name}: softmax is wrong"
    t = _median_time(lambda: k.launch((rows, 1, 1), [so, s, cols, cols, cols]), reps)
    res["softmax_GBps"] = 8 * rows * cols / t / 1e9
    # matmul
    m = 256 if quick else 512
    ma, mb, mc = (np.random.randn(m, m).astype(np.float32) for _ in range(3))
    meta = {"BM": 32, "BN": 32, "BK": 32}
    k = _kernel(be, opts, K.matmul_kernel, (ma, mb, mc, m, m, m), meta)
    mgrid = (m // 32, m // 32, 1)
    k.launch(mgrid, [ma, mb, mc, m, m, m])
    assert np.allclose(mc, ma @ mb, rtol=1e-3, atol=1e-3), f"{name}: matmul is wrong"
    t = _median_time(lambda: k.launch(mgrid, [ma, mb, mc, m, m, m]), max(3, reps // 4))
    res["matmul_GFLOPs"] = 2 * m**3 / t / 1e9
    return res


def bench_vulkan_launches(be: Any, opts: LaunchOptions, quick: bool) -> dict[str, float]:
    """Vulkan only: launch paths side by side in one run.

    ``dev_launch_us_sync``/``_async``: µs per launch of a 16 Ki-element vector
    add on device arrays, 200 launches then one synchronize, with
    ``inflight.MAX_IN_FLIGHT`` 0 (every launch waits: the old behaviour) and
    the default; ``latency_us_push``: the latency row with parameters in push
    constants instead of the device's default binding (lavapipe: a uniform
    buffer, because push constants leak host memory there).
    """
    from kdsl.runtime.vulkan import VulkanBackend, inflight

    res: dict[str, float] = {}
    reps = 3 if quick else 7
    n = 1 << 14
    host = [np.random.rand(n).astype(np.float32) for _ in range(3)]
    k = _kernel(be, opts, K.add_kernel, (*host, n), {"BLOCK": 1024})
    dx, dy, dout = (kdsl.tensor(h, backend="vulkan") for h in host)
    grid = (n // 1024, 1, 1)
    dev = be.device()

    def burst() -> None:
        for _ in range(200):
            k.launch(grid, [dx, dy, dout, n])
        dev.synchronize()

    default, times = inflight.MAX_IN_FLIGHT, {"sync": [], "async": []}  # type: dict[str, list[float]]
    try:
        for _ in range(reps):  # alternate, so that load changes hit both alike
            for mode, cap in (("sync", 0), ("async", default)):
                inflight.MAX_IN_FLIGHT = cap
                times[mode].append(_median_time(burst, 1) / 200)
    finally:
        inflight.MAX_IN_FLIGHT = default
    assert np.array_equal(dout.numpy(), host[0] + host[1]), "vulkan: device-array vector add is wrong"
    res["dev_launch_us_sync"] = statistics.median(times["sync"]) * 1e6
    res["dev_launch_us_async"] = statistics.median(times["async"]) * 1e6
    x = np.ones(16, np.float32)
    o = np.zeros(16, np.float32)
    for key, backend in (("latency_us_default", be), ("latency_us_push", VulkanBackend({"params_binding": "push"}))):
        kk = _kernel(backend, opts, K.add_kernel, (x, x, o, 16), {"BLOCK": 16})
        res[key] = _median_time(lambda kk=kk: kk.launch((1, 1, 1), [x, x, o, 16]), reps * 30) * 1e6
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions")
    ap.add_argument("--num-threads", type=int, default=0, help="vulkan work-group size (0: automatic)")
    ns = ap.parse_args()
    results = {name: bench(name, be, opts, ns.quick) for name, (be, opts) in _backends(ns.num_threads).items()}
    if "vulkan" in results:
        be, opts = _backends(ns.num_threads)["vulkan"]
        results["vulkan"].update(bench_vulkan_launches(be, opts, ns.quick))
    keys = sorted({k for r in results.values() for k in r})
    names = list(results)
    print(f"{'metric':<20}" + "".join(f"{n:>12}" for n in names) + ("  vulkan/opencl" if len(names) == 2 else ""))
    for key in keys:
        vals = [results[n].get(key) for n in names]
        row = f"{key:<20}" + "".join(f"{v:>12.2f}" if v is not None else f"{'-':>12}" for v in vals)
        if len(names) == 2 and all(v is not None for v in vals):
            row += f"  {vals[0] / vals[1]:>13.2f}"  # type: ignore[operator]
        print(row)


if __name__ == "__main__":
    main()
