"""Shared plumbing of the long-running reliability harnesses in ``tools/``.

The generators and checkers live in ``tests/reliability/`` (the fast versions
run in the normal suite); the tools import them from there and add budgets,
seeds and summaries.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    # appended, not prepended: tests/ holds packages named like real ones (tests/vulkan)
    sys.path.append(str(ROOT / "tests"))

def fuzz_arg_parser(doc: str | None, prefix_help: str = "inputs to try") -> argparse.ArgumentParser:
    """The command-line options every fuzzer in ``tools/`` shares."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=None, help=f"{prefix_help} (default 2000 unless --seconds)")
    p.add_argument("--seconds", type=float, default=None, help="time budget")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--timeout", type=float, default=10.0, help="per-input time limit (s)")
    p.add_argument("--show", type=int, default=1, help="tracebacks to print per internal-error signature")
    p.add_argument("--report", default="", help="write the summary as JSON here")
    return p


def budget(count: int | None, seconds: float | None) -> Iterator[int]:
    """0, 1, 2, ... until ``count`` items or ``seconds`` elapsed (whichever comes first)."""
    start = time.monotonic()
    i = 0
    while (count is None or i < count) and (seconds is None or time.monotonic() - start < seconds):
        yield i
        i += 1
