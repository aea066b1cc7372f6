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

import random
import sys
import tempfile
import warnings
from pathlib import Path

from _common import FuzzCase, finish_fuzz, fuzz_arg_parser, fuzz_loop


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
    discarded = 0

    def next_case() -> FuzzCase:
        nonlocal discarded
        seed = rng.choice(good)
        text, dropped = F.valid_mutant(seed, rng)
        discarded += dropped
        return text, {"origin": seed.origin, "kernel": seed.kernel}

    def check(text: str, extra: dict[str, str]) -> object:
        return F.check_source(text, extra["kernel"], tmp, args.timeout)

    t = fuzz_loop(args, next_case, check, "source", 2000, keep_timeouts=True)
    headline = (
        f"\n{t.inputs} mutated kernels in {t.seconds:.0f} s (seed {args.seed}); {discarded} more mutants "
        "were not valid Python (ast.parse) and were discarded before reaching kdsl"
    )
    return finish_fuzz(args, t, headline, discarded_not_python=discarded)


if __name__ == "__main__":
    sys.exit(main())
