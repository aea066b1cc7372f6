"""Autotuning: ``@kdsl.autotune`` stacked on ``@kdsl.kernel`` (Triton-compatible API).

``kdsl.autotune(configs=[kdsl.Config(...)], key=[...], ...)`` returns a
decorator turning a kernel into an :class:`Autotuner`; the object also
carries ``kdsl.autotune.use_executor(executor)`` (a context manager choosing
where trials run). See docs/AUTOTUNE.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kdsl.autotune.config import Config
from kdsl.autotune.config import Config as _Config

if TYPE_CHECKING:
    from kdsl.autotune.autotuner import Autotuner
    from kdsl.autotune.autotuner import Autotuner as _Autotuner
    from kdsl.autotune.database import TuningDatabase, list_databases
    from kdsl.autotune.executor import current_executor, use_executor
    from kdsl.autotune.search import Exhaustive, GuidedSearch, RandomSearch
    from kdsl.autotune.space import product_space, tunable_space
    from kdsl.runtime.jit import KernelFunction

# ``import kdsl`` imports this package for ``kdsl.autotune`` and ``kdsl.Config``; the
# tuning machinery (trial executors with process pools, the search strategies, the
# results database, logging) is imported on first use: it was a third of ``import kdsl``.
_LAZY = {
    "Autotuner": "autotuner",
    "TuningDatabase": "database",
    "list_databases": "database",
    "current_executor": "executor",
    "use_executor": "executor",
    "Exhaustive": "search",
    "GuidedSearch": "search",
    "RandomSearch": "search",
    "product_space": "space",
    "tunable_space": "space",
}


def _lazy(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __getattr__(name: str) -> Any:
    return _lazy(name)


class _AutotuneAPI:
    """``kdsl.autotune``: callable as the decorator factory, with helpers as attributes
    (``Autotuner``, ``Config``, ``use_executor``, ``current_executor``, ``product_space``,
    ``tunable_space``)."""

    Config = Config
    _HELPERS = frozenset({"Autotuner", "use_executor", "current_executor", "product_space", "tunable_space"})

    def __getattr__(self, name: str) -> Any:
        if name in _AutotuneAPI._HELPERS:
            return _lazy(name)
        raise AttributeError(f"kdsl.autotune has no attribute {name!r}")

    def __call__(
        self,
        configs: Sequence[_Config] | None = None,
        key: Sequence[str] = (),
        prune_configs_by: dict[str, Any] | None = None,
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        warmup: float | None = None,
        rep: float | None = None,
        use_cuda_graph: bool = False,
        do_bench: Callable[..., Any] | None = None,
        cache_results: bool = False,
        **options: Any,
    ) -> Callable[[KernelFunction], _Autotuner]:
        """Decorator factory with Triton's parameters, in Triton's order; ``options`` are
        :class:`Autotuner`'s keyword-only extras (search, max_trials, time_budget, timeout, verify,
        rtol, atol, executor, isolate, compile_workers, persist, recheck, max_repeats, passes).

        ``warmup``/``rep`` (ms) default to 25/100. ``use_cuda_graph`` is accepted and ignored
        (there are no CUDA graphs to replay); ``cache_results`` is accepted: kdsl always keeps the choices in its tuning database
        unless ``persist=False``."""

        from kdsl.autotune.autotuner import Autotuner as _Autotuner

        def deco(fn: KernelFunction) -> _Autotuner:
            return _Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, pre_hook, post_hook,
                              25 if warmup is None else warmup, 100 if rep is None else rep, do_bench, **options)

        return deco


autotune = _AutotuneAPI()

__all__ = [
    "Autotuner",
    "Config",
    "Exhaustive",
    "GuidedSearch",
    "RandomSearch",
    "TuningDatabase",
    "autotune",
    "current_executor",
    "list_databases",
    "product_space",
    "tunable_space",
    "use_executor",
]
