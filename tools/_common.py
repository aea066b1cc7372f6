"""Shared plumbing of the long-running reliability harnesses in ``tools/``.

The generators and checkers live in ``tests/reliability/`` (the fast versions
run in the normal suite); the tools import them from there and add budgets,
seeds and summaries.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


@dataclass
class FuzzTally:
    """What a fuzzing run found: inputs tried, categories, internal-error signatures, examples."""

    inputs: int = 0
    seconds: float = 0.0
    categories: collections.Counter[str] = field(default_factory=collections.Counter)
    signatures: collections.Counter[str] = field(default_factory=collections.Counter)
    examples: dict[str, dict[str, str]] = field(default_factory=dict)


# (input text, extra fields stored with its example, e.g. {"origin": ...})
FuzzCase = tuple[str, dict[str, str]]


def fuzz_loop(
    args: argparse.Namespace,
    next_case: Callable[[], FuzzCase],
    check: Callable[[str, dict[str, str]], Any],
    input_key: str,
    progress_every: int,
    keep_timeouts: bool = False,
) -> FuzzTally:
    """Run ``check(text, extra)`` (a ``fuzzcore`` checker returning ``category``/``signature``/
    ``detail``) on ``next_case()`` inputs within ``args.count``/``args.seconds``, classifying each.

    Internal and unlocated errors are grouped by signature; the first ``args.show`` of each
    signature are printed and one example of each is kept (the input under ``input_key``), as
    is every timeout when ``keep_timeouts``.
    """
    t = FuzzTally()
    start = time.monotonic()
    for _ in budget(args.count, args.seconds):
        text, extra = next_case()
        r = check(text, extra)
        t.inputs += 1
        t.categories[r.category] += 1
        if keep_timeouts and r.category == "timeout":
            t.examples.setdefault(f"timeout #{t.categories['timeout']}", {**extra, input_key: text, "detail": r.detail})
        if r.category in ("internal", "unlocated"):
            t.signatures[r.signature] += 1
            if t.signatures[r.signature] <= args.show:
                origin = f" (from {extra['origin']})" if "origin" in extra else ""
                print(f"--- {r.category}: {r.signature}{origin}\n{r.detail}", flush=True)
            t.examples.setdefault(r.signature, {**extra, input_key: text, "detail": r.detail})
        if t.inputs % progress_every == 0:
            print(f"... {t.inputs} inputs, {time.monotonic() - start:.0f} s, {dict(t.categories)}", flush=True)
    t.seconds = time.monotonic() - start
    return t


def finish_fuzz(args: argparse.Namespace, t: FuzzTally, headline: str, **report: Any) -> int:
    """Print the summary after ``headline``, write the ``--report`` JSON (plus ``report``'s
    fields); the exit status: 1 if any internal error was found."""
    print(headline)
    for k, v in t.categories.most_common():
        print(f"  {k:15s} {v}")
    print(f"internal-error signatures: {len(t.signatures)}")
    for sig, hits in t.signatures.most_common():
        print(f"  {hits:6d}  {sig}")
    if args.report:
        data = {
            "inputs": t.inputs,
            "seconds": round(t.seconds, 1),
            "seed": args.seed,
            **report,
            "categories": dict(t.categories),
            "signatures": dict(t.signatures),
            "examples": t.examples,
        }
        Path(args.report).write_text(json.dumps(data, indent=1))
    return 1 if t.signatures else 0
