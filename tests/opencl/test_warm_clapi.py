"""A new process with a warm disk cache launches through clapi: no ``import pyopencl`` until device arrays."""

from __future__ import annotations

import json
from pathlib import Path

from tests.subprocess_script import run_script

SCRIPT = """
import json, sys
import numpy as np
import kdsl
import kdsl.language as kl
import kdsl.runtime.cache as cachemod

cachemod.compiler_fingerprint = lambda: "test-fingerprint"  # kdsl may be edited between the processes


@kdsl.kernel
def axpy(x, y, out, n, alpha, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, alpha * kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


x = np.arange(1000, dtype=np.float32)
y = np.ones_like(x)
out = np.zeros_like(x)
with kdsl.backend("opencl"):
    axpy[(4,)](x, y, out, 1000, 3.0, BLOCK=256)
    ok_numpy = bool(np.array_equal(out, 3 * x + 1))
    numpy_only = "pyopencl" not in sys.modules
    dx, dy, do = kdsl.tensor(x), kdsl.tensor(y), kdsl.empty(1000, np.float32)  # imports pyopencl
    axpy[(4,)](dx, dy, do, 1000, 2.0, BLOCK=256)
    ok_device = bool(np.array_equal(do.numpy(), 2 * x + 1))
    out[:] = 0
    axpy[(4,)](x, y, out, 1000, -1.0, BLOCK=256)
    ok_again = bool(np.array_equal(out, 1 - x))
print(json.dumps({"numpy_only": numpy_only, "ok": [ok_numpy, ok_device, ok_again], **cachemod.STATS.as_dict()}))
"""


def run(tmp_path: Path) -> dict[str, object]:
    # PYOPENCL_HOME dropped: clapi must set what pyopencl's bundled ICD loader needs itself
    env = {"KDSL_CACHE_DIR": str(tmp_path / "cache")}
    result: dict[str, object] = json.loads(
        run_script(tmp_path, SCRIPT, env, drop=("KDSL_ALWAYS_COMPILE", "PYOPENCL_HOME"), name="warm.py")
    )
    return result


def test_numpy_launches_never_import_pyopencl(tmp_path: Path) -> None:
    cold = run(tmp_path)
    assert cold["disk_writes"] == 1 and cold["ok"] == [True, True, True]
    assert cold["numpy_only"]  # even a cold compile builds through clapi
    warm = run(tmp_path)
    assert warm["disk_hits"] == 1 and warm["backend_compiles"] == 0 and warm["ok"] == [True, True, True]
    assert warm["numpy_only"]


THREADS = """
import json, sys, threading
import numpy as np
import kdsl
import kdsl.language as kl


@kdsl.kernel
def add(x, y, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


x = np.arange(1000, dtype=np.float32)
errors = []


def worker(v):
    try:
        with kdsl.backend("opencl"):
            for _ in range(100):
                out = np.zeros_like(x)
                add[(4,)](x, x * v, out, 1000, BLOCK=256)
                if not np.array_equal(out, x + x * v):
                    errors.append(f"wrong result for {v}")
    except Exception as e:
        errors.append(repr(e))


threads = [threading.Thread(target=worker, args=(v,)) for v in (1.0, 2.0, 3.0)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"errors": errors[:3], "numpy_only": "pyopencl" not in sys.modules}))
"""


def test_threads_launching_first_at_once(tmp_path: Path) -> None:
    """clapi releases the GIL: concurrent first launches (device enumeration) and launches of one kernel."""
    result = json.loads(run_script(tmp_path, THREADS, {"KDSL_CACHE_DIR": str(tmp_path / "cache")}, name="threads.py"))
    assert result == {"errors": [], "numpy_only": True}
