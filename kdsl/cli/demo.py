"""``python -m kdsl demo``: real workloads on kdsl kernels, checked against numpy.

Three parts, all on one backend (the default, or ``--backend``):

1. the kernel table: Triton's tutorial kernels and the rest of :mod:`kdsl.ops`
   (softmax, LayerNorm, matmul variants, attention, convolution), each
   compared with numpy: max abs error, best time of kdsl and numpy, first-call
   time (which includes compilation);
2. a small GPT-2-style decoder (:mod:`kdsl.models.gpt`) and 3. a small CNN
   (:mod:`kdsl.models.cnn`), forward passes built only from kdsl kernels:
   max abs error against the numpy twin, time per forward pass for kdsl and
   numpy, and a per-kernel table of where the time went (each launch timed
   with a device synchronisation after it, so asynchronous backends are
   measured in full).

Anything slower than a second (first-time compilation included) shows a
progress line on stderr. ``--small`` uses tiny sizes (what the tests run).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import kdsl
from kdsl import ops
from kdsl.__main__ import version
from kdsl.cli.progress import Progress
from kdsl.models import CNN, GPT, CNNConfig, GPTConfig
from kdsl.ops.elementwise import add_kernel
from kdsl.runtime.backends import resolve_backend

__all__ = ["Case", "add_kernel", "backend_name", "chosen_backend", "main", "make_cases"]

# --- the kernel table ----------------------------------------------------------


@dataclass
class Case:
    """One row of the kernel table: a kdsl call and the numpy call it must match."""

    name: str
    shape: str
    run: Callable[[], Any]
    reference: Callable[[], Any]
    tolerance: float


@dataclass
class Row:
    case: Case
    error: float
    first_ms: float
    kdsl_ms: float
    numpy_ms: float

    @property
    def ok(self) -> bool:
        return self.error <= self.case.tolerance


def _softmax_np(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def _layer_norm_np(x: np.ndarray[Any, Any], w: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> Any:
    mean = x.mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + np.float32(1e-5)) * w + b


def make_cases(small: bool, seed: int) -> list[Case]:
    """The kernel table's rows (numpy baselines in float32, like the inputs)."""
    rng = np.random.default_rng(seed)
    n = 4099 if small else 98432
    rows, cols = (37, 129) if small else (1823, 781)
    m, k, nn = (96, 80, 72) if small else (256, 256, 256)
    bh, seq, hd = (2, 24, 16) if small else (8, 128, 32)
    img, ch = (12, 4) if small else (32, 16)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    s = rng.standard_normal((rows, cols), dtype=np.float32)
    w, bias = rng.random(cols, dtype=np.float32), rng.random(cols, dtype=np.float32)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, nn), dtype=np.float32)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    q, kk, v = (rng.standard_normal((1, bh, seq, hd), dtype=np.float32) for _ in range(3))
    im = rng.standard_normal((2, ch, img, img), dtype=np.float32)
    cw = rng.standard_normal((ch * 2, ch, 3, 3), dtype=np.float32)
    mm_tol = 1e-5 * k * 4  # fp32 accumulation-order differences grow with K
    mm = f"{m}x{k} @ {k}x{nn}"
    return [
        Case("vector add", f"{n}", lambda: ops.add(x, y), lambda: x + y, 0.0),
        Case("fused softmax", f"{rows}x{cols}", lambda: ops.softmax(s), lambda: _softmax_np(s), 1e-6),
        Case("layer norm", f"{rows}x{cols}", lambda: ops.layer_norm(s, w, bias)[0], lambda: _layer_norm_np(s, w, bias), 1e-4),
        Case("matmul", mm, lambda: ops.matmul(a, b), lambda: a @ b, mm_tol),
        Case("matmul+leaky_relu", mm, lambda: ops.matmul(a, b, activation="leaky_relu"),
             lambda: ops.activation_ref(a @ b, "leaky_relu"), mm_tol),
        Case("matmul fp16->fp32", mm, lambda: ops.matmul(a16, b16), lambda: a16.astype(np.float32) @ b16.astype(np.float32), mm_tol),
        Case("flash attention", f"{bh}x{seq}x{hd} causal", lambda: ops.attention(q, kk, v, causal=True),
             lambda: ops.attention_ref(q, kk, v, causal=True), 1e-4),
        Case("conv2d 3x3", f"2x{ch}x{img}x{img}", lambda: ops.conv2d(im, cw, padding=1),
             lambda: ops.conv2d_ref(im, cw, padding=1), 1e-3),
    ]  # fmt: skip


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds (min is the least noisy statistic)."""
    times = []
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        fn()
        kdsl.synchronize()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)


def max_error(got: Any, want: Any) -> float:
    g, w = np.asarray(ops.to_numpy(got), np.float64), np.asarray(want, np.float64)
    if g.shape != w.shape:
        return float("inf")
    return float(np.max(np.abs(g - w))) if g.size else 0.0


def run_case(case: Case, repeat: int) -> Row:
    with Progress(f"{case.name}: first call (compiling)"):
        t0 = time.perf_counter()
        got = case.run()
        first_ms = 1e3 * (time.perf_counter() - t0)
    error = max_error(got, case.reference())
    return Row(case, error, first_ms, best_ms(case.run, repeat), best_ms(case.reference, repeat))


def format_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]

    def fmt(line: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()

    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])


def kernel_table(rows: Sequence[Row]) -> str:
    header = ("kernel", "shape", "max abs err", "kdsl ms", "numpy ms", "first call ms", "check")
    body = [
        (r.case.name, r.case.shape, f"{r.error:.2e}", f"{r.kdsl_ms:.2f}", f"{r.numpy_ms:.3f}", f"{r.first_ms:.1f}",
         "ok" if r.ok else f"FAIL (tol {r.case.tolerance:.0e})")
        for r in rows
    ]  # fmt: skip
    return format_table(header, body)


# --- the models ------------------------------------------------------------------


@dataclass
class ModelResult:
    title: str
    error: float
    tolerance: float
    first_s: float
    kdsl_ms: float
    numpy_ms: float
    profile: ops.Profiler

    @property
    def ok(self) -> bool:
        return self.error <= self.tolerance


def run_model(
    title: str, forward: Callable[[], Any], reference: Callable[[], Any], tol: float, repeat: int
) -> ModelResult:
    """First call (compiles every kernel, with progress), check, steady-state times, one profiled pass."""
    with Progress(f"{title}: first forward pass (compiles its kernels)") as prog:
        t0 = time.perf_counter()
        with ops.profile(ops.Profiler(sync=False, on_launch=prog.update)):
            got = forward()
        first_s = time.perf_counter() - t0
    error = max_error(got, reference())
    with Progress(f"{title}: timing"):
        kdsl_ms = best_ms(forward, repeat)
        numpy_ms = best_ms(reference, repeat)
        with ops.profile() as prof:
            forward()
    return ModelResult(title, error, tol, first_s, kdsl_ms, numpy_ms, prof)


def profile_table(prof: ops.Profiler) -> str:
    total = prof.total() or 1.0
    items = sorted(prof.stats.items(), key=lambda kv: -kv[1].seconds)
    body = [
        (name, str(st.calls), f"{1e3 * st.seconds:.2f}", f"{1e3 * st.seconds / st.calls:.3f}", f"{100 * st.seconds / total:.1f}%")
        for name, st in items
    ]  # fmt: skip
    return format_table(("kernel", "calls", "total ms", "ms/call", "share"), body)


def model_report(r: ModelResult) -> str:
    check = "ok" if r.ok else f"FAIL (tol {r.tolerance:.0e})"
    lines = [
        f"  max abs error vs numpy: {r.error:.2e}  {check}",
        f"  time per forward pass:  kdsl {r.kdsl_ms:.2f} ms   numpy {r.numpy_ms:.3f} ms"
        f"   (first pass incl. compilation: {r.first_s:.2f} s)",
        "  where the kdsl time went (one pass, each launch synchronised):",
        "",
    ]
    return "\n".join(lines + ["    " + line for line in profile_table(r.profile).splitlines()])


def run_models(small: bool, seed: int, repeat: int) -> list[ModelResult]:
    gcfg = GPTConfig.small() if small else GPTConfig()
    gpt = GPT(gcfg, seed)
    ids = gpt.random_tokens(1 if small else 2, seed=seed + 1)
    g_title = (f"GPT-2-style decoder: {gcfg.n_layer} layers, d_model {gcfg.d_model}, {gcfg.n_head} heads, "
               f"vocab {gcfg.vocab}, {ids.shape[0]}x{ids.shape[1]} tokens")  # fmt: skip
    ccfg = CNNConfig.small() if small else CNNConfig()
    cnn = CNN(ccfg, seed)
    images = cnn.random_images(2 if small else 8, seed=seed + 1)
    c_title = (f"CNN: conv{ccfg.c1}-maxpool-conv{ccfg.c2}-avgpool-linear{ccfg.classes}, "
               f"{images.shape[0]} images {ccfg.channels}x{ccfg.size}x{ccfg.size}")  # fmt: skip
    return [
        run_model(g_title, lambda: gpt.forward(ids), lambda: gpt.forward_numpy(ids), 1e-3, repeat),
        run_model(c_title, lambda: cnn.forward(images), lambda: cnn.forward_numpy(images), 1e-3, repeat),
    ]


# --- command line -----------------------------------------------------------------


def vector_add_ir() -> str:
    """The tile IR the frontend produces for ``add_kernel`` (before optimisation)."""
    from kdsl.ir.printer import print_op

    module = kdsl.compile_to_ir(add_kernel, "*f32", "*f32", "*f32", "i32", BLOCK_SIZE=1024)
    return print_op(module)


def backend_name(name: str | None) -> str:
    """The backend launches use: ``name`` if given, else kdsl's current default."""
    return name or kdsl.current_backend_name()


@contextlib.contextmanager
def chosen_backend(name: str | None) -> Iterator[None]:
    if name is None:
        yield
        return
    with kdsl.backend(name):
        resolve_backend(name)  # fail now, with the reason, if it cannot run here
        yield


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m kdsl demo",
        description="Run kdsl kernels and two small models (GPT-2-style decoder, CNN), check them against numpy, "
        "and show where the time goes.",
    )
    p.add_argument("--backend", default=None, help="backend to run on (default: kdsl's default; env KDSL_BACKEND)")
    p.add_argument("--small", action="store_true", help="tiny sizes: a quick correctness check")
    p.add_argument(
        "--repeat", type=int, default=5, help="timed calls per measurement; the best is reported (default 5)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed for inputs and weights")
    p.add_argument("--no-ir", dest="ir", action="store_false", help="do not print the vector-add tile IR")
    p.add_argument("--no-models", dest="models", action="store_false", help="only the kernel table")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with chosen_backend(args.backend):
        name = backend_name(args.backend)
        print(f"kdsl {version()} demo on backend '{name}' (available: {', '.join(kdsl.available_backends())}; "
              f"times: best of {args.repeat})\n")  # fmt: skip
        rows = [run_case(case, args.repeat) for case in make_cases(args.small, args.seed)]
        print(kernel_table(rows), flush=True)
        results = run_models(args.small, args.seed, args.repeat) if args.models else []
        for r in results:
            print(f"\n{r.title}\n{model_report(r)}", flush=True)
        if args.ir:
            print("\ntile IR of add_kernel (python -m kdsl compile shows every stage):\n")
            print(vector_add_ir())
    failed = [r.case.name for r in rows if not r.ok] + [r.title.split(":")[0] for r in results if not r.ok]
    if failed:
        print(f"\nFAILED: {', '.join(failed)} disagree with numpy")
        return 1
    return 0
