#!/usr/bin/env python3
"""Compile-cache stress: many processes, one KDSL_CACHE_DIR, faults injected between rounds.

Each round starts ``--procs`` processes at the same instant; each launches the
kernels of tests/reliability/cache_kernels.py for a few constexpr values on a
backend and checks the results. Between rounds a random fault hits random
entries: truncation, a bit flip, another kernel's entry copied over it,
deletion of a stage file, a stale temporary directory. After every round:
every result was right, no process saw a traceback or a CacheWarning, every
entry left verifies (``kdsl.runtime.cache.verify_entry``), no ``.tmp-``
directory is left behind, and there is at most one entry per key.

Examples::

    python tools/cache_stress.py --rounds 20 --procs 8
    python tools/cache_stress.py --seconds 600 --backend cpu
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, budget

WORKER = """
import json, sys, time, warnings
import numpy as np
import kdsl
from kdsl.runtime.cache import STATS
import cache_kernels as K

start, backend, values = float(sys.argv[1]), sys.argv[2], [int(v) for v in sys.argv[3].split(",")]
while time.time() < start:
    time.sleep(0.001)
ok = True
x = np.arange(100, dtype=np.float32)
with warnings.catch_warnings(record=True) as caught, kdsl.backend(backend):
    warnings.simplefilter("always")
    for s in values:
        for kern, ref in ((K.scale, x * s), (K.shift, x + s)):
            o = np.zeros(100, np.float32)
            kern[(4,)](x, o, 100, S=s, BLOCK=32)
            ok &= bool(np.array_equal(o, ref))
print(json.dumps({"ok": ok, "stats": STATS.as_dict(), "warnings": [str(w.message) for w in caught]}))
"""


def is_entry(p: Path) -> bool:
    """A kdsl entry directory (64 hex digits); backends keep their own subdirectories (cpu/, vulkan/...)."""
    return p.is_dir() and len(p.name) == 64 and all(c in "0123456789abcdef" for c in p.name)


def inject(cache: Path, rng: random.Random, damaged: set[str]) -> str:
    """Damage a random entry; its name goes to ``damaged`` (repaired only when its kernel runs again)."""
    entries = [p for p in cache.iterdir() if is_entry(p)]
    if not entries:
        return "none"
    e = rng.choice(entries)
    damaged.add(e.name)
    files = [f for f in e.iterdir() if f.is_file()]
    kind = rng.choice(["truncate", "flip", "swap", "delete", "stale-tmp", "none"])
    if kind in ("truncate", "flip") and files:
        f = rng.choice(files)
        data = bytearray(f.read_bytes())
        if data:
            i = rng.randrange(len(data))
            if kind == "flip":
                data[i] ^= 1 << rng.randrange(8)
            else:
                del data[i:]
            f.write_bytes(bytes(data))
    elif kind == "swap" and len(entries) > 1:
        other = rng.choice([p for p in entries if p != e])
        shutil.rmtree(e)
        shutil.copytree(other, e)
    elif kind == "delete" and files:
        rng.choice(files).unlink()
    elif kind == "stale-tmp":
        (cache / f".tmp-{e.name[:16]}-999999-1").mkdir(exist_ok=True)
        return kind  # a crashed writer's leftovers: harmless, never loaded
    return kind


def check_dir(cache: Path, damaged: set[str]) -> list[str]:
    """Problems in the directory; damaged entries of kernels not launched again are not problems."""
    from kdsl.runtime.cache import verify_entry

    problems = []
    for e in cache.iterdir():
        if e.name.startswith(".tmp-") and not e.name.endswith("-999999-1"):
            problems.append(f"temporary directory left behind: {e.name}")
        if not is_entry(e):
            continue
        meta = e / "metadata.json"
        ok = meta.exists() and verify_entry(e, e.name, meta.read_bytes()) is not None
        if ok:
            damaged.discard(e.name)
        elif e.name not in damaged:
            problems.append(f"entry {e.name[:12]} does not verify after the round")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", "--count", dest="rounds", type=int, default=None, help="rounds (default 10)")
    p.add_argument("--seconds", type=float, default=None, help="time budget")
    p.add_argument("--procs", type=int, default=8, help="processes per round")
    p.add_argument("--backend", default="", help="backend (default: every available, in turn)")
    p.add_argument("--seed", type=int, default=0, help="random seed (fault choice)")
    args = p.parse_args(argv)
    if args.rounds is None and args.seconds is None:
        args.rounds = 10
    import kdsl

    backends = [args.backend] if args.backend else kdsl.available_backends()
    rng = random.Random(args.seed)
    cache = Path(tempfile.mkdtemp(prefix="kdsl-cache-stress-"))
    env = dict(
        os.environ,
        KDSL_CACHE_DIR=str(cache),
        PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "reliability"), str(ROOT)]),
    )
    env.pop("KDSL_ALWAYS_COMPILE", None)
    failures: list[str] = []
    faults: dict[str, int] = {}
    damaged: set[str] = set()
    launches = 0
    t0 = time.monotonic()
    n = 0
    for r in budget(args.rounds, args.seconds):
        backend = backends[r % len(backends)]
        values = ",".join(str(v) for v in rng.sample([2, 3, 5, 7], 2))
        start = time.time() + 2.0 + 0.2 * args.procs
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, str(start), backend, values],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(args.procs)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=600)
            if proc.returncode != 0:
                failures.append(f"round {r} ({backend}): worker exited {proc.returncode}: {err[-1500:]}")
                continue
            res = json.loads(out.strip().splitlines()[-1])
            launches += 4
            if not res["ok"]:
                failures.append(f"round {r} ({backend}): WRONG RESULT, stats {res['stats']}")
            if res["warnings"]:
                failures.append(f"round {r} ({backend}): warnings {res['warnings']}")
        failures += [f"round {r} ({backend}): {msg}" for msg in check_dir(cache, damaged)]
        for _ in range(rng.randint(1, 3)):
            kind = inject(cache, rng, damaged)
            faults[kind] = faults.get(kind, 0) + 1
        n += 1
        print(f"round {r}: {backend}, {args.procs} processes, failures so far {len(failures)}", flush=True)
    elapsed = time.monotonic() - t0
    print(
        f"\n{n} rounds x {args.procs} processes in {elapsed:.0f} s on {', '.join(backends)}: "
        f"{launches} kernel launches checked, faults injected {faults}, failures {len(failures)}"
    )
    for f in failures[:20]:
        print("  " + f)
    shutil.rmtree(cache, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
