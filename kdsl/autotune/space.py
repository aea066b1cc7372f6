"""Search spaces: explicit config lists, products of knobs, and compiler-declared knobs.

When ``@kdsl.autotune`` gets no ``configs``, the space is made of the knobs
the compiler declares for this backend, every one of which changes the
compiled kernel:

* every pass of the JIT's pipeline (``kdsl.transforms.default_pipeline``)
  contributes its :meth:`~kdsl.transforms.base.Pass.tunables`: option ``name``
  of pass ``p`` becomes the launch option ``"p.name"``, which the JIT hands to
  that pass for this compilation (``kdsl.runtime.jit.pass_options``);
* the backend's ``tunables()`` (if it has one) lists the launch options its
  lowering reads (``"lower.vector_width"``, ``"lower.dot_block_m"``,
  ``"lower.dot_block_n"``, ``"lower.chunk"``, ``"num_threads"``) as a list of
  products whose union is the backend's part of the space (the vector knobs
  apply to one-work-item groups only, the chunk to wider ones, so one product
  would repeat identical kernels); group sizes stay within the device's limit.

The space is the product of the pass knobs with that union. Every knob's
first value is its default, so config 0 -- the reference the other candidates
must agree with -- is the untuned kernel.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from kdsl.autotune.config import Config

MAX_SPACE = 4096  # a declared space larger than this is cut (in product order) with a warning
log = logging.getLogger("kdsl.autotune")


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


def pipeline_passes() -> list[Any]:
    """The passes the JIT runs on every launch (whose options launches may set)."""
    from kdsl.transforms import default_pipeline

    return list(default_pipeline().passes)


def pass_knobs(passes: Iterable[Any]) -> dict[str, tuple[Any, ...]]:
    """``{"pass.option": choices}`` from the passes' tunables, each option's default first."""
    out: dict[str, tuple[Any, ...]] = {}
    for p in passes:
        defaults = {o.name: o.default for o in getattr(p, "OPTIONS", ())}
        for t in p.tunables():
            if not t.choices:
                continue
            choices = tuple(t.choices)
            if t.name in defaults and defaults[t.name] in choices:
                d = defaults[t.name]
                choices = (d, *(c for c in choices if c != d))
            out[f"{p.name}.{t.name}"] = choices
    return out


def backend_knobs(backend: Any) -> list[dict[str, tuple[Any, ...]]]:
    """The backend's declared products of launch options (``[{}]``: it declares none)."""
    get = getattr(backend, "tunables", None)
    subspaces: list[dict[str, tuple[Any, ...]]] = [dict(s) for s in get()] if callable(get) else []
    return subspaces or [{}]


def tunable_space(backend: Any, passes: Iterable[Any] | None = None) -> list[Config]:
    """The declared space for ``backend`` (see the module docstring). Never empty.

    ``passes`` narrows the pass knobs to those passes (they must be in the
    pipeline: a launch option for a pass the JIT does not run is an error).
    """
    knobs = pass_knobs(pipeline_passes() if passes is None else passes)
    configs: list[Config] = []
    seen: set[str] = set()
    for sub in backend_knobs(backend):
        threads = sub.pop("num_threads", (0,))
        for c in product_space({}, {**knobs, **sub}, threads):
            if c.identity() not in seen:
                seen.add(c.identity())
                configs.append(c)
    if len(configs) > MAX_SPACE:
        log.warning("kdsl.autotune: the declared space has %d configs; trying the first %d", len(configs), MAX_SPACE)
    return configs[:MAX_SPACE]


def coordinates(configs: Sequence[Config]) -> tuple[list[str], list[list[int]]]:
    """Each config as a vector of value *ranks* per knob (for pattern search and models).

    Numbers are ranked numerically (so 32 < 64 < 128 are neighbours); other
    values (strings, booleans, ``None`` for a knob a config does not set) come
    after them in order of first appearance.
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
        nums = sorted(v for v in vals if _is_number(v))
        vals = nums + [v for v in vals if not _is_number(v)]
        ranks[n] = {_hk(v): i for i, v in enumerate(vals)}
    coords = [[ranks[n][_hk(f.get(n))] for n in names] for f in flat]
    return names, coords


def _flatten(c: Config) -> dict[str, Any]:
    out: dict[str, Any] = {f"k:{k}": v for k, v in c.kwargs.items()}
    out.update({f"o:{k}": v for k, v in c.options.items()})
    out["num_threads"] = c.num_threads
    for name, default in _GPU_DEFAULTS.items():  # Triton's GPU fields count where a config changes them
        if getattr(c, name) != default:
            out[name] = getattr(c, name)
    return out


_GPU_DEFAULTS = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _hk(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v
