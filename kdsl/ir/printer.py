"""The textual form of the kdsl IR (the printing half; see ``parser.py``).

One generic syntax prints every registered op, so a new dialect needs no
printer change::

    %r0, %r1 = dialect.op %a, %b {attr = 1} : (T, T) -> (T, T) { region } loc(...)

Only functions (ops that are both ``Symbol`` and ``IsolatedFromAbove``, e.g.
``tile.func``) have a custom form -- named arguments, result types folded into
the signature -- because functions are what people read. The text is
deterministic (attributes sorted by name, values named in definition order) and
round-trips exactly through :func:`kdsl.ir.parser.parse_module`. The grammar
and conventions are documented in ``docs/IR.md``.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from kdsl.ir.core import (
    UNKNOWN_LOC,
    AttrValue,
    Block,
    IsolatedFromAbove,
    Location,
    Operation,
    Region,
    Symbol,
    SymbolRef,
    Value,
)
from kdsl.ir.types import Type

INDENT = "  "


def uses_func_form(cls: type[Operation]) -> bool:
    """Symbol-defining, isolated ops (``tile.func``, ``wi.func``...) print in the function form."""
    return cls.has_trait(Symbol) and cls.has_trait(IsolatedFromAbove)


_SYMBOL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")
_ATTR_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")
_NAME_RE = re.compile(r"[A-Za-z0-9_]+\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def print_op(op: Operation, *, locations: bool = False) -> str:
    """The text of ``op`` (and everything nested in it), without a trailing newline.

    With ``locations`` every op is followed by ``loc("file":line:col)`` (or
    ``loc(unknown)``) so that the parser restores source positions exactly.
    """
    printer = _Printer(locations)
    printer.op(op, 0, _Namer(None))
    return "".join(printer.out)


def print_type(t: Type) -> str:
    return t.text()


# --- attribute and token formatting (shared with the parser's tests) ---------


@lru_cache(maxsize=4096)  # every location quotes its file name: the same few strings
def quote_string(s: str) -> str:
    """``s`` as a double-quoted literal; control and unprintable characters are escaped."""
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def format_symbol(name: str) -> str:
    """``@name``, or ``@"name"`` when the name is not a plain identifier."""
    return "@" + (name if _SYMBOL_RE.match(name) else quote_string(name))


def format_float(v: float) -> str:
    """Python's shortest round-tripping repr; ``inf``, ``-inf``, ``nan``, ``-nan`` spelled out."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return repr(v)


def format_attr(v: AttrValue) -> str:
    """The text of one attribute value (see docs/IR.md for the grammar)."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return format_float(float(v))
    if isinstance(v, str):
        return quote_string(v)
    if isinstance(v, Type):
        return v.text()
    if isinstance(v, SymbolRef):
        return format_symbol(v.name)
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(format_attr(x) for x in v) + ")"
    raise TypeError(f"attribute value {v!r} of type {type(v).__name__} has no textual form")


def format_attr_dict(attrs: dict[str, AttrValue]) -> str:
    """``{a = 1, b = "x"}`` sorted by name, or ``""`` when empty."""
    if not attrs:
        return ""
    items = []
    for key in sorted(attrs):
        name = key if _ATTR_NAME_RE.match(key) else quote_string(key)
        items.append(f"{name} = {format_attr(attrs[key])}")
    return "{" + ", ".join(items) + "}"


def format_location(loc: Location) -> str:
    if loc == UNKNOWN_LOC:
        return "loc(unknown)"
    return f"loc({quote_string(loc.file)}:{loc.line}:{loc.col})"


def format_signature(operand_types: Sequence[Type], result_types: Sequence[Type]) -> str:
    """The `` : ...`` suffix: short when every type is equal, else ``(ins) -> outs``."""
    ins = [t.text() for t in operand_types]
    outs = [t.text() for t in result_types]
    if not ins and not outs:
        return ""
    if not outs:
        return " : " + ", ".join(ins)
    every = ins + outs
    if all(t == every[0] for t in every):
        return " : " + every[0]
    res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return " : (" + ", ".join(ins) + ") -> " + res


def is_numeric_name(name: str) -> bool:
    """Numeric names (``%0``) are printer-generated, never user hints."""
    return name.isdigit()


# --- value naming --------------------------------------------------------------


class _Namer:
    """Names values within one isolated-from-above scope (a function).

    Hints become names made unique with ``_1``, ``_2`` suffixes; values without
    a hint get the next free number. Hint names are never all digits, so the
    two kinds cannot collide and numbering stays sequential.
    """

    def __init__(self, parent: _Namer | None) -> None:
        self.parent = parent
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.counter = 0

    def define(self, v: Value, hint: str | None = None) -> str:
        base = _sanitize(hint if hint is not None else v.name_hint)
        if base is None:
            while str(self.counter) in self.used:
                self.counter += 1
            name = str(self.counter)
            self.counter += 1
        else:
            name, k = base, 0
            while name in self.used:
                k += 1
                name = f"{base}_{k}"
        self.used.add(name)
        self.names[id(v)] = name
        return name

    def get(self, v: Value) -> str:
        scope: _Namer | None = self
        while scope is not None:
            name = scope.names.get(id(v))
            if name is not None:
                return name
            scope = scope.parent
        return self.define(v)  # not defined in the printed text (a fragment, or invalid IR)


def _sanitize(hint: str | None) -> str | None:
    if not hint:
        return None
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    return "v" + name if name.isdigit() else name


# --- the printer -----------------------------------------------------------------


class _Printer:
    def __init__(self, locations: bool) -> None:
        self.locations = locations
        self.out: list[str] = []

    def op(self, op: Operation, depth: int, namer: _Namer) -> None:
        self.out.append(INDENT * depth)
        if uses_func_form(type(op)) and self._func(op, depth, namer):
            return
        operands = ", ".join("%" + namer.get(v) for v in op.operands)
        if op.results:
            self.out.append(", ".join("%" + namer.define(r) for r in op.results) + " = ")
        self.out.append(op.NAME or type(op).__name__)
        if operands:
            self.out.append(" " + operands)
        attrs = format_attr_dict(op.attributes)
        if attrs:
            self.out.append(" " + attrs)
        self.out.append(format_signature([v.type for v in op.operands], [r.type for r in op.results]))
        inner = _Namer(namer) if op.has_trait(IsolatedFromAbove) else namer
        for region in op.regions:
            self.out.append(" ")
            self.region(region, depth, inner)
        self._loc(op)

    def _loc(self, op: Operation) -> None:
        if self.locations:
            self.out.append(" " + format_location(op.loc))

    def region(self, region: Region, depth: int, namer: _Namer, skip_entry_label: bool = False) -> None:
        self.out.append("{")
        for i, block in enumerate(region.blocks):
            # the entry label is implicit unless it has arguments (or is an empty block followed by others)
            entry_needs_label = (bool(block.args) and not skip_entry_label) or (not block.ops and len(region.blocks) > 1)
            show_label = i > 0 or entry_needs_label
            self.block(block, i, depth, namer, show_label)
        if region.blocks:
            self.out.append("\n" + INDENT * depth)
        self.out.append("}")

    def block(self, block: Block, index: int, depth: int, namer: _Namer, show_label: bool) -> None:
        if show_label:
            args = ", ".join(f"%{namer.define(a)}: {a.type.text()}" for a in block.args)
            self.out.append("\n" + INDENT * depth + f"^bb{index}" + (f"({args})" if block.args else "") + ":")
        for child in block.ops:
            self.out.append("\n")
            self.op(child, depth + 1, namer)

    def _func(self, op: Operation, depth: int, namer: _Namer) -> bool:
        """The function form; False (print generically) when it cannot be exact."""
        name = op.attributes.get("sym_name")
        if not isinstance(name, str) or len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or op.operands or op.results:
            return False
        body = op.regions[0].blocks[0]
        attrs = dict(op.attributes)
        del attrs["sym_name"]
        results = attrs.get("result_types", ())
        fold_results = _declares(op, "result_types") and isinstance(results, tuple) and all(isinstance(t, Type) for t in results)
        if fold_results:
            attrs.pop("result_types", None)
        arg_names = attrs.get("arg_names")
        fold_names = _foldable_arg_names(arg_names, len(body.args))
        if fold_names:
            del attrs["arg_names"]
        inner = _Namer(namer)
        args = []
        for i, a in enumerate(body.args):
            hint = str(arg_names[i]) if fold_names and arg_names else ""  # hints are ignored unless they are the arg_names
            args.append(f"%{inner.define(a, hint)}: {a.type.text()}")
        self.out.append(f"{op.NAME} {format_symbol(name)}({', '.join(args)})")
        if fold_results and results:
            self.out.append(" -> (" + ", ".join(t.text() for t in results) + ")")
        if attrs:
            self.out.append(" attributes " + format_attr_dict(attrs))
        self.out.append(" ")
        self.region(op.regions[0], depth, inner, skip_entry_label=True)
        self._loc(op)
        return True


def _declares(op: Operation, attr: str) -> bool:
    return attr in type(op).ATTRS or attr + "?" in type(op).ATTRS


def _foldable_arg_names(names: object, nargs: int) -> bool:
    """True if ``arg_names`` can be spelled as the argument names themselves."""
    if not isinstance(names, tuple) or len(names) != nargs or nargs == 0:
        return names == ()
    ok = all(isinstance(n, str) and _NAME_RE.match(n) and not n.isdigit() for n in names)
    return ok and len(set(names)) == nargs


# --- op reference table for docs/IR.md -----------------------------------------------


def op_table_markdown(op_classes: Iterable[type[Operation]]) -> str:
    """A markdown table of ops: operands, results, attributes, regions, traits, summary."""
    rows = ["| op | operands | results | attributes | regions | traits | summary |", "|---|---|---|---|---|---|---|"]
    for cls in op_classes:
        attrs = ", ".join(f"{k}: {_kind_name(t)}" for k, t in cls.ATTRS.items())
        traits = ", ".join(t.__name__ for t in cls.TRAITS)
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        doc = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", re.sub(r"``([^`]*)``", r"`\1`", re.sub(r"\s+", " ", doc)))
        doc = doc.replace("|", "\\|")
        rows.append(
            f"| `{cls.NAME}` | {', '.join(cls.OPERANDS) or '-'} | {', '.join(cls.RESULTS) or '-'} | "
            f"{attrs or '-'} | {cls.REGIONS or '-'} | {traits or '-'} | {doc} |"
        )
    return "\n".join(rows)


def _kind_name(kind: object) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return "/".join(getattr(k, "__name__", str(k)) for k in kinds)


DOC_BEGIN = "<!-- BEGIN OP TABLE (generated by: python -m kdsl.ir.printer --update-doc docs/IR.md) -->"
DOC_END = "<!-- END OP TABLE -->"


def registry_op_tables() -> str:
    """One markdown section per registered dialect."""
    from kdsl.ir.registry import DIALECTS

    return "\n\n".join(f"### `{d.name}`\n\n{op_table_markdown(d.ops)}" for d in DIALECTS)


def _main(argv: Sequence[str]) -> int:
    args = list(argv)
    if args == ["--ops"]:
        print(registry_op_tables())
        return 0
    if len(args) == 2 and args[0] == "--update-doc":
        from pathlib import Path

        path = Path(args[1])
        text = path.read_text()
        head, rest = text.split(DOC_BEGIN, 1)
        _, tail = rest.split(DOC_END, 1)
        path.write_text(f"{head}{DOC_BEGIN}\n\n{registry_op_tables()}\n\n{DOC_END}{tail}")
        return 0
    print("usage: python -m kdsl.ir.printer --ops | --update-doc docs/IR.md")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
