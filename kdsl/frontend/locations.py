"""Source of a kernel and the mapping from AST positions to user locations.

The frontend parses a dedented copy of the function's source; every op must
still point at the user's real file, line and (1-based) column, so this module
remembers the file name, the line of the ``def``'s first source line and the
indentation that dedenting removed.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass, field
from typing import Any

from kdsl.errors import CompilationError
from kdsl.ir.core import Location


@dataclass
class SourceInfo:
    """The parsed function plus what is needed to map positions back."""

    file: str
    first_line: int  # 1-based line of the first source line in ``file``
    indent: int  # columns removed by dedenting
    tree: ast.FunctionDef = field(repr=False)
    text: str = field(default="", repr=False)  # the definition's source lines, as in the file

    def loc(self, node: ast.AST) -> Location:
        line = getattr(node, "lineno", None)
        if line is None:
            return Location(self.file, self.first_line, 1)
        col = getattr(node, "col_offset", 0) or 0
        return Location(self.file, line + self.first_line - 1, col + self.indent + 1)


def load_source(fn: Any) -> SourceInfo:
    """Read and parse ``fn``'s source (raises CompilationError if unavailable)."""
    code = getattr(fn, "__code__", None)
    file = code.co_filename if code is not None else "<unknown>"
    fast = _definition_lines(fn)
    if fast is not None:
        raw, first, tree = fast
        src = textwrap.dedent(raw)
        return SourceInfo(file, first, _removed_indent(raw, src), tree, raw)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise CompilationError(f"cannot read the source of kernel {getattr(fn, '__name__', fn)!r}: {exc}") from exc
    raw = "".join(lines)
    src = textwrap.dedent(raw)
    indent = _removed_indent(raw, src)
    try:
        module = ast.parse(src)
    except SyntaxError as exc:
        line = (exc.lineno or 1) + max(first, 1) - 1
        raise CompilationError(f"syntax error: {exc.msg}", Location(file, line, (exc.offset or 0) + indent)) from exc
    defs = [n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs or not isinstance(defs[0], ast.FunctionDef):
        raise CompilationError(f"{getattr(fn, '__name__', fn)!r} is not a plain function definition")
    return SourceInfo(file, max(first, 1), indent, defs[0], raw)


def _definition_lines(fn: Any) -> tuple[str, int, ast.FunctionDef] | None:
    """(source lines, first line, parsed def) of ``fn`` found by indentation, or None.

    ``inspect.getsourcelines`` finds the end of a definition by tokenizing it
    (4-7 ms for the matmul tutorial kernel in a new process, ~3 ms of it
    building tokenize's regular expressions; this takes ~1 ms and parses the
    definition, which the caller needs anyway). Here the definition runs from
    ``co_firstlineno`` (its first decorator) to the last code line before the
    first code line indented no deeper than that (other than a closing
    bracket, as in a long header's ``) -> T:``). The cut is trusted only if
    it parses to exactly one plain function definition ending on its last
    line (a cut inside a string or bracket fails to parse); anything else
    returns None and the caller uses ``inspect``.
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        return None
    head = lines[start]
    base = len(head) - len(head.lstrip())
    if not head.lstrip().startswith(("@", "def ")):
        return None
    end = start + 1  # one past the last code line of the definition
    seen_body = False
    for i in range(start + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(lines[i]) - len(lines[i].lstrip())
        if indent <= base and seen_body and stripped[0] not in ")]}":  # ``) -> T:`` closes a long header
            break
        seen_body = seen_body or indent > base
        end = i + 1
    raw = "".join(lines[start:end])
    try:
        module = ast.parse(textwrap.dedent(raw))
    except (SyntaxError, ValueError):
        return None
    if len(module.body) != 1 or type(module.body[0]) is not ast.FunctionDef:
        return None
    tree = module.body[0]
    if tree.end_lineno != end - start or tree.name != getattr(fn, "__name__", None):
        return None
    return raw, start + 1, tree


def _removed_indent(raw: str, dedented: str) -> int:
    for a, b in zip(raw.splitlines(), dedented.splitlines()):
        if a.strip():
            return len(a) - len(b)
    return 0
