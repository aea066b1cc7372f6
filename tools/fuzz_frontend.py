#!/usr/bin/env python3
"""Frontend fuzzing: mutated kernel sources fed to ``kdsl.compile_to_ir`` (with passes).

Seeds are every kernel of tests/semantic, the tutorials and the demo that
compiles with guessed arguments (``fuzzcore.guess_args``); each input applies
1-3 token/line mutations (``fuzzcore.mutate_source``). The only acceptable
failure is a kdsl error; a CompilationError must have a location. Internal
errors are grouped by exception type and innermost kdsl frame.

Examples::

    python tools/fuzz_frontend.py --count 20000 --seed 1
    python tools/fuzz_frontend.py --seconds 300 --show 3
"""

from __future__ import annotations

import collections
import json
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

from _common import budget, fuzz_arg_parser


def main(argv: list[str] | None = None) -> int:
    p = fuzz_arg_parser(__doc__)
    args = p.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 2000
    warnings.simplefilter("ignore")
    from reliability import fuzzcore as F

    tmp = Path(tempfile.mkdtemp(prefix="kdsl-fuzz-"))
    seeds = F.source_seeds()
    good = [s for s in seeds if F.check_source(s.module, s.kernel, tmp, args.timeout).category == "compiled"]
    print(f"{len(seeds)} seed kernels, {len(good)} compile with guessed arguments", flush=True)
    rng = random.Random(args.seed)
    cats: collections.Counter[str] = collections.Counter()
    sigs: collections.Counter[str] = collections.Counter()
    examples: dict[str, dict[str, str]] = {}
    start = time.monotonic()
    n = 0
    discarded = 0
    for _ in budget(args.count, args.seconds):
        seed = rng.choice(good)
        text, dropped = F.valid_mutant(seed, rng)
        discarded += dropped
        r = F.check_source(text, seed.kernel, tmp, args.timeout)
        n += 1
        cats[r.category] += 1
        if r.category == "timeout":
            examples.setdefault(
                f"timeout #{cats['timeout']}", {"origin": seed.origin, "source": text, "detail": r.detail}
            )
        if r.category in ("internal", "unlocated"):
            sigs[r.signature] += 1
            if sigs[r.signature] <= args.show:
                print(f"--- {r.category}: {r.signature} (from {seed.origin})\n{r.detail}", flush=True)
            examples.setdefault(r.signature, {"origin": seed.origin, "source": text, "detail": r.detail})
        if n % 2000 == 0:
            print(f"... {n} inputs, {time.monotonic() - start:.0f} s, {dict(cats)}", flush=True)
    elapsed = time.monotonic() - start
    print(
        f"\n{n} mutated kernels in {elapsed:.0f} s (seed {args.seed}); {discarded} more mutants were not "
        "valid Python (ast.parse) and were discarded before reaching kdsl"
    )
    for k, v in cats.most_common():
        print(f"  {k:15s} {v}")
    print(f"internal-error signatures: {len(sigs)}")
    for sig, hits in sigs.most_common():
        print(f"  {hits:6d}  {sig}")
    if args.report:
        Path(args.report).write_text(
            json.dumps(
                {
                    "inputs": n,
                    "seconds": round(elapsed, 1),
                    "seed": args.seed,
                    "discarded_not_python": discarded,
                    "categories": dict(cats),
                    "signatures": dict(sigs),
                    "examples": examples,
                },
                indent=1,
            )
        )
    return 1 if sigs else 0


if __name__ == "__main__":
    sys.exit(main())
