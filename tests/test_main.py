"""``python -m kdsl``: the dispatcher's contract (exit codes, help, version)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kdsl.__main__ import COMMANDS, main, version


def run_kdsl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kdsl", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_version() -> None:
    proc = run_kdsl("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"kdsl {version()}"
    assert version()[0].isdigit()


def test_unknown_command_is_usage_error() -> None:
    proc = run_kdsl("no-such-command")
    assert proc.returncode == 2
    assert "unknown command 'no-such-command'" in proc.stderr
    assert "usage: python -m kdsl" in proc.stderr


def test_no_command_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: python -m kdsl" in capsys.readouterr().err


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"  {name} " in out


def test_demo_help() -> None:
    proc = run_kdsl("demo", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "--backend" in proc.stdout


def test_demo_runs_and_matches_numpy(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The README's demo, end to end, on every available backend (``backend``: tests/conftest.py)."""
    code = main(["demo", "--small", "--repeat", "1", "--backend", backend])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"on backend '{backend}'" in out
    for kernel in ("vector add", "fused softmax", "matmul", "matmul+leaky_relu"):
        row = next(line for line in out.splitlines() if line.startswith(kernel + " "))
        assert row.rstrip().endswith("ok"), row
    assert "tile.func @add_kernel(" in out
    assert "tile.store" in out


def test_demo_unknown_backend_fails_cleanly() -> None:
    proc = run_kdsl("demo", "--small", "--backend", "no-such-backend")
    assert proc.returncode != 0
    assert "no-such-backend" in proc.stderr
    assert "Traceback" not in proc.stderr
