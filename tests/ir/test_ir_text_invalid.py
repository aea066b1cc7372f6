"""Invalid IR text gives exactly the expected diagnostic at the expected place.

``invalid.mlir`` holds cases separated by ``// -----``. Each case has one
``// expected-error@+N {{message}}`` (the error is on the N-th line below) or
``// expected-error@"file":L:C {{message}}`` (an op's own location). Cases are
parsed separately but keep their line numbers in the file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdsl.errors import KdslError
from kdsl.ir.core import Location
from kdsl.ir.parser import ParseError, parse_module

HERE = Path(__file__).parent
FILE = "invalid.mlir"
_EXPECT = re.compile(r"//\s*expected-error@(?:\+(\d+)|\"([^\"]*)\":(\d+):(\d+))\s*\{\{(.*)\}\}\s*$")


def _cases() -> list[tuple[int, str, Location | None, int, str]]:
    """(first line, chunk text padded to keep line numbers, exact loc or None, line, message)."""
    lines = (HERE / FILE).read_text().split("\n")
    starts = [i + 1 for i, line in enumerate(lines) if line.strip() == "// -----"]
    cases: list[tuple[int, str, Location | None, int, str]] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] - 1 if k + 1 < len(starts) else len(lines)
        chunk = "\n" * start + "\n".join(lines[start:end])
        expects = [(i, _EXPECT.search(lines[i])) for i in range(start, end)]
        found = [(i, m) for i, m in expects if m]
        assert len(found) == 1, f"case at line {start + 1} needs exactly one expected-error"
        i, m = found[0]
        assert m is not None
        if m.group(1):
            cases.append((start + 1, chunk, None, i + 1 + int(m.group(1)), m.group(5)))
        else:
            loc = Location(m.group(2), int(m.group(3)), int(m.group(4)))
            cases.append((start + 1, chunk, loc, loc.line, m.group(5)))
    return cases


CASES = _cases()


def test_file_has_many_cases() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize(("first", "chunk", "loc", "line", "message"), CASES, ids=[f"line{c[0]}" for c in CASES])
def test_invalid_case(first: int, chunk: str, loc: Location | None, line: int, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(chunk, filename=FILE)
    err = info.value
    assert err.message == message
    if loc is not None:
        assert err.loc == loc
    else:
        assert err.loc.file == FILE
        assert err.loc.line == line
        assert err.loc.col >= 1


def test_parse_error_is_a_kdsl_error_with_source_line_and_caret() -> None:
    text = "tile.func @f(%a: f32) {\n  %0 = arith.add %a, %b : f32\n  tile.return\n}\n"
    with pytest.raises(KdslError) as info:
        parse_module(text, filename="k.mlir")
    assert str(info.value) == (
        "k.mlir:2:22: error: use of undefined value %b\n"
        "      %0 = arith.add %a, %b : f32\n"
        "                         ^"
    )


def test_verifier_failure_can_be_skipped() -> None:
    text = "tile.func @f() {\n  %0 = tile.arange {end = 64, start = 0} : tile<128xi32>\n  tile.return\n}\n"
    module = parse_module(text, verify=False)
    assert module.body.ops[0].body.ops[0].NAME == "tile.arange"
    with pytest.raises(ParseError, match="result must be tile<64xi32>"):
        parse_module(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tile.func @f() {\n  tile.return\n}\ngarbage.op\n", "unknown operation 'garbage.op'"),
        ("tile.func @f(%a: i32 {\n", "expected ',' between function arguments, got '{'"),
        ("tile.func @f() { tile.print {prefix = \"\\x4\"} tile.return }", "bad escape '\\x' (needs 2 hex digits)"),
        ("tile.func @f() { %0 = arith.constant {value = (1, } : i32 tile.return }", "unknown attribute value syntax '}'"),
        ("tile.func @f(%x: ptr<tile<4xf32>>) { tile.return }", "invalid type 'ptr<tile<4xf32>>': pointer to non-scalar 'tile<4xf32>'"),
        ("tile.func @f(%x: tile<f32>) { tile.return }", "invalid type 'tile<f32>': malformed tile type 'tile<f32>'"),
        ("tile.func @f() { tile.return : }", "'tile.return' has no operands or results to give types to"),
        ("tile.func @f() attributes {sym_name = \"g\"} { tile.return }", "'sym_name' is given by the @name of the function"),
        ("%", "expected a name after '%'"),
        ("tile.func @f(%x: memref<4xf32, global>) { tile.return }",
         "invalid type 'memref<4xf32, global>': malformed memref type 'memref<4xf32, global>'"),
        ("tile.func @f() { %0 = arith.constant {value = ptr<f32} : i32 tile.return }", "expected '>' to close the type"),
    ],
)
def test_small_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert info.value.message == message
