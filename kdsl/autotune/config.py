"""``kdsl.Config``: one point of an autotuning search space.

Field-compatible with the ``Config`` first defined in ``kdsl/__init__.py``
(``kwargs``, ``num_threads``, ``num_warps``, ``num_stages``) and extended with
what the autotuner needs: ``options`` holds pass knobs (``"pass.option"`` ->
value, from :meth:`kdsl.transforms.base.Pass.tunables`), passed to the launch
as extra launch options so they reach the compiler and its cache key, and
``pre_hook`` as in Triton (called with the named arguments before each run).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Config:
    """Meta-parameters (``kwargs``) + launch options for one candidate launch."""

    kwargs: dict[str, Any] = field(default_factory=dict)
    num_threads: int = 0
    num_warps: int | None = None
    num_stages: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    pre_hook: Callable[[dict[str, Any]], Any] | None = field(default=None, compare=False)

    def all_kwargs(self) -> dict[str, Any]:
        """Meta-parameters and the non-default launch options, ready for ``kernel[grid](..., **all)``."""
        out = dict(self.kwargs)
        out.update(self.options)
        if self.num_threads:
            out["num_threads"] = self.num_threads
        if self.num_warps is not None:
            out["num_warps"] = self.num_warps
        if self.num_stages is not None:
            out["num_stages"] = self.num_stages
        return out

    def identity(self) -> str:
        """A stable text identity (the database key of this config; independent of dict order)."""
        return json.dumps(
            {
                "kwargs": _jsonable(self.kwargs),
                "options": _jsonable(self.options),
                "num_threads": self.num_threads,
                "num_warps": self.num_warps,
                "num_stages": self.num_stages,
            },
            sort_keys=True,
        )

    def __hash__(self) -> int:
        return hash(self.identity())

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in {**self.kwargs, **self.options}.items()]
        if self.num_threads:
            parts.append(f"num_threads: {self.num_threads}")
        if self.num_warps is not None:
            parts.append(f"num_warps: {self.num_warps}")
        if self.num_stages is not None:
            parts.append(f"num_stages: {self.num_stages}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"

    def to_json(self) -> dict[str, Any]:
        return json.loads(self.identity())  # type: ignore[no-any-return]

    @staticmethod
    def from_json(data: dict[str, Any]) -> Config:
        return Config(
            dict(data.get("kwargs") or {}),
            int(data.get("num_threads") or 0),
            data.get("num_warps"),
            data.get("num_stages"),
            dict(data.get("options") or {}),
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
