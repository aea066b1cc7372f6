"""print -> parse -> print is the identity, for every op, and the text looks as documented."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kdsl.ir import types as T
from kdsl.ir.core import Block, Builder, Location, ModuleOp, Region
from kdsl.ir.parser import parse_module, parse_op, parse_type
from kdsl.ir.printer import print_op
from kdsl.ir.registry import OPS
from kdsl.ir.verifier import verify

from .ir_corpus import CORPUS, Kit, func, ops_used, region, tt

HERE = Path(__file__).parent


def _structure(op: object) -> object:
    """A comparable summary of IR structure (names, types, attrs with NaN made comparable, nesting)."""
    from kdsl.ir.core import Operation

    assert isinstance(op, Operation)

    def attr(v: object) -> object:
        if isinstance(v, float) and math.isnan(v):
            return ("nan", math.copysign(1.0, v))
        if isinstance(v, tuple):
            return tuple(attr(x) for x in v)
        return (type(v).__name__, v)

    return (
        op.NAME,
        [v.type for v in op.operands],
        [r.type for r in op.results],
        sorted((k, attr(v)) for k, v in op.attributes.items()),
        [[([a.type for a in b.args], [_structure(o) for o in b.ops]) for b in r.blocks] for r in op.regions],
    )


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("locations", [False, True])
def test_corpus_round_trip(name: str, locations: bool) -> None:
    module = CORPUS[name]()
    text = print_op(module, locations=locations)
    parsed = parse_module(text)
    assert print_op(parsed, locations=locations) == text
    assert _structure(parsed) == _structure(module)


def test_corpus_covers_every_registered_op() -> None:
    used: set[str] = set()
    for build in CORPUS.values():
        used |= ops_used(build())
    missing = sorted(set(OPS) - used)
    assert not missing, f"ops missing from the round-trip corpus: {missing}"
    assert len(OPS) >= 66


def test_locations_round_trip_exactly() -> None:
    module = CORPUS["tile"]()
    parsed = parse_module(print_op(module, locations=True))
    orig = [op.loc for op in module.walk()]
    back = [op.loc for op in parsed.walk()]
    assert back == orig
    assert Location("kernel.py", 12, 5) in back


def test_ops_without_loc_get_their_text_position() -> None:
    text = "tile.func @f(%x: f32) {\n  %0 = arith.neg %x : f32\n  tile.return\n}\n"
    module = parse_module(text, filename="t.mlir")
    func_op = module.body.ops[0]
    assert func_op.loc == Location("t.mlir", 1, 1)
    assert func_op.regions[0].block.ops[0].loc == Location("t.mlir", 2, 8)


@pytest.mark.parametrize("path", sorted(HERE.glob("roundtrip_*.mlir")), ids=lambda p: p.name)
def test_golden_file_round_trip(path: Path) -> None:
    raw = path.read_text()
    body = "".join(line for line in raw.splitlines(keepends=True) if not line.startswith("//"))
    locations = "loc(" in body
    assert print_op(parse_module(raw, filename=path.name), locations=locations) + "\n" == body


def test_golden_files_exist_per_dialect() -> None:
    names = {p.name for p in HERE.glob("roundtrip_*.mlir")}
    for dialect in ("arith", "math", "scf", "tile"):
        assert f"roundtrip_{dialect}.mlir" in names


# --- exact text of the documented forms ----------------------------------------------


def test_documented_forms() -> None:
    m = ModuleOp.empty()
    k, (p, msk, oth) = func(m, "f", [("p", tt(128, T.PointerType(T.f32))), ("m", tt(128, T.i1)), ("o", tt(128, T.f32))],
                            [tt(128, T.f32)])
    r = k.v("tile.load", [p, msk, oth], tt(128, T.f32), hint="r")
    s = k.v("arith.add", [r, oth], tt(128, T.f32), hint="sum")
    k.op("tile.return", [s])
    verify(m)
    assert print_op(m) == (
        "builtin.module {\n"
        "  tile.func @f(%p: tile<128xptr<f32>>, %m: tile<128xi1>, %o: tile<128xf32>) -> (tile<128xf32>) {\n"
        "    %r = tile.load %p, %m, %o : (tile<128xptr<f32>>, tile<128xi1>, tile<128xf32>) -> tile<128xf32>\n"
        "    %sum = arith.add %r, %o : tile<128xf32>\n"
        "    tile.return %sum : tile<128xf32>\n"
        "  }\n"
        "}"
    )


def test_print_single_op_fragment() -> None:
    block = Block([T.i32, T.i32])
    add = Builder(block).create(OPS["arith.add"], block.args, [T.i32])
    assert print_op(add) == "%2 = arith.add %0, %1 : i32"
    assert print_op(add, locations=True) == "%2 = arith.add %0, %1 : i32 loc(unknown)"


def test_value_names_are_unique_sanitised_and_numbered_per_function() -> None:
    m = ModuleOp.empty()
    for fname in ("a", "b"):
        k, (x,) = func(m, fname, [("x", T.f32)], [T.f32])
        v1 = k.v("arith.neg", [x], T.f32, hint="x")  # clashes with the argument
        v2 = k.v("arith.neg", [v1], T.f32, hint="x_1")  # clashes with the generated suffix
        v3 = k.v("arith.neg", [v2], T.f32, hint="x.y z")  # invalid characters
        v4 = k.v("arith.neg", [v3], T.f32, hint="7")  # a number would clash with the counter
        v5 = k.v("arith.neg", [v4], T.f32)
        k.op("tile.return", [k.v("arith.neg", [v5], T.f32)])
    verify(m)
    text = print_op(m)
    body = (
        "    %x_1 = arith.neg %x : f32\n"
        "    %x_1_1 = arith.neg %x_1 : f32\n"
        "    %x_y_z = arith.neg %x_1_1 : f32\n"
        "    %v7 = arith.neg %x_y_z : f32\n"
        "    %0 = arith.neg %v7 : f32\n"
        "    %1 = arith.neg %0 : f32\n"
        "    tile.return %1 : f32\n"
    )
    assert text.count(body) == 2
    assert print_op(parse_module(text)) == text


def test_func_custom_form_folds_arg_names_and_result_types() -> None:
    m = ModuleOp.empty()
    k, (a, b) = func(m, "g", [("alpha", T.i32), ("beta", T.i32)], [T.i32, T.f32], extra={"kernel": False})
    k.op("tile.return", [a, k.v("arith.cast", [b], T.f32)])
    text = print_op(m)
    assert "tile.func @g(%alpha: i32, %beta: i32) -> (i32, f32) attributes {kernel = false} {" in text
    parsed = parse_module(text)
    f = parsed.body.ops[0]
    assert f.attributes["arg_names"] == ("alpha", "beta")
    assert f.attributes["result_types"] == (T.i32, T.f32)
    assert [arg.name_hint for arg in f.body.args] == ["alpha", "beta"]


def test_func_with_unfoldable_arg_names_keeps_them_as_attribute() -> None:
    m = ModuleOp.empty()
    k, _ = func(m, "weird name", [("a", T.i32), ("b", T.i32)], extra={"arg_names": ("x y", "0")})
    k.op("tile.return")
    text = print_op(m)
    assert 'tile.func @"weird name"(%0: i32, %1: i32) attributes {arg_names = ("x y", "0")} {' in text
    parsed = parse_module(text)
    assert parsed.body.ops[0].attributes["arg_names"] == ("x y", "0")
    assert parsed.body.ops[0].attributes["sym_name"] == "weird name"
    assert print_op(parsed) == text


def test_top_level_ops_are_wrapped_in_a_module_and_comments_ignored() -> None:
    text = (
        "// a comment\n"
        "tile.func @f(%n: i32) -> (i32) {  // trailing comment\n"
        "  tile.return %n : i32\n"
        "}\n"
    )
    module = parse_module(text)
    assert isinstance(module, ModuleOp)
    assert print_op(module) == "builtin.module {\n" + "".join(
        "  " + line + "\n" for line in ["tile.func @f(%n: i32) -> (i32) {", "  tile.return %n : i32", "}"]
    ) + "}"


def test_empty_module() -> None:
    assert print_op(ModuleOp.empty()) == "builtin.module {\n}"
    assert print_op(parse_module("")) == "builtin.module {\n}"
    assert print_op(parse_module("builtin.module {\n}")) == "builtin.module {\n}"


def test_parse_op_and_parse_type() -> None:
    op = parse_op("tile.func @f() {\n  tile.return\n}")
    assert op.NAME == "tile.func"
    assert parse_type("tile<4x8xptr<f16>>") == T.TileType((4, 8), T.PointerType(T.f16))
    assert parse_type("ptr<i8, 3>") == T.PointerType(T.i8, 3)
    assert parse_type(" bf16 ") == T.bf16


def test_generic_form_of_ops_with_regions_and_no_signature() -> None:
    # scf.while with no values: regions follow the op name directly
    m = ModuleOp.empty()
    k, _ = func(m, "w", [])
    before_r, before = region([])
    after_r, after = region([])
    k.op("scf.while", [], [], regions=[before_r, after_r])
    kb = Kit(before)
    kb.op("scf.condition", [kb.const(False, T.i1)])
    Kit(after).op("scf.yield")
    k.op("tile.return")
    verify(m)
    text = print_op(m)
    assert "    scf.while {\n      %0 = arith.constant {value = false} : i1\n" in text
    assert print_op(parse_module(text)) == text


def test_multi_block_region_prints_labels() -> None:
    # kdsl uses single-block regions, but the printer/parser handle labels generically
    m = ModuleOp.empty()
    b1, b2 = Block(), Block([T.i32])
    m.body.append(OPS["scf.while"]([], [], None, [Region([b1, b2]), Region([Block()])]))
    text = print_op(m)
    assert "^bb1(%0: i32):" in text
    assert print_op(parse_module(text, verify=False)) == text


# --- docs/IR.md stays true ---------------------------------------------------------------

DOC = HERE.parent.parent / "docs" / "IR.md"


def test_doc_example_is_printer_output() -> None:
    text = DOC.read_text()
    example = text.split("```mlir\n", 1)[1].split("```", 1)[0]
    assert print_op(parse_module(example)) + "\n" == example


def test_doc_lists_every_registered_op() -> None:
    text = DOC.read_text()
    missing = [name for name in OPS if f"| `{name}` |" not in text]
    assert not missing, f"docs/IR.md lacks {missing}; run: python -m kdsl.ir.printer --update-doc docs/IR.md"
