"""Run a test's Python script in a fresh interpreter (what a new user process sees: imports,
driver start-up, the disk cache) and return the last line it printed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path


def run_script(
    tmp_path: Path,
    code: str,
    env: Mapping[str, str] | None = None,
    drop: Iterable[str] = (),
    name: str = "script.py",
    timeout: float = 300,
) -> str:
    """``code`` written to ``tmp_path/name`` (kernels need a source file) and run with the test
    environment plus ``env``, minus the variables in ``drop``; fails the test on a non-zero exit."""
    script = tmp_path / name
    script.write_text(code)
    full = {k: v for k, v in os.environ.items() if k not in set(drop)}
    full.update(env or {})
    out = subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]
