"""Repository hygiene: lint-clean, every module imports, modules stay small.

These guard the things a newcomer trips over first: a module that no longer
imports (a dead file or a circular import), lint drift, and files growing into
monoliths (STYLE.md: median ~150 lines, soft cap ~600).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import runpy
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kdsl"
SOFT_CAP = 600  # lines: warn above this
HARD_CAP = 800  # lines: fail above this


def _module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def _line_counts() -> dict[str, int]:
    """Lines per hand-written module. Generated tables (a module whose docstring's
    first line says ``GENERATED``, naming the script that writes it) are exempt."""
    counts = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        if lines and "GENERATED" in lines[0]:
            continue
        counts[str(path.relative_to(ROOT))] = len(lines)
    return counts


@pytest.mark.parametrize("name", _module_names())
def test_module_imports(name: str) -> None:
    try:
        importlib.import_module(name)
    except OSError as exc:  # a driver's shared library (libvulkan, libOpenCL) is missing
        pytest.skip(f"{name} needs a system library: {exc} (run scripts/setup.sh as root, or see README.md)")


def test_ruff_clean() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    targets = [t for t in ("kdsl", "tests", "bench") if (ROOT / t).exists()]
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"ruff check failed:\n{proc.stdout}{proc.stderr}"


def test_module_sizes() -> None:
    counts = _line_counts()
    median = statistics.median(counts.values())
    biggest = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    print(f"\n{len(counts)} modules, median {median:.0f} lines; largest: " + ", ".join(f"{p} {n}" for p, n in biggest))
    for path, n in counts.items():
        if SOFT_CAP < n <= HARD_CAP:
            warnings.warn(f"{path} has {n} lines (soft cap {SOFT_CAP}): consider splitting it", stacklevel=1)
    too_big = {p: n for p, n in counts.items() if n > HARD_CAP}
    assert not too_big, f"modules over {HARD_CAP} lines: {too_big}"


def test_environment_variables_are_documented() -> None:
    """docs/ENVIRONMENT.md promises to list every KDSL_* variable the project reads."""
    doc = (ROOT / "docs" / "ENVIRONMENT.md").read_text()
    sources = [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "scripts").glob("*")]
    used = {m for path in sources if path.is_file() for m in re.findall(r"\bKDSL_[A-Z][A-Z0-9_]*\b", path.read_text())}
    missing = sorted(name for name in used if f"`{name}`" not in doc)
    assert not missing, f"environment variables missing from docs/ENVIRONMENT.md: {missing}"


def test_readme_example_runs(tmp_path: Path) -> None:
    """The kernel example in README.md is real code: it runs and its assert holds."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "README.md has no ```python example"
    script = tmp_path / "readme_example.py"
    script.write_text(blocks[0])
    runpy.run_path(str(script), run_name="__main__")
