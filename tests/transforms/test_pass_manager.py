"""Pipeline text, typed options, verification after passes and IR dumps."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from kdsl.ir.core import ModuleOp
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.types import i32
from kdsl.transforms import PASSES, Option, Pass, PassError, PassManager, Tunable, default_pipeline, parse_pipeline

SRC = """
tile.func @k(%x: i32, %p: ptr<i32>) attributes {kernel = true} {
  %c0 = arith.constant {value = 0} : i32
  %a = arith.add %x, %c0 : i32
  %b = arith.add %x, %c0 : i32
  %s = arith.mul %a, %b : i32
  tile.store %p, %s : ptr<i32>, i32
  tile.return
}
"""


class Tile(Pass):
    """A pass with options of every kind, to exercise the parser."""

    name = "test-tile"
    OPTIONS: ClassVar[tuple[Option, ...]] = (
        Option("sizes", int, (), "tile sizes", is_list=True),
        Option("swizzle", bool, False),
        Option("factor", float, 1.0),
        Option("mode", str, "auto"),
    )
    ran: ClassVar[list[dict[str, Any]]] = []

    def run(self, module: ModuleOp) -> None:
        Tile.ran.append(dict(self.options))

    def tunables(self) -> list[Tunable]:
        return [Tunable("sizes", ((32, 32), (64, 64)))]


class Breaker(Pass):
    """Leaves the IR invalid (a function declared to return a value it does not) to test verification."""

    name = "test-break"

    def run(self, module: ModuleOp) -> None:
        module.body.ops[0].attributes["result_types"] = (i32,)


REGISTRY = {**PASSES, "test-tile": Tile, "test-break": Breaker}


def test_registry_and_default_pipeline() -> None:
    assert set(PASSES) >= {"inline", "canonicalize", "cse", "dce"}
    for name, cls in PASSES.items():
        assert cls.name == name
    for name in ("inline", "canonicalize", "cse", "dce"):  # the generic cleanup has no knobs
        assert PASSES[name]().tunables() == []
    pm = default_pipeline()
    assert str(pm) == "inline,fp8-to-bytes,canonicalize,cse,wrap-version,ptr-offsets,mask-elim,loop-split,unroll,canonicalize,cse,dce"
    assert [p.name for p in pm.passes][:4] == ["inline", "fp8-to-bytes", "canonicalize", "cse"]
    # their knobs reach the JIT's pipeline as launch options "pass.option" (tests/autotune/test_knobs.py)
    assert {p.name for p in pm.passes if p.tunables()} == {"mask-elim", "loop-split", "unroll"}
    assert str(default_pipeline(optimize=False)) == "inline,fp8-to-bytes,canonicalize,cse,dce"


def test_default_pipeline_end_to_end() -> None:
    m = parse_module(SRC)
    default_pipeline().run(m)
    text = print_op(m)
    assert "%s = arith.mul %x, %x : i32" in text
    assert "arith.add" not in text and "arith.constant" not in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("test-tile{sizes=64,64}", {"sizes": (64, 64), "swizzle": False, "factor": 1.0, "mode": "auto"}),
        ("test-tile{sizes=64,64,swizzle=true}", {"sizes": (64, 64), "swizzle": True}),
        ("test-tile{sizes=16 swizzle=1 factor=2.5 mode=fast}", {"sizes": (16,), "swizzle": True, "factor": 2.5, "mode": "fast"}),
        ("test-tile { factor=3 }", {"factor": 3.0}),
        ("test-tile{sizes=0x10,8}", {"sizes": (16, 8)}),
        ("test-tile{}", {"sizes": ()}),
    ],
)
def test_option_parsing(text: str, expected: dict[str, Any]) -> None:
    pm = parse_pipeline(text, registry=REGISTRY)
    (p,) = pm.passes
    for key, value in expected.items():
        assert p.options[key] == value
    assert p.tunables() == [Tunable("sizes", ((32, 32), (64, 64)))]


def test_pipeline_text_round_trips() -> None:
    text = "inline,test-tile{sizes=64,64,swizzle=true},cse"
    pm = parse_pipeline(text, registry=REGISTRY)
    assert pm.pipeline_text() == text
    assert parse_pipeline(pm.pipeline_text(), registry=REGISTRY).pipeline_text() == text


def test_passes_run_in_order_with_options() -> None:
    Tile.ran.clear()
    m = parse_module(SRC)
    parse_pipeline("test-tile{mode=a}, canonicalize ,test-tile{mode=b}", registry=REGISTRY).run(m)
    assert [r["mode"] for r in Tile.ran] == ["a", "b"]


def test_python_options_are_checked() -> None:
    assert Tile(sizes=[8, 8]).options["sizes"] == (8, 8)
    assert Tile(factor=2).options["factor"] == 2.0
    with pytest.raises(PassError, match="option 'swizzle' expects bool"):
        Tile(swizzle="yes")
    with pytest.raises(PassError, match="option 'sizes' expects a list of int"):
        Tile(sizes=8)
    with pytest.raises(PassError, match="has no option 'tile'"):
        Tile(tile=1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("inline,nope", "unknown pass 'nope' (known passes: canonicalize, cse, dce,"),
        ("cse{x=1}", "pass 'cse' has no option 'x' (it takes no options)"),
        ("test-tile{size=1}", "pass 'test-tile' has no option 'size' (options: sizes, swizzle, factor, mode)"),
        ("test-tile{sizes=a,b}", "option 'sizes' expects int, got 'a'"),
        ("test-tile{swizzle=maybe}", "option 'swizzle' expects bool, got 'maybe'"),
        ("test-tile{factor=x}", "option 'factor' expects float"),
        ("test-tile{sizes=1", "unclosed '{'"),
        ("test-tile{=1}", "option without a name"),
        ("test-tile{mode=a mode=b}", "option 'mode' given twice"),
        ("test-tile{8}", "expected key=value"),
        ("cse dce", "expected ',' after pass 'cse'"),
        ("cse}", "unexpected '}'"),
        ("c$e", "invalid pass name"),
    ],
)
def test_pipeline_errors(text: str, message: str) -> None:
    with pytest.raises(PassError) as info:
        parse_pipeline(text, registry=REGISTRY)
    assert message in str(info.value)


def test_empty_pipeline_is_valid() -> None:
    m = parse_module(SRC)
    before = print_op(m)
    parse_pipeline("").run(m)
    assert print_op(m) == before


def test_verification_after_each_pass_names_the_pass() -> None:
    m = parse_module(SRC)
    with pytest.raises(PassError, match=r"IR verification failed after pass 'test-break' at .*:2:1: 'tile.func' op returns \(\) but is declared to return \(i32\)"):
        parse_pipeline("canonicalize,test-break,cse", registry=REGISTRY).run(m)


def test_verification_can_be_turned_off() -> None:
    m = parse_module(SRC)
    parse_pipeline("test-break", registry=REGISTRY, verify=False).run(m)


def test_invalid_input_is_reported() -> None:
    m = parse_module(SRC)
    PassManager([Breaker()], verify=False).run(m)
    with pytest.raises(PassError, match="after the input of the pipeline"):
        default_pipeline().run(m)


def test_dump_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    m = parse_module(SRC)
    parse_pipeline("canonicalize,cse", dump=True).run(m)
    err = capsys.readouterr().err
    assert err.index("IR dump input") < err.index("IR dump after canonicalize") < err.index("IR dump after cse")
    assert "arith.add %x, %c0" in err  # the input
    assert err.rstrip().endswith(print_op(m).rstrip())


def test_dump_from_environment(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KDSL_DUMP", "1")
    default_pipeline().run(parse_module(SRC))
    err = capsys.readouterr().err
    for name in ("inline", "canonicalize", "cse", "dce"):
        assert f"IR dump after {name}" in err
    monkeypatch.setenv("KDSL_DUMP", "0")
    default_pipeline().run(parse_module(SRC))
    assert capsys.readouterr().err == ""


def test_dump_to_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = parse_module(SRC)
    parse_pipeline("canonicalize,cse", dump=tmp_path / "d").run(m)
    names = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert names == ["00-input.mlir", "01-canonicalize.mlir", "02-cse.mlir"]
    assert (tmp_path / "d" / "02-cse.mlir").read_text() == print_op(m) + "\n"
    # every dump parses back
    for p in (tmp_path / "d").iterdir():
        parse_module(p.read_text(), str(p))
    monkeypatch.setenv("KDSL_DUMP", str(tmp_path / "env"))
    default_pipeline().run(parse_module(SRC))
    assert (tmp_path / "env" / f"{len(default_pipeline().passes):02d}-dce.mlir").exists()


def test_timings_recorded() -> None:
    pm = default_pipeline()
    pm.run(parse_module(SRC))
    assert [n for n, _ in pm.timings] == [p.name for p in pm.passes]
    assert [n for n, _ in pm.timings][:4] == ["inline", "fp8-to-bytes", "canonicalize", "cse"] and pm.timings[-1][0] == "dce"
    assert all(t >= 0 for _, t in pm.timings)


def test_verify_at_the_end_only_still_catches_a_broken_pass() -> None:
    """``verify_each=False`` (the JIT's default) checks the final IR and says how to find the pass."""
    m = parse_module(SRC)
    pm = parse_pipeline("canonicalize,test-break,cse", registry=REGISTRY)
    pm.verify_each = False
    with pytest.raises(PassError, match=r"after the pipeline 'canonicalize,test-break,cse' \(set KDSL_VERIFY_EACH_PASS=1"):
        pm.run(m)


def test_input_verified_skips_only_the_input_check() -> None:
    m = parse_module(SRC)
    PassManager([Breaker()], verify=False).run(m)
    parse_pipeline("", registry=REGISTRY).run(m, input_verified=True)  # nothing ran, nothing checked
    with pytest.raises(PassError, match="after pass 'cse'"):
        parse_pipeline("cse", registry=REGISTRY).run(m, input_verified=True)


def test_jit_verifies_each_pass_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JIT's pipeline verifies once at the end, after every pass with KDSL_VERIFY_EACH_PASS=1."""
    from kdsl.ir import verifier
    from kdsl.runtime import jit
    from kdsl.transforms import pass_manager

    calls: list[int] = []

    def counting(module: ModuleOp) -> None:
        calls.append(1)
        verifier.verify(module)

    monkeypatch.setattr(pass_manager, "verify", counting)
    monkeypatch.delenv("KDSL_VERIFY_EACH_PASS", raising=False)
    monkeypatch.delenv("KDSL_DUMP", raising=False)
    jit.run_default_pipeline(parse_module(SRC))
    assert len(calls) == 1
    calls.clear()
    monkeypatch.setenv("KDSL_VERIFY_EACH_PASS", "1")
    jit.run_default_pipeline(parse_module(SRC))
    assert len(calls) == len(default_pipeline().passes)
