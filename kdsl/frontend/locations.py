"""Source of a kernel and the mapping from AST positions to user locations.

The frontend parses a dedented copy of the function's source; every op must
still point at the user's real file, line and (1-based) column, so this module
remembers the file name, the line of the ``def``'s first source line and the
indentation that dedenting removed.
"""

from __future__ import annotations

import ast
import inspect
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
    return SourceInfo(file, max(first, 1), indent, defs[0])


def _removed_indent(raw: str, dedented: str) -> int:
    for a, b in zip(raw.splitlines(), dedented.splitlines()):
        if a.strip():
            return len(a) - len(b)
    return 0
