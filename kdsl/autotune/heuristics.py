"""``@kdsl.heuristics``: meta-parameters computed from the launch arguments (Triton's
``triton.heuristics``).

``@kdsl.heuristics(values={"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})`` on a kernel
(or on an autotuner) sets each named meta-parameter at every launch to its function of the launch's
arguments: a dict of the positional arguments by parameter name plus every keyword argument,
including the meta-parameters already given and the heuristics computed before it (in ``values``'
order). Stacked under ``@kdsl.autotune`` the heuristics also see each candidate config's
meta-parameters; the autotuner unwraps them (:func:`split`) so that every trial, and the launch
with the chosen config, gets the values for *that* config and *these* arguments -- a cached
choice never carries values computed for other arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kdsl.autotune.wrapper import KernelWrapper

Rules = dict[str, Callable[[dict[str, Any]], Any]]


class Heuristics(KernelWrapper):
    """A kernel (or autotuner) whose launches get computed meta-parameters."""

    def __init__(self, fn: Any, values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> None:
        if not hasattr(fn, "arg_names") or not hasattr(fn, "run"):
            raise TypeError(f"@kdsl.heuristics must decorate a @kdsl.kernel function or an autotuner, "
                            f"got {type(fn).__name__}")  # fmt: skip
        for name, rule in values.items():
            if not callable(rule):
                raise TypeError(f"@kdsl.heuristics: the value for {name!r} must be a function of the arguments")
        self._wrap(fn)
        self.values: Rules = dict(values)
        self.arg_names: list[str] = list(fn.arg_names)

    def __repr__(self) -> str:
        return f"<kdsl.heuristics {self.__qualname__}: {', '.join(self.values)}>"

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        return self.fn.run(*args, grid=grid, warmup=warmup, **apply(self.values, self.arg_names, args, kwargs))


def heuristics(values: Mapping[str, Callable[[dict[str, Any]], Any]]) -> Callable[[Any], Heuristics]:
    """Decorator: ``values`` maps meta-parameter names to functions of the launch's arguments."""
    if not isinstance(values, Mapping):
        raise TypeError("kdsl.heuristics(values=...) takes a dict of name -> function(args)")

    def decorate(fn: Any) -> Heuristics:
        return Heuristics(fn, values)

    return decorate


def apply(rules: Rules, arg_names: Sequence[str], args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` plus every heuristic's value, each computed from the arguments so far."""
    out = dict(kwargs)
    for name, rule in rules.items():
        out[name] = rule({**dict(zip(arg_names, args)), **out})
    return out


def split(fn: Any) -> tuple[Any, Rules]:
    """(the wrapped kernel, the heuristics) of ``@heuristics`` objects around it, innermost rules last."""
    rules: Rules = {}
    while isinstance(fn, Heuristics):
        rules = {**rules, **fn.values}
        fn = fn.fn
    return fn, rules


__all__ = ["Heuristics", "apply", "heuristics", "split"]
