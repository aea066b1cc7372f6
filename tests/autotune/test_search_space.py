"""Search strategies on synthetic landscapes, spaces from configs and from pass tunables."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import numpy as np
import pytest

from kdsl.autotune import Config, autotune
from kdsl.autotune.search import INF, Evaluator, Exhaustive, GuidedSearch, RandomSearch, default_budget
from kdsl.autotune.space import coordinates, product_space
from kdsl.transforms.base import Option, Pass, Tunable

from . import at_kernels as K


def landscape(seed: int) -> tuple[list[Config], list[float]]:
    """A 3-knob grid (5x5x6 = 150 configs) with a smooth bowl, noise and failing corners."""
    rng = np.random.default_rng(seed)
    configs = product_space({"BM": [16, 32, 64, 128, 256], "BN": [16, 32, 64, 128, 256]}, {}, [0, 1, 2, 4, 8, 16])
    cm, cn, ct = rng.uniform(0, 4, 3) * np.array([1, 1, 1.25])
    times = []
    for c in configs:
        a, b = np.log2(c.kwargs["BM"]) - 4, np.log2(c.kwargs["BN"]) - 4
        t = 0 if c.num_threads == 0 else np.log2(c.num_threads) + 1
        v = 1 + 0.3 * (a - cm) ** 2 + 0.2 * (b - cn) ** 2 + 0.1 * (t - ct) ** 2 + rng.uniform(0, 0.05)
        times.append(INF if (a == 4 and b == 4) else float(v))
    return configs, times


def run(search: Any, configs: list[Config], times: list[float], budget: int | None) -> Evaluator:
    def measure(idx: list[int]) -> dict[int, float]:
        return {i: times[i] for i in idx}

    ev = Evaluator(measure, len(configs), budget)
    search.run(ev, coordinates(configs)[1], None)
    return ev


@pytest.mark.parametrize("seed", range(8))
def test_guided_finds_near_best_with_a_quarter_of_trials(seed: int) -> None:
    configs, times = landscape(seed)
    budget = default_budget(len(configs))
    assert budget <= len(configs) // 4
    ev = run(GuidedSearch(), configs, times, budget)
    best = min(times)
    found = ev.times[ev.best()]  # type: ignore[index]
    assert found <= best * 1.05, (found, best)
    assert len(ev.times) <= budget and ev.order[0] == 0


def rough_landscape(seed: int) -> tuple[list[Config], list[float]]:
    """288 configs shaped like the measured matmul sweeps: per-knob effects, an interaction
    between two knobs, 5% noise and 5% failing configs (where plain pattern search stalled)."""
    rng = np.random.default_rng(100 + seed)
    knobs: dict[str, list[int]] = {"A": [16, 32, 64, 128], "B": [16, 32, 64, 128], "C": [16, 32],
                                   "V": [4, 8, 16], "D": [2, 4, 8]}
    configs = product_space({k: knobs[k] for k in "ABC"}, {k: knobs[k] for k in "VD"}, [0])
    effect = {k: rng.normal(0, 0.4, len(v)) for k, v in knobs.items()}
    pair = rng.normal(0, 0.25, (4, 3))
    times = []
    for c in configs:
        v = {**c.kwargs, **c.options}
        log_t = sum(effect[k][knobs[k].index(v[k])] for k in knobs)
        log_t += pair[knobs["A"].index(v["A"]), knobs["V"].index(v["V"])] + rng.normal(0, 0.05)
        times.append(INF if rng.random() < 0.05 else float(np.exp(log_t)))
    return configs, times


@pytest.mark.parametrize("seed", range(8))
def test_guided_handles_rough_landscapes_with_interactions(seed: int) -> None:
    configs, times = rough_landscape(seed)
    budget = default_budget(len(configs))
    ev = run(GuidedSearch(), configs, times, budget)
    assert ev.times[ev.best()] <= min(times) * 1.05  # type: ignore[index]
    assert len(ev.times) <= budget


def test_guided_seeds_with_the_cost_model_favourites() -> None:
    configs, times = landscape(2)
    scores = [float(i % 37) for i in range(len(configs))]  # a model preferring configs 0, 37, 74, ...
    ev = Evaluator(lambda idx: {i: times[i] for i in idx}, len(configs), 20)
    GuidedSearch().run(ev, coordinates(configs)[1], scores)
    assert ev.order[0] == 0 and ev.order[1:3] == [37, 74]  # half of the 5 seeds (30% of 20 trials, minus config 0)


def test_strategies_are_deterministic_and_start_with_the_reference() -> None:
    configs, times = landscape(1)
    for search in (GuidedSearch(), RandomSearch(seed=3), Exhaustive()):
        a = run(search, configs, times, 30).order
        b = run(search, configs, times, 30).order
        assert a == b and a[0] == 0
    assert len(run(Exhaustive(), configs, times, None).times) == len(configs)


def test_coordinates_rank_numbers_numerically() -> None:
    names, coords = coordinates([Config({"B": 64}), Config({"B": 16}), Config({"B": 32})])
    assert coords == [[2, 0], [0, 0], [1, 0]]
    assert names == ["k:B", "num_threads"]


class FakeTilePass(Pass):
    """A pass declaring knobs; records the options of every run (what reached the compiler)."""

    name = "fake-tile"
    OPTIONS = (Option("unroll", int, 1), Option("order", str, "mn"))
    seen: ClassVar[list[tuple[int, str]]] = []

    def run(self, module: Any) -> None:
        FakeTilePass.seen.append((self.options["unroll"], self.options["order"]))

    def tunables(self) -> list[Tunable]:
        return [Tunable("unroll", (1, 2, 4)), Tunable("order", ("mn", "nm"))]


@pytest.fixture
def fake_pass_in_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put ``fake-tile`` into the JIT's default pipeline (the registry and TILE_PASSES)."""
    from kdsl.transforms import pass_manager

    monkeypatch.setattr(pass_manager, "PASSES", {**pass_manager.PASSES, "fake-tile": FakeTilePass})
    monkeypatch.setattr(pass_manager, "TILE_PASSES", pass_manager.TILE_PASSES + ",fake-tile")
    FakeTilePass.seen.clear()


def test_space_from_pass_tunables(fake_pass_in_pipeline: None) -> None:
    seen: list[dict[str, Any]] = []

    def model(**kw: Any) -> float:
        seen.append(kw)
        return 0.0

    # compile_workers=1: compile in this process, so FakeTilePass.seen records every compilation
    at = autotune(key=["n"], passes=[FakeTilePass()], warmup=0.5, rep=1, max_repeats=2, persist=False,
                  compile_workers=1, prune_configs_by={"perf_model": model})(K.add_kernel)
    space = at.candidate_configs()
    assert len(space) == 6
    assert {tuple(sorted(c.options.items())) for c in space} == {
        (("fake-tile.order", o), ("fake-tile.unroll", u)) for u, o in itertools.product((1, 2, 4), ("mn", "nm"))
    }
    x = np.ones(64, np.float32)
    out = np.empty_like(x)
    at[(1,)](x, x, out, 64, BLOCK=64)
    assert at.best_config in space and at.trials == 6
    assert all("fake-tile.unroll" in kw for kw in seen)
    assert set(FakeTilePass.seen) == set(itertools.product((1, 2, 4), ("mn", "nm")))  # each knob value compiled
    np.testing.assert_allclose(out, 2.0)


def test_default_space_comes_from_the_pipeline(fake_pass_in_pipeline: None) -> None:
    at = autotune(key=["n"])(K.add_kernel)
    space = at.candidate_configs()  # the interpreter declares no lowering knobs
    knobs = {k for c in space for k in c.options}
    assert knobs == {"fake-tile.unroll", "fake-tile.order", "unroll.max-trip", "loop-split.max-body-ops",
                     "mask-elim.branch-uniform"}
    assert len(space) == 6 * 16 and space[0].options["unroll.max-trip"] == 8


def test_coordinates_rank_numbers_first_and_missing_knobs_last() -> None:
    configs = [Config(options={"lower.chunk": 4}, num_threads=16), Config(options={"lower.vector_width": 8}),
               Config(options={"lower.chunk": 1}, num_threads=64), Config(options={"lower.vector_width": 4})]
    names, coords = coordinates(configs)
    assert names == ["o:lower.chunk", "num_threads", "o:lower.vector_width"]
    assert coords == [[1, 1, 2], [2, 0, 1], [0, 2, 2], [2, 0, 0]]
