"""What every object wrapping a kernel shares (``@kdsl.autotune``, ``@kdsl.heuristics``).

Why a base class: a wrapper must look like the kernel it wraps -- launched as ``w[grid](...)``,
named like it in errors and reprs, callable from other kernels -- and stack with other wrappers
in any order; only what ``run`` does differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class KernelWrapper:
    """``w[grid](*args)`` calls ``w.run(*args, grid=grid)``; ``w(...)`` calls the wrapped ``fn``."""

    fn: Any

    def _wrap(self, fn: Any) -> None:
        self.fn = fn
        self.__name__: str = fn.__name__
        self.__qualname__: str = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def launcher(*args: Any, **kwargs: Any) -> Any:
            return self.run(*args, grid=grid, **kwargs)

        return launcher

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError


__all__ = ["KernelWrapper"]
