"""Tokens of the IR text, produced on demand at a character position.

The parser drives the lexer by position (``token_at(pos)``) instead of
consuming a pre-built token list: that makes backtracking a matter of saving
an integer, and lets types (``tile<128x64xf32>``, whose ``128x64xf32`` does
not split into sensible tokens) be scanned character by character by
:meth:`Lexer.type_at`. Whitespace and ``//`` comments separate tokens.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from kdsl.errors import KdslError, format_location
from kdsl.ir.core import Location
from kdsl.ir.types import Type, parse_type

# token kinds
VALUE = "value"  # %name
BLOCK = "block"  # ^name
SYMBOL = "symbol"  # @name or @"name"
STRING = "string"  # "text"
INT = "int"
FLOAT = "float"
IDENT = "ident"  # bare words: op names, keywords, attribute names
PUNCT = "punct"
EOF = "eof"

_NAME = re.compile(r"[A-Za-z0-9_$.]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[a-z][a-z0-9]*")
_PUNCT = "(){},:=<>[]-#"
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "0": "\0"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class ParseError(KdslError):
    """Malformed or invalid IR text; ``loc`` is the position in the text (or the
    op's own ``loc(...)`` for verifier failures of ops that carry one)."""

    def __init__(self, message: str, loc: Location, source: str | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(_format(message, loc, source))


def _format(message: str, loc: Location, source: str | None) -> str:
    if source is None or not loc.known:
        return format_location(loc, message)
    lines = source.split("\n")
    head = f"{loc}: error: {message}"
    if not 0 < loc.line <= len(lines):
        return head
    caret = " " * max(loc.col - 1, 0) + "^"
    return f"{head}\n    {lines[loc.line - 1]}\n    {caret}"


@dataclass(frozen=True)
class Token:
    kind: str
    text: str  # the exact source text
    pos: int  # start offset
    end: int  # offset just after the token
    value: object = None  # decoded value: name, string contents, number


class Lexer:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._cache: dict[int, Token] = {}

    # --- positions and errors --------------------------------------------------
    def loc(self, pos: int) -> Location:
        line = bisect.bisect_right(self._line_starts, pos)
        return Location(self.filename, line, pos - self._line_starts[line - 1] + 1)

    def error(self, message: str, pos: int) -> ParseError:
        return ParseError(message, self.loc(pos), self.text)

    def skip_space(self, pos: int) -> int:
        text, n = self.text, len(self.text)
        while pos < n:
            ch = text[pos]
            if ch in " \t\r\n":
                pos += 1
            elif text.startswith("//", pos):
                nl = text.find("\n", pos)
                pos = n if nl < 0 else nl + 1
            else:
                break
        return pos

    # --- tokens ------------------------------------------------------------------
    def token_at(self, pos: int) -> Token:
        """The token starting at the first non-space character at or after ``pos``."""
        tok = self._cache.get(pos)
        if tok is None:
            tok = self._lex(self.skip_space(pos))
            self._cache[pos] = tok
        return tok

    def _lex(self, p: int) -> Token:
        text = self.text
        if p >= len(text):
            return Token(EOF, "", p, p)
        ch = text[p]
        if ch in "%^":
            m = _NAME.match(text, p + 1)
            if not m:
                raise self.error(f"expected a name after '{ch}'", p)
            return Token(VALUE if ch == "%" else BLOCK, text[p : m.end()], p, m.end(), m.group())
        if ch == "@":
            if text.startswith('"', p + 1):
                s, end = self._string(p + 1)
                return Token(SYMBOL, text[p:end], p, end, s)
            m = _NAME.match(text, p + 1)
            if not m:
                raise self.error("expected a symbol name after '@'", p)
            return Token(SYMBOL, text[p : m.end()], p, m.end(), m.group())
        if ch == '"':
            s, end = self._string(p)
            return Token(STRING, text[p:end], p, end, s)
        m = _NUMBER.match(text, p)
        if m:
            lit = m.group()
            if m.group(1) is not None or m.group(2) is not None:
                return Token(FLOAT, lit, p, m.end(), float(lit))
            return Token(INT, lit, p, m.end(), int(lit))
        if text.startswith("->", p):
            return Token(PUNCT, "->", p, p + 2)
        m = _IDENT.match(text, p)
        if m:
            return Token(IDENT, m.group(), p, m.end(), m.group())
        if ch in _PUNCT:
            return Token(PUNCT, ch, p, p + 1)
        raise self.error(f"unexpected character {ch!r}", p)

    def _string(self, p: int) -> tuple[str, int]:
        """Decode the string literal starting at the quote at ``p``; return (value, end)."""
        text, i = self.text, p + 1
        out: list[str] = []
        while True:
            if i >= len(text) or text[i] == "\n":
                raise self.error("unterminated string literal", p)
            ch = text[i]
            if ch == '"':
                return "".join(out), i + 1
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            esc = text[i + 1 : i + 2]
            if esc in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[esc])
                i += 2
            elif esc in _HEX_ESCAPES:
                width = _HEX_ESCAPES[esc]
                digits = text[i + 2 : i + 2 + width]
                if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise self.error(f"bad escape '\\{esc}' (needs {width} hex digits)", i)
                code = int(digits, 16)
                if code > 0x10FFFF:
                    raise self.error(f"escape '\\{esc}{digits}' is not a character", i)
                out.append(chr(code))
                i += 2 + width
            else:
                raise self.error(f"unknown escape '\\{esc}' in string", i)

    # --- types -------------------------------------------------------------------
    def type_at(self, pos: int) -> tuple[Type, int]:
        """Scan one type at the first non-space character at or after ``pos``.

        Only the extent (a word plus a balanced ``<...>``) is found here; the
        meaning comes from :func:`kdsl.ir.types.parse_type`, so a new kind of
        type added there is parsed without touching the lexer.
        """
        p = self.skip_space(pos)
        m = _WORD.match(self.text, p)
        if not m:
            raise self.error("expected a type", p)
        q = m.end()
        if self.text.startswith("<", q):
            q = self._close_angle(q)
        src = self.text[p:q]
        try:
            return parse_type(src), q
        except ValueError as e:  # TypeParseError, or a type's own validation
            if "<" not in src:
                raise self.error(f"unknown type '{src}'", p) from None
            raise self.error(f"invalid type '{src}': {e}", p) from None

    def _close_angle(self, pos: int) -> int:
        """Offset just after the '>' matching the '<' at ``pos``."""
        depth = 0
        for q in range(pos, len(self.text)):
            ch = self.text[q]
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
                if depth == 0:
                    return q + 1
            elif not (ch.isalnum() or ch in "_, "):
                raise self.error("expected '>' to close the type", q)
        raise self.error("expected '>' to close the type", len(self.text))
