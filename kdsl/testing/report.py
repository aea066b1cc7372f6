"""``perf_report`` / ``Benchmark``: Triton-style benchmark tables and plots.

A benchmark function is called once per (x value, line value) with
``**x_args, **{line_arg: line_value}, **args`` and returns either a number or
``(y, y_min, y_max)``; ``Mark.run`` gathers these into a table (printed,
written as CSV) and a line plot saved as PNG. Plots are drawn on a private
Agg canvas (``matplotlib.figure.Figure``), so they work headless and never
change the user's matplotlib backend; only ``show_plots=True`` uses pyplot.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Benchmark:
    """One plot: x axis ``x_names``/``x_vals``, one line per ``line_vals`` entry of ``line_arg``."""

    x_names: list[str]
    x_vals: list[Any]
    line_arg: str
    line_vals: list[Any]
    line_names: list[str]
    plot_name: str = "benchmark"
    args: dict[str, Any] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    x_log: bool = False
    y_log: bool = False
    color: Any = None
    styles: list[tuple[str, str]] | None = None

    def __post_init__(self) -> None:
        if len(self.line_names) != len(self.line_vals):
            raise ValueError("Benchmark: line_names and line_vals must have the same length")
        if not self.x_names:
            raise ValueError("Benchmark: x_names must not be empty")


@dataclass
class Table:
    """The measured data: ``columns`` and ``rows`` (a tiny stand-in for a DataFrame)."""

    name: str
    columns: list[str]
    rows: list[list[Any]]

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def to_string(self) -> str:
        cells = [[str(c) for c in self.columns]] + [[_fmt(v) for v in r] for r in self.rows]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]
        return "\n".join(lines)

    def to_csv(self, path: str | None = None) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(self.columns)
        writer.writerows(self.rows)
        text = buf.getvalue()
        if path is not None:
            with open(path, "w", newline="") as f:
                f.write(text)
        return text

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)

    def __str__(self) -> str:
        return self.to_string()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


class Mark:
    """A benchmark function bound to its :class:`Benchmark` list (what ``perf_report`` returns)."""

    def __init__(self, fn: Callable[..., Any], benchmarks: Benchmark | Sequence[Benchmark]) -> None:
        self.fn = fn
        self.benchmarks = benchmarks

    def _run_one(self, bench: Benchmark, save_path: str, show_plots: bool, print_data: bool,
                 diff_col: bool, **kwargs: Any) -> Table:
        columns = [*bench.x_names]
        for name in bench.line_names:
            columns += [name, f"{name}-min", f"{name}-max"]
        rows: list[list[Any]] = []
        for x in bench.x_vals:
            if isinstance(x, (list, tuple)):
                x_args = dict(zip(bench.x_names, x))
                xs = list(x)
            else:
                x_args = dict.fromkeys(bench.x_names, x)
                xs = [x] * len(bench.x_names)
            row: list[Any] = list(xs)
            for y in bench.line_vals:
                ret = self.fn(**x_args, **{bench.line_arg: y}, **bench.args, **kwargs)
                mid, lo, hi = (ret if isinstance(ret, (list, tuple)) else (ret, ret, ret))
                row += [mid, lo, hi]
            rows.append(row)
        table = Table(bench.plot_name, columns, rows)
        if bench.plot_name and (save_path or show_plots):
            _plot(table, bench, save_path, show_plots)
        if save_path and bench.plot_name:
            table.to_csv(os.path.join(save_path, f"{bench.plot_name}.csv"))
        shown = Table(table.name, [c for c in columns if not c.endswith(("-min", "-max"))], [])
        keep = [i for i, c in enumerate(columns) if c in shown.columns]
        shown.rows = [[r[i] for i in keep] for r in rows]
        if diff_col and len(bench.line_names) == 2:
            a, b = bench.line_names
            shown.columns.append(f"Diff {a}-{b}")
            for r, full in zip(shown.rows, rows):
                r.append(full[columns.index(a)] - full[columns.index(b)])
        if print_data:
            print(bench.plot_name + ":")
            print(shown.to_string())
        return table

    def run(self, show_plots: bool = False, print_data: bool = False, save_path: str | None = "",
            return_df: bool = False, diff_col: bool = False, **kwargs: Any) -> Any:
        """Measure every benchmark; print (``print_data``), save PNG+CSV under ``save_path``.

        Returns the :class:`Table` (a list of them for several benchmarks), or
        pandas DataFrames with ``return_df=True`` when pandas is installed.
        """
        save = save_path or ""
        if save:
            os.makedirs(save, exist_ok=True)
        benches = [self.benchmarks] if isinstance(self.benchmarks, Benchmark) else list(self.benchmarks)
        tables = [self._run_one(b, save, show_plots, print_data, diff_col, **kwargs) for b in benches]
        out: list[Any] = [t.to_pandas() for t in tables] if return_df else list(tables)
        if save:
            _write_index(save, tables)
        return out[0] if isinstance(self.benchmarks, Benchmark) else out


def _write_index(save_path: str, tables: list[Table]) -> None:
    with open(os.path.join(save_path, "results.html"), "w") as f:
        f.write("<html><body>\n")
        for t in tables:
            f.write(f'<image src="{t.name}.png"/>\n')
        f.write("</body></html>\n")


def _plot(table: Table, bench: Benchmark, save_path: str, show: bool) -> None:
    if save_path:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6.4, 4.8))
        FigureCanvasAgg(fig)
        _draw(fig.add_subplot(111), table, bench)
        fig.savefig(os.path.join(save_path, f"{bench.plot_name}.png"))
    if show:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
        _draw(ax, table, bench)
        plt.show()


def _draw(ax: Any, table: Table, bench: Benchmark) -> None:
    first_x = bench.x_names[0]
    xs = table.column(first_x)
    for i, name in enumerate(bench.line_names):
        style = bench.styles[i] if bench.styles and i < len(bench.styles) else None
        color, ls = style if style else (bench.color, "-")
        ys = table.column(name)
        ax.plot(xs, ys, label=name, color=color, ls=ls)
        lo, hi = table.column(f"{name}-min"), table.column(f"{name}-max")
        if lo != ys or hi != ys:
            ax.fill_between(xs, lo, hi, alpha=0.15, color=color)
    ax.legend()
    ax.set_xlabel(bench.xlabel or first_x)
    ax.set_ylabel(bench.ylabel)
    ax.set_title(bench.plot_name)
    ax.set_xscale("log" if bench.x_log else "linear")
    ax.set_yscale("log" if bench.y_log else "linear")


def perf_report(benchmarks: Benchmark | Sequence[Benchmark]) -> Callable[[Callable[..., Any]], Mark]:
    """Decorator: ``@perf_report(Benchmark(...))`` turns a benchmark function into a :class:`Mark`."""

    def deco(fn: Callable[..., Any]) -> Mark:
        return Mark(fn, benchmarks)

    return deco
