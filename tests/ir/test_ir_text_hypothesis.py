"""Property tests: random types, attribute values, names and symbols survive the text form."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kdsl.ir import types as T
from kdsl.ir.core import AttrValue, Block, Builder, Location, ModuleOp, Region, SymbolRef
from kdsl.ir.parser import parse_attr, parse_module, parse_type
from kdsl.ir.printer import format_attr, print_op
from kdsl.ir.registry import OPS

scalars = st.sampled_from(T.SCALAR_TYPES)
pointers = st.builds(T.PointerType, scalars, st.integers(0, 5))
elements = st.one_of(scalars, pointers)
tiles = st.builds(T.TileType, st.lists(st.integers(0, 4096), min_size=1, max_size=4).map(tuple), elements)
memrefs = st.builds(T.MemRefType, st.integers(0, 1 << 20), elements, st.sampled_from(T.MEMORY_SPACES))
types: st.SearchStrategy[T.Type] = st.one_of(scalars, pointers, tiles, memrefs)

texts = st.text(max_size=20)
leaves: st.SearchStrategy[AttrValue] = st.one_of(
    st.booleans(),
    st.integers(),
    st.integers(-(1 << 200), 1 << 200),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    types,
    texts.map(SymbolRef),
)
attr_values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=12)


def tagged(v: AttrValue) -> object:
    """Comparable form that distinguishes bool from int and float, and NaN by its sign."""
    if isinstance(v, float):
        return ("float", "nan", math.copysign(1.0, v)) if math.isnan(v) else ("float", v, math.copysign(1.0, v))
    if isinstance(v, tuple):
        return ("tuple", tuple(tagged(x) for x in v))
    return (type(v).__name__, v)


@given(types)
def test_types_round_trip(t: T.Type) -> None:
    assert parse_type(t.text()) == t
    assert parse_type(f"  {t.text()}  ") == t


@given(attr_values)
def test_attribute_values_round_trip(v: AttrValue) -> None:
    assert tagged(parse_attr(format_attr(v))) == tagged(v)


@settings(max_examples=50)
@given(st.dictionaries(st.one_of(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), texts), attr_values,
                       max_size=5))
def test_attribute_dicts_round_trip_through_a_module(attrs: dict[str, AttrValue]) -> None:
    m = ModuleOp.empty()
    Builder(m.body).create(OPS["tile.print"], attributes=attrs)
    text = print_op(m)
    parsed = parse_module(text, verify=False)
    assert print_op(parsed) == text
    got = parsed.body.ops[0].attributes
    assert {k: tagged(v) for k, v in got.items()} == {k: tagged(v) for k, v in attrs.items()}


@settings(max_examples=50)
@given(st.lists(st.one_of(st.none(), texts), min_size=1, max_size=8), texts, st.lists(types, min_size=1, max_size=3))
def test_random_names_and_symbols_round_trip(hints: list[str | None], fname: str, arg_types: list[T.Type]) -> None:
    m = ModuleOp.empty()
    block = Block()
    for i, t in enumerate(arg_types):
        block.add_arg(t, hints[i % len(hints)])
    attrs: dict[str, AttrValue] = {"sym_name": fname, "result_types": ()}
    Builder(m.body).create(OPS["tile.func"], attributes=attrs, regions=[Region([block])])
    b = Builder(block)
    last = None
    for h in hints:
        op = b.create(OPS["tile.program_id"], result_types=[T.i32], attributes={"axis": 0})
        op.result.name_hint = h
        last = op.result
    assert last is not None
    b.create(OPS["tile.print"], [last, *block.args], attributes={"prefix": fname})
    b.create(OPS["tile.return"])
    text = print_op(m)
    parsed = parse_module(text)
    assert print_op(parsed) == text
    assert parsed.body.ops[0].attributes["sym_name"] == fname
    defs = [line.split(" = ")[0] for line in text.splitlines() if " = tile.program_id" in line]
    assert len(set(defs)) == len(defs) == len(hints)


@settings(max_examples=50)
@given(st.lists(st.builds(Location, texts, st.integers(0, 10**6), st.integers(0, 10**4)), min_size=1, max_size=4))
def test_locations_round_trip(locs: list[Location]) -> None:
    m = ModuleOp.empty()
    b = Builder(m.body)
    for loc in locs:
        b.create(OPS["tile.print"], attributes={"prefix": "p"}, loc=loc)
    text = print_op(m, locations=True)
    parsed = parse_module(text, verify=False)
    assert [op.loc for op in parsed.body.ops] == locs
    assert print_op(parsed, locations=True) == text
