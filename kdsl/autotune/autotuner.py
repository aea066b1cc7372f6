"""``@kdsl.autotune``: the decorator object that picks a config per tuning key.

``k[grid](*args)`` on an :class:`Autotuner` computes the tuning key (the
``key`` arguments' values, every array argument's dtype, the backend and
device+driver identity), and on a miss tunes: prune the configs, take what
the persisted database already knows, let the search strategy choose which of
the rest to measure (see ``search``), measure them (see ``executor``: parallel
precompile, one watchdog-guarded trial at a time, or a user executor), reject
candidates that fail, hang or compute something other than the reference
config (the first config of the pruned list), re-time the winner against the
runner-up, remember the choice in memory and on disk, then launch with it.

Every array argument is snapshotted before tuning and restored before each
candidate's checked run and after tuning, so the user's launch sees exactly
one application of the kernel whatever the trials did; ``reset_to_zero`` and
``restore_value`` additionally apply between the *timed* repetitions (needed
for atomics and in-place updates, as in Triton), and the ``reset_to_zero``
arguments are zeroed once more before the launch that follows tuning (Triton's
``pre_hook(args, reset_only=True)``; a launch with a cached choice resets nothing).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import logging
import os
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kdsl.autotune import executor as ex
from kdsl.autotune.config import Config
from kdsl.autotune.database import TuningDatabase, enabled
from kdsl.autotune.heuristics import apply as apply_heuristics
from kdsl.autotune.heuristics import split as split_heuristics
from kdsl.autotune.search import Evaluator, Search, default_budget, make_search
from kdsl.autotune.space import coordinates, tunable_space
from kdsl.autotune.wrapper import KernelWrapper
from kdsl.errors import ConfigError, LaunchError
from kdsl.runtime.jit import KernelFunction

log = logging.getLogger("kdsl.autotune")
INF = float("inf")


class Autotuner(KernelWrapper):
    """A kernel plus its candidate configs; launched like the kernel (``at[grid](...)``)."""

    def __init__(
        self,
        fn: KernelFunction,
        configs: Sequence[Config] | None,
        key: Sequence[str] = (),
        prune_configs_by: dict[str, Any] | None = None,
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        warmup: float = 25,
        rep: float = 100,
        do_bench: Callable[..., Any] | None = None,
        *,
        search: str | Search = "exhaustive",
        max_trials: int | None = None,
        time_budget: float | None = None,
        timeout: float | None = 60.0,
        verify: bool = True,
        rtol: float = 1e-3,
        atol: float = 1e-5,
        executor: Any = None,
        isolate: bool = False,
        compile_workers: int | None = None,
        persist: bool = True,
        recheck: bool = True,
        max_repeats: int | None = None,
        passes: Sequence[Any] | None = None,
    ) -> None:
        fn, self.heuristics = split_heuristics(fn)  # @autotune over @heuristics: applied per config
        if not isinstance(fn, KernelFunction):
            raise TypeError(f"@kdsl.autotune must decorate a @kdsl.kernel function, got {type(fn).__name__}")
        self._wrap(fn)
        self.arg_names = fn.arg_names
        self.configs = list(configs) if configs else None
        for name in [*(reset_to_zero or ()), *(restore_value or ())]:
            if name not in self.arg_names:
                raise ValueError(f"@kdsl.autotune: {name!r} is not a parameter of {fn.__name__}")
        for name in key:  # Triton skips such a key (tutorial 08 misspells one): warn, do not refuse the kernel
            if name not in self.arg_names:
                warnings.warn(f"@kdsl.autotune: key {name!r} is not a parameter of {fn.__name__}; it is ignored",
                              stacklevel=3)
        self.keys = list(key)
        prune = dict(prune_configs_by or {})
        self.early_config_prune = prune.get("early_config_prune")
        self.perf_model = prune.get("perf_model")
        self.top_k = prune.get("top_k")
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.pre_hook, self.post_hook = pre_hook, post_hook
        # Triton's attribute names: ``warmup`` is the method compiling every config
        self.num_warmups, self.num_reps, self.user_bench = warmup, rep, do_bench
        self.search = make_search(search)
        self.max_trials, self.time_budget, self.timeout = max_trials, time_budget, timeout
        self.verify, self.rtol, self.atol = verify, rtol, atol
        self.executor, self.isolate = executor, isolate
        self.compile_workers = compile_workers
        self.persist, self.recheck, self.max_repeats = persist, recheck, max_repeats
        self.passes = list(passes) if passes is not None else None
        self.cache: dict[tuple[Any, ...], Config] = {}
        self.best_config: Config | None = None
        self.configs_timings: dict[Config, float] = {}
        self.rejected: list[tuple[Config, str]] = []
        self.on_trial: Callable[[Config, float], None] | None = None  # progress callback (CLI)
        self.trials = 0  # candidate measurements run by this object (database hits are free)
        self.bench_time = 0.0  # seconds the last tuning took (Triton's attribute)
        self.base_fn = fn.fn  # the decorated Python function (Triton's attribute)

    def __repr__(self) -> str:
        return f"<kdsl.autotune {self.fn.__qualname__}>"

    # --- launching -------------------------------------------------------------------
    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        """Tune (on a new key) and launch with the chosen config; ``warmup=True`` (Triton's ``run``
        flag) compiles every candidate instead, as :meth:`warmup`."""
        if warmup:
            return self.warmup(*args, grid=grid, **kwargs)
        named = dict(zip(self.arg_names, args))
        named.update({k: v for k, v in kwargs.items() if k in self.arg_names})
        configs = self.candidate_configs()
        for c in configs[:1]:
            clash = sorted(set(c.all_kwargs()) & set(kwargs))
            if clash:
                raise ConfigError(f"Conflicting meta-parameters: {', '.join(clash)}: they are set by the "
                                  "autotuner's configs, do not pass them", clash[0], self.fn.__name__)
        if len(configs) == 1:
            config = configs[0]
        else:
            key = self.tuning_key(named)
            cached = self.cache.get(key)
            if cached is None:  # trials run with each config's heuristic values for these arguments
                withheur = [self._with_heuristics(c, args, kwargs) for c in configs]
                cached = self._tune(key, args, kwargs, named, grid, withheur)
            config = self.cache[key] = cached
        config = self._with_heuristics(config, args, kwargs)  # recomputed: the key may not fix them
        self.best_config = config
        meta = config.all_kwargs()
        if config.pre_hook is not None:
            config.pre_hook({**named, **meta})
        return self.fn[grid](*args, **kwargs, **meta)

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> list[Any]:
        """Compile every (pruned) config for these arguments without running any: Triton's
        ``Autotuner.warmup``; one :meth:`KernelFunction.warmup` result per config."""
        named = dict(zip(self.arg_names, args))
        configs = [self._with_heuristics(c, args, kwargs) for c in self.candidate_configs()]
        pruned, _ = self.prune(configs, named, kwargs)
        return [self.fn.warmup(*args, grid=grid if grid is not None else (1,), **kwargs, **c.all_kwargs())
                for c in pruned]

    def _with_heuristics(self, config: Config, args: Sequence[Any], kwargs: dict[str, Any]) -> Config:
        """``config`` with the ``@kdsl.heuristics`` values computed for it and these arguments."""
        if not self.heuristics:
            return config
        given = {**kwargs, **config.all_kwargs()}
        computed = apply_heuristics(self.heuristics, self.arg_names, args, given)
        extra = {k: computed[k] for k in self.heuristics}
        return dataclasses.replace(config, kwargs={**config.kwargs, **extra})

    def candidate_configs(self) -> list[Config]:
        if self.configs is not None:
            return self.configs
        from kdsl.runtime.backends import resolve_backend

        return tunable_space(resolve_backend(), self.passes)

    def tuning_key(self, named: dict[str, Any]) -> tuple[Any, ...]:
        from kdsl.runtime.backends import resolve_backend
        from kdsl.runtime.compile import device_key

        out: list[Any] = [_key_value(named[k]) for k in self.keys if k in named]
        out += [str(v.dtype) for v in named.values() if hasattr(v, "dtype") and hasattr(v, "shape")]
        out.append(device_key(resolve_backend())[1])
        return tuple(out)

    # --- tuning ----------------------------------------------------------------------
    def prune(self, configs: list[Config], named: dict[str, Any], kwargs: dict[str, Any]) -> tuple[list[Config], list[float] | None]:
        """Triton's pruning: ``early_config_prune`` then the ``top_k`` by ``perf_model``; as in Triton
        they see the positional arguments by name (``named``) and the keyword arguments."""
        pruned = list(configs)
        extra = {k: v for k, v in kwargs.items() if k not in named}
        if self.early_config_prune is not None:
            pruned = list(self.early_config_prune(pruned, named, **extra))
            if not pruned:
                raise ConfigError("early_config_prune removed every config (it must return at least one)",
                                  None, self.fn.__name__)
        top_k = self._top_k(len(pruned))
        if self.perf_model is None or len(pruned) <= top_k:  # as Triton: the model runs only to cut
            return pruned, None
        est = [float(self.perf_model(**named, **extra, **c.all_kwargs())) for c in pruned]
        order = sorted(range(len(pruned)), key=lambda i: (est[i], i))
        keep = sorted(order[:top_k])  # keep the user's order: config 0 stays the reference
        return [pruned[i] for i in keep], [est[i] for i in keep]

    def _top_k(self, n: int) -> int:
        """Triton's ``top_k``: an int, or a fraction <= 1.0 of the ``n`` configs (at least one);
        absent (or without a ``perf_model``), every config."""
        top_k = self.top_k
        if top_k is None or self.perf_model is None:
            return n
        if isinstance(top_k, float) and top_k <= 1.0:
            return max(1, int(n * top_k))
        if isinstance(top_k, bool) or not isinstance(top_k, int):
            raise ConfigError(f"prune_configs_by['top_k'] must be an int or a float <= 1.0, got {top_k!r}",
                              "top_k", self.fn.__name__)
        return top_k

    def _tune(self, key: tuple[Any, ...], args: Sequence[Any], kwargs: dict[str, Any], named: dict[str, Any],
              grid: Any, configs: list[Config]) -> Config:
        from kdsl.runtime.backends import current_backend_name

        pruned, scores = self.prune(configs, dict(zip(self.arg_names, args)), kwargs)
        if len(pruned) == 1:
            return pruned[0]
        session = _Session(self, key, list(args), kwargs, named, grid, pruned, current_backend_name())
        start = time.perf_counter()
        try:
            best = session.tune(scores)
        finally:
            self.bench_time = time.perf_counter() - start
            session.restore_all()
            for name in self.reset_to_zero:  # Triton's pre_hook(args, reset_only=True) after tuning
                ex._zero(named.get(name))
        if self.pre_hook is not None and _takes_reset_only(self.pre_hook):  # the user's hook replaces it there
            self.pre_hook({**named, **kwargs, **best.all_kwargs()}, reset_only=True)
        return best


class _Session:
    """One tuning run for one key: measurement, verification, persistence."""

    def __init__(self, at: Autotuner, key: tuple[Any, ...], args: list[Any], kwargs: dict[str, Any],
                 named: dict[str, Any], grid: Any, configs: list[Config], backend: str) -> None:
        from kdsl.runtime.cache import kernel_dependencies

        self.at, self.key, self.args, self.kwargs, self.named = at, key, args, kwargs, named
        self.grid, self.configs, self.backend = grid, configs, backend
        self.values = [named[n] for n in at.arg_names if n in named]
        self.value_names = [n for n in at.arg_names if n in named]
        self.snapshot = {n: h for n, v in named.items() if (h := ex._host(v)) is not None}
        digest = kernel_dependencies(at.fn)[0] or hashlib.sha256(at.fn.src.encode()).hexdigest()
        self.ref = ex.KernelRef.of(at.fn, digest)
        self.key_text = repr(key)
        self.db = TuningDatabase(f"{at.fn.__module__}.{at.fn.__qualname__}", digest, str(key[-1])) \
            if at.persist and enabled() and not _observed(at, configs) else None
        self.reference: dict[str, np.ndarray[Any, Any]] | None = None
        self.results: dict[str, dict[str, Any]] = {}

    def restore_all(self) -> None:
        for n, saved in self.snapshot.items():
            ex._restore(self.named[n], saved)

    # measurement ------------------------------------------------------------------------
    def _spec(self, i: int, want_outputs: bool = True) -> ex.TrialSpec:
        from kdsl.runtime import args as argmod

        c = self.configs[i]
        meta = c.all_kwargs()
        grid3 = argmod.normalize_grid(self.grid, {**self.named, **meta}, self.at.fn.__name__)
        values = self.values
        device_arrays: list[str] = []
        if self.at.executor is not None or ex.current_executor() is not None:
            values, device_arrays = _shippable(self.value_names, values)
        return ex.TrialSpec(
            i, self.ref, self.backend, self.value_names, list(values), device_arrays, grid3, c,
            self.at.reset_to_zero, self.at.restore_value, self.at.num_warmups, self.at.num_reps, self.at.max_repeats,
            want_outputs, self.at.pre_hook, self.at.post_hook, self.at.user_bench,
        )

    def _precompile(self, indices: list[int]) -> dict[int, str]:
        from kdsl.runtime import cache as cachemod
        from kdsl.runtime.jit import launch_options

        workers = self.at.compile_workers if self.at.compile_workers is not None else (os.cpu_count() or 1)
        if workers < 2 or len(indices) < 2 or cachemod.always_compile() or not cachemod.DiskCache().usable:
            return {}
        jobs = []
        bad: dict[int, str] = {}
        for i in indices:
            meta = self.configs[i].all_kwargs()
            try:
                given = {**dict(zip(self.value_names, self.values)), **meta}
                specs = self.at.fn.specialization([], {k: v for k, v in given.items() if k in self.at.arg_names})
                opts = launch_options({k: v for k, v in meta.items() if k not in self.at.arg_names},
                                      self.at.fn.__name__)
            except Exception as exc:  # bad meta-parameters or launch options (e.g. an unknown pass knob)
                bad[i] = f"bad config: {exc}"
                continue
            jobs.append(ex.CompileJob(i, self.ref, self.backend, specs, opts, self.at.fn._debug()))
        return {**bad, **ex.precompile(jobs, workers, self.at.timeout)}

    def measure(self, indices: list[int]) -> dict[int, float]:
        if self.reference is None and self.at.verify and 0 not in indices:
            self._reference_run()
        runner = self.at.executor or ex.current_executor()
        if self.at.isolate and runner is None and self.backend not in ex.FORK_SAFE_BACKENDS:
            raise LaunchError(f"isolate=True runs each trial in a forked child, and the {self.backend} driver "
                              "does not survive fork() (docs/BACKENDS.md): pass executor=concurrent.futures."
                              "ProcessPoolExecutor(mp_context=multiprocessing.get_context('spawn')) instead",
                              "isolate", self.at.fn.__name__)
        out: dict[int, float] = {}
        failed = self._precompile(indices) if runner is None else {}
        if self.at.post_hook is not None:  # as in Triton, post_hook(args, exception=...) sees a config
            failed = {}                    # that fails to compile: the trial fails again, in process
        todo = [i for i in indices if i not in failed]
        if runner is not None:
            self.restore_all()  # the shipped copies must be the original inputs
            results = ex.run_on_executor(runner, [self._spec(i) for i in todo], self.at.timeout)
        else:
            results = []
            for i in todo:
                self.restore_all()
                run = ex.run_isolated if self.at.isolate else ex.run_with_watchdog
                results.append(run(self._spec(i), self.at.timeout))
        self.at.trials += len(todo)
        for i, reason in failed.items():
            self._reject(i, reason)
            out[i] = INF
        for r in results:
            out[r.index] = self._accept(r)
        if self.at.on_trial is not None:
            for i in indices:
                self.at.on_trial(self.configs[i], out.get(i, INF))
        return out

    def _reference_run(self) -> None:
        self.restore_all()
        r = ex.run_with_watchdog(self._spec(0), self.at.timeout)
        if r.ok:
            self.reference = r.outputs

    def _accept(self, r: ex.TrialResult) -> float:
        if not r.ok:
            self._reject(r.index, r.reason)
            return INF
        if self.at.verify and r.outputs is not None:
            if self.reference is None:
                self.reference = r.outputs  # the first config that ran is the reference
            else:
                bad = _compare(r.outputs, self.reference, self.at.rtol, self.at.atol)
                if bad:
                    self._reject(r.index, bad)
                    return INF
        c = self.configs[r.index]
        self.at.configs_timings[c] = r.ms
        self.results[c.identity()] = {"ms": r.ms, "reason": ""}
        log.debug("kdsl.autotune %s: %s -> %.4f ms", self.at.fn.__name__, c, r.ms)
        return r.ms

    def _reject(self, i: int, reason: str) -> None:
        c = self.configs[i]
        self.at.rejected.append((c, reason))
        self.results[c.identity()] = {"ms": None, "reason": reason}
        log.warning("kdsl.autotune %s: config {%s} discarded: %s", self.at.fn.__name__, c, reason)

    # the run ---------------------------------------------------------------------------
    def tune(self, scores: list[float] | None) -> Config:
        stored = self.db.lookup(self.key_text) if self.db is not None else {}
        known: dict[int, float] = {}
        for i, c in enumerate(self.configs):
            rec = stored.get(c.identity())
            if rec is not None:
                known[i] = INF if rec.get("ms") is None else float(rec["ms"])
                if known[i] < INF:  # a choice read back still reports its timings, as a fresh one
                    self.at.configs_timings[c] = known[i]
        n = len(self.configs)
        is_full = self.at.search.name == "exhaustive"
        budget = self.at.max_trials if self.at.max_trials is not None else (None if is_full else default_budget(n))
        ev = Evaluator(self.measure, n, None if budget is None else budget + len(known), self.at.time_budget)
        ev.times.update(known)
        if len(known) < n:
            _, coords = coordinates(self.configs)
            self.at.search.run(ev, coords, scores)
        best = self._finish(ev)
        if self.db is not None:
            desc = {"key": [str(k) for k in self.key], "args": self.at.keys}
            self.db.record(self.key_text, desc, self.results, self.configs[best].identity())
        if os.environ.get("KDSL_PRINT_AUTOTUNING", "0") not in ("", "0"):
            print(f"kdsl autotuning {self.at.fn.__name__} key={self.key}: best {{{self.configs[best]}}} "
                  f"({ev.times[best]:.4f} ms, {len(ev.order)} trials)")
        return self.configs[best]

    def _finish(self, ev: Evaluator) -> int:
        ok = sorted((t, i) for i, t in ev.times.items() if t < INF)
        if not ok:
            reasons = "; ".join(f"{{{c}}}: {r}" for c, r in self.at.rejected[-5:])
            raise LaunchError(f"autotuning found no working config ({reasons})", None, self.at.fn.__name__)
        if not self.at.recheck or len(ok) < 2 or ok[1][0] > ok[0][0] * 1.1:
            return ok[0][1]
        if not {ok[0][1], ok[1][1]} & set(ev.order):  # both read back from the database: rechecked then
            return ok[0][1]
        # the runner-up is within 10%: measure both again, interleaved, and keep the median
        (t_best, best), (t_next, nxt) = ok[0], ok[1]
        samples = {best: [t_best], nxt: [t_next]}
        for _ in range(2):
            for i in (best, nxt):
                self.restore_all()
                r = ex.run_with_watchdog(self._spec(i, want_outputs=False), self.at.timeout)
                if r.ok:
                    samples[i].append(r.ms)
        med = {i: float(np.median(s)) for i, s in samples.items()}
        for i in (best, nxt):
            ev.times[i] = med[i]
            self.at.configs_timings[self.configs[i]] = med[i]
            self.results[self.configs[i].identity()] = {"ms": med[i], "reason": ""}
        return min((med[i], i) for i in (best, nxt))[1]


def _takes_reset_only(hook: Callable[..., Any]) -> bool:
    """Can ``hook`` be called as Triton calls a tuner's pre-hook after tuning, ``hook(args,
    reset_only=True)``? A one-argument hook (``lambda args: ...``, fine for the trials) is left out
    rather than broken by the extra keyword."""
    try:
        params = inspect.signature(hook).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind is p.VAR_KEYWORD or p.name == "reset_only" for p in params)


def _observed(at: Autotuner, configs: list[Config]) -> bool:
    """Does tuning call user code (hooks, a ``do_bench``)? Then it must really run, as in Triton
    (whose disk cache skips configs with pre-hooks): a database hit would silently skip the calls
    the user's code counts on."""
    return (at.pre_hook is not None or at.post_hook is not None or at.user_bench is not None
            or any(c.pre_hook is not None for c in configs))


def _compare(got: dict[str, np.ndarray[Any, Any]], ref: dict[str, np.ndarray[Any, Any]], rtol: float, atol: float) -> str:
    """'' if every array matches the reference outputs, else why not."""
    for name, r in ref.items():
        g = got.get(name)
        if g is None or g.shape != r.shape:
            return f"wrong result: '{name}' missing or reshaped"
        if r.dtype.kind in "iub":
            if not np.array_equal(g, r):
                return f"wrong result: '{name}' differs from the reference config ({int((g != r).sum())} elements)"
            continue
        rf = r.astype(np.float64)
        gf = g.astype(np.float64)
        finite = np.abs(rf[np.isfinite(rf)])
        scale = max(1.0, float(finite.max()) if finite.size else 1.0)
        if not np.allclose(gf, rf, rtol=rtol, atol=atol * scale, equal_nan=True):
            with np.errstate(invalid="ignore"):
                err = float(np.nanmax(np.abs(gf - rf))) if rf.size else 0.0
            return f"wrong result: '{name}' differs from the reference config (max abs error {err:.3g})"
    return ""


def _key_value(v: Any) -> Any:
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return (tuple(v.shape), str(v.dtype))
    if isinstance(v, np.generic):
        return v.item()
    return repr(v)


def _shippable(names: list[str], values: list[Any]) -> tuple[list[Any], list[str]]:
    """Values for another process: device arrays travel as numpy (recreated there)."""
    from kdsl.runtime.device_array import DeviceArray

    out: list[Any] = []
    dev: list[str] = []
    for n, v in zip(names, values):
        if isinstance(v, DeviceArray):
            out.append(v.numpy())
            dev.append(n)
        else:
            out.append(v)
    return out, dev
