"""Same-run baselines for bench/bench_matmul.py on PoCL: FMA peak, a hand-written SGEMM, CLBlast.

Each function prepares one baseline (builds it, picks its launch shape, checks its result) and
returns a :class:`Runner`: one synchronous call and the floating-point operations it does. The
benchmark times the runners in rounds, interleaved with kdsl, so a slow spell of the shared
machine hits every column of a round alike.

- :func:`fma_peak` -- ``peak.cl`` (12 independent ``float16`` fma chains per work-item) on
  as many work-groups as give the best rate: the machine's fp32 FMA peak as PoCL reaches it.
- :func:`handwritten` -- ``sgemm.cl``, the register-blocked kernel of ``/work/shared/PLATFORM.md``
  (8 x 32 per work-item in ``float16`` accumulators, K blocked by 256 with a barrier), with
  one work-item per group or 16 work-items along M, whichever is faster.
- :func:`clblast` -- ``CLBlastSgemm`` (Debian ``libclblast1``) through ctypes on pyopencl's
  queue and buffers (``int_ptr``); untuned for PoCL, as CLBlast ships.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Runner:
    """One prepared baseline: ``call()`` runs it once to completion; ``flop`` per call."""

    call: Callable[[], None]
    flop: float
    config: str = ""


@lru_cache(maxsize=1)
def _cl() -> tuple[Any, Any, Any]:
    """(pyopencl, context, queue) on the PoCL device (raises when there is none)."""
    import pyopencl as cl

    for plat in cl.get_platforms():
        if "Portable Computing Language" in plat.name:
            ctx = cl.Context(plat.get_devices())
            return cl, ctx, cl.CommandQueue(ctx)
    raise RuntimeError("no PoCL platform")


def _best(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def fma_peak() -> Runner:
    """fp32 FMA peak of PoCL on this machine: ``peak.cl`` on 2, 4 or 8 work-groups, the fastest."""
    cl, ctx, q = _cl()
    with open(os.path.join(HERE, "peak.cl")) as f:
        kern = cl.Program(ctx, f.read()).build().fma_peak
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * 64)
    iters = 1_600_000  # ~20 ms a call at ~300 GFLOP/s: long enough to see both cores at work
    best: tuple[float, Runner] | None = None
    for groups in (2, 4, 8):

        def run(g: int = groups) -> None:
            kern(q, (g,), (1,), out, np.int32(iters), np.float32(0.999))
            q.finish()

        flop = groups * iters * 12 * 16 * 2.0
        rate = flop / _best(run, 2)
        if best is None or rate > best[0]:
            best = (rate, Runner(run, flop, f"{groups} groups"))
    assert best is not None
    return best[1]


def _buffers(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> tuple[Any, Any, Any]:
    cl, ctx, _ = _cl()
    mf = cl.mem_flags
    c_bytes = a.shape[0] * b.shape[1] * 4
    return (
        cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a),
        cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b),
        cl.Buffer(ctx, mf.READ_WRITE, c_bytes),
    )


def _check(c_buf: Any, a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], ref: np.ndarray[Any, Any]) -> None:
    cl, _, q = _cl()
    c = np.empty((a.shape[0], b.shape[1]), np.float32)
    cl.enqueue_copy(q, c, c_buf)
    err = float(np.abs(c - ref).max() / (np.abs(ref).max() + 1e-30))
    if err > 1e-4:
        raise AssertionError(f"baseline result wrong: relative error {err:.1e}")


def handwritten(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], ref: np.ndarray[Any, Any]) -> Runner:
    """``sgemm.cl`` on square-ish ``a @ b`` (sizes multiples of 256) with its faster local size."""
    cl, ctx, q = _cl()
    m, k = a.shape
    n = b.shape[1]
    if m % 128 or n % 32 or k % 256:
        raise ValueError("sgemm.cl needs M % 128 == 0, N % 32 == 0, K % 256 == 0")
    with open(os.path.join(HERE, "sgemm.cl")) as f:
        kern = cl.Program(ctx, f.read()).build(options="-DKB=256").sgemm
    bufs = _buffers(a, b)
    best: tuple[float, Runner] | None = None
    for local in ((1, 1), (16, 1)):

        def run(loc: tuple[int, int] = local) -> None:
            kern(q, (m // 8, n // 32), loc, *bufs, np.int32(m), np.int32(n), np.int32(k))
            q.finish()

        seconds = _best(run, 1)
        _check(bufs[2], a, b, ref)
        if best is None or seconds < best[0]:
            best = (seconds, Runner(run, 2.0 * m * n * k, f"local {local[0]}x{local[1]}"))
    assert best is not None
    return best[1]


@lru_cache(maxsize=1)
def _clblast_lib() -> Any:
    path = ctypes.util.find_library("clblast") or "libclblast.so.1"
    lib = ctypes.CDLL(path)
    fn = lib.CLBlastSgemm
    vp, sz, f32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_float
    i32 = ctypes.c_int
    fn.restype = i32
    fn.argtypes = [i32, i32, i32, sz, sz, sz, f32, vp, sz, sz, vp, sz, sz, f32, vp, sz, sz, vp, vp]
    return fn


def clblast_available() -> tuple[bool, str]:
    try:
        _clblast_lib()
    except OSError as e:
        return False, f"libclblast not found ({e}); Debian: apt-get install libclblast1"
    return True, ""


def clblast(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], ref: np.ndarray[Any, Any]) -> Runner:
    """``CLBlastSgemm`` (row-major, no transposes) on PoCL's queue, its result checked."""
    _, _, q = _cl()
    fn = _clblast_lib()
    m, k = a.shape
    n = b.shape[1]
    bufs = _buffers(a, b)
    queue = ctypes.c_void_p(q.int_ptr)
    row_major, no_trans = 101, 111

    def run() -> None:
        status = fn(row_major, no_trans, no_trans, m, n, k, 1.0,
                    bufs[0].int_ptr, 0, k, bufs[1].int_ptr, 0, n, 0.0, bufs[2].int_ptr, 0, n,
                    ctypes.byref(queue), None)  # fmt: skip
        if status != 0:
            raise RuntimeError(f"CLBlastSgemm failed with status {status}")
        q.finish()

    run()
    _check(bufs[2], a, b, ref)
    return Runner(run, 2.0 * m * n * k)
