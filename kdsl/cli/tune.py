"""``python -m kdsl tune``: offline autotuning sweeps that fill the results database.

    python -m kdsl tune FILE.py::KERNEL --shapes M=512,N=512,K=512 M=1024,N=1024,K=1024
    python -m kdsl tune --show

``KERNEL`` names an ``@kdsl.autotune``-decorated kernel in ``FILE.py`` (a plain
``@kdsl.kernel`` is tuned over the space its passes declare). The file also
defines ``tune_inputs(**shape)`` returning ``(grid, args)`` or ``(grid, args,
kwargs)`` for one shape (``--inputs NAME`` picks another function). Every
shape is tuned with a progress bar; ``--out DIR`` receives ``tune_report.csv``,
``tune_report.json`` and ``tune_report.png``. Results go to the persisted
database (``$KDSL_CACHE_DIR/autotune``), so the application finds them at run
time and launches without tuning.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Sequence
from typing import Any


def parse_shape(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        name, sep, value = part.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"shape item {part!r} is not NAME=VALUE")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            try:
                out[name.strip()] = float(value)
            except ValueError:
                out[name.strip()] = value.strip()
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kdsl tune", description=__doc__.split("\n\n")[0])
    p.add_argument("target", nargs="?", help="FILE.py::KERNEL")
    p.add_argument("--shapes", nargs="+", type=parse_shape, default=[], help="NAME=V,... per shape")
    p.add_argument("--inputs", default="tune_inputs", help="function of FILE returning (grid, args[, kwargs])")
    p.add_argument("--backend", default=None, help="backend to tune on (default: the current one)")
    p.add_argument("--search", choices=("exhaustive", "random", "guided"), default=None)
    p.add_argument("--max-trials", type=int, default=None)
    p.add_argument("--warmup", type=float, default=None, help="do_bench warm-up budget in ms")
    p.add_argument("--rep", type=float, default=None, help="do_bench repetition budget in ms")
    p.add_argument("--out", default=None, help="directory for tune_report.{csv,json,png}")
    p.add_argument("--show", action="store_true", help="list the stored results and exit")
    return p


def show() -> int:
    from kdsl.autotune.database import autotune_dir, list_databases

    dbs = list_databases()
    if not dbs:
        print(f"no autotuning results under {autotune_dir()}")
        return 0
    for d in dbs:
        print(f"{d['kernel']}  on {d['device']}  (source {str(d['source'])[:12]})  {d['path']}")
        for key, entry in sorted(d.get("entries", {}).items()):
            results = entry.get("results", {})
            best = entry.get("best")
            ms = (results.get(best) or {}).get("ms") if best else None
            failed = sum(1 for r in results.values() if r.get("ms") is None)
            best_txt = _config_text(best) if best else "-"
            timing = f"{ms:.4f} ms" if isinstance(ms, (int, float)) else "-"
            print(f"  key {key}: best {{{best_txt}}} {timing}; {len(results)} configs measured, {failed} rejected")
    return 0


def _config_text(identity: str) -> str:
    from kdsl.autotune.config import Config

    try:
        return str(Config.from_json(json.loads(identity)))
    except (ValueError, TypeError):
        return identity


def _load(target: str, inputs: str) -> tuple[Any, Any]:
    from kdsl.autotune import Autotuner, autotune
    from kdsl.autotune.executor import _load_file
    from kdsl.runtime.jit import KernelFunction

    path, sep, name = target.partition("::")
    if not sep or not path.endswith(".py"):
        raise SystemExit("kdsl tune: target must be FILE.py::KERNEL")
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module = _load_file(os.path.abspath(path))
    obj = getattr(module, name, None)
    if isinstance(obj, KernelFunction):
        obj = autotune(configs=getattr(module, "configs", None))(obj)
    if not isinstance(obj, Autotuner):
        raise SystemExit(f"kdsl tune: {name} in {path} is not an @kdsl.autotune or @kdsl.kernel object")
    make = getattr(module, inputs, None)
    if make is None:
        raise SystemExit(f"kdsl tune: {path} defines no {inputs}(**shape) function")
    return obj, make


class Progress:
    """A one-line text progress bar on stderr."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.done, self.label = max(total, 1), 0, label

    def step(self, text: str) -> None:
        self.done += 1
        width = 30
        fill = min(width, width * self.done // self.total)
        sys.stderr.write(f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} {text[:40]:<40}")
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


def tune(args: argparse.Namespace) -> int:
    import kdsl

    at, make = _load(args.target, args.inputs)
    if args.search:
        from kdsl.autotune.search import make_search

        at.search = make_search(args.search)
    if args.max_trials is not None:
        at.max_trials = args.max_trials
    if args.warmup is not None:
        at.num_warmups = args.warmup
    if args.rep is not None:
        at.num_reps = args.rep
    shapes = args.shapes or [{}]
    rows: list[dict[str, Any]] = []
    with kdsl.backend(args.backend or kdsl.current_backend_name()) as backend_name:
        for shape in shapes:
            made = make(**shape)
            grid, call_args = made[0], made[1]
            call_kwargs = made[2] if len(made) > 2 else {}
            bar = Progress(len(at.candidate_configs()), f"{at.__name__} {shape}")
            at.on_trial = lambda c, ms, bar=bar: bar.step(f"{c}: {'failed' if ms == float('inf') else f'{ms:.3f} ms'}")
            before = dict(at.configs_timings)
            at.configs_timings.clear()
            at[grid](*call_args, **call_kwargs)
            bar.close()
            best = at.best_config
            for c, ms in at.configs_timings.items():
                rows.append({"shape": json.dumps(shape), "config": str(c), "ms": ms, "status": "ok",
                             "best": c == best})
            for c, reason in at.rejected:
                rows.append({"shape": json.dumps(shape), "config": str(c), "ms": None, "status": reason, "best": False})
            at.rejected.clear()
            at.configs_timings.update(before)
            print(f"{shape}: best {{{best}}} on {backend_name}")
    if args.out:
        write_report(args.out, rows)
    return 0


def write_report(out: str, rows: list[dict[str, Any]]) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tune_report.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["shape", "config", "ms", "status", "best"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "tune_report.json"), "w") as f:
        json.dump(rows, f, indent=1)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111)
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    for k, shape in enumerate(shapes):
        times = sorted(r["ms"] for r in rows if r["shape"] == shape and r["ms"] is not None)
        ax.plot(range(len(times)), times, marker=".", label=shape, color=f"C{k % 10}")
    ax.set_xlabel("configs, fastest first")
    ax.set_ylabel("ms")
    ax.set_yscale("log")
    ax.legend(fontsize="small")
    ax.set_title("kdsl tune")
    fig.savefig(os.path.join(out, "tune_report.png"))
    print(f"report: {os.path.join(out, 'tune_report.csv')} (.json, .png)")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.show:
        return show()
    if not args.target:
        build_parser().print_usage(sys.stderr)
        return 2
    return tune(args)
