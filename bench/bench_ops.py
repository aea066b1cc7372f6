"""Benchmark every kernel of ``kdsl.ops`` on every available backend.

For each kernel: achieved GFLOP/s (compute-bound kernels) or GB/s (memory-bound
ones), that figure as a fraction of the machine's peak *measured in the same
run* (a large numpy fp32 matmul for FLOP/s, a large ``np.copyto`` for
bandwidth), and the time ratio against numpy (and torch on the CPU when it is
installed). Every kdsl result is checked against numpy before it is timed.
Writes ``bench/results/ops-<timestamp>.json`` and a PNG plot next to it.

    .venv/bin/python bench/bench_ops.py [--backend NAME] [--quick] [--filter SUBSTRING]

Goals of issue #7 (printed as PASS/FAIL at the end, full sizes only): fused attention (seq 1024,
head dim 64, 8 heads, fp32) faster than torch's ``scaled_dot_product_attention`` (>= 3x numpy
without torch), and conv2d (3x3, 64 -> 64 channels, 56x56, batch 8, padding 1, fp32) >= 0.8x
torch's ``conv2d`` in the same memory format (NHWC against torch's channels_last). torch runs with
two threads (the machine's cores), never at the same time as a kdsl kernel. kdsl, numpy and torch
are timed in turns (:data:`ROUNDS` rounds; a ratio is the median of the per-round ratios), as
``bench/README.md`` asks. conv2d's
GFLOP/s count the direct convolution's multiply-adds: Winograd (kdsl's and oneDNN's, behind torch)
does 4x fewer multiplications, so that figure can exceed the FMA peak.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import kdsl
from kdsl import ops

RESULTS = Path(__file__).resolve().parent / "results"

try:  # optional baseline
    import torch  # type: ignore[import-not-found, unused-ignore]

    torch.set_num_threads(2)
except ImportError:
    torch = None

# (case name prefix, required speed-up over torch, required speed-up over numpy without torch)
GOALS = {"attention": (1.0, 3.0), "conv2d": (0.8, None)}


def _timer() -> Callable[[Callable[[], Any]], float]:
    """``kdsl.testing.do_bench`` (ms, median) when available, else a small local median timer."""
    try:
        from kdsl.testing.timing import do_bench

        return lambda fn: float(do_bench(fn, warmup=5, rep=25, return_mode="median"))
    except (ImportError, TypeError):
        pass

    def local(fn: Callable[[], Any]) -> float:
        fn()
        kdsl.synchronize()
        times = []
        t_end = time.perf_counter() + 0.2
        while len(times) < 3 or (time.perf_counter() < t_end and len(times) < 50):
            t0 = time.perf_counter()
            fn()
            kdsl.synchronize()
            times.append(time.perf_counter() - t0)
        return 1e3 * statistics.median(times)

    return local


# Timing rounds per case: kdsl, numpy and torch take turns (each a short median), and each
# figure is the median over rounds, so a slow spell of the shared machine hits all of them alike.
ROUNDS = 5
# Pause before each timing: OpenBLAS (numpy) and OpenMP (torch) worker threads keep spinning for a
# while after a call returns, and whatever is timed next shares the cores with them (measured:
# kdsl's and torch's attention 15-18 % slower right after a numpy matmul than after a pause).
SETTLE_S = 0.3


def interleaved(
    timer: Callable[[Callable[[], Any]], float], fns: list[Callable[[], Any]], rounds: int
) -> list[list[float]]:
    """``rounds`` samples of each function's ``timer`` figure, the functions taking turns, each
    after :data:`SETTLE_S` of quiet: sample ``i`` of every function comes from the same round."""
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for got, fn in zip(samples, fns):
            time.sleep(SETTLE_S)
            got.append(timer(fn))
    return samples


def round_ratio(mine: list[float], base: list[float]) -> float:
    """Median of the per-round time ratios. Why not the ratio of the medians: this machine's speed
    drifts by tens of percent within a run (other tenants), and a round's samples, taken seconds
    apart, share the drift that separate medians would not."""
    return statistics.median(a / b for a, b in zip(mine, base))


@dataclass
class Case:
    name: str
    unit: str  # "GFLOP/s" or "GB/s"
    work: float  # flops or bytes per call
    make: Callable[[], tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any] | None, float]]
    # make() -> (kdsl call on device arrays, numpy call, torch call or None, tolerance)


def _rand(*shape: int, seed: int = 0, dtype: Any = np.float32) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _t(a: np.ndarray[Any, Any]) -> Any:
    return torch.from_numpy(a) if torch is not None else None


def _np_attention(
    q: np.ndarray[Any, Any], k: np.ndarray[Any, Any], v: np.ndarray[Any, Any], causal: bool
) -> np.ndarray[Any, Any]:
    """Attention in float32 numpy (BLAS matmuls): the numpy baseline the kernel is timed against."""
    s = (q @ np.swapaxes(k, -1, -2)) * np.float32(1.0 / np.sqrt(q.shape[-1]))
    if causal:
        s = np.where(np.arange(s.shape[-1])[None, :] <= np.arange(s.shape[-2])[:, None], s, np.float32(-np.inf))
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return (s / s.sum(axis=-1, keepdims=True)) @ v  # type: ignore[no-any-return]


def cases(quick: bool) -> list[Case]:  # noqa: C901 - one small closure per kernel
    n = 1 << (14 if quick else 20)
    rows, cols = (64, 256) if quick else (1024, 1024)
    mm = 64 if quick else 256
    bh, s, d = (2, 64, 32) if quick else (8, 1024, 64)
    img, ch, nimg = (16, 8, 2) if quick else (56, 64, 8)
    out: list[Case] = []

    def add() -> Any:
        x, y = _rand(n), _rand(n, seed=1)
        dx, dy = kdsl.tensor(x), kdsl.tensor(y)
        tx, ty = _t(x), _t(y)
        return lambda: ops.add(dx, dy), lambda: x + y, (lambda: tx + ty) if torch else None, 0.0

    def gelu() -> Any:
        x = _rand(n)
        dx = kdsl.tensor(x)
        tx = _t(x)
        ref = lambda: ops.activation_ref(x, "gelu_tanh").astype(np.float32)  # noqa: E731
        return (
            lambda: ops.gelu(dx, "tanh"),
            ref,
            (lambda: torch.nn.functional.gelu(tx, approximate="tanh")) if torch else None,
            1e-5,
        )

    def dropout() -> Any:
        x = _rand(n)
        dx = kdsl.tensor(x)
        return lambda: ops.dropout(dx, 0.5, 7), lambda: ops.dropout_ref(x, 0.5, 7), None, 0.0

    def softmax() -> Any:
        x = _rand(rows, cols)
        dx, tx = kdsl.tensor(x), _t(x)
        return (
            lambda: ops.softmax(dx),
            lambda: ops.softmax_ref(x),
            (lambda: torch.softmax(tx, 1)) if torch else None,
            1e-6,
        )

    def layer_norm() -> Any:
        x, w, b = _rand(rows, cols), _rand(cols, seed=1), _rand(cols, seed=2)
        dx, dw, db = kdsl.tensor(x), kdsl.tensor(w), kdsl.tensor(b)
        tx, tw, tb = _t(x), _t(w), _t(b)
        tref = (lambda: torch.nn.functional.layer_norm(tx, (cols,), tw, tb)) if torch else None
        return lambda: ops.layer_norm(dx, dw, db)[0], lambda: ops.layer_norm_ref(x, w, b)[0], tref, 1e-4

    def rms_norm() -> Any:
        x, w = _rand(rows, cols), _rand(cols, seed=1)
        dx, dw = kdsl.tensor(x), kdsl.tensor(w)
        return lambda: ops.rms_norm(dx, dw), lambda: ops.rms_norm_ref(x, w), None, 1e-4

    def matmul(kind: str) -> Callable[[], Any]:
        def make() -> Any:
            a, b = _rand(mm, mm), _rand(mm, mm, seed=1)
            tol = 1e-5 * mm * 4
            if kind == "fp16":
                a, b = a.astype(np.float16), b.astype(np.float16)
            if kind == "int8":
                a = np.clip(a * 40, -127, 127).astype(np.int8)
                b = np.clip(b * 40, -127, 127).astype(np.int8)
                tol = 0.0
            scale = None
            if kind == "w8":
                b, scale = ops.quantize_per_channel(b)
            da, db = kdsl.tensor(a), kdsl.tensor(b)
            ds = kdsl.tensor(scale) if scale is not None else None
            act = "gelu_tanh" if kind == "bias+gelu" else ""
            bias = _rand(mm, seed=3) if kind == "bias+gelu" else None
            dbias = kdsl.tensor(bias) if bias is not None else None
            ta, tb = _t(a.astype(np.float32)), _t(b.astype(np.float32))
            return (lambda: ops.matmul(da, db, bias=dbias, activation=act, scale=ds),
                    lambda: ops.matmul_ref(a, b, bias, act, scale=scale),
                    (lambda: ta @ tb) if torch else None, tol)  # fmt: skip

        return make

    def bmm() -> Any:
        a, b = _rand(8, mm // 2, mm // 2), _rand(8, mm // 2, mm // 2, seed=1)
        da, db = kdsl.tensor(a), kdsl.tensor(b)
        ta, tb = _t(a), _t(b)
        return lambda: ops.matmul(da, db), lambda: a @ b, (lambda: ta @ tb) if torch else None, 1e-5 * mm * 2

    def attention(causal: bool) -> Callable[[], Any]:
        def make() -> Any:
            q, k, v = (_rand(1, bh, s, d, seed=i) for i in range(3))
            dq, dk, dv = (kdsl.tensor(t) for t in (q, k, v))
            tq, tk, tv = _t(q), _t(k), _t(v)
            tref = (
                (lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal))
                if torch
                else None
            )
            return lambda: ops.attention(dq, dk, dv, causal), lambda: _np_attention(q, k, v, causal), tref, 1e-4

        return make

    def rope() -> Any:
        x = _rand(1, s, bh, d)
        dx = kdsl.tensor(x)
        # angles up to seq * 1 rad are rounded to f32 in the kernel (as in torch/Triton RoPE): at
        # ~1000 rad one f32 ulp is 6e-5, so the float64 reference differs by ~1e-4
        return lambda: ops.rope(dx), lambda: ops.rope_ref(x), None, 5e-4

    def conv(layout: str) -> Callable[[], Any]:
        def make() -> Any:
            x, w = _rand(nimg, ch, img, img), _rand(ch, ch, 3, 3, seed=1)
            ref = lambda: ops.conv2d_ref(x, w, padding=1)  # noqa: E731
            tx, tw = _t(x), _t(w)
            if torch is not None and layout == "NHWC":
                tx = tx.contiguous(memory_format=torch.channels_last)
            tref = (lambda: torch.nn.functional.conv2d(tx, tw, padding=1)) if torch else None
            if layout == "NCHW":
                dx, dw = kdsl.tensor(x), kdsl.tensor(w)
                return lambda: ops.conv2d(dx, dw, padding=1), ref, tref, 1e-3
            dx, dw = (
                kdsl.tensor(np.ascontiguousarray(x.transpose(0, 2, 3, 1))),
                kdsl.tensor(np.ascontiguousarray(w.transpose(2, 3, 1, 0))),
            )
            return (
                (lambda: ops.conv2d(dx, dw, padding=1, layout="NHWC")),
                (lambda: ref().transpose(0, 2, 3, 1)),
                tref,
                1e-3,
            )

        return make

    def pool(mode: str) -> Callable[[], Any]:
        def make() -> Any:
            x = _rand(2, ch, img * 2, img * 2)
            dx = kdsl.tensor(x)
            return lambda: ops.pool2d(dx, 2, mode=mode), lambda: ops.pool2d_ref(x, 2, mode=mode), None, 1e-6

        return make

    gb = 1e-9
    out += [
        Case("vector add", "GB/s", 12 * n, add),
        Case("gelu (tanh)", "GB/s", 8 * n, gelu),
        Case("dropout", "GB/s", 8 * n, dropout),
        Case("softmax", "GB/s", 8 * rows * cols, softmax),
        Case("layer norm fwd", "GB/s", 8 * rows * cols, layer_norm),
        Case("rms norm fwd", "GB/s", 8 * rows * cols, rms_norm),
    ]
    for kind in ("fp32", "fp16", "int8", "w8", "bias+gelu"):
        out.append(Case(f"matmul {kind}", "GFLOP/s", 2 * mm**3, matmul(kind)))
    out += [
        Case("batched matmul", "GFLOP/s", 2 * 8 * (mm // 2) ** 3, bmm),
        Case("attention", "GFLOP/s", 4 * bh * s * s * d, attention(False)),
        Case("attention causal", "GFLOP/s", 2 * bh * s * s * d, attention(True)),
        Case("rope", "GB/s", 8 * s * bh * d, rope),
        Case("conv2d NCHW", "GFLOP/s", 2 * nimg * img * img * ch * ch * 9, conv("NCHW")),
        Case("conv2d NHWC", "GFLOP/s", 2 * nimg * img * img * ch * ch * 9, conv("NHWC")),
        Case("max pool", "GB/s", 4 * 2 * ch * (img * 2) ** 2 * 1.25, pool("max")),
        Case("avg pool", "GB/s", 4 * 2 * ch * (img * 2) ** 2 * 1.25, pool("avg")),
    ]
    del gb
    return out


def measure_peaks(timer: Callable[[Callable[[], Any]], float]) -> dict[str, float]:
    """Peak fp32 GFLOP/s (numpy matmul) and copy GB/s (np.copyto, read + write), this run."""
    n = 1024
    a, b = _rand(n, n), _rand(n, n, seed=1)
    flops = 2 * n**3 / (timer(lambda: a @ b) * 1e-3) / 1e9
    src = np.ones(1 << 25, np.uint8)  # 32 MiB
    dst = np.empty_like(src)
    bw = 2 * src.nbytes / (timer(lambda: np.copyto(dst, src)) * 1e-3) / 1e9
    return {"GFLOP/s": flops, "GB/s": bw}


def run(backends: list[str], quick: bool, filters: list[str] | None = None) -> dict[str, Any]:
    timer = _timer()
    peaks = measure_peaks(timer)
    print(f"measured peaks: {peaks['GFLOP/s']:.1f} GFLOP/s (numpy fp32 matmul), {peaks['GB/s']:.1f} GB/s (copy)")
    print("rows: kdsl's rate, its fraction of the peak, its median time, and 'xR vs numpy/torch' = kdsl's time / "
          "the baseline's (below 1: kdsl is faster); goal lines give speed = the inverse")
    rows: list[dict[str, Any]] = []
    for case in cases(quick):
        if filters and not any(f in case.name for f in filters):
            continue
        for be in backends:
            with kdsl.backend(be):
                kfn, nfn, tfn, tol = case.make()
                t0 = time.perf_counter()
                got = ops.to_numpy(kfn())
                first_ms = 1e3 * (time.perf_counter() - t0)
                want = np.asarray(nfn(), np.float64)
                err = float(np.max(np.abs(np.asarray(got, np.float64) - want))) if want.size else 0.0
                row: dict[str, Any] = {"kernel": case.name, "backend": be, "unit": case.unit, "first_ms": first_ms,
                                       "error": err, "ok": err <= tol + 1e-6 * float(np.abs(want).max(initial=0))}  # fmt: skip
                if row["ok"]:
                    fns = [kfn, nfn] + ([tfn] if tfn is not None else [])
                    samples = interleaved(timer, fns, 2 if quick else ROUNDS)
                    row["samples_ms"] = dict(zip(("kdsl", "numpy", "torch"), samples))
                    row["kdsl_ms"], row["numpy_ms"] = statistics.median(samples[0]), statistics.median(samples[1])
                    row["torch_ms"] = statistics.median(samples[2]) if tfn is not None else None
                    row["rate"] = case.work / (row["kdsl_ms"] * 1e-3) / 1e9
                    row["peak_fraction"] = row["rate"] / peaks[case.unit]
                    row["vs_numpy"] = round_ratio(samples[0], samples[1])
                    row["vs_torch"] = round_ratio(samples[0], samples[2]) if tfn is not None else None
            rows.append(row)
            print(format_row(row), flush=True)
    return {"peaks": peaks, "rows": rows}


def format_row(r: dict[str, Any]) -> str:
    head = f"{r['kernel']:<18} {r['backend']:<12}"
    if not r["ok"]:
        return f"{head} FAILED: max abs error {r['error']:.2e} vs numpy"
    torch_txt = f"  x{r['vs_torch']:.2f} vs torch" if r.get("vs_torch") else ""
    return (f"{head} {r['rate']:10.3f} {r['unit']:<8} {100 * r['peak_fraction']:6.2f}% of peak  "
            f"{r['kdsl_ms']:9.3f} ms  x{r['vs_numpy']:.2f} vs numpy{torch_txt}  (first call {r['first_ms']:.0f} ms)")  # fmt: skip


def goals(rows: list[dict[str, Any]]) -> list[str]:
    """PASS/FAIL lines for the issue's goals (:data:`GOALS`), one per (case, backend) measured."""
    lines = []
    for r in rows:
        goal = next((g for name, g in GOALS.items() if r["kernel"].startswith(name)), None)
        if goal is None:
            continue
        head = f"goal {r['kernel']:<18} {r['backend']:<8}"
        if not r["ok"]:
            lines.append(f"{head} FAIL (wrong result)")
        elif r.get("vs_torch"):
            speed = 1.0 / r["vs_torch"]
            verdict = "PASS" if speed >= goal[0] else "FAIL"
            lines.append(f"{head} {verdict}: {speed:.2f}x torch (needs >= {goal[0]}x)")
        elif goal[1] is not None:
            speed = 1.0 / r["vs_numpy"]
            verdict = "PASS" if speed >= goal[1] else "FAIL"
            lines.append(f"{head} {verdict}: {speed:.2f}x numpy (needs >= {goal[1]}x; torch not installed)")
        else:
            lines.append(f"{head} n/a: torch not installed")
    return lines


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["rows"] if r["ok"]]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(len(backends), 1)
    for i, be in enumerate(backends):
        ys = [
            next((r["peak_fraction"] * 100 for r in rows if r["kernel"] == k and r["backend"] == be), 0)
            for k in kernels
        ]
        ax.bar([x + i * width for x in range(len(kernels))], ys, width, label=be)
    ax.set_xticks([x + width * (len(backends) - 1) / 2 for x in range(len(kernels))], kernels, rotation=45, ha="right")
    ax.set_ylabel("% of measured peak")
    ax.set_yscale("log")
    ax.set_title("kdsl.ops: achieved fraction of peak (FLOP/s or copy bandwidth)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Benchmark every kdsl.ops kernel on every available backend.")
    p.add_argument("--backend", action="append", help="backend(s) to run (default: every available one)")
    p.add_argument("--quick", action="store_true", help="small sizes")
    p.add_argument("--filter", action="append", help="only cases whose name contains this (repeatable)")
    args = p.parse_args(argv)
    backends = args.backend or kdsl.available_backends()
    if torch is None:
        print("note: torch is not installed; the torch CPU baseline is left out")
    result = run(backends, args.quick, args.filter)
    if not args.quick:
        for line in goals(result["rows"]):
            print(line)
    result.update(machine=platform.machine(), python=sys.version.split()[0], backends=backends, quick=args.quick,
                  kdsl=getattr(kdsl, "__version__", None), torch=getattr(torch, "__version__", None))  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (RESULTS / f"ops-{stamp}.json").write_text(json.dumps(result, indent=1))
    plot(result, RESULTS / f"ops-{stamp}.png")
    print(f"wrote {RESULTS / f'ops-{stamp}.json'} and .png")
    return 0 if all(r["ok"] for r in result["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
