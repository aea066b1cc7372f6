"""The OpenCL disk cache: a new process loads the program binary (no OpenCL C compile); bad binaries are rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.subprocess_script import run_script

SCRIPT = '''
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import kdsl
import kdsl.language as kl
from kdsl.runtime.cache import STATS
from kdsl.runtime.opencl import get_device
import kdsl.runtime.cache as cachemod

# Pin the compiler fingerprint (a hash of kdsl's .py files): these tests are about the
# backend's entries, and must not depend on the source tree staying untouched between
# the processes of one test (it is edited concurrently during development).
cachemod.compiler_fingerprint = lambda: "test-fingerprint"


@kdsl.kernel
def scale_add(x, out, n, alpha, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) * alpha + 1.0, mask=m)


x = np.arange(1000, dtype=np.float32)
out = np.zeros_like(x)
t1 = time.perf_counter()
with kdsl.backend("opencl"):
    scale_add[(4,)](x, out, 1000, 2.0, BLOCK=256)
t2 = time.perf_counter()
assert np.array_equal(out, x * 2 + 1), out
dev = get_device()
print(json.dumps({**STATS.as_dict(), "source_builds": dev.source_builds, "binary_loads": dev.binary_loads,
                  "first_launch_ms": (t2 - t1) * 1e3}))
'''


def run(tmp: Path) -> dict[str, float]:
    env = {"KDSL_CACHE_DIR": str(tmp / "cache")}
    out: dict[str, float] = json.loads(run_script(tmp, SCRIPT, env, drop=("KDSL_ALWAYS_COMPILE",), name="cache_script.py"))
    return out


def entry(tmp: Path) -> Path:
    (d,) = [p for p in (tmp / "cache").iterdir() if not p.name.startswith(".")]
    return d


def test_second_process_loads_the_binary(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first["disk_misses"] == 1 and first["disk_writes"] == 1 and first["source_builds"] == 1
    d = entry(tmp_path)
    assert {"kernel.cl", "wi.mlir", "program.bin", "opt.mlir", "tile.mlir"} <= {p.name for p in d.iterdir()}
    meta = json.loads((d / "metadata.json").read_text())
    assert meta["backend_loadable"] and "driver=" in meta["fields"]["device"]
    second = run(tmp_path)
    assert second["disk_hits"] == 1 and second["frontend_compiles"] == 0 and second["backend_compiles"] == 0
    assert second["source_builds"] == 0 and second["binary_loads"] == 1  # no OpenCL C compile at all


@pytest.mark.parametrize("fix_checksum", [False, True])
def test_corrupted_binary_is_rebuilt(tmp_path: Path, fix_checksum: bool) -> None:
    """Checksum mismatch -> rejected by the cache; a valid-checksum garbage binary -> rejected by the driver."""
    import hashlib

    run(tmp_path)
    d = entry(tmp_path)
    bad = b"\x7fELF-not-really" * 64
    (d / "program.bin").write_bytes(bad)
    if fix_checksum:
        meta = json.loads((d / "metadata.json").read_text())
        meta["files"]["program.bin"] = {"sha256": hashlib.sha256(bad).hexdigest(), "size": len(bad)}
        (d / "metadata.json").write_text(json.dumps(meta))
    second = run(tmp_path)
    assert second["disk_rejected"] == 1 and second["source_builds"] == 1 and second["disk_writes"] == 1
    third = run(tmp_path)  # the rebuilt entry replaced the bad one
    assert third["disk_hits"] == 1 and third["source_builds"] == 0 and third["binary_loads"] == 1
