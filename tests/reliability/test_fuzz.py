"""Frontend and IR fuzzing, short runs: mutated kernels and IR must only ever raise kdsl errors.

Long runs: ``tools/fuzz_frontend.py`` and ``tools/fuzz_ir.py`` (docs/RELIABILITY.md).
"""

from __future__ import annotations

import collections
import random
import warnings
from pathlib import Path

import pytest

from . import fuzzcore as F


@pytest.fixture(scope="module")
def good_seeds(tmp_path_factory: pytest.TempPathFactory) -> list[F.SourceSeed]:
    tmp = tmp_path_factory.mktemp("seeds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [s for s in F.source_seeds() if F.check_source(s.module, s.kernel, tmp).category == "compiled"]


def test_seed_corpus_is_substantial(good_seeds: list[F.SourceSeed]) -> None:
    assert len(good_seeds) >= 40


def test_mutated_kernels_only_raise_kdsl_errors(
    good_seeds: list[F.SourceSeed], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(20240601)
    cats: collections.Counter[str] = collections.Counter()
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(250):
            seed = rng.choice(good_seeds)
            text, _dropped = F.valid_mutant(seed, rng)
            r = F.check_source(text, seed.kernel, tmp_path, timeout=20)
            cats[r.category] += 1
            if r.category in ("internal", "unlocated"):
                bad.append((seed.origin, r.signature, r.detail, text))
    assert not bad, bad[0]
    assert cats["compiled"] + cats["rejected"] >= 150, cats  # the mutants reach the compiler


def test_mutated_and_random_ir_only_raise_kdsl_errors(tmp_path: Path) -> None:
    rng = random.Random(99)
    seeds = F.ir_seeds()
    cats: collections.Counter[str] = collections.Counter()
    bad = []
    for i in range(800):
        text = F.random_ir(rng) if i % 10 == 0 else F.mutate_ir(rng.choice(seeds), rng)
        r = F.check_ir(text, tmp_path, timeout=20)
        cats[r.category] += 1
        if r.category in ("internal", "unlocated"):
            bad.append((r.signature, r.detail, text))
    assert not bad, bad[0]
    assert cats["compiled"] >= 10, cats


def test_harness_classification(tmp_path: Path) -> None:
    """The harness itself: a good kernel compiles, a module failing at import is not a kdsl input."""
    seed = F.SourceSeed("x", F.HEADER + "@kdsl.kernel\ndef k(x_ptr):\n    pass\n", "k", 5, 7)
    r = F.check_source(seed.module.replace("pass", "kl.store(x_ptr, 1)"), "k", tmp_path)
    assert r.category == "compiled"
    r = F.check_source("raise ValueError('at import')\n", "k", tmp_path)
    assert r.category == "invalid-python"
