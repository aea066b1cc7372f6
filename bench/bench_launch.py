"""Launch overhead: microseconds per warm launch of trivial kernels (1, 4, 8 arguments).

Two ways, each next to the backend's own launch in the same run:
* async: 1000 launches on device arrays, then one ``kdsl.synchronize()``;
  raw = the same compiled program driven directly by pyopencl, two ways:
  ``set_args`` (numpy scalars) + ``enqueue_nd_range_kernel``, and pyopencl's
  typed invoker (``set_scalar_arg_dtypes`` + ``kernel(queue, ...)``, its
  fastest documented path); elsewhere raw = ``CompiledKernel.launch``;
* sync: launches with numpy arguments; raw = copy-in, launch, finish, copy-out
  in pyopencl (opencl) or ``CompiledKernel.launch`` with the same arrays.
Goals (issue 2/8): async <= 2x raw, sync <= 1.2x raw; the ratio column is
against the FASTER raw variant. Prints a table; repeat runs on a noisy machine.
The ``null`` rows use a backend whose launch does nothing: the JIT's own
per-launch cost (bind, key, lookup, convert) in absolute microseconds.
Usage: python bench/bench_launch.py [--n 1000] [--backends interpreter,opencl]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl


@kdsl.kernel
def k1(a):
    kl.store(a + kl.program_id(0), 1.0)


@kdsl.kernel
def k4(a, b, c, n):
    p = kl.program_id(0)
    kl.store(a + p, kl.load(b + p) + kl.load(c + p) + n)


@kdsl.kernel
def k8(a, b, c, d, e, f, n, m):
    p = kl.program_id(0)
    kl.store(a + p, kl.load(b + p) + kl.load(c + p) + kl.load(d + p) + kl.load(e + p) + kl.load(f + p) + n + m)


KERNELS: dict[int, Any] = {1: k1, 4: k4, 8: k8}
SIZE = 64


def make_args(nargs: int, arrays: Callable[[np.ndarray[Any, Any]], Any]) -> list[Any]:
    n_arrays = {1: 1, 4: 3, 8: 6}[nargs]
    out: list[Any] = [arrays(np.zeros(SIZE, np.float32)) for _ in range(n_arrays)]
    return out + [3, 5][: nargs - n_arrays]


def per_launch_us(fn: Callable[[], None], n: int, sync: Callable[[], None], repeats: int = 5) -> float:
    """Median over ``repeats`` of (n launches + one sync) / n, in microseconds."""
    return interleaved_us([fn], n, sync, repeats)[0]


def interleaved_us(fns: list[Callable[[], None]], n: int, sync: Callable[[], None], repeats: int = 7) -> list[float]:
    """Per-launch microseconds of each fn, measured in alternation (round robin, ``repeats``
    rounds) so that load changes on a shared machine hit all of them alike; the median
    round of each."""
    for fn in fns:
        fn()
        sync()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, samples):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            out.append((time.perf_counter() - t) / n * 1e6)
    return [statistics.median(s) for s in samples]


def compiled_of(k: Any) -> Any:
    """The CompiledKernel behind the kernel's (single) warm launcher."""
    return next(iter(k._launchers.values())).kernel


def raw_opencl(compiled: Any, args: list[Any], numpy_args: bool, typed: bool) -> Callable[[], None] | None:
    """The same program driven through pyopencl directly, or None if not an OpenCL kernel."""
    try:
        import pyopencl as cl
    except ImportError:
        return None
    knl, dev = getattr(compiled, "kernel", None), getattr(compiled, "device", None)
    queue = getattr(dev, "queue", None)
    if knl is None or queue is None or dev is None:
        return None
    knl = cl.Kernel(compiled.program, compiled.kernel_name)  # its own object: kdsl's stays untouched
    nt = int(getattr(compiled, "num_threads", 1) or 1)
    bufs: list[Any] = []
    hosts: list[Any] = []
    values: list[Any] = []
    for a in args:
        if isinstance(a, (int, float)):
            values.append(np.int32(a))
            continue
        host = a.numpy() if hasattr(a, "numpy") else a
        buf = cl.Buffer(dev.ctx, cl.mem_flags.READ_WRITE, host.nbytes)
        cl.enqueue_copy(queue, buf, host)
        bufs.append(buf)
        hosts.append(host)
        values += [buf, np.uint64(0)]
    if getattr(compiled, "asserts", None):
        values.append(dev.scratch(4))
    gsize, lsize = (nt, 1, 1), (nt, 1, 1)
    if compiled.info.claim:  # claimed program ids (kdsl/codegen/opencl/claim.py): a 1-program grid
        gsize, trailing = dev.claim_args((1, 1, 1), compiled.info.claim)
        values += trailing
    if typed:
        knl.set_scalar_arg_dtypes([None if not isinstance(v, np.generic) else v.dtype for v in values])
        pyvals = [v.item() if isinstance(v, np.generic) else v for v in values]

        def enqueue() -> None:
            knl(queue, gsize, lsize, *pyvals)
    else:
        def enqueue() -> None:
            knl.set_args(*values)
            cl.enqueue_nd_range_kernel(queue, knl, gsize, lsize)
    if not numpy_args:
        return enqueue

    def launch_sync() -> None:
        for buf, host in zip(bufs, hosts):
            cl.enqueue_copy(queue, buf, host, is_blocking=False)
        enqueue()
        queue.finish()
        for buf, host in zip(bufs, hosts):
            cl.enqueue_copy(queue, host, buf, is_blocking=True)
    return launch_sync


def bench_backend(name: str, n: int) -> list[tuple[str, int, float, float, float, str]]:
    rows = []
    with kdsl.backend(name):
        for nargs, k in KERNELS.items():
            for mode in ("async", "sync"):
                numpy_args = mode == "sync"
                args = make_args(nargs, (lambda a: a) if numpy_args else kdsl.tensor)
                kk = kdsl.kernel(k.fn)  # fresh: exactly one launcher
                launch = kk[(1,)]
                count = n if not numpy_args else max(50, n // 10)
                def run_kdsl(launch: Any = launch, args: list[Any] = args) -> None:
                    launch(*args)

                run_kdsl()
                compiled = compiled_of(kk)
                raw = raw_opencl(compiled, args, numpy_args, False) if name == "opencl" else None
                typed = raw_opencl(compiled, args, numpy_args, True) if name == "opencl" else None
                what = "pyopencl"
                if raw is None:
                    what = "backend.launch"
                    rt = [a._host if getattr(a, "_host", None) is not None else a for a in args]

                    def raw(c: Any = compiled, rt: list[Any] = rt) -> None:
                        c.launch((1, 1, 1), rt)
                t_kdsl, t_raw, t_typed = interleaved_us([run_kdsl, raw, typed or raw], count, kdsl.synchronize)
                rows.append((mode, nargs, t_kdsl, t_raw, t_typed, what))
    return rows


class _NullKernel:
    """Launch does nothing: the JIT's own per-launch cost, isolated."""

    def launch(self, grid: tuple[int, int, int], args: Any) -> None:
        return None


class _NullBackend:
    name = "null"

    def availability(self) -> tuple[bool, str]:
        return True, ""

    def compile(self, module: Any, entry: str, options: Any) -> _NullKernel:
        return _NullKernel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--backends", default="")
    opts = ap.parse_args()
    avail = kdsl.available_backends()
    from kdsl.runtime.backends import register_backend

    register_backend("null", _NullBackend)  # a no-op device: pure JIT overhead
    names = [b for b in opts.backends.split(",") if b] or ["null", *[b for b in ("interpreter", "opencl") if b in avail]]
    if "opencl" not in avail:
        print("note: the opencl backend is not available here: only interpreter rows (raw = backend.launch)")
    print(f"{'backend':<12} {'mode':<6} {'args':>4} {'kdsl us':>9} {'raw us':>9} {'typed us':>9} {'ratio':>6}"
          "  raw is  (goal)")
    for name in names:
        for mode, nargs, t_k, t_r, t_t, what in bench_backend(name, opts.n):
            goal = "<=2x" if mode == "async" else "<=1.2x"
            best = min(t_r, t_t)
            print(f"{name:<12} {mode:<6} {nargs:>4} {t_k:>9.2f} {t_r:>9.2f} {t_t:>9.2f} {t_k / best:>6.2f}"
                  f"  {what}  ({goal})")


if __name__ == "__main__":
    main()
