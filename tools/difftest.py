#!/usr/bin/env python3
"""Differential testing: random valid kdsl kernels on every backend vs the interpreter.

Each program (``tests/reliability/kernelgen.py``, seed = ``--seed + i``) is
run on the interpreter (the reference) and on every target: each other
available backend plus the interpreter variants ``interpreter:noopt`` (no
optimisation passes) and ``interpreter:roundtrip`` (IR printed and parsed
back). Integers must match exactly, floats within a tolerance derived from
the ops used. A failing seed reproduces with ``--seed SEED --count 1 -v``.

Examples::

    python tools/difftest.py --count 10000                 # the documented long run
    python tools/difftest.py --seconds 600                 # every backend present, with the variants
    python tools/difftest.py --seed 1234 --count 1 -v      # replay one program, print its source
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _common import budget


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=None, help="number of programs (default: 200 unless --seconds)")
    p.add_argument("--seconds", type=float, default=None, help="time budget")
    p.add_argument("--seed", type=int, default=0, help="first seed (program i uses seed+i)")
    p.add_argument("--ub", action="store_true", help="emit IR-undefined operations unguarded (portability notes)")
    p.add_argument("--no-specials", action="store_true", help="no inf/nan/-0.0 in float inputs")
    p.add_argument("--targets", default="", help="comma-separated targets (default: all present + variants)")
    p.add_argument("--no-variants", action="store_true", help="skip interpreter:noopt / interpreter:roundtrip")
    p.add_argument("--use-cache", action="store_true", help="use the disk cache (default: KDSL_ALWAYS_COMPILE=1)")
    p.add_argument("--report", default="", help="write the summary (and every failure) as JSON here")
    p.add_argument("-v", "--verbose", action="store_true", help="print each failing program's source")
    args = p.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 200
    if not args.use_cache:
        os.environ["KDSL_ALWAYS_COMPILE"] = "1"
    from reliability import diffrun, kernelgen

    targets = args.targets.split(",") if args.targets else diffrun.targets(not args.no_variants)
    print(f"targets: {', '.join(targets)}")
    tmp = Path(tempfile.mkdtemp(prefix="kdsl-difftest-"))
    status: collections.Counter[str] = collections.Counter()
    per_target: dict[str, collections.Counter[str]] = {t: collections.Counter() for t in targets}
    rejected: collections.Counter[str] = collections.Counter()
    failures: list[dict[str, object]] = []
    start = time.monotonic()
    n = 0
    for i in budget(args.count, args.seconds):
        seed = args.seed + i
        prog = kernelgen.generate(seed, ub=args.ub, specials=not args.no_specials)
        out = diffrun.check(prog, targets, tmp)
        n += 1
        status[out.status] += 1
        if out.status == "rejected":
            rejected[out.detail[:120]] += 1
        for t, r in out.per_target.items():
            per_target[t][_classify(r)] += 1
        if out.status in ("mismatch", "error") or (out.per_target and any(r != "ok" for r in out.per_target.values())):
            failures.append(
                {
                    "seed": seed,
                    "status": out.status,
                    "detail": out.detail,
                    "targets": out.per_target,
                    "features": sorted(prog.features),
                }
            )
            print(f"seed {seed}: {out.status} {out.detail[:300]} {json.dumps(out.per_target)[:600]}", flush=True)
            if args.verbose:
                print(prog.source)
        if n % 250 == 0:
            print(f"... {n} programs, {time.monotonic() - start:.0f} s, {dict(status)}", flush=True)
    elapsed = time.monotonic() - start
    summary = {
        "programs": n,
        "seconds": round(elapsed, 1),
        "seed": args.seed,
        "ub": args.ub,
        "status": dict(status),
        "per_target": {t: dict(c) for t, c in per_target.items()},
        "rejected": dict(rejected.most_common(10)),
        "failures": failures,
    }
    print(f"\n{n} programs in {elapsed:.0f} s (seeds {args.seed}..{args.seed + n - 1}, ub={args.ub})")
    for k, v in sorted(status.items()):
        print(f"  {k:10s} {v}")
    for t, c in per_target.items():
        print(f"  {t:24s} " + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))
    if rejected:
        print("  kdsl rejected (generator produced an invalid program):")
        for msg, count in rejected.most_common(5):
            print(f"    {count:5d}  {msg}")
    if args.report:
        Path(args.report).write_text(json.dumps(summary, indent=1))
    return 1 if status.get("mismatch") or status.get("error") else 0


def _classify(result: str) -> str:
    if result == "ok":
        return "ok"
    if result.startswith("CompilationError") and "not available on the" in result:
        return "unsupported"  # a documented backend limitation, reported with a location
    if ":" in result and result.split(":")[0].isidentifier() and "Error" in result.split(":")[0]:
        return "error"
    return "mismatch"


if __name__ == "__main__":
    sys.exit(main())
