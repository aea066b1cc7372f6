"""Search strategies: which candidate configs to measure, in which order.

A strategy drives an :class:`Evaluator` (measure a batch of config indices,
return their times; failures are ``inf``; the evaluator enforces the trial and
time budgets). All strategies are deterministic: seeded randomness, ties broken
by config order, and config 0 (the reference whose outputs the others must
match) is always measured first.

* :class:`Exhaustive` -- every config.
* :class:`RandomSearch` -- config 0 plus a seeded random sample.
* :class:`GuidedSearch` -- a spread-out design, then surrogate-guided pattern
  search on the knob grid (values ranked numerically, so 32/64/128 are
  neighbours). About 30% of the budget goes to seeds: config 0 and the
  configs farthest (L1 in value-rank space) from everything chosen, half of
  them the cost model's favourites when a ``perf_model`` is given. Then,
  each step, a surrogate (ridge regression of log-time on one-hot knob
  values: every knob value's average effect, refitted on all measurements so
  far) ranks the unmeasured configs, and the step measures the best-ranked
  nearest neighbour of the best config so far (pattern search: catches the
  interactions the additive surrogate misses) plus the best-ranked config
  anywhere (escapes a local optimum). On the benchmark's measured matmul and
  softmax landscapes (rough, noisy, with failing configs) this finds the
  best within 5% where pattern search alone stalled in a local optimum.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

INF = float("inf")


@dataclass
class Evaluator:
    """Measures config indices through ``measure`` within a trial/time budget."""

    measure: Callable[[list[int]], dict[int, float]]
    n: int
    max_trials: int | None = None
    time_budget: float | None = None
    times: dict[int, float] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def left(self) -> int:
        if self.time_budget is not None and time.monotonic() - self.started > self.time_budget:
            return 0
        cap = self.n if self.max_trials is None else min(self.n, self.max_trials)
        return max(0, cap - len(self.times))

    def __call__(self, indices: Sequence[int]) -> dict[int, float]:
        todo: list[int] = []
        for i in indices:
            if i not in self.times and i not in todo:
                todo.append(i)
        todo = todo[: self.left()]
        if todo:
            got = self.measure(todo)
            for i in todo:
                self.times[i] = got.get(i, INF)
                self.order.append(i)
        return {i: self.times[i] for i in indices if i in self.times}

    def best(self) -> int | None:
        ok = [(t, i) for i, t in self.times.items() if t < INF]
        return min(ok)[1] if ok else None


class Search(Protocol):
    name: str

    def run(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> None: ...


class Exhaustive:
    name = "exhaustive"

    def run(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> None:
        ev([0])
        ev(list(range(ev.n)))


@dataclass
class RandomSearch:
    """Config 0 plus a seeded sample (``max_trials`` caps the total through the evaluator)."""

    seed: int = 0
    name: str = "random"

    def run(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> None:
        rest = list(range(1, ev.n))
        random.Random(self.seed).shuffle(rest)
        ev([0])
        ev(rest)


@dataclass
class GuidedSearch:
    """Spread-out seeds, then surrogate-ranked pattern search (see the module docstring).

    ``explore``: share of the trial budget spent on the spread-out design
    (at least ``seeds`` configs); ``ridge``: regularisation of the surrogate;
    ``per_round``: configs measured per step (the best config's best-predicted
    neighbour plus the best-predicted configs anywhere).
    """

    seeds: int = 4
    explore: float = 0.3
    ridge: float = 1.0
    per_round: int = 2
    name: str = "guided"

    def run(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> None:
        n = ev.n
        if n == 0:
            return
        grid = np.asarray(coords, dtype=np.int64).reshape(n, -1)
        ev([0])
        total = min(n, len(ev.times) + ev.left())
        ev(_spread(grid, scores, set(ev.times), max(self.seeds, int(total * self.explore)) - 1))
        features = _one_hot(grid)
        while ev.left() > 0 and len(ev.times) < n:
            picks = self._step(ev, grid, features)
            if not picks:
                break
            ev(picks)

    def _step(self, ev: Evaluator, grid: np.ndarray[Any, Any], features: np.ndarray[Any, Any]) -> list[int]:
        todo = [j for j in range(ev.n) if j not in ev.times]
        if not todo:
            return []
        pred = _surrogate(ev.times, features, self.ridge)
        picks: list[int] = []
        best = ev.best()
        if best is not None:  # pattern search: the nearest unmeasured neighbours of the best so far
            dist = np.abs(grid - grid[best]).sum(axis=1)
            near = min(int(dist[j]) for j in todo)
            picks.append(min((j for j in todo if dist[j] == near), key=lambda j: (pred[j], j)))
        rest = sorted((j for j in todo if j not in picks), key=lambda j: (pred[j], j))
        return picks + rest[: max(0, self.per_round - len(picks))]


def _spread(grid: np.ndarray[Any, Any], scores: Sequence[float] | None, taken: set[int], count: int) -> list[int]:
    """``count`` seeds: with ``scores`` (a cost model) half its favourites; the rest farthest-point
    (each the config farthest, in L1 rank distance, from every config chosen so far)."""
    n = len(grid)
    chosen = set(taken)
    out: list[int] = []
    if scores is not None:
        ranked = sorted((j for j in range(n) if j not in chosen), key=lambda j: (scores[j], j))
        out = ranked[: max(1, count // 2)] if count > 0 else []
        chosen.update(out)
    dist = np.full(n, np.inf)
    for c in chosen:
        dist = np.minimum(dist, np.abs(grid - grid[c]).sum(axis=1))
    while len(out) < count and len(chosen) < n:
        masked = dist.copy()
        masked[list(chosen)] = -1.0
        j = int(np.argmax(masked))  # first maximum: ties broken by config order
        chosen.add(j)
        out.append(j)
        dist = np.minimum(dist, np.abs(grid - grid[j]).sum(axis=1))
    return out


def _one_hot(grid: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """One indicator column per (knob, value rank): the surrogate's features."""
    n, dims = grid.shape
    widths = grid.max(axis=0) + 1 if n else np.zeros(dims, np.int64)
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    out = np.zeros((n, int(offsets[-1])))
    for d in range(dims):
        out[np.arange(n), offsets[d] + grid[:, d]] = 1.0
    return out


def _surrogate(times: dict[int, float], features: np.ndarray[Any, Any], ridge: float) -> np.ndarray[Any, Any]:
    """Predicted log-time of every config: a ridge regression of the measured log-times on
    one-hot knob values (each knob value's average effect). Failed configs count as slower
    than the slowest success, so the search steers away from regions that fail."""
    idx = list(times)
    t = np.array([times[i] for i in idx], dtype=np.float64)
    ok = np.isfinite(t)
    if not ok.any():
        return np.zeros(len(features))
    y = np.log(np.where(ok, t, 1.0))
    y[~ok] = y[ok].max() + 1.0
    a = features[idx]
    mean = float(y.mean())
    w = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ (y - mean))
    pred: np.ndarray[Any, Any] = features @ w + mean
    return pred


def make_search(name: str | Search) -> Search:
    if not isinstance(name, str):
        return name
    table: dict[str, Callable[[], Search]] = {"exhaustive": Exhaustive, "random": RandomSearch,
                                              "guided": GuidedSearch}
    if name not in table:
        raise ValueError(f"unknown search strategy {name!r}; choose one of {', '.join(table)}")
    return table[name]()


def default_budget(n: int) -> int:
    """Trials the guided/random strategies spend by default: a quarter of the space (all of a small one)."""
    return n if n <= 8 else max(8, n // 4)
