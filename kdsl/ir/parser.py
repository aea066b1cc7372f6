"""Parse the IR text written by :mod:`kdsl.ir.printer` back into IR.

A recursive-descent parser over :class:`kdsl.ir.lexer.Lexer`. Op names are
resolved through :func:`kdsl.ir.registry.lookup_op`, so new dialects parse
without changes here; only functions (``tile.func``...) have a custom form. Value names
become ``name_hint``s (numeric names like ``%3`` are printer-generated and
become no hint), which is what makes ``print(parse(print(m))) == print(m)``.

Every problem raises :class:`ParseError` (a :class:`kdsl.errors.KdslError`)
with the file:line:col in the text. After parsing, the module is verified and
an :class:`~kdsl.ir.core.IRError` is converted into a ``ParseError`` at the
failing op's location, so tools (``python -m kdsl opt``) handle one error type.
Ops without a ``loc(...)`` get their position in the text as location, so
later pass and verifier errors point into the ``.mlir`` file too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kdsl.ir.core import (
    UNKNOWN_LOC,
    AttrValue,
    Block,
    IRError,
    IsolatedFromAbove,
    Location,
    ModuleOp,
    Operation,
    Region,
    SymbolRef,
    Value,
)
from kdsl.ir.lexer import BLOCK, EOF, FLOAT, IDENT, INT, PUNCT, STRING, SYMBOL, VALUE, Lexer, ParseError, Token
from kdsl.ir.printer import is_numeric_name, uses_func_form
from kdsl.ir.registry import lookup_op
from kdsl.ir.types import Type
from kdsl.ir.verifier import verify as verify_ir

__all__ = ["ParseError", "parse_attr", "parse_module", "parse_op", "parse_type"]

_TYPE_WORD = re.compile(r"[a-z][a-z0-9]*")


def parse_module(text: str, filename: str = "<string>", *, verify: bool = True) -> ModuleOp:
    """Parse a module. Text that is not a single ``builtin.module`` is wrapped in one."""
    p = _Parser(text, filename)
    ops = p.top_level()
    if len(ops) == 1 and isinstance(ops[0], ModuleOp):
        module = ops[0]
    else:
        module = ModuleOp.empty(Location(filename, 1, 1))
        for op in ops:
            module.body.append(op)
    if verify:
        p.verify(module)
    return module


def parse_op(text: str, filename: str = "<string>", *, verify: bool = True) -> Operation:
    """Parse exactly one self-contained op (e.g. a ``tile.func``)."""
    p = _Parser(text, filename)
    ops = p.top_level()
    if len(ops) != 1:
        raise ParseError(f"expected exactly one operation, got {len(ops)}", Location(filename, 1, 1), text)
    if verify:
        p.verify(ops[0])
    return ops[0]


def parse_type(text: str, filename: str = "<string>") -> Type:
    """Parse one type (``f32``, ``ptr<f16>``, ``tile<64x64xf32>``)."""
    p = _Parser(text, filename)
    t = p.type()
    p.expect_eof()
    return t


def parse_attr(text: str, filename: str = "<string>") -> AttrValue:
    """Parse one attribute value (``1``, ``-nan``, ``"s"``, ``@f``, ``(1, f32)``...)."""
    p = _Parser(text, filename)
    v = p.attr_value()
    p.expect_eof()
    return v


@dataclass
class _Scope:
    """Names visible in one region; ``isolated`` scopes hide everything outside."""

    isolated: bool
    values: dict[str, tuple[Value, int]] = field(default_factory=dict)


def _describe(tok: Token) -> str:
    return "end of input" if tok.kind == EOF else f"'{tok.text}'"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _hint(name: str) -> str | None:
    return None if is_numeric_name(name) else name


class _Parser:
    def __init__(self, text: str, filename: str) -> None:
        self.lx = Lexer(text, filename)
        self.pos = 0
        self.scopes: list[_Scope] = [_Scope(isolated=True)]

    # --- token helpers ---------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        tok = self.lx.token_at(self.pos)
        for _ in range(k):
            tok = self.lx.token_at(tok.end)
        return tok

    def next(self) -> Token:
        tok = self.peek()
        self.pos = tok.end
        return tok

    def is_(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind in (PUNCT, IDENT) and tok.text == text

    def accept(self, text: str) -> Token | None:
        return self.next() if self.is_(text) else None

    def expect(self, text: str, context: str = "") -> Token:
        if not self.is_(text):
            tok = self.peek()
            raise self.error(f"expected '{text}'{context}, got {_describe(tok)}", tok.pos)
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        tok = self.peek()
        if tok.kind != kind:
            raise self.error(f"expected {what}, got {_describe(tok)}", tok.pos)
        return self.next()

    def expect_eof(self) -> None:
        tok = self.peek()
        if tok.kind != EOF:
            raise self.error(f"unexpected {_describe(tok)} after the end", tok.pos)

    def error(self, message: str, pos: int) -> ParseError:
        return self.lx.error(message, pos)

    def verify(self, op: Operation) -> None:
        try:
            verify_ir(op)
        except IRError as e:
            source = self.lx.text if e.loc.file == self.lx.filename else None
            raise ParseError(e.message, e.loc, source) from None

    # --- values ----------------------------------------------------------------
    def lookup(self, tok: Token) -> Value:
        name = str(tok.value)
        for scope in reversed(self.scopes):
            hit = scope.values.get(name)
            if hit is not None:
                return hit[0]
            if scope.isolated:
                break
        if any(name in s.values for s in self.scopes):
            raise self.error(f"value %{name} is defined outside the isolated-from-above op that uses it", tok.pos)
        raise self.error(f"use of undefined value %{name}", tok.pos)

    def define(self, tok: Token, value: Value) -> None:
        name = str(tok.value)
        for scope in reversed(self.scopes):
            prev = scope.values.get(name)
            if prev is not None:
                raise self.error(f"redefinition of value %{name} (first defined at {self.lx.loc(prev[1])})", tok.pos)
            if scope.isolated:
                break
        value.name_hint = _hint(name)
        self.scopes[-1].values[name] = (value, tok.pos)

    # --- structure --------------------------------------------------------------
    def top_level(self) -> list[Operation]:
        ops = []
        while self.peek().kind != EOF:
            ops.append(self.operation())
        return ops

    def operation(self) -> Operation:
        results: list[Token] = []
        if self.peek().kind == VALUE:
            results.append(self.next())
            while self.accept(","):
                results.append(self.expect_kind(VALUE, "a result name"))
            self.expect("=", " after the result names")
        name_tok = self.expect_kind(IDENT, "an operation name")
        cls = lookup_op(name_tok.text)
        if cls is None:
            raise self.error(f"unknown operation '{name_tok.text}'", name_tok.pos)
        if uses_func_form(cls) and self.peek().kind == SYMBOL:
            if results:
                raise self.error(f"'{cls.NAME}' has no results", results[0].pos)
            return self.func(cls, name_tok)
        operands = self.operand_list()
        attrs = self.attr_dict() if self.at_attr_dict() else {}
        out_types = self.signature(name_tok, operands, len(results))
        regions = []
        isolated = cls.has_trait(IsolatedFromAbove)
        while self.is_("{"):
            regions.append(self.region(isolated))
        loc = self.location(name_tok)
        op = cls([v for _, v in operands], out_types, attrs, regions, loc)
        for tok, r in zip(results, op.results):
            self.define(tok, r)
        return op

    def operand_list(self) -> list[tuple[Token, Value]]:
        if self.peek().kind != VALUE:
            return []
        start = self.pos
        toks = [self.next()]
        while self.accept(","):
            toks.append(self.expect_kind(VALUE, "an operand"))
        if self.is_("="):  # those were the results of the next op
            self.pos = start
            return []
        return [(t, self.lookup(t)) for t in toks]

    def signature(self, name_tok: Token, operands: list[tuple[Token, Value]], n_out: int) -> list[Type]:
        """Parse `` : types`` and check it against the operands; return the result types."""
        n_in, op_name = len(operands), name_tok.text
        if not self.is_(":"):
            if n_in or n_out:
                tok = self.peek()  # reported right after the op, not at the next line's token
                raise self.error(f"expected ':' and the types of '{op_name}', got {_describe(tok)}", self.pos)
            return []
        colon = self.next()
        if n_out == 0:
            if n_in == 0:
                raise self.error(f"'{op_name}' has no operands or results to give types to", colon.pos)
            ins, outs = self.type_list(), []
        elif self.accept("("):
            ins = [] if self.is_(")") else self.type_list()
            self.expect(")", " after the operand types")
            self.expect("->", " after the operand types")
            if self.accept("("):
                outs = self.type_list()
                self.expect(")", " after the result types")
            else:
                outs = [self.type()]
        else:
            t = self.type()
            ins, outs = [t] * n_in, [t] * n_out
        if len(ins) != n_in:
            raise self.error(f"'{op_name}' has {_count(n_in, 'operand')} but its signature gives {_count(len(ins), 'type')}", colon.pos)
        if len(outs) != n_out:
            raise self.error(f"'{op_name}' has {_count(n_out, 'result')} but its signature gives {_count(len(outs), 'type')}", colon.pos)
        for (tok, v), t in zip(operands, ins):
            if v.type != t:
                raise self.error(f"operand {tok.text} has type {v.type} but the signature of '{op_name}' says {t}", tok.pos)
        return outs

    def region(self, isolated: bool, entry: Block | None = None, entry_names: list[Token] | None = None) -> Region:
        open_tok = self.expect("{")
        self.scopes.append(_Scope(isolated))
        region = Region()
        block = None
        if entry is not None:
            block = region.add_block(entry)
            for tok, arg in zip(entry_names or [], entry.args):
                self.define(tok, arg)
        while not self.is_("}"):
            tok = self.peek()
            if tok.kind == EOF:
                raise self.error(f"missing '}}' to close the region opened at {self.lx.loc(open_tok.pos)}", tok.pos)
            if tok.kind == BLOCK:
                block = region.add_block(self.block_header())
                continue
            if block is None:
                block = region.add_block(Block())
            block.append(self.operation())
        self.next()
        self.scopes.pop()
        if not region.blocks:
            region.add_block(Block())
        return region

    def block_header(self) -> Block:
        self.expect_kind(BLOCK, "a block label")
        block = Block()
        if self.accept("("):
            while True:
                tok = self.expect_kind(VALUE, "a block argument")
                self.expect(":", " after the block argument name")
                self.define(tok, block.add_arg(self.type()))
                if not self.accept(","):
                    break
            self.expect(")", " after the block arguments")
        self.expect(":", " after the block label")
        return block

    def func(self, cls: type[Operation], name_tok: Token) -> Operation:
        """``tile.func @name(%a: T, ...) [-> (T, ...)] [attributes {...}] { body }`` (any function-form op)."""
        sym = self.next()
        self.expect("(", " after the function name")
        arg_toks: list[Token] = []
        block = Block()
        while not self.is_(")"):
            if arg_toks:
                self.expect(",", " between function arguments")
            arg_toks.append(self.expect_kind(VALUE, "a function argument"))
            self.expect(":", " after the argument name")
            block.add_arg(self.type())
        self.next()
        results: list[Type] | None = None
        if self.accept("->"):
            if self.accept("("):
                results = [] if self.is_(")") else self.type_list()
                self.expect(")", " after the result types")
            else:
                results = [self.type()]
        attrs: dict[str, AttrValue] = {}
        if self.accept("attributes"):
            attrs = self.attr_dict(allow_empty=True)
        if "sym_name" in attrs:
            raise self.error("'sym_name' is given by the @name of the function", sym.pos)
        if results is not None and "result_types" in attrs:
            raise self.error("'result_types' is given twice (after '->' and as an attribute)", sym.pos)
        if results is not None or "result_types" in cls.ATTRS or "result_types?" in cls.ATTRS:
            attrs.setdefault("result_types", tuple(results or ()))
        names = [str(t.value) for t in arg_toks]
        if "arg_names" not in attrs and not any(is_numeric_name(n) for n in names):
            attrs["arg_names"] = tuple(names)
        region = self.region(True, entry=block, entry_names=arg_toks)
        loc = self.location(name_tok)
        return cls([], [], {"sym_name": sym.value, **attrs}, [region], loc)

    def location(self, at: Token) -> Location:
        """An optional trailing ``loc(...)``; the text position of ``at`` when absent."""
        if not (self.is_("loc") and self.is_("(", 1)):
            return self.lx.loc(at.pos)
        self.next()
        self.next()
        if self.accept("unknown"):
            loc = UNKNOWN_LOC
        else:
            file = self.expect_kind(STRING, "a file name string in loc(...)")
            self.expect(":", " in loc(...)")
            line = self.expect_kind(INT, "a line number")
            self.expect(":", " in loc(...)")
            col = self.expect_kind(INT, "a column number")
            loc = Location(str(file.value), int(str(line.value)), int(str(col.value)))
        self.expect(")", " to close loc(...)")
        return loc

    # --- types and attributes ---------------------------------------------------------
    def type(self) -> Type:
        t, self.pos = self.lx.type_at(self.pos)
        return t

    def type_list(self) -> list[Type]:
        types = [self.type()]
        while self.accept(","):
            types.append(self.type())
        return types

    def at_attr_dict(self) -> bool:
        return self.is_("{") and self.peek(1).kind in (IDENT, STRING) and self.is_("=", 2)

    def attr_dict(self, allow_empty: bool = False) -> dict[str, AttrValue]:
        self.expect("{")
        attrs: dict[str, AttrValue] = {}
        if allow_empty and self.accept("}"):
            return attrs
        while True:
            key_tok = self.next()
            if key_tok.kind not in (IDENT, STRING):
                raise self.error(f"expected an attribute name, got {_describe(key_tok)}", key_tok.pos)
            key = str(key_tok.value)
            if key in attrs:
                raise self.error(f"duplicate attribute '{key}'", key_tok.pos)
            self.expect("=", f" after attribute name '{key}'")
            attrs[key] = self.attr_value()
            if not self.accept(","):
                break
        self.expect("}", " to close the attribute dictionary")
        return attrs

    def attr_value(self) -> AttrValue:
        tok = self.peek()
        if tok.kind in (INT, FLOAT, STRING):
            self.next()
            return tok.value
        if tok.kind == SYMBOL:
            self.next()
            return SymbolRef(str(tok.value))
        if tok.text == "-" and self.peek(1).text in ("inf", "nan"):
            self.next()
            return -float(self.next().text)
        if tok.text == "(" and tok.kind == PUNCT:
            self.next()
            items: list[AttrValue] = []
            while not self.accept(")"):
                if items:
                    self.expect(",", " between tuple elements")
                items.append(self.attr_value())
            return tuple(items)
        if tok.kind == IDENT:
            keywords: dict[str, AttrValue] = {"true": True, "false": False, "inf": float("inf"), "nan": float("nan")}
            if tok.text in keywords:
                self.next()
                return keywords[tok.text]
            if _TYPE_WORD.fullmatch(tok.text):
                try:
                    return self.type()
                except ParseError:
                    if self.lx.text.startswith("<", tok.end):
                        raise  # a malformed type: its own message is more precise
        raise self.error(f"unknown attribute value syntax {_describe(tok)}", tok.pos)
