"""``python -m kdsl opt``: output, dumps, and clean one-line errors with exit code 1."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from kdsl.cli.opt import main

SRC = """\
tile.func @k(%x: i32, %p: ptr<i32>) attributes {kernel = true} {
  %c2 = arith.constant {value = 2} : i32
  %c3 = arith.constant {value = 3} : i32
  %six = arith.mul %c2, %c3 : i32
  %y = arith.mul %x, %six : i32
  tile.store %p, %y : ptr<i32>, i32
  tile.return
}
"""

EXPECTED = """\
builtin.module {
  tile.func @k(%x: i32, %p: ptr<i32>) attributes {kernel = true} {
    %six = arith.constant {value = 6} : i32
    %y = arith.mul %x, %six : i32
    tile.store %p, %y : ptr<i32>, i32
    tile.return
  }
}
"""


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "k.mlir"
    path.write_text(SRC)
    return path


def test_runs_pipeline(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(src), "-p", "canonicalize,cse,dce"]) == 0
    out = capsys.readouterr()
    assert out.out == EXPECTED
    assert out.err == ""


def test_accepts_pipeline_without_passes(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(src)]) == 0
    assert "arith.mul %c2, %c3" in capsys.readouterr().out


def test_stdin_and_locations(src: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(SRC))
    assert main(["-", "-p", "canonicalize", "--locations"]) == 0
    out = capsys.readouterr().out
    # the folded constant keeps the location of the op it replaced (line 4 of the input)
    assert '%six = arith.constant {value = 6} : i32 loc("<stdin>":4:10)' in out


def test_dump_after_each(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(src), "-p", "canonicalize,cse", "--dump-after-each"]) == 0
    err = capsys.readouterr().err
    assert "IR dump after canonicalize" in err and "IR dump after cse" in err


def test_dump_dir_and_output_file(src: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.mlir"
    assert main([str(src), "-p", "canonicalize", "--dump-dir", str(tmp_path / "d"), "-o", str(out)]) == 0
    assert out.read_text() == EXPECTED
    assert (tmp_path / "d" / "01-canonicalize.mlir").exists()
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        (SRC, ["-p", "canonicalize,bogus"], "kdsl opt: error: unknown pass 'bogus'"),
        (SRC, ["-p", "cse{a=1}"], "kdsl opt: error: pass 'cse' has no option 'a'"),
        ("tile.func @k() {\n  %a = arith.add %b, %b : i32\n  tile.return\n}\n", ["-p", "cse"],
         "k.mlir:2:18: error: use of undefined value %b"),
        ("tile.func @k() {\n  %a = arith.constant {value = 1.5} : i32\n  tile.return\n}\n", ["-p", "cse"],
         "k.mlir:2:8: error: 'arith.constant' op integer constant of type i32 has float value 1.5"),
        ("tile.func @f(%a: i32) -> (i32) {\n  %r = tile.call %a {callee = @f} : i32\n  tile.return %r : i32\n}\n",
         ["-p", "inline"], "k.mlir:2:8: error: recursive call cannot be inlined: @f -> @f"),
    ],
)
def test_errors_are_one_clean_message(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                      args: list[str], message: str) -> None:
    path = tmp_path / "k.mlir"
    path.write_text(text)
    assert main([str(path), *args]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "none.mlir"), "-p", "cse"]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_subprocess_entry_point(src: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kdsl", "opt", str(src), "-p", "inline,canonicalize,cse,dce"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == EXPECTED
    bad = subprocess.run(
        [sys.executable, "-m", "kdsl", "opt", str(src), "-p", "nope"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.strip().startswith("kdsl opt: error: unknown pass 'nope'")
