"""Autotuner benchmark: does the guided search find the exhaustive best cheaply?

For matmul (``--matmul-size``, default 2048; ``--quick``: 128) and a chunked
online softmax (``--softmax-shape``, default 4096x4096; ``--quick``: 256x256)
over spaces of >= 100 configs on the fastest available backend (opencl, cpu,
vulkan, then the interpreter; printed): an exhaustive sweep measures every
config; the guided (and random) strategies are then run on the exhaustive
measurements (replay: each trial returns the time measured for that config,
so strategies are compared on identical data -- noise from a loaded machine
affects all of them alike). Goal: guided within 5% of the exhaustive best
using <= 25% of its trials.

The spaces mix meta-parameters with compiler knobs that are launch options:
on backends declaring lowering knobs (``backend.tunables()``: opencl, cpu)
the vector width and ``tile.dot`` register blocking (matmul) or the vector
width and the ``loop-split`` pass knob (softmax); elsewhere work-group sizes.
``--live`` additionally runs the guided search for real (fresh timings).
Writes bench_autotune.json next to this file (or ``--out``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.autotune import Config, autotune
from kdsl.autotune.search import INF, Evaluator, GuidedSearch, RandomSearch, default_budget
from kdsl.autotune.space import coordinates


@kdsl.kernel
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr,
                  GROUP_M: kl.constexpr):
    pid = kl.program_id(0)
    num_m = kl.cdiv(M, BLOCK_M)
    num_n = kl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = kl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
    rk = kl.arange(0, BLOCK_K)
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        x = kl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = kl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(x, y)
    kl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@kdsl.kernel
def softmax_kernel(x, y, n_rows, n_cols, ROWS: kl.constexpr, CHUNK: kl.constexpr):
    """Online softmax: ROWS rows per program, columns streamed CHUNK at a time."""
    for r in range(0, ROWS):
        row = kl.program_id(0) * ROWS + r
        if row < n_rows:
            m = kl.full((CHUNK,), float("-inf"), kl.float32)
            s = kl.zeros((CHUNK,), kl.float32)
            for start in range(0, n_cols, CHUNK):
                cols = start + kl.arange(0, CHUNK)
                v = kl.load(x + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
                new_m = kl.maximum(m, v)
                s = s * kl.exp(m - new_m) + kl.where(v == float("-inf"), 0.0, kl.exp(v - new_m))
                m = new_m
            gmax = kl.max(m, axis=0)
            total = kl.sum(s * kl.exp(m - gmax), axis=0)
            for start in range(0, n_cols, CHUNK):
                cols = start + kl.arange(0, CHUNK)
                v = kl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
                kl.store(y + row * n_cols + cols, kl.exp(v - gmax) / total, mask=cols < n_cols)


def fastest_backend() -> str:
    avail = kdsl.available_backends()
    for name in ("opencl", "cpu", "vulkan", "interpreter"):
        if name in avail:
            return name
    raise SystemExit("no kdsl backend available")


def threads(backend: str) -> list[int]:
    return [0] if backend == "interpreter" else [0, 16, 64]


def lowering_knobs(backend: str) -> bool:
    """True when ``backend`` declares the vector-width / dot-blocking launch options."""
    from kdsl.autotune.space import backend_knobs
    from kdsl.runtime.backends import resolve_backend

    with kdsl.backend(backend):
        return any("lower.vector_width" in sub for sub in backend_knobs(resolve_backend()))


def matmul_case(size: int, backend: str) -> tuple[list[Config], Any, Any]:
    """108 configs: BLOCK_M x BLOCK_N x BLOCK_K x (vector width x dot rows | work-group size x GROUP_M)."""
    tiles = list(itertools.product([16, 32, 64], [32, 64, 128], [16, 32]))
    if lowering_knobs(backend):
        configs = [Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 4},
                          options={"lower.vector_width": vw, "lower.dot_block_m": dm})
                   for (m, n, k), vw, dm in itertools.product(tiles, [4, 8, 16], [4, 8])]
    else:
        configs = [Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": g}, num_threads=t)
                   for (m, n, k), g, t in itertools.product(tiles, [1, 8], threads(backend))]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    c = np.zeros((size, size), np.float32)

    def grid(meta: dict[str, Any]) -> tuple[int]:
        return (kdsl.cdiv(size, meta["BLOCK_M"]) * kdsl.cdiv(size, meta["BLOCK_N"]),)

    def check() -> None:
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)

    return configs, (matmul_kernel, grid, (a, b, c, size, size, size), check), ["M", "N", "K"]


def softmax_case(rows: int, cols: int, backend: str) -> tuple[list[Config], Any, Any]:
    """120 configs: ROWS x CHUNK x (vector width x loop-split | work-group size)."""
    chunks = [c for c in (128, 256, 512, 1024, 2048) if c <= cols] or [cols]
    if lowering_knobs(backend):
        configs = [Config({"ROWS": r, "CHUNK": ch},
                          options={"lower.vector_width": vw, "loop-split.max-body-ops": ls})
                   for r, ch, vw, ls in itertools.product([1, 2, 4, 8], chunks, [4, 8, 16], [400, 0])]
    else:
        ts = [0, 16, 32, 64] if backend != "interpreter" else [0]
        configs = [Config({"ROWS": r, "CHUNK": ch}, num_threads=t)
                   for r, ch, t in itertools.product([1, 2, 4, 8, 16, 32], chunks, ts)]
    x = np.random.default_rng(1).standard_normal((rows, cols), dtype=np.float32)
    y = np.zeros_like(x)

    def grid(meta: dict[str, Any]) -> tuple[int]:
        return (kdsl.cdiv(rows, meta["ROWS"]),)

    def check() -> None:
        e = np.exp(x - x.max(1, keepdims=True))
        np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-4, atol=1e-6)

    return configs, (softmax_kernel, grid, (x, y, rows, cols), check), ["n_rows", "n_cols"]


def replay(strategy: Any, configs: list[Config], times: list[float], budget: int | None) -> Evaluator:
    ev = Evaluator(lambda idx: {i: times[i] for i in idx}, len(configs), budget)
    strategy.run(ev, coordinates(configs)[1], None)
    return ev


def trials_to_reach(order: list[int], times: list[float], target: float) -> int | None:
    """How many trials (in measurement order) until one config is within ``target`` ms."""
    for n, i in enumerate(order, 1):
        if times[i] <= target:
            return n
    return None


def run_case(name: str, case: Any, args: argparse.Namespace) -> dict[str, Any]:
    configs, (kernel, grid, call_args, check), key = case
    at = autotune(configs=configs, key=key, warmup=args.warmup, rep=args.rep, persist=False,
                  search="exhaustive", timeout=args.timeout)(kernel)
    t0 = time.perf_counter()
    at[grid](*call_args)
    sweep_s = time.perf_counter() - t0
    check()
    times = [at.configs_timings.get(c, INF) for c in configs]
    out = {"case": name, "rejected": len(at.rejected),
           "rejected_reasons": sorted({r.split(":")[0] for _, r in at.rejected}),
           "exhaustive_best": str(at.best_config), "sweep_seconds": sweep_s}
    out.update(compare(configs, times))
    if args.live:
        live = autotune(configs=configs, key=key, warmup=args.warmup, rep=args.rep, persist=False, search="guided",
                        timeout=args.timeout)(kernel)
        live[grid](*call_args)
        lb = live.best_config
        out["live_guided_trials"] = live.trials
        out["live_guided_choice_exhaustive_ms"] = at.configs_timings.get(lb, INF) if lb is not None else INF
    out["measurements"] = [{"config": c.to_json(), "ms": None if t == INF else t} for c, t in zip(configs, times)]
    report(out)
    return out


def compare(configs: list[Config], times: list[float]) -> dict[str, Any]:
    """The strategies replayed on one sweep's measurements."""
    best = min(times)
    n = len(configs)
    budget = default_budget(n)
    guided = replay(GuidedSearch(), configs, times, budget)
    g_best, r = guided.best(), replay(RandomSearch(seed=0), configs, times, budget)
    g_ms = INF if g_best is None else guided.times[g_best]
    r_best = r.best()
    r_ms = INF if r_best is None else r.times[r_best]
    # within the budget: after how many trials is each strategy within 5%? (random: 20 seeds)
    g_reach = trials_to_reach(guided.order, times, 1.05 * best)
    r_reach = [trials_to_reach(replay(RandomSearch(seed=s), configs, times, budget).order, times, 1.05 * best)
               for s in range(20)]
    return {"configs": n, "exhaustive_best_ms": best, "default_config_ms": times[0], "budget": budget,
            "guided_ms": g_ms, "guided_trials": len(guided.times), "guided_ratio": g_ms / best,
            "random_ms": r_ms, "random_trials": len(r.times), "random_ratio": r_ms / best,
            "guided_trials_to_5pct": g_reach,
            "random_seeds_within_5pct": sum(x is not None for x in r_reach),
            "random_trials_to_5pct_mean": float(np.mean([x for x in r_reach if x is not None] or [INF])),
            "goal_met": g_ms <= 1.05 * best and len(guided.times) <= 0.25 * n}


def report(r: dict[str, Any]) -> None:
    print(f"{r['case']}: {r['configs']} configs ({r.get('rejected', 0)} rejected), exhaustive best "
          f"{r['exhaustive_best_ms']:.4f} ms {{{r.get('exhaustive_best', '')}}}, config 0 {r['default_config_ms']:.4f} ms "
          f"({r.get('sweep_seconds', 0):.0f} s sweep); budget {r['budget']}: guided {r['guided_ms']:.4f} ms "
          f"({r['guided_ratio']:.3f}x) in {r['guided_trials']} trials; random {r['random_ms']:.4f} ms "
          f"({r['random_ratio']:.3f}x) in {r['random_trials']}; trials to reach 5%: guided "
          f"{r['guided_trials_to_5pct']}, random {r['random_trials_to_5pct_mean']:.1f} (mean of the "
          f"{r['random_seeds_within_5pct']}/20 seeds that get there); "
          f"goal {'PASS' if r['goal_met'] else 'FAIL'}", flush=True)


def replay_file(path: str) -> int:
    """Re-run the comparison on the measurements stored by an earlier run (no kernel runs)."""
    with open(path) as f:
        data = json.load(f)
    ok = True
    for r in data["results"]:
        configs = [Config.from_json(m["config"]) for m in r["measurements"]]
        times = [INF if m["ms"] is None else float(m["ms"]) for m in r["measurements"]]
        fresh = {**r, **compare(configs, times)}
        report(fresh)
        ok = ok and fresh["goal_met"]
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (matmul 128, softmax 256x256)")
    p.add_argument("--matmul-size", type=int, default=None, help="M = N = K (default 2048; --quick: 128)")
    p.add_argument("--softmax-shape", default=None, help="ROWSxCOLS (default 4096x4096; --quick: 256x256)")
    p.add_argument("--backend", default=None)
    p.add_argument("--warmup", type=float, default=5)
    p.add_argument("--rep", type=float, default=20)
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--live", action="store_true", help="also run the guided search with fresh timings")
    p.add_argument("--only", choices=("matmul", "softmax"), default=None)
    p.add_argument("--replay", metavar="JSON", default=None,
                   help="compare the strategies on the measurements of an earlier run's JSON (no sweep)")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_autotune.json"))
    args = p.parse_args(argv)
    if args.replay:
        return replay_file(args.replay)
    backend = args.backend or fastest_backend()
    size = args.matmul_size or (128 if args.quick else 2048)
    rows, cols = (int(v) for v in (args.softmax_shape or ("256x256" if args.quick else "4096x4096")).split("x"))
    print(f"backend: {backend} (available: {', '.join(kdsl.available_backends())}); "
          f"matmul {size}, softmax {rows}x{cols}")
    results = []
    with kdsl.backend(backend):
        if args.only in (None, "matmul"):
            results.append(run_case(f"matmul {size}", matmul_case(size, backend), args))
        if args.only in (None, "softmax"):
            results.append(run_case(f"softmax {rows}x{cols}", softmax_case(rows, cols, backend), args))
    with open(args.out, "w") as f:
        json.dump({"backend": backend, "quick": args.quick, "argv": sys.argv[1:] if argv is None else argv,
                   "results": results}, f, indent=1)
    return 0 if all(r["goal_met"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
