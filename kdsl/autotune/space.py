"""Search spaces: explicit config lists, products of knobs, and pass-declared knobs.

When ``@kdsl.autotune`` gets no ``configs``, the space is the product of the
knobs the compiler declares for this kernel on this backend: every pass of the
pipeline contributes its :meth:`~kdsl.transforms.base.Pass.tunables` (option
``name`` of pass ``p`` becomes the launch option ``"p.name"``), plus the
work-group size ``num_threads`` where the device has one (powers of two up to
its maximum; the interpreter and host backends have none).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

from kdsl.autotune.config import Config

MAX_SPACE = 4096  # a declared space larger than this is cut (in product order) with a warning


def product_space(
    kwargs: dict[str, Sequence[Any]] | None = None,
    options: dict[str, Sequence[Any]] | None = None,
    num_threads: Sequence[int] = (0,),
) -> list[Config]:
    """Every combination of the given meta-parameter, option and num_threads values, in order."""
    kw = dict(kwargs or {})
    op = dict(options or {})
    names = list(kw) + list(op)
    axes = [list(kw[n]) for n in kw] + [list(op[n]) for n in op] + [list(num_threads)]
    out: list[Config] = []
    for combo in itertools.product(*axes):
        k = dict(zip(names[: len(kw)], combo[: len(kw)]))
        o = dict(zip(names[len(kw):], combo[len(kw): len(names)]))
        out.append(Config(k, num_threads=int(combo[-1]), options=o))
    return out


def pipeline_passes(backend: Any) -> list[Any]:
    """The passes a launch on ``backend`` runs: ``backend.pipeline()`` if it has one, else the default."""
    get = getattr(backend, "pipeline", None)
    pm: Any = get() if callable(get) else None
    if pm is None:
        from kdsl.transforms import default_pipeline

        pm = default_pipeline()
    passes: list[Any] = list(getattr(pm, "passes", pm))
    return passes


def thread_choices(backend: Any) -> list[int]:
    """Work-group sizes worth trying on ``backend`` (``[0]``: the backend's default only)."""
    from kdsl.runtime.device_array import device_of

    dev = device_of(backend)
    limit = 0
    for attr in ("max_work_group_size", "max_num_threads", "max_threads"):
        v = getattr(dev, attr, None)
        if isinstance(v, int) and v > 0:
            limit = v
            break
    if limit <= 1:
        return [0]
    out, n = [0], 1
    while n <= min(limit, 1024):
        out.append(n)
        n *= 2
    return out


def tunable_space(backend: Any, passes: Iterable[Any] | None = None) -> list[Config]:
    """The declared space for ``backend`` (see the module docstring). Never empty."""
    plist = pipeline_passes(backend) if passes is None else list(passes)
    options: dict[str, Sequence[Any]] = {}
    for p in plist:
        for t in p.tunables():
            if t.choices:
                options[f"{p.name}.{t.name}"] = tuple(t.choices)
    configs = product_space({}, options, thread_choices(backend))
    return configs[:MAX_SPACE]


def coordinates(configs: Sequence[Config]) -> tuple[list[str], list[list[int]]]:
    """Each config as a vector of value *ranks* per knob (for pattern search and models).

    Knob values are ranked numerically when they are all numbers (so 32 < 64 <
    128 are neighbours), else by first appearance.
    """
    flat = [_flatten(c) for c in configs]
    names: list[str] = []
    for f in flat:
        for n in f:
            if n not in names:
                names.append(n)
    ranks: dict[str, dict[Any, int]] = {}
    for n in names:
        vals: list[Any] = []
        for f in flat:
            v = f.get(n)
            if v not in vals:
                vals.append(v)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            vals = sorted(vals)
        ranks[n] = {_hk(v): i for i, v in enumerate(vals)}
    coords = [[ranks[n][_hk(f.get(n))] for n in names] for f in flat]
    return names, coords


def _flatten(c: Config) -> dict[str, Any]:
    out: dict[str, Any] = {f"k:{k}": v for k, v in c.kwargs.items()}
    out.update({f"o:{k}": v for k, v in c.options.items()})
    out["num_threads"] = c.num_threads
    if c.num_warps is not None:
        out["num_warps"] = c.num_warps
    if c.num_stages is not None:
        out["num_stages"] = c.num_stages
    return out


def _hk(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v
