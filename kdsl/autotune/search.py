"""Search strategies: which candidate configs to measure, in which order.

A strategy drives an :class:`Evaluator` (measure a batch of config indices,
return their times; failures are ``inf``; the evaluator enforces the trial and
time budgets). All strategies are deterministic: seeded randomness, ties broken
by config order, and config 0 (the reference whose outputs the others must
match) is always measured first.

* :class:`Exhaustive` -- every config.
* :class:`RandomSearch` -- config 0 plus a seeded random sample.
* :class:`GuidedSearch` -- pattern search on the knob grid: spread-out seeds
  (farthest-point in value-rank space, or the cost model's favourites), then
  repeatedly measure the unmeasured neighbours of the best config so far,
  widening the neighbourhood when nothing improves, restarting from a fresh
  far-away seed when the widest neighbourhood is exhausted. A cost model
  (``perf_model``) orders seeds and neighbours when given.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

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
    """Pattern search with restarts (see the module docstring)."""

    seeds: int = 4
    max_radius: int = 2
    name: str = "guided"

    def run(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> None:
        n = ev.n
        if n == 0:
            return
        ev([0])
        seeds = self._seeds(n, coords, scores, {0})
        ev(seeds)
        while ev.left() > 0 and len(ev.times) < n:
            if not self._climb(ev, coords, scores):
                fresh = self._seeds(n, coords, scores, set(ev.times), count=1)
                if not fresh:
                    break
                ev(fresh)

    def _climb(self, ev: Evaluator, coords: Sequence[Sequence[int]], scores: Sequence[float] | None) -> bool:
        """Improve from the best config until no neighbourhood helps; False if nothing was measured."""
        measured_any = False
        radius = 1
        while ev.left() > 0 and radius <= self.max_radius:
            best = ev.best()
            if best is None:
                return measured_any
            nbrs = [j for j in range(ev.n) if j not in ev.times and _dist(coords[j], coords[best]) <= radius]
            if not nbrs:
                radius += 1
                continue
            nbrs.sort(key=lambda j: (scores[j] if scores else 0.0, _dist(coords[j], coords[best]), j))
            before = ev.times[best]
            ev(nbrs)
            measured_any = True
            new_best = ev.best()
            if new_best is not None and ev.times[new_best] < before:
                radius = 1
            else:
                radius += 1
        return measured_any

    def _seeds(self, n: int, coords: Sequence[Sequence[int]], scores: Sequence[float] | None,
               taken: set[int], count: int | None = None) -> list[int]:
        want = self.seeds if count is None else count
        if scores is not None:
            ranked = sorted((j for j in range(n) if j not in taken), key=lambda j: (scores[j], j))
            return ranked[:want]
        chosen = set(taken)
        out: list[int] = []
        for _ in range(want):
            best_j, best_d = -1, -1.0
            for j in range(n):
                if j in chosen:
                    continue
                d = min((_dist(coords[j], coords[c]) for c in chosen), default=math.inf)
                if d > best_d:
                    best_j, best_d = j, d
            if best_j < 0:
                break
            chosen.add(best_j)
            out.append(best_j)
        return out


def _dist(a: Sequence[int], b: Sequence[int]) -> int:
    return sum(abs(x - y) for x, y in zip(a, b))


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
