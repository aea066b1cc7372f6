#!/usr/bin/env python3
"""IR fuzzing: mutated and random tile-IR text fed to ``parse_module`` and ``kdsl opt``.

Seeds: tests/ir/*.mlir (the round-trip files and every case of invalid.mlir),
tests/frontend/golden/*.mlir and the optimised IR of every compiling seed
kernel. Each input is a mutation (``fuzzcore.mutate_ir``) or, with
probability ``--random``, token soup (``fuzzcore.random_ir``). It is parsed,
printed and parsed again (must print identically), then run through
``python -m kdsl opt -p inline,canonicalize,cse,dce`` in-process. Acceptable:
a kdsl error with a location (parse) or exit status 1 with a message (opt).

Examples::

    python tools/fuzz_ir.py --count 20000 --seed 1
"""

from __future__ import annotations

import random
import sys
import tempfile
import warnings
from pathlib import Path

from _common import FuzzCase, finish_fuzz, fuzz_arg_parser, fuzz_loop


def compiled_seed_ir(tmp: Path) -> list[str]:
    from reliability import fuzzcore as F

    import kdsl
    from kdsl.ir.printer import print_op

    out: list[str] = []
    for s in F.source_seeds():
        try:
            module = F._import(s.module, tmp)
            k = getattr(module, s.kernel)
            a, m = F.guess_args(k)
            out.append(print_op(kdsl.compile_to_ir(k, *a, optimize=bool(len(out) % 2), **m)))
        except Exception:
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    p = fuzz_arg_parser(__doc__)
    p.add_argument("--random", type=float, default=0.1, help="fraction of inputs that are random token soup")
    args = p.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 2000
    warnings.simplefilter("ignore")
    from reliability import fuzzcore as F

    tmp = Path(tempfile.mkdtemp(prefix="kdsl-fuzz-ir-"))
    seeds = F.ir_seeds(compiled_seed_ir(tmp))
    print(f"{len(seeds)} IR seeds", flush=True)
    rng = random.Random(args.seed)

    def next_case() -> FuzzCase:
        text = F.random_ir(rng) if rng.random() < args.random else F.mutate_ir(rng.choice(seeds), rng)
        return text, {}

    t = fuzz_loop(args, next_case, lambda text, _: F.check_ir(text, tmp, args.timeout), "input", 5000)
    return finish_fuzz(args, t, f"\n{t.inputs} IR inputs in {t.seconds:.0f} s (seed {args.seed})")


if __name__ == "__main__":
    sys.exit(main())
