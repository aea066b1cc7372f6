"""The OpenCL driver preload (``kdsl.runtime.preload``): when it starts, what it maps, fork safety."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kdsl
from kdsl.runtime import preload
from tests.subprocess_script import run_script

PROBE = """
import json, kdsl
from kdsl.runtime import preload
preload.join()
print(json.dumps({"threads": len(preload._THREAD), "mapped": len(preload._HANDLES)}))
"""

# The first child is forked right after ``import kdsl`` (while or after the preload maps PoCL) and
# launches on OpenCL: it must work, as it did before the preload existed.
FORK = """
import multiprocessing as mp
import numpy as np, kdsl, kdsl.language as kl

@kdsl.kernel
def add(x, o, n, B: kl.constexpr):
    i = kl.program_id(0) * B + kl.arange(0, B)
    kl.store(o + i, kl.load(x + i, mask=i < n) * 2.0, mask=i < n)

def child(q):
    x = np.arange(1000, dtype=np.float32); o = np.empty_like(x)
    with kdsl.backend("opencl"):
        add[(4,)](x, o, 1000, B=256)
    q.put(bool((o == 2 * x).all()))

if __name__ == "__main__":
    ctx = mp.get_context("fork"); q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,)); p.start()
    print("child", q.get(timeout=120)); p.join()
"""


def _run(code: str, tmp_path: Path, **env: str) -> str:
    return run_script(tmp_path, code, env, drop=("KDSL_BACKEND", "KDSL_PRELOAD"))


def test_vendor_libraries_reads_icd_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.icd").write_text("libfirst.so.1\n")
    (tmp_path / "b.icd").write_text("/opt/x/libsecond.so\n")
    (tmp_path / "notes.txt").write_text("libignored.so\n")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path))
    assert preload.vendor_libraries() == ["libfirst.so.1", "/opt/x/libsecond.so"]
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path / "b.icd"))
    assert preload.vendor_libraries() == ["/opt/x/libsecond.so"]
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path / "missing"))
    assert preload.vendor_libraries() == []


@pytest.mark.parametrize(
    ("env", "wanted"),
    [({}, True), ({"KDSL_BACKEND": "opencl"}, True), ({"KDSL_BACKEND": "cpu"}, False), ({"KDSL_PRELOAD": "0"}, False)],
)
def test_wanted_follows_the_environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], wanted: bool) -> None:
    monkeypatch.delenv("KDSL_BACKEND", raising=False)
    monkeypatch.delenv("KDSL_PRELOAD", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    has_pyopencl = preload.find_spec("pyopencl") is not None
    assert preload.wanted() == (wanted and has_pyopencl)


def test_import_maps_the_driver_only_when_opencl_is_used(tmp_path: Path) -> None:
    if not preload.vendor_libraries() or preload.find_spec("pyopencl") is None:
        pytest.skip("no OpenCL ICD registered (nothing to preload)")
    on = json.loads(_run(PROBE, tmp_path))
    assert on["threads"] == 1 and on["mapped"] >= 1
    assert json.loads(_run(PROBE, tmp_path, KDSL_BACKEND="cpu")) == {"threads": 0, "mapped": 0}
    assert json.loads(_run(PROBE, tmp_path, KDSL_PRELOAD="0")) == {"threads": 0, "mapped": 0}


def test_a_child_forked_after_import_launches_on_opencl(tmp_path: Path) -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("backend 'opencl' unavailable")
    assert _run(FORK, tmp_path) == "child True"
