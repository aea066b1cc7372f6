"""The disk cache of object code: hit in a new process, corruption detected, permissions."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, numpy as np, kdsl, kdsl.language as kl
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.runtime.cpu import CPUBackend

    @kdsl.kernel
    def scale_kernel(x_ptr, n, BLOCK: kl.constexpr):
        offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
        m = offs < n
        kl.store(x_ptr + offs, kl.load(x_ptr + offs, mask=m) * 2.0 + 1.0, mask=m)

    x = np.arange(100, dtype=np.float32)
    module = kdsl.compile_to_ir(scale_kernel, x, 100, BLOCK=64, optimize=True)
    kernel = CPUBackend().compile(module, "scale_kernel", LaunchOptions())
    kernel.launch((2, 1, 1), [x, 100])
    assert np.array_equal(x, np.arange(100, dtype=np.float32) * 2 + 1)
    print(json.dumps({"hit": kernel.stages.cache_hit}))
    """
)


def _run(tmp: Path, script: Path, **env: str) -> bool:
    full = {**os.environ, "KDSL_CACHE_DIR": str(tmp / "cache"), **env}
    full.pop("KDSL_ALWAYS_COMPILE", None) if "KDSL_ALWAYS_COMPILE" not in env else None
    out = subprocess.run([sys.executable, str(script)], env=full, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    hit: bool = json.loads(out.stdout.strip().splitlines()[-1])["hit"]
    return hit


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    p = tmp_path / "kernel_script.py"
    p.write_text(SCRIPT)
    return p


def test_second_process_hits_the_disk_cache(tmp_path: Path, script: Path) -> None:
    assert _run(tmp_path, script) is False
    assert _run(tmp_path, script) is True
    root = tmp_path / "cache" / "cpu"
    entries = [p for p in root.iterdir() if p.is_dir()]
    assert len(entries) == 1
    assert {p.name for p in entries[0].iterdir()} == {"kernel.ll", "kernel.o", "meta.json"}
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700


def test_corrupted_entry_is_rebuilt_not_loaded(tmp_path: Path, script: Path) -> None:
    assert _run(tmp_path, script) is False
    entry = next(p for p in (tmp_path / "cache" / "cpu").iterdir() if p.is_dir())
    obj = entry / "kernel.o"
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0xFF
    obj.write_bytes(bytes(data))
    assert _run(tmp_path, script) is False  # checksum mismatch: recompiled
    assert _run(tmp_path, script) is True  # and the rebuilt entry is valid


def test_always_compile_bypasses_the_cache(tmp_path: Path, script: Path) -> None:
    assert _run(tmp_path, script) is False
    assert _run(tmp_path, script, KDSL_ALWAYS_COMPILE="1") is False
