"""Generate the tutorial notebooks (``NN-name.ipynb``) from their plain sources in ``src/``.

A source is a Python file in the "percent" format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell whose lines are ``# ``-prefixed comments.
Notebooks are written without outputs and with deterministic cell ids, so a
rebuild of unchanged sources gives byte-identical files (a test checks this:
the notebooks in git are never stale). Run ``python tutorials/build_notebooks.py``
after editing a source; ``--check`` exits 1 if any notebook is out of date.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"

METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def split_cells(text: str) -> list[tuple[str, str]]:
    """(cell_type, source) pairs of a percent-format file."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            cells.append(("markdown" if "[markdown]" in line else "code", []))
            continue
        if not cells:
            continue  # text before the first marker (a module docstring) is not part of the notebook
        cells[-1][1].append(line)
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in lines]
        body = "\n".join(lines).strip("\n")
        if body:
            out.append((kind, body))
    return out


def to_notebook(text: str, stem: str) -> str:
    cells = []
    for i, (kind, body) in enumerate(split_cells(text)):
        lines = body.splitlines(keepends=True)
        cell: dict[str, object] = {"cell_type": kind, "id": f"{stem}-{i:02d}", "metadata": {}, "source": lines}
        if kind == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        cells.append(cell)
    nb = {"cells": cells, "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def targets() -> dict[Path, str]:
    """notebook path -> its JSON text, for every source."""
    return {HERE / f"{src.stem}.ipynb": to_notebook(src.read_text(), src.stem) for src in sorted(SRC.glob("*.py"))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="do not write; exit 1 if a notebook is stale")
    args = p.parse_args(argv)
    stale = [path for path, text in targets().items() if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"stale: {path.name} (run python tutorials/build_notebooks.py)")
        return 1 if stale else 0
    for path, text in targets().items():
        path.write_text(text)
    print(f"wrote {len(targets())} notebooks ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
