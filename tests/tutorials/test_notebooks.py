"""Every tutorial notebook executes (small sizes), and the stored notebooks are up to date.

Notebooks run with nbclient on this interpreter's venv: the kernelspec is
pointed at ``sys.executable`` explicitly, so a system-wide ``python3`` kernel is
never picked up by accident. ``KDSL_TUTORIAL_SMALL=1`` makes each notebook use
tiny sizes (see ``tutorials/tutorial_utils.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "tutorials"
NOTEBOOKS = sorted(TUTORIALS.glob("[0-9][0-9]-*.ipynb"))


def _builder() -> Any:
    spec = importlib.util.spec_from_file_location("build_notebooks", TUTORIALS / "build_notebooks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_tutorial_is_present() -> None:
    names = [p.stem for p in NOTEBOOKS]
    assert [n[:2] for n in names] == [f"{i:02d}" for i in range(1, 12)], names
    assert {p.stem for p in (TUTORIALS / "src").glob("*.py")} == set(names)


def test_notebooks_are_up_to_date() -> None:
    """Regenerating from tutorials/src gives byte-identical notebooks, stored without outputs."""
    for path, text in _builder().targets().items():
        assert path.exists(), f"{path.name} missing: run python tutorials/build_notebooks.py"
        assert path.read_text() == text, f"{path.name} is stale: run python tutorials/build_notebooks.py"
        nb = json.loads(text)
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    monkeypatch.setenv("KDSL_TUTORIAL_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the venv's python, whatever kernelspecs are installed on the machine
    spec = KernelSpec(argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                      display_name="kdsl venv", language="python")  # fmt: skip

    class VenvSpecs(KernelSpecManager):  # type: ignore[misc]
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return spec

    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_spec_manager=VenvSpecs(), kernel_name="python3")
    client = nbclient.NotebookClient(
        nb, km=km, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(TUTORIALS)}}
    )
    env_before = dict(os.environ)
    client.execute()
    assert dict(os.environ) == env_before
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert not errors
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, "every tutorial ends with a benchmark plot"
