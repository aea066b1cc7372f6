"""The :class:`Pass` base class, typed pass options and autotuning knobs.

A pass is a small class with a kebab-case ``name``, a tuple of typed
``OPTIONS`` and a ``run(module)`` method that rewrites the module in place.
Options arrive either as Python keyword arguments (``Tile(sizes=[64, 64])``)
or as pipeline text (``tile{sizes=64,64}``); both go through the same
validation so a typo fails loudly with the pass and option named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from kdsl.errors import KdslError
from kdsl.ir.core import ModuleOp


class PassError(KdslError, ValueError):
    """A pipeline cannot be built (unknown pass, bad option) or a pass failed."""


_BOOL_TEXT = {"true": True, "1": True, "false": False, "0": False}


@dataclass(frozen=True)
class Option:
    """A typed pass option. ``kind`` is int, float, bool or str; ``is_list``
    makes the value a tuple of ``kind`` (written ``a,b,c`` in pipeline text)."""

    name: str
    kind: type
    default: Any
    help: str = ""
    is_list: bool = False

    def parse_text(self, pass_name: str, text: str) -> Any:
        """Convert the pipeline text of this option to its typed value."""
        if self.is_list:
            items = [t.strip() for t in text.split(",")] if text.strip() else []
            return tuple(self._scalar_from_text(pass_name, t) for t in items)
        return self._scalar_from_text(pass_name, text.strip())

    def check(self, pass_name: str, value: Any) -> Any:
        """Validate a Python value for this option; returns the normalised value."""
        if self.is_list:
            if not isinstance(value, (list, tuple)):
                raise PassError(f"pass '{pass_name}': option '{self.name}' expects a list of {self.kind.__name__}")
            return tuple(self._scalar_check(pass_name, v) for v in value)
        return self._scalar_check(pass_name, value)

    def _scalar_check(self, pass_name: str, v: Any) -> Any:
        ok = isinstance(v, self.kind) and not (self.kind is int and isinstance(v, bool))
        if self.kind is float and isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if not ok:
            raise PassError(f"pass '{pass_name}': option '{self.name}' expects {self.kind.__name__}, got {v!r}")
        return v

    def _scalar_from_text(self, pass_name: str, t: str) -> Any:
        try:
            if self.kind is bool:
                return _BOOL_TEXT[t.lower()]
            if self.kind is int:
                return int(t, 0)
            if self.kind is float:
                return float(t)
            return t
        except (KeyError, ValueError):
            raise PassError(
                f"pass '{pass_name}': option '{self.name}' expects {self.kind.__name__}, got {t!r}"
            ) from None

    def to_text(self, value: Any) -> str:
        def one(v: Any) -> str:
            return ("true" if v else "false") if isinstance(v, bool) else str(v)

        return ",".join(one(v) for v in value) if self.is_list else one(value)


@dataclass(frozen=True)
class Tunable:
    """A knob the autotuner may set: option ``name`` of a pass and its candidate values."""

    name: str
    choices: tuple[Any, ...]
    help: str = ""


class Pass:
    """Base class of every pass. Subclasses set ``name``, ``OPTIONS`` and implement ``run``."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    OPTIONS: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        known = {o.name: o for o in self.OPTIONS}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise PassError(f"pass '{self.name}' has no option '{unknown[0]}'" + _known_text(known))
        self.options: dict[str, Any] = {o.name: o.default for o in self.OPTIONS}
        for key, value in options.items():
            self.options[key] = known[key].check(self.name, value)

    @classmethod
    def from_text(cls, options: Sequence[tuple[str, str]]) -> Pass:
        """Build the pass from ``key=value`` pairs of pipeline text."""
        known = {o.name: o for o in cls.OPTIONS}
        typed: dict[str, Any] = {}
        for key, text in options:
            opt = known.get(key)
            if opt is None:
                raise PassError(f"pass '{cls.name}' has no option '{key}'" + _known_text(known))
            typed[key] = opt.parse_text(cls.name, text)
        return cls(**typed)

    def run(self, module: ModuleOp) -> None:
        raise NotImplementedError

    def tunables(self) -> list[Tunable]:
        """Knobs for the autotuner (none for the generic cleanup passes)."""
        return []

    def pipeline_text(self) -> str:
        """This pass in pipeline syntax; only options differing from defaults are shown."""
        parts = [
            f"{o.name}={o.to_text(self.options[o.name])}" for o in self.OPTIONS if self.options[o.name] != o.default
        ]
        return self.name + ("{" + ",".join(parts) + "}" if parts else "")

    def __repr__(self) -> str:
        return f"<pass {self.pipeline_text()}>"


def _known_text(known: dict[str, Option]) -> str:
    return f" (options: {', '.join(known)})" if known else " (it takes no options)"
