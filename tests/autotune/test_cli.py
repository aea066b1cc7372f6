"""python -m kdsl tune: offline sweep, report files, database, --show."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kdsl.cli.tune import main

FILE = textwrap.dedent(
    """
    import numpy as np
    import kdsl, kdsl.language as kl
    from kdsl.autotune import Config, autotune

    @autotune(configs=[Config({"BLOCK": b}) for b in (32, 64, 128)], key=["n"], warmup=0.5, rep=2, max_repeats=3)
    @kdsl.kernel
    def add(x, y, out, n, BLOCK: kl.constexpr):
        offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
        m = offs < n
        kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)

    def tune_inputs(n):
        x = np.ones(n, np.float32)
        return (lambda meta: (kdsl.cdiv(n, meta["BLOCK"]),)), (x, x, np.empty_like(x), n)
    """
)


def test_tune_sweep_report_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "kern.py"
    path.write_text(FILE)
    out = tmp_path / "report"
    assert main([f"{path}::add", "--shapes", "n=100", "n=300", "--backend", "interpreter", "--out", str(out)]) == 0
    rows = json.loads((out / "tune_report.json").read_text())
    assert len(rows) == 6 and sum(r["best"] for r in rows) == 2
    assert (out / "tune_report.png").exists() and (out / "tune_report.csv").exists()
    capsys.readouterr()
    assert main(["--show"]) == 0
    shown = capsys.readouterr().out
    assert "add" in shown and shown.count("3 configs measured") == 2
