"""What a new process loads: ``import kdsl`` stays light, a disk-cache hit does no compiler work."""

from __future__ import annotations

import json
from pathlib import Path

from tests.subprocess_script import run_script

SCRIPT = '''
import json, sys
import numpy as np
import kdsl
import kdsl.language as kl
import kdsl.runtime.cache as cachemod

cachemod.compiler_fingerprint = lambda: "test-fingerprint"  # kdsl may be edited between the two processes
after_import = sorted(sys.modules)


@kdsl.kernel
def scale(x, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) * 2.0, mask=m)


x = np.arange(300, dtype=np.float32)
out = np.zeros_like(x)
with kdsl.backend("opencl"):
    scale[(2,)](x, out, 300, BLOCK=256)
assert np.array_equal(out, 2 * x)
print(json.dumps({"after_import": after_import, "after_launch": sorted(sys.modules), **cachemod.STATS.as_dict()}))
'''

# Neither a driver nor the autotuner's process pools at ``import kdsl``; no compiler stage on a warm start.
NOT_AT_IMPORT = ("pyopencl", "vulkan", "llvmlite", "multiprocessing", "concurrent.futures", "tempfile",
                 "kdsl.autotune.executor", "kdsl.transforms", "kdsl.runtime.opencl")
NOT_ON_A_HIT = ("kdsl.transforms", "kdsl.transforms.pass_manager", "kdsl.frontend.generator", "kdsl.lowering",
                "kdsl.codegen", "kdsl.ir.parser", "kdsl.ir.printer")


def run(tmp_path: Path) -> dict[str, object]:
    env = {"KDSL_CACHE_DIR": str(tmp_path / "cache")}
    result: dict[str, object] = json.loads(run_script(tmp_path, SCRIPT, env, drop=("KDSL_ALWAYS_COMPILE",), name="warm.py"))
    return result


def test_new_process_loads_only_what_it_needs(tmp_path: Path) -> None:
    cold = run(tmp_path)
    assert cold["disk_writes"] == 1
    assert not [m for m in NOT_AT_IMPORT if m in cold["after_import"]]  # type: ignore[operator]
    warm = run(tmp_path)
    assert warm["disk_hits"] == 1 and warm["frontend_compiles"] == 0 and warm["backend_compiles"] == 0
    assert not [m for m in NOT_ON_A_HIT if m in warm["after_launch"]]  # type: ignore[operator]
