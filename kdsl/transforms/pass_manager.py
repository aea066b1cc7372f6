"""Running pipelines of passes: verification, per-pass IR dumps and pipeline text.

A pipeline is written ``inline,canonicalize,cse`` with options in braces:
``tile{sizes=64,64 swizzle=true}`` or ``tile{sizes=64,64,swizzle=true}``
(options are separated by spaces or commas; a comma-separated piece without
``=`` continues the previous option's list value).

After each pass the module is verified (``verify=False`` turns that off), so
a broken pass is caught right where it broke the IR. ``verify_each=False``
verifies only the pipeline's input and final output: the JIT runs the default
pipeline that way (each verification costs about as much as a pass, and
verifying every pass roughly doubled a compile), unless
``KDSL_VERIFY_EACH_PASS=1`` or an IR dump is requested. IR dumps after each pass
go to stderr (``dump=True`` or env ``KDSL_DUMP=1``) or into a directory
(``dump=path`` or ``KDSL_DUMP=path``) as ``NN-passname.mlir`` files.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kdsl.ir.core import IRError, ModuleOp
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.transforms.base import Pass, PassError, _known_text
from kdsl.transforms.registry import PASSES

DumpTarget = bool | str | os.PathLike[str] | None

_ENV_DUMP = "KDSL_DUMP"
_ENV_VERIFY_EACH = "KDSL_VERIFY_EACH_PASS"


def verify_each_from_env() -> bool:
    """``KDSL_VERIFY_EACH_PASS=1``: the JIT verifies after every pass (finds the pass that broke the IR)."""
    return os.environ.get(_ENV_VERIFY_EACH, "").strip().lower() not in ("", "0", "false", "no", "off")


class PassManager:
    """An ordered list of passes run on a module."""

    def __init__(
        self, passes: Iterable[Pass] = (), *, verify: bool = True, verify_each: bool = True, dump: DumpTarget = None
    ) -> None:
        self.passes: list[Pass] = list(passes)
        self.verify = verify
        self.verify_each = verify_each
        self.dump = dump
        self.timings: list[tuple[str, float]] = []

    def add(self, p: Pass) -> PassManager:
        self.passes.append(p)
        return self

    def run(self, module: ModuleOp, *, input_verified: bool = False) -> ModuleOp:
        """Run every pass in order on ``module`` (in place); returns it for chaining.

        ``input_verified=True``: the caller has just verified ``module`` (the
        JIT does, to blame the frontend), so the pipeline does not again.
        """
        target = _dump_target(self.dump)
        self.timings = []
        if self.verify and not input_verified:
            _verify(module, "the input of the pipeline")
        _dump(target, 0, "input", module)
        each = self.verify_each or target is not False
        last = len(self.passes)
        for i, p in enumerate(self.passes, 1):
            start = time.perf_counter()
            try:
                p.run(module)
            except IRError as e:
                raise PassError(f"pass '{p.name}' failed: {e}") from e
            self.timings.append((p.name, time.perf_counter() - start))
            _dump(target, i, p.name, module)
            if self.verify and each:
                _verify(module, f"pass '{p.name}'")
            elif self.verify and i == last:
                _verify(module, f"the pipeline '{self.pipeline_text()}' (set {_ENV_VERIFY_EACH}=1 to find the pass)")
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
TILE_PASSES = "wrap-version,ptr-offsets,mask-elim,loop-split,unroll"
CLEANUP = "inline,fp8-to-bytes,canonicalize,cse,dce"


def default_pipeline(
    *,
    verify: bool = True,
    verify_each: bool = True,
    dump: DumpTarget = None,
    optimize: bool = True,
    options: Mapping[str, Any] | None = None,
) -> PassManager:
    """The pipeline run on every kernel.

    ``inline,fp8-to-bytes,canonicalize,cse`` then the tile passes :data:`TILE_PASSES`
    (``wrap-version, ptr-offsets, mask-elim, loop-split, unroll``) and a final
    ``canonicalize,cse,dce``. ``optimize=False`` gives the cleanup alone:
    ``inline,fp8-to-bytes,canonicalize,cse,dce``. ``verify_each``: see :class:`PassManager`.

    ``options`` configures passes for one compilation: ``{"unroll.max-trip": 0}``
    sets option ``max-trip`` of every ``unroll`` in the pipeline. The JIT passes
    a launch's dotted launch options here (that is how the autotuner's pass
    knobs reach the compiler); an unknown pass or option or a value of the
    wrong type is a :class:`PassError` naming the option.
    """
    text = CLEANUP if not optimize else f"inline,fp8-to-bytes,canonicalize,cse,{TILE_PASSES},canonicalize,cse,dce"
    pm = parse_pipeline(text, verify=verify, dump=dump)
    pm.verify_each = verify_each
    for key, value in (options or {}).items():
        _configure(pm, key, value)
    return pm


def _configure(pm: PassManager, key: str, value: Any) -> None:
    """Set ``"pass.option"`` = ``value`` on every instance of that pass in ``pm``."""
    pass_name, _, opt_name = key.partition(".")
    targets = [p for p in pm.passes if p.name == pass_name]
    if not targets:
        names = ", ".join(dict.fromkeys(p.name for p in pm.passes))
        raise PassError(f"option '{key}': no pass '{pass_name}' in the pipeline ({names})")
    known = {o.name: o for o in targets[0].OPTIONS}
    opt = known.get(opt_name)
    if opt is None:
        raise PassError(f"option '{key}': pass '{pass_name}' has no option '{opt_name}'" + _known_text(known))
    checked = opt.check(pass_name, value)
    for p in targets:
        p.options[opt_name] = checked
