"""Run generated programs on every backend (and interpreter variants) and compare.

The reference is the ``interpreter`` backend launched the normal way. Besides
every other backend ``kdsl.available_backends()`` lists, two interpreter
*variants* give a differential test even on a machine with no device backend:

* ``interpreter:noopt`` -- the frontend's IR with only ``inline`` (and the ``fp8-to-bytes``
  legalisation every backend needs) run, so any
  difference is a bug in a pass (canonicalize's constant folding must agree
  with the op docstrings bit for bit);
* ``interpreter:roundtrip`` -- the optimised IR printed and parsed back before
  running: a difference is a printer/parser bug.

Integers are compared exactly, floats with the program's tolerance (NaN equals
NaN, infinities must match).
"""

from __future__ import annotations

import atexit
import importlib.util
import shutil
import sys
import tempfile
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import kdsl
from kdsl.errors import CompilationError, KdslError

from .kernelgen import Program

VARIANTS = ("interpreter:noopt", "interpreter:roundtrip")
_TMP = Path(tempfile.mkdtemp(prefix="kdsl-difftest-"))  # generated modules (removed at exit)
atexit.register(shutil.rmtree, _TMP, True)


def targets(include_variants: bool = True) -> list[str]:
    """Everything a program is checked on, apart from the reference."""
    out = [b for b in kdsl.available_backends() if b != "interpreter"]
    return out + list(VARIANTS) if include_variants else out


def load_kernel(prog: Program, directory: Path | None = None) -> Any:
    """Write the program's source to a module file and import its kernel (real file: locations work)."""
    d = directory or _TMP
    path = d / f"{prog.kernel_name}.py"
    path.write_text(prog.source)
    modname = f"kdsl_difftest_{prog.kernel_name}"
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return getattr(module, prog.kernel_name)


def _run_variant(kernel: Any, prog: Program, variant: str) -> list[Any]:
    from kdsl.interpreter import InterpreterBackend
    from kdsl.ir.parser import parse_module
    from kdsl.ir.printer import print_op
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.transforms import parse_pipeline

    args = prog.args()
    specs = kernel.specialization(args, dict(prog.meta))
    optimize = variant.endswith("roundtrip")
    module, entry = kernel.compile_module(specs, optimize=optimize)
    if optimize:
        module = parse_module(print_op(module), "<roundtrip>")
    else:
        parse_pipeline("inline,fp8-to-bytes").run(module)  # fp8-to-bytes: a legalisation, not an optimisation
    compiled = InterpreterBackend().compile(module, entry, LaunchOptions())
    runtime = [a for a, s in zip(args, specs) if not s.is_const]
    grid = (*prog.grid, 1, 1)[:3]
    compiled.launch((int(grid[0]), int(grid[1]), int(grid[2])), runtime)
    return args


def run(kernel: Any, prog: Program, target: str) -> dict[str, np.ndarray]:
    """The program's outputs after one launch on ``target`` (a backend name or a variant)."""
    if target in VARIANTS:
        args = _run_variant(kernel, prog, target)
    else:
        args = prog.args()
        with kdsl.backend(target):
            kernel[prog.grid](*args, **prog.meta)
    named = dict(zip(prog.arg_order, args))
    return {name: np.asarray(named[name]) for name in [*prog.outputs, *prog.scales.values()]}


def compare(ref: np.ndarray, got: np.ndarray, rtol: float, scale: np.ndarray | None = None) -> str | None:
    """None if equal (ints exactly, floats within rtol), else a short description.

    The absolute tolerance is ``rtol * (1 + s)`` with ``s`` the largest finite reference value,
    or, elementwise, the given ``scale`` (e.g. the sum of the magnitudes a sum was made of)."""
    if ref.shape != got.shape or ref.dtype != got.dtype:
        return f"shape/dtype {got.shape}/{got.dtype} != {ref.shape}/{ref.dtype}"
    if ref.dtype.kind in "iub":
        bad = np.flatnonzero(ref.ravel() != got.ravel())
    else:
        r, g = ref.ravel(), got.ravel()
        with np.errstate(invalid="ignore", over="ignore"):
            if scale is not None:
                m = np.abs(scale.ravel())
                atol = np.where(np.isfinite(m), rtol * (1.0 + m), np.inf)
                close = np.abs(g - r) <= atol + rtol * np.abs(r)
                close |= np.isnan(g) & np.isnan(r)
            else:
                close = np.isclose(g, r, rtol=rtol, atol=rtol * (1.0 + scale_of(r)), equal_nan=True)
        close |= r == g  # infinities of the same sign
        bad = np.flatnonzero(~close)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return f"{bad.size} elements differ, first at [{i}]: expected {ref.ravel()[i]!r}, got {got.ravel()[i]!r}"


def scale_of(r: np.ndarray) -> float:
    finite = np.isfinite(r)
    return float(np.max(np.abs(r[finite]))) if finite.any() else 0.0


@dataclass
class Outcome:
    """The result of one program on every target."""

    seed: int
    status: str  # "ok", "rejected" (kdsl refused the program), "mismatch", "error"
    detail: str = ""
    per_target: dict[str, str] = field(default_factory=dict)  # target -> "ok" | problem


def check(prog: Program, target_list: Iterable[str], directory: Path | None = None) -> Outcome:
    """Run ``prog`` on the interpreter and on every target; classify the result."""
    try:
        kernel = load_kernel(prog, directory)
        ref = run(kernel, prog, "interpreter")
    except CompilationError as exc:
        return Outcome(prog.seed, "rejected", exc.message)
    except KdslError as exc:
        return Outcome(prog.seed, "error", f"reference run: {type(exc).__name__}: {exc}")
    except Exception as exc:
        return Outcome(
            prog.seed,
            "error",
            f"reference run: internal error {type(exc).__name__}: {exc}\n" + traceback.format_exc(limit=-4),
        )
    out = Outcome(prog.seed, "ok")
    for target in target_list:
        try:
            got = run(kernel, prog, target)
        except CompilationError as exc:
            out.per_target[target] = f"CompilationError: {exc}"[:500]
            if "not available on the" not in exc.message:  # anything but a documented backend limitation
                out.status = "error"
            continue
        except Exception as exc:
            out.per_target[target] = f"{type(exc).__name__}: {exc}"[:500]
            out.status = "error"
            continue
        problems = []
        for name in prog.outputs:
            scale = ref[prog.scales[name]] if name in prog.scales else None
            msg = compare(ref[name], got[name], prog.rtol, scale)
            if msg is not None:
                problems.append(f"{name}: {msg}")
        out.per_target[target] = "; ".join(problems) if problems else "ok"
        if problems and out.status == "ok":
            out.status = "mismatch"
    return out
