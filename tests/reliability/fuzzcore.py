"""Frontend and IR fuzzing: mutate real kernels and IR, feed them to kdsl, classify.

The rule being checked (kdsl/errors.py): every failure a user can cause is a
:class:`kdsl.errors.KdslError`; a compile error carries a known location.
Anything else escaping kdsl -- ``AttributeError``, ``AssertionError``, an
``IRError`` that is not a ``KdslError``, a failed print/parse round trip -- is
an *internal error*, i.e. a kdsl bug.

Seeds: every ``@kdsl.kernel`` of the semantic suite, the tutorials and the
demo (with their module-level constexpr globals), and the IR files of
``tests/ir`` and ``tests/frontend/golden`` plus the IR of the compiled seed
kernels. Mutations work on tokens and lines: delete, duplicate, swap, change
literals, operators, names and indentation, insert odd statements.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import itertools
import linecache
import random
import re
import signal
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCE_SEEDS = [
    *sorted((ROOT / "tests" / "semantic").glob("test_*.py")),
    *sorted((ROOT / "tutorials" / "src").glob("*.py")),
    ROOT / "kdsl" / "cli" / "demo.py",
]
IR_SEEDS = [
    *sorted((ROOT / "tests" / "ir").glob("roundtrip_*.mlir")),
    ROOT / "tests" / "ir" / "invalid.mlir",
    *sorted((ROOT / "tests" / "frontend" / "golden").glob("*.mlir")),
]
HEADER = "import kdsl\nimport kdsl.language as kl\nimport kdsl.language as tl\nimport numpy as np\n"

INTERESTING_NUMBERS = [
    "0",
    "1",
    "-1",
    "2",
    "3",
    "16",
    "17",
    "1024",
    "2**31",
    "2**31 - 1",
    "2**63",
    "-2**63",
    "1.5",
    "0.0",
    "-0.0",
    "1e308",
    "float('nan')",
    "None",
    "True",
    "(1, 2)",
    "'s'",
    "10**30",
]
OPERATORS = [
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "and",
    "or",
    "not",
    "@",
    "is",
    "in",
]
NAMES = [
    "kl",
    "x",
    "i",
    "None",
    "True",
    "range",
    "kl.static_range",
    "kl.range",
    "kl.sum",
    "kl.dot",
    "kl.arange",
    "kl.program_id",
    "kl.where",
    "kl.load",
    "kl.store",
    "kl.constexpr",
    "kl.float32",
    "kl.int64",
    "kl.reduce",
    "kl.cumsum",
    "kl.atomic_add",
    "kl.full",
    "kl.zeros",
    "kl.reshape",
    "kl.trans",
    "kl.static_assert",
    "len",
    "print",
    "min",
    "max",
    "abs",
    "float",
    "int",
    "kl.tensor",
    "kdsl",
    "np",
    "kl.max",
    "kl.rand",
    "kl.exp",
]
STATEMENTS = [
    "return",
    "return 1",
    "return x, x",
    "break",
    "continue",
    "pass",
    "x = x",
    "del x",
    "global g",
    "nonlocal q",
    "assert False",
    "assert x",
    "kl.static_assert(False)",
    "yield 1",
    "lambda: 1",
    "with x: pass",
    "try:\n    pass\nexcept Exception:\n    pass",
    "import os",
    "print(1)",
    "a, b = 1",
    "a[0] = 1",
    "x.y = 1",
    "x += 1",
    "x @= x",
    "[i for i in range(3)]",
    "f'{x}'",
    "while True:\n    pass",
    "for q in range(3):\n    break",
    "if x:\n    return 1",
    "kl.static_print(1)",
    "x = kl.zeros((0,), kl.float32)",
    "x = kl.arange(0, 3)",
    "x = kl.arange(5, 1)",
    "x = kl.full((2**40,), 0, kl.int8)",
    "raise ValueError()",
    "x: int = 1",
    "async def f():\n    pass",
    "class C:\n    pass",
    "x = *x,",
    "x = x if x else x",
    "x = {}",
    "x = [1]",
    "x = (yield)",
    "x = x[None, :, None, None]",
    "x = x.to(kl.pointer_type(kl.float32))",
    "x = kl.reshape(x, (3, 5))",
    "x = kl.dot(x, x)",
    "x = kl.reduce(x, 0, None)",
]


class FuzzTimeout(BaseException):
    """An input took longer than its time budget (raised from SIGALRM)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise FuzzTimeout in the main thread after ``seconds`` (no-op elsewhere)."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise FuzzTimeout()

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class SourceSeed:
    """A module text holding one or more kernels, and the kernel to compile."""

    origin: str
    module: str  # complete module source
    kernel: str  # the kernel function's name
    first: int  # 0-based line range of that kernel's definition in ``module``
    last: int


def _is_kernel(fn: ast.FunctionDef) -> bool:
    return any("kernel" in ast.unparse(d) or "jit" in ast.unparse(d) for d in fn.decorator_list)


def source_seeds() -> list[SourceSeed]:
    """One seed per kernel; its module also holds the file's other kernels and constexpr globals."""
    out: list[SourceSeed] = []
    for path in SOURCE_SEEDS:
        if not path.exists():
            continue
        text = path.read_text()
        tree = ast.parse(text)
        keep: list[str] = []
        kernels: list[tuple[str, int]] = []
        for node in tree.body:
            seg = ast.get_source_segment(text, node) or ""
            if isinstance(node, ast.FunctionDef) and _is_kernel(node):
                lines = text.splitlines()[node.lineno - 1 - len(node.decorator_list) : node.end_lineno]
                kernels.append((node.name, len(keep)))
                keep.append("\n".join(lines))
            elif isinstance(node, ast.Assign) and "constexpr" in seg:
                keep.append(seg)
        for name, index in kernels:
            before = HEADER + "".join(k + "\n\n" for k in keep[:index])
            first = before.count("\n")
            last = first + keep[index].count("\n")
            module = before + "".join(k + "\n\n" for k in keep[index:])
            out.append(SourceSeed(f"{path.relative_to(ROOT)}::{name}", module, name, first, last))
    return out


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\*\*|//|<<|>>|<=|>=|==|!=|\S")


SOURCE_MUTATIONS = (
    "tok_del",
    "tok_dup",
    "tok_swap",
    "number",
    "operator",
    "name",
    "line_del",
    "line_dup",
    "line_swap",
    "indent",
    "insert",
    "tok_del",
    "number",
    "name",
    "operator",
)


def mutate_tokens(line: str, kind: str, rng: random.Random) -> str:
    """One token-level mutation of ``line`` (unchanged if it has no token)."""
    toks = list(_TOKEN.finditer(line))
    if not toks:
        return line
    t = rng.choice(toks)
    a, b = t.span()
    if kind == "tok_del":
        return line[:a] + line[b:]
    if kind == "tok_dup":
        return line[:b] + " " + t.group() + line[b:]
    if kind == "tok_swap" and len(toks) > 1:
        j = toks.index(t)
        u = toks[j - 1] if j else toks[1]
        (x, y), (p, q) = sorted([t.span(), u.span()])
        return line[:x] + line[p:q] + line[y:p] + line[x:y] + line[q:]
    if kind == "number":
        m = rng.choice([m for m in toks if m.group()[0].isdigit()] or toks)
        return line[: m.start()] + rng.choice(INTERESTING_NUMBERS) + line[m.end() :]
    if kind == "operator":
        m = rng.choice([m for m in toks if m.group() in OPERATORS] or toks)
        return line[: m.start()] + f" {rng.choice(OPERATORS)} " + line[m.end() :]
    names = [m for m in toks if m.group()[0].isalpha() or m.group()[0] == "_"] or toks
    m = rng.choice(names)
    return line[: m.start()] + rng.choice(NAMES + [n.group() for n in names]) + line[m.end() :]


def mutate_source(seed: SourceSeed, rng: random.Random, rounds: int | None = None) -> str:
    """1-3 random token/line mutations inside the seed kernel's lines."""
    lines = seed.module.splitlines()
    lo, hi = seed.first, min(seed.last, len(lines) - 1)
    for _ in range(rounds or rng.randint(1, 3)):
        hi = min(hi, len(lines) - 1)
        if hi < lo:
            break
        i = rng.randint(lo, hi)
        kind = rng.choice(SOURCE_MUTATIONS)
        if not kind.startswith("line") and kind not in ("indent", "insert"):
            lines[i] = mutate_tokens(lines[i], kind, rng)
        elif kind == "line_del" and hi > lo + 1:
            del lines[i]
            hi -= 1
        elif kind == "line_dup":
            lines.insert(i, lines[i])
            hi += 1
        elif kind == "line_swap":
            j = rng.randint(lo, hi)
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "indent":
            line = lines[i]
            lines[i] = ("    " + line) if rng.random() < 0.5 or not line.startswith("    ") else line[4:]
        elif kind == "insert":
            indent = re.match(r"\s*", lines[min(i + 1, hi)]).group()  # type: ignore[union-attr]
            stmt = rng.choice(STATEMENTS).replace("\n", "\n" + indent)
            lines.insert(i + 1, indent + stmt)
            hi += stmt.count("\n") + 1
    return "\n".join(lines) + "\n"


def guess_args(kernel: Any) -> tuple[list[Any], dict[str, Any]]:
    """Plausible compile arguments from parameter names: pointers are ``*f32``, scalars ``i32``,
    constexprs 16 (a power of two most kernels accept)."""
    args: list[Any] = []
    meta: dict[str, Any] = {}
    for name in kernel.arg_names:
        low = name.lower()
        if name in kernel.constexpr_names:
            meta[name] = 16 if not any(w in low for w in ("act", "op", "mode", "dtype", "kind")) else None
            continue
        if "ptr" in low or low in ("x", "y", "z", "out", "a", "b", "c", "src", "dst", "input", "output", "p"):
            args.append("*f32")
        elif "seed" in low or "stride" in low or low.startswith("n") or "size" in low:
            args.append("i32")
        else:
            args.append("f32" if "eps" in low or "scale" in low or low == "p" else "i32")
    return args, meta


@dataclass
class Result:
    category: str  # compiled | rejected | unlocated | invalid-python | timeout | internal
    detail: str = ""
    signature: str = ""  # dedup key of an internal error


_COUNTER = itertools.count()


def _import(text: str, tmp: Path) -> Any:
    n = next(_COUNTER)
    path = tmp / f"fuzzmod_{n}.py"
    path.write_text(text)
    name = f"kdsl_fuzz_{n}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def internal(exc: BaseException) -> Result:
    tb = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in tb if "/kdsl/" in f.filename.replace("\\", "/")]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
    return Result("internal", text[-3000:], f"{type(exc).__name__} at {where}")


def check_source(text: str, kernel_name: str, tmp: Path, timeout: float = 10.0) -> Result:
    """Compile (with passes) the kernel ``kernel_name`` of module ``text``, then round-trip its IR."""
    import kdsl
    from kdsl.errors import CompilationError, KdslError
    from kdsl.ir.parser import parse_module
    from kdsl.ir.printer import print_op

    try:
        with time_limit(timeout):
            module = _import(text, tmp)
    except FuzzTimeout:
        return Result("timeout", "import")
    except BaseException as exc:  # the mutant is not valid Python (or raises at import)
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Result("invalid-python", f"{type(exc).__name__}: {exc}"[:200])
    kernel = getattr(module, kernel_name, None)
    if not isinstance(kernel, kdsl.KernelFunction):
        return Result("invalid-python", "kernel is gone")
    try:
        args, meta = guess_args(kernel)
        with time_limit(timeout):
            ir = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
            printed = print_op(ir)
            again = print_op(parse_module(printed, "<fuzz roundtrip>"))
        if again != printed:
            return Result("internal", "print -> parse -> print differs", "roundtrip")
        return Result("compiled")
    except FuzzTimeout:
        return Result("timeout", "compile")
    except CompilationError as exc:
        if not exc.loc.known:
            return Result("unlocated", exc.message[:300], f"unlocated: {exc.message[:60]}")
        return Result("rejected", exc.message[:200])
    except KdslError as exc:
        return Result("rejected", str(exc)[:200])
    except RecursionError as exc:
        return internal(exc)
    except Exception as exc:
        return internal(exc)
    finally:
        linecache.clearcache()


# --- IR ---------------------------------------------------------------------------------
def ir_seeds(extra: list[str] | None = None) -> list[str]:
    out = []
    for path in IR_SEEDS:
        text = path.read_text()
        if path.name == "invalid.mlir":  # split into its cases
            out += [c for c in re.split(r"^// -----$", text, flags=re.M) if c.strip()]
        else:
            out.append(text)
    return out + list(extra or [])


_IR_TOKEN = re.compile(r"%[\w.$]+|@[\w.$]+|\^\w+|\"[^\"]*\"|-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|[A-Za-z_][\w.]*|->|\S")
IR_WORDS = [
    "%0",
    "%1",
    "%x",
    "@f",
    "^bb0",
    "i1",
    "i8",
    "i32",
    "i64",
    "u32",
    "f16",
    "bf16",
    "f32",
    "f64",
    "ptr<f32>",
    "tile<4xi32>",
    "tile<0xf32>",
    "tile<4x4xf32>",
    "tile<99999999999xf32>",
    "arith.add",
    "arith.constant",
    "scf.for",
    "scf.if",
    "scf.yield",
    "tile.func",
    "tile.return",
    "tile.call",
    "tile.load",
    "tile.reduce",
    "builtin.module",
    "{",
    "}",
    "(",
    ")",
    ":",
    ",",
    "=",
    "<",
    ">",
    "x",
    "0",
    "-1",
    "1e999",
    "nan",
    "inf",
    '"',
    "{value = 1}",
    "attributes",
    'loc("f":1:1)',
    "->",
    "9223372036854775808",
    "true",
    "[",
    "]",
]


def mutate_ir(text: str, rng: random.Random) -> str:
    lines = text.splitlines() or [""]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        toks = list(_IR_TOKEN.finditer(lines[i]))
        kind = rng.choice(["tok_del", "tok_dup", "tok_swap", "tok_word", "line_del", "line_dup", "line_swap"])
        if kind.startswith("tok") and toks:
            t = rng.choice(toks)
            a, b = t.span()
            line = lines[i]
            if kind == "tok_del":
                line = line[:a] + line[b:]
            elif kind == "tok_dup":
                line = line[:b] + " " + t.group() + line[b:]
            elif kind == "tok_swap":
                u = rng.choice(toks)
                (x, y), (p, q) = sorted([t.span(), u.span()])
                if y <= p:
                    line = line[:x] + line[p:q] + line[y:p] + line[x:y] + line[q:]
            else:
                line = line[:a] + rng.choice(IR_WORDS + [m.group() for m in toks]) + line[b:]
            lines[i] = line
        elif kind == "line_del" and len(lines) > 1:
            del lines[i]
        elif kind == "line_dup":
            lines.insert(i, lines[i])
        elif kind == "line_swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines) + "\n"


def random_ir(rng: random.Random) -> str:
    """Token soup from the IR vocabulary (mostly rejected by the lexer/parser, which is the point)."""
    return " ".join(rng.choice(IR_WORDS) for _ in range(rng.randint(1, 40)))


def check_ir(text: str, tmp: Path, timeout: float = 10.0) -> Result:
    """parse_module, print/parse round trip, then ``kdsl opt`` with the default pipeline in-process."""
    from kdsl.cli import opt
    from kdsl.errors import KdslError
    from kdsl.ir.parser import parse_module
    from kdsl.ir.printer import print_op

    try:
        with time_limit(timeout):
            module = parse_module(text, "<fuzz>")
            printed = print_op(module)
            if print_op(parse_module(printed, "<fuzz roundtrip>")) != printed:
                return Result("internal", "print -> parse -> print differs\n" + printed[:2000], "roundtrip")
    except FuzzTimeout:
        return Result("timeout", "parse")
    except KdslError as exc:
        loc = getattr(exc, "loc", None)
        if loc is None or not loc.known:
            return Result("unlocated", str(exc)[:300], f"unlocated: {str(exc)[:60]}")
        return Result("rejected", str(exc)[:200])
    except Exception as exc:
        return internal(exc)
    path = tmp / f"fuzz_{next(_COUNTER)}.mlir"
    path.write_text(text)
    err = io.StringIO()
    try:
        with time_limit(timeout), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            rc = opt.main([str(path), "-p", "inline,canonicalize,cse,dce"])
    except FuzzTimeout:
        return Result("timeout", "opt")
    except SystemExit as exc:
        return Result("internal", f"opt exited {exc.code}: {err.getvalue()[:500]}", "opt SystemExit")
    except Exception as exc:
        return internal(exc)
    finally:
        path.unlink()
    if "internal error" in err.getvalue():
        return Result("internal", err.getvalue()[:2000], "opt: " + err.getvalue()[:80])
    return Result("compiled" if rc == 0 else "rejected", err.getvalue()[:200])


def valid_mutant(seed: SourceSeed, rng: random.Random, attempts: int = 25) -> tuple[str, int]:
    """A mutant that is syntactically valid Python (what reaches kdsl), and how many were discarded."""
    for i in range(attempts):
        text = mutate_source(seed, rng)
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        return text, i
    return seed.module, attempts
