"""``kdsl.Config``: one point of an autotuning search space.

Triton's ``triton.Config(kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None,
pre_hook=None, ir_override=None)`` with the same positional order and defaults (Triton code
writes ``Config({...}, 8, 2)`` for 8 warps and 2 stages), extended keyword-only with what kdsl's
autotuner needs: ``num_threads`` (kdsl's work-group size; 0 lets the backend choose) and
``options``, pass knobs (``"pass.option"`` -> value, from :meth:`kdsl.transforms.base.Pass.tunables`)
passed to the launch as extra launch options so they reach the compiler and its cache key.
``pre_hook`` is called with the named arguments before each run, as in Triton. The GPU
scheduling fields (warps, stages, CTAs, registers) travel as launch options that kdsl accepts
without effect on the result; ``ir_override`` (a Triton IR file replacing the compiled kernel)
has no kdsl meaning and is refused unless ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The GPU launch fields, in Triton's order: part of ``all_kwargs`` when not None.
_GPU_FIELDS = ("num_warps", "num_ctas", "num_stages", "maxnreg")


@dataclass(frozen=True)
class Config:
    """Meta-parameters (``kwargs``) + launch options for one candidate launch."""

    kwargs: dict[str, Any] = field(default_factory=dict)
    num_warps: int | None = 4
    num_stages: int | None = 3
    num_ctas: int | None = 1
    maxnreg: int | None = None
    pre_hook: Callable[..., Any] | None = field(default=None, compare=False)
    ir_override: str | None = None
    num_threads: int = field(default=0, kw_only=True)
    options: dict[str, Any] = field(default_factory=dict, kw_only=True)

    def __post_init__(self) -> None:
        if self.ir_override is not None:
            raise ValueError(f"kdsl.Config: ir_override={self.ir_override!r} (a Triton IR file to run instead of "
                             "the compiled kernel) is not supported: kdsl compiles from the kernel's source")
        if not isinstance(self.kwargs, dict):
            raise TypeError(f"kdsl.Config: kwargs must be a dict of meta-parameters, got {type(self.kwargs).__name__}")

    def all_kwargs(self) -> dict[str, Any]:
        """Meta-parameters and the launch options, ready for ``kernel[grid](..., **all)`` (Triton's
        ``Config.all_kwargs``: the GPU fields that are not None, plus kdsl's knobs)."""
        out = dict(self.kwargs)
        out.update(self.options)
        if self.num_threads:
            out["num_threads"] = self.num_threads
        for name in _GPU_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    def identity(self) -> str:
        """A stable text identity (the database key of this config; independent of dict order)."""
        return json.dumps(
            {
                "kwargs": _jsonable(self.kwargs),
                "options": _jsonable(self.options),
                "num_threads": self.num_threads,
                **{name: getattr(self, name) for name in _GPU_FIELDS},
            },
            sort_keys=True,
        )

    def __hash__(self) -> int:
        return hash(self.identity())

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in {**self.kwargs, **self.options}.items()]
        if self.num_threads:
            parts.append(f"num_threads: {self.num_threads}")
        parts += [f"{name}: {getattr(self, name)}" for name in (*_GPU_FIELDS, "ir_override")]  # Triton's text
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"

    def to_json(self) -> dict[str, Any]:
        return json.loads(self.identity())  # type: ignore[no-any-return]

    @staticmethod
    def from_json(data: dict[str, Any]) -> Config:
        gpu = {name: data[name] for name in _GPU_FIELDS if name in data}
        return Config(
            dict(data.get("kwargs") or {}),
            **gpu,
            num_threads=int(data.get("num_threads") or 0),
            options=dict(data.get("options") or {}),
        )


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, tuple):
            v = list(v)
        elif hasattr(v, "value") and type(v).__name__ == "constexpr":
            v = v.value
        elif not isinstance(v, (int, float, str, bool, list, type(None))):
            v = repr(v)
        out[str(k)] = v
    return out
