"""Helpers shared by the tutorial notebooks: problem sizes, timing, the benchmark plot.

``SMALL`` is true when ``KDSL_TUTORIAL_SMALL=1`` (the test suite sets it): the
notebooks then use tiny sizes so they execute in seconds on the interpreter.
``benchmark`` times numpy and every available kdsl backend over a list of
sizes and returns a matplotlib figure (Agg backend, no display needed) plus the
raw table. It uses ``kdsl.testing.do_bench`` when that helper is available and
a best-of-N wall-clock timer otherwise.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import kdsl  # noqa: E402

SMALL = os.environ.get("KDSL_TUTORIAL_SMALL", "") not in ("", "0")


def pick(small: Any, full: Any) -> Any:
    """``small`` under the test suite, ``full`` otherwise."""
    return small if SMALL else full


def time_ms(fn: Callable[[], Any], reps: int | None = None) -> float:
    """Milliseconds per call: ``kdsl.testing.do_bench`` (median) if present, else best of ``reps``."""
    reps = reps or pick(2, 10)
    try:
        from kdsl.testing import do_bench  # type: ignore[attr-defined]
    except ImportError:
        do_bench = None
    if do_bench is not None and not SMALL:
        return float(do_bench(fn, return_mode="median"))
    fn()  # warm-up: compiles on the first call
    kdsl.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        kdsl.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def benchmark(
    sizes: Sequence[int],
    numpy_fn: Callable[[int], Callable[[], Any]],
    kdsl_fn: Callable[[int], Callable[[], Any]],
    metric: Callable[[int, float], float] | None = None,
    xlabel: str = "size",
    ylabel: str = "ms",
    title: str = "",
) -> tuple[Any, dict[str, list[float]]]:
    """Time numpy and kdsl on every available backend for each size; plot ``metric(size, ms)``.

    ``numpy_fn(size)`` / ``kdsl_fn(size)`` build the inputs and return the
    zero-argument call to time; ``kdsl_fn`` is called inside ``kdsl.backend(b)``.
    """
    metric = metric or (lambda _n, ms: ms)
    table: dict[str, list[float]] = {"numpy": []}
    for n in sizes:
        table["numpy"].append(metric(n, time_ms(numpy_fn(n))))
    for b in kdsl.available_backends():
        with kdsl.backend(b):
            table[f"kdsl ({b})"] = [metric(n, time_ms(kdsl_fn(n))) for n in sizes]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, ys in table.items():
        ax.plot(list(sizes), ys, marker="o", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig, table


def show_table(sizes: Sequence[int], table: dict[str, list[float]], unit: str) -> None:
    names = list(table)
    print("size".ljust(10) + "".join(n.rjust(20) for n in names) + f"   ({unit})")
    for i, n in enumerate(sizes):
        print(str(n).ljust(10) + "".join(f"{table[k][i]:20.3f}" for k in names))


def as_image(fig: Any) -> Any:
    """The figure as a PNG the notebook displays (works with the Agg backend)."""
    import io

    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return Image(buf.getvalue())
