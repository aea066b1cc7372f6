"""``python -m kdsl compile`` (kdsl.cli.compile.main)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdsl.cli.compile import main

KERNELS = str(Path(__file__).parent / "fe_kernels.py")
BAD = str(Path(__file__).parent / "fe_bad_kernels.py")


def test_prints_tile_ir(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([f"{KERNELS}::vector_add", "--signature", "x_ptr:*fp32,y_ptr:*f32,out_ptr:*f32,n:i32",
               "--constexpr", "BLOCK=64", "--emit", "tile"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "tile.func @vector_add(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32)" in out
    assert "tile.arange {end = 64, start = 0}" in out


def test_positional_signature_and_locations(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([f"{KERNELS}::vector_add", "-s", "*f16,*f16,*f16,i64", "-c", "BLOCK=32", "--locations"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "%n: i64" in out and "ptr<f16>" in out
    assert f'loc("{KERNELS}":' in out


def test_compile_error_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main([f"{BAD}::arange_not_pow2", "-s", "x_ptr:*f32"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "power of 2" in err and "kl.arange(0, 6)" in err and "^" in err


def test_bad_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([f"{KERNELS}::nope"]) == 1
    assert "no @kdsl.kernel named 'nope'" in capsys.readouterr().err
    assert main(["missing.py::k"]) == 1
    assert main([f"{KERNELS}::vector_add", "-s", "x_ptr:*f33"]) == 1
