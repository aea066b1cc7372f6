"""Autotuning: ``@kdsl.autotune`` stacked on ``@kdsl.kernel`` (Triton-compatible API).

``kdsl.autotune(configs=[kdsl.Config(...)], key=[...], ...)`` returns a
decorator turning a kernel into an :class:`Autotuner`; the object also
carries ``kdsl.autotune.use_executor(executor)`` (a context manager choosing
where trials run). See docs/AUTOTUNE.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kdsl.autotune.autotuner import Autotuner
from kdsl.autotune.autotuner import Autotuner as _Autotuner
from kdsl.autotune.config import Config
from kdsl.autotune.config import Config as _Config
from kdsl.autotune.database import TuningDatabase, list_databases
from kdsl.autotune.executor import current_executor, use_executor
from kdsl.autotune.search import Exhaustive, GuidedSearch, RandomSearch
from kdsl.autotune.space import product_space, tunable_space
from kdsl.runtime.jit import KernelFunction


class _AutotuneAPI:
    """``kdsl.autotune``: callable as the decorator factory, with helpers as attributes."""

    Autotuner = Autotuner
    Config = Config
    use_executor = staticmethod(use_executor)
    current_executor = staticmethod(current_executor)
    product_space = staticmethod(product_space)
    tunable_space = staticmethod(tunable_space)

    def __call__(
        self,
        configs: Sequence[_Config] | None = None,
        key: Sequence[str] = (),
        prune_configs_by: dict[str, Any] | None = None,
        reset_to_zero: Sequence[str] | None = None,
        restore_value: Sequence[str] | None = None,
        pre_hook: Callable[..., Any] | None = None,
        post_hook: Callable[..., Any] | None = None,
        warmup: float = 25,
        rep: float = 100,
        do_bench: Callable[..., Any] | None = None,
        **options: Any,
    ) -> Callable[[KernelFunction], _Autotuner]:
        """Decorator factory; ``options`` are :class:`Autotuner`'s keyword-only extras
        (search, max_trials, time_budget, timeout, verify, rtol, atol, executor,
        isolate, compile_workers, persist, recheck, max_repeats, passes)."""

        def deco(fn: KernelFunction) -> _Autotuner:
            return _Autotuner(fn, configs, key, prune_configs_by, reset_to_zero, restore_value, pre_hook, post_hook,
                             warmup, rep, do_bench, **options)

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
