"""Running pipelines of passes: verification, per-pass IR dumps and pipeline text.

A pipeline is written ``inline,canonicalize,cse`` with options in braces:
``tile{sizes=64,64 swizzle=true}`` or ``tile{sizes=64,64,swizzle=true}``
(options are separated by spaces or commas; a comma-separated piece without
``=`` continues the previous option's list value).

After each pass the module is verified (``verify=False`` turns that off), so
a broken pass is caught right where it broke the IR. IR dumps after each pass
go to stderr (``dump=True`` or env ``KDSL_DUMP=1``) or into a directory
(``dump=path`` or ``KDSL_DUMP=path``) as ``NN-passname.mlir`` files.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from kdsl.ir.core import IRError, ModuleOp
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.transforms.base import Pass, PassError, Tunable
from kdsl.transforms.registry import PASSES

DumpTarget = bool | str | os.PathLike[str] | None

_ENV_DUMP = "KDSL_DUMP"


class PassManager:
    """An ordered list of passes run on a module."""

    def __init__(self, passes: Iterable[Pass] = (), *, verify: bool = True, dump: DumpTarget = None) -> None:
        self.passes: list[Pass] = list(passes)
        self.verify = verify
        self.dump = dump
        self.timings: list[tuple[str, float]] = []

    def add(self, p: Pass) -> PassManager:
        self.passes.append(p)
        return self

    def run(self, module: ModuleOp) -> ModuleOp:
        """Run every pass in order on ``module`` (in place); returns it for chaining."""
        target = _dump_target(self.dump)
        self.timings = []
        if self.verify:
            _verify(module, "the input of the pipeline")
        _dump(target, 0, "input", module)
        for i, p in enumerate(self.passes, 1):
            start = time.perf_counter()
            try:
                p.run(module)
            except IRError as e:
                raise PassError(f"pass '{p.name}' failed: {e}") from e
            self.timings.append((p.name, time.perf_counter() - start))
            _dump(target, i, p.name, module)
            if self.verify:
                _verify(module, f"pass '{p.name}'")
        return module

    def pipeline_text(self) -> str:
        return ",".join(p.pipeline_text() for p in self.passes)

    def __str__(self) -> str:
        return self.pipeline_text()

    def __repr__(self) -> str:
        return f"PassManager({self.pipeline_text()!r})"


def _verify(module: ModuleOp, after: str) -> None:
    try:
        verify(module)
    except IRError as e:
        where = f" at {e.loc}" if e.loc.known else ""
        raise PassError(f"IR verification failed after {after}{where}: {e.message}") from e


def _dump_target(dump: DumpTarget) -> Path | bool:
    """False (no dump), True (stderr) or a directory."""
    if dump is None:
        env = os.environ.get(_ENV_DUMP, "").strip()
        if env.lower() in ("", "0", "false", "no", "off"):
            return False
        if env.lower() in ("1", "true", "yes", "on", "stderr"):
            return True
        dump = env
    if isinstance(dump, bool):
        return dump
    return Path(dump)


def _dump(target: Path | bool, index: int, name: str, module: ModuleOp) -> None:
    if target is False:
        return
    text = print_op(module)
    if target is True:
        label = "input" if index == 0 else f"after {name}"
        sys.stderr.write(f"// ----- IR dump {label} ----- //\n{text}\n")
        return
    assert isinstance(target, Path)
    target.mkdir(parents=True, exist_ok=True)
    (target / f"{index:02d}-{name}.mlir").write_text(text + "\n")


# --------------------------------------------------------------------------- pipeline text
def parse_pipeline(
    text: str,
    *,
    verify: bool = True,
    dump: DumpTarget = None,
    registry: Mapping[str, type[Pass]] | None = None,
) -> PassManager:
    """Build a :class:`PassManager` from ``"inline,canonicalize,tile{sizes=64,64}"``.

    ``registry`` replaces the global :data:`PASSES` (tests, experiments).
    """
    known = PASSES if registry is None else registry
    passes = [_make_pass(known, name, opts) for name, opts in _split_pipeline(text)]
    return PassManager(passes, verify=verify, dump=dump)


def _make_pass(known: Mapping[str, type[Pass]], name: str, options: list[tuple[str, str]]) -> Pass:
    cls = known.get(name)
    if cls is None:
        raise PassError(f"unknown pass '{name}' (known passes: {', '.join(sorted(known))})")
    return cls.from_text(options)


def _split_pipeline(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Split pipeline text into (pass name, [(option, value text)]) in order."""
    out: list[tuple[str, list[tuple[str, str]]]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\n,":
            i += 1
        if i >= n:
            break
        start = i
        while i < n and text[i] not in "{}, \t\n":
            i += 1
        name = text[start:i]
        if not name:
            raise PassError(f"pipeline: expected a pass name at column {i + 1} of {text!r}")
        _check_name(name, text)
        options: list[tuple[str, str]] = []
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == "{":
            close = text.find("}", i)
            if close < 0:
                raise PassError(f"pipeline: unclosed '{{' after pass '{name}' in {text!r}")
            options = _split_options(name, text[i + 1 : close])
            i = close + 1
        elif i < n and text[i] == "}":
            raise PassError(f"pipeline: unexpected '}}' at column {i + 1} of {text!r}")
        out.append((name, options))
        while i < n and text[i] in " \t\n":
            i += 1
        if i < n and text[i] != ",":
            raise PassError(f"pipeline: expected ',' after pass '{name}' at column {i + 1} of {text!r}")
    return out


def _check_name(name: str, text: str) -> None:
    if not all(c.isalnum() or c in "-_" for c in name):
        raise PassError(f"pipeline: invalid pass name {name!r} in {text!r}")


def _split_options(pass_name: str, body: str) -> list[tuple[str, str]]:
    """``sizes=64,64 swizzle=true`` -> [("sizes", "64,64"), ("swizzle", "true")]."""
    pairs: list[list[str]] = []
    for word in body.split():
        for piece in word.split(","):
            if "=" in piece:
                key, _, value = piece.partition("=")
                if not key:
                    raise PassError(f"pass '{pass_name}': option without a name in {{{body}}}")
                pairs.append([key.strip(), value])
            elif pairs:
                pairs[-1][1] += "," + piece
            elif piece:
                raise PassError(f"pass '{pass_name}': expected key=value in {{{body}}}, got {piece!r}")
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise PassError(f"pass '{pass_name}': option '{key}' given twice")
        seen.add(key)
    return [(k, v) for k, v in pairs]


# The tile-level optimisations every launch gets after the cleanup. Each is
# exact (see its module). ``fuse`` is left out because it reorders a float
# sum (within tile.dot's unspecified order, but visible bit-wise); ``licm``
# (exact too) waits until the lowering's golden files are regenerated for it
# (it changes tests/lowering/golden/mma_* text): add it here in front.
TILE_PASSES = "mask-elim,loop-split,unroll"
CLEANUP = "inline,canonicalize,cse,dce"


class FixedKnobs(Pass):
    """A pass run with fixed options: it reports no :class:`Tunable`.

    The JIT runs :func:`default_pipeline` without launch options, so a knob
    the autotuner varied there would change nothing; wrapping keeps the
    autotuner's declared space (``kdsl.autotune.space``) honest.
    """

    def __init__(self, inner: Pass) -> None:
        self.inner = inner
        self.options = inner.options
        self.name = inner.name  # type: ignore[misc]  # the wrapped pass's name, for dumps and timings

    def run(self, module: ModuleOp) -> None:
        self.inner.run(module)

    def tunables(self) -> list[Tunable]:
        return []

    def pipeline_text(self) -> str:
        return self.inner.pipeline_text()


def default_pipeline(*, verify: bool = True, dump: DumpTarget = None, optimize: bool = True) -> PassManager:
    """The pipeline run on every kernel.

    ``inline,canonicalize,cse`` then the tile passes :data:`TILE_PASSES`
    (``mask-elim, loop-split, unroll``; knobs fixed at their defaults) and a final
    ``canonicalize,cse,dce``. ``optimize=False`` gives the cleanup alone:
    ``inline,canonicalize,cse,dce``.
    """
    if not optimize:
        return parse_pipeline(CLEANUP, verify=verify, dump=dump)
    pm = parse_pipeline(f"inline,canonicalize,cse,{TILE_PASSES},canonicalize,cse,dce", verify=verify, dump=dump)
    pm.passes = [FixedKnobs(p) if p.tunables() else p for p in pm.passes]
    return pm
