"""Compile time: cold (empty disk cache) and warm (disk cache, new process).

For vector add, softmax and matmul, each measured in a fresh process:
* cold: empty ``KDSL_CACHE_DIR``; frontend + passes time, and time to the
  first result of the first launch (goal: frontend + passes < 100 ms);
* warm: same cache directory, new process: time to the first result
  (goal < 50 ms), and the counters proving nothing was recompiled.
``import kdsl`` is reported separately. Usage: python bench/bench_compile.py [--backend NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

T_START = time.perf_counter()
import numpy as np  # noqa: E402

import kdsl  # noqa: E402
import kdsl.language as kl  # noqa: E402

T_IMPORT = time.perf_counter() - T_START


@kdsl.kernel
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, BLOCK)
    mask = offs < n_cols
    x = kl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    num = kl.exp(x - kl.max(x, axis=0))
    kl.store(out_ptr + row * out_stride + offs, num / kl.sum(num, axis=0), mask=mask)


@kdsl.kernel
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pm, pn = kl.program_id(0), kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        rk = k + kl.arange(0, BK)
        a = kl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = kl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def run_case(name: str) -> tuple[float, float]:
    """(frontend+passes seconds or nan, seconds to the first result)."""
    rng = np.random.default_rng(0)
    if name == "vector_add":
        x, y = rng.random(4096, np.float32), rng.random(4096, np.float32)
        out = np.zeros_like(x)
        kernel, grid, args, meta = vector_add, (4,), (x, y, out, 4096), {"BLOCK": 1024}
        check = lambda: np.allclose(out, x + y)  # noqa: E731
    elif name == "softmax":
        x = rng.random((64, 100), np.float32)
        out = np.zeros_like(x)
        kernel, grid, args, meta = softmax, (64,), (out, x, 100, 100, 100), {"BLOCK": 128}
        e = np.exp(x - x.max(1, keepdims=True))
        check = lambda: np.allclose(out, e / e.sum(1, keepdims=True), atol=1e-6)  # noqa: E731
    else:
        a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
        out = np.zeros((64, 64), np.float32)
        kernel, grid, args, meta = matmul, (2, 2), (a, b, out, 64, 64, 64), {"BM": 32, "BN": 32, "BK": 32}
        check = lambda: np.allclose(out, a @ b, rtol=1e-4, atol=1e-4)  # noqa: E731
    t = time.perf_counter()
    kernel[grid](*args, **meta)
    first = time.perf_counter() - t
    assert check(), f"{name}: wrong result"
    specs = kernel.specialization(args, meta)
    t = time.perf_counter()
    kernel.compile_module(specs, optimize=True)
    frontend = time.perf_counter() - t
    return frontend, first


def child(name: str, backend: str) -> None:
    from kdsl.runtime.cache import STATS

    with kdsl.backend(backend):
        frontend, first = run_case(name)
    print(json.dumps({"import": T_IMPORT, "frontend": frontend, "first": first, **STATS.as_dict()}))


def spawn(name: str, backend: str, cache: str) -> dict[str, float]:
    env = dict(os.environ, KDSL_CACHE_DIR=cache)
    env.pop("KDSL_ALWAYS_COMPILE", None)
    out = subprocess.run([sys.executable, __file__, "--child", name, "--backend", backend],
                         env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise SystemExit(out.stderr)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--backend", default="")
    opts = ap.parse_args()
    avail = kdsl.available_backends()
    if opts.child:
        child(opts.child, opts.backend or avail[0])
        return
    backends = [opts.backend] if opts.backend else [b for b in ("opencl", "interpreter") if b in avail]
    if "opencl" not in avail:
        print("note: the opencl backend is not available here: interpreter rows only")
    if sys.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set: every process recompiles kdsl's .py files, "
              "which dominates 'import' and the lazy imports inside 'first'")
    print(f"{'backend':<12} {'kernel':<11} {'import':>7} {'cold fe+pass':>12} {'cold first':>10} "
          f"{'warm first':>10} {'warm compiles':>13}   (ms; goals: fe+pass<100, warm first<50)")
    for backend in backends:
        for name in ("vector_add", "softmax", "matmul"):
            with tempfile.TemporaryDirectory() as cache:
                cold = spawn(name, backend, cache)
                warm = spawn(name, backend, cache)
            print(f"{backend:<12} {name:<11} {warm['import'] * 1e3:>7.1f} {cold['frontend'] * 1e3:>12.1f} "
                  f"{cold['first'] * 1e3:>10.1f} {warm['first'] * 1e3:>10.1f} "
                  f"{int(warm['frontend_compiles'] + warm['backend_compiles']):>13}")


if __name__ == "__main__":
    main()
