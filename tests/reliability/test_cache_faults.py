"""Cache faults and concurrency (fast versions; tools/cache_stress.py is the long one).

Complements tests/runtime/test_cache.py (which covers single truncations, a
path under a file and a simulated ENOSPC) with: concurrent processes, every
byte class of damage on every file, an entry replaced by another kernel's,
a real read-only file system (``/proc``: blocks root too) and a real "disk
full" (``RLIMIT_FSIZE`` in a subprocess: writes fail with ``EFBIG``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import kdsl
from kdsl.runtime import cache as cachemod
from kdsl.runtime.cache import STATS, CacheWarning

from . import cache_kernels as K

HERE = Path(__file__).resolve().parent


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("KDSL_CACHE_DIR", str(d))
    monkeypatch.delenv("KDSL_ALWAYS_COMPILE", raising=False)
    STATS.reset()
    return d


def entries(d: Path) -> list[Path]:
    skip = ("cpu", "autotune")
    return sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in skip)


def launch(kernel: kdsl.KernelFunction, s: int = 3, backend: str = "interpreter") -> np.ndarray:
    """A fresh KernelFunction (empty in-memory cache) launched once; returns the output."""
    k = kdsl.kernel(kernel.fn)
    x = np.arange(100, dtype=np.float32)
    o = np.zeros(100, np.float32)
    with kdsl.backend(backend):
        k[(4,)](x, o, 100, S=s, BLOCK=32)
    return o


def expected(kernel: kdsl.KernelFunction, s: int = 3) -> np.ndarray:
    x = np.arange(100, dtype=np.float32)
    return x * s if kernel is K.scale else x + s


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ, KDSL_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *sys.path])
    env.pop("KDSL_ALWAYS_COMPILE", None)
    return env


def test_eight_processes_compile_the_same_kernel(cache: Path) -> None:
    start = time.time() + 3.0  # all workers are imported and waiting by then (most of the time)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", K.WORKER, str(start), "interpreter"],
            env=_env(cache),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "Warning" not in err, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["ok"] for r in results)
    (entry,) = entries(cache)
    # leftovers of atomic writes: entry temp dirs (.tmp-*) and the compiler-hash memo's temp files (*.tmp);
    # the memo itself (.compiler-*.json, docs/CACHE.md) is meant to stay
    left = [p for p in cache.iterdir() if p.name.startswith(".tmp-") or p.name.endswith(".tmp")]
    assert not left, f"temporary files left behind: {left}"
    assert cachemod.verify_entry(entry, entry.name, (entry / "metadata.json").read_bytes()) is not None
    # and the survivor is used by the next process
    r = subprocess.run(
        [sys.executable, "-c", K.WORKER, "0", "interpreter"],
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=120,
    )
    stats = json.loads(r.stdout.strip().splitlines()[-1])
    assert stats["ok"] and stats["stats"]["disk_hits"] == 1 and stats["stats"]["frontend_compiles"] == 0


def test_eight_processes_tune_the_same_kernel(cache: Path) -> None:
    """8 autotuners at once: right results, one valid compile entry per config, one tuning
    database holding every config and a best, no temporary files left."""
    start = time.time() + 3.0
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", K.TUNER, str(start), "interpreter"],
            env=_env(cache),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert json.loads(out.strip().splitlines()[-1])["ok"]
    keys = entries(cache)
    assert len(keys) == 4  # one per BLOCK
    for e in keys:
        assert cachemod.verify_entry(e, e.name, (e / "metadata.json").read_bytes()) is not None
    (db,) = (cache / "autotune").glob("*.json")
    data = json.loads(db.read_text())
    (record,) = data["entries"].values()
    assert len(record["results"]) == 4 and record["best"]
    leftovers = [p.name for p in [*cache.iterdir(), *(cache / "autotune").iterdir()] if p.name.startswith(".tmp")]
    assert not leftovers


def _damage(path: Path, how: str, where: float) -> None:
    data = bytearray(path.read_bytes())
    i = min(int(len(data) * where), len(data) - 1)
    if how == "flip":
        data[i] ^= 0x10
    elif how == "truncate":
        del data[i:]
    elif how == "zero":
        data[i:] = bytes(len(data) - i)
    elif how == "append":
        data += b"\n"
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["tile.mlir", "opt.mlir"])
@pytest.mark.parametrize("how", ["flip", "truncate", "zero", "append"])
def test_damaged_stage_file_is_rebuilt(cache: Path, name: str, how: str) -> None:
    launch(K.scale)
    (entry,) = entries(cache)
    before = {p.name: p.read_bytes() for p in entry.iterdir()}
    _damage(entry / name, how, 0.37)
    STATS.reset()
    np.testing.assert_array_equal(launch(K.scale), expected(K.scale))
    assert STATS.disk_rejected == 1 and STATS.frontend_compiles == 1 and STATS.disk_writes == 1
    (entry,) = entries(cache)
    after = {p.name: p.read_bytes() for p in entry.iterdir()}
    assert after.keys() == before.keys()
    assert after["opt.mlir"] == before["opt.mlir"]


def test_any_damage_to_metadata_never_gives_a_wrong_answer(cache: Path) -> None:
    """metadata.json is not itself checksummed: a flipped byte in a field nobody
    checks (``created``, ``kdsl_version``) is harmless and the entry still loads;
    every other flip must be rejected. Either way the answer is right."""
    launch(K.scale)
    (entry,) = entries(cache)
    path = entry / "metadata.json"
    good = path.read_bytes()
    loaded = 0
    for i in range(0, len(good), max(1, len(good) // 60)):
        for how in ("flip", "truncate"):
            path.write_bytes(good)
            _damage(path, how, i / len(good))
            STATS.reset()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", CacheWarning)
                np.testing.assert_array_equal(launch(K.scale), expected(K.scale))
            loaded += STATS.disk_hits
            assert STATS.disk_hits + STATS.disk_rejected + STATS.disk_misses >= 1
            (entry,) = entries(cache)
            path = entry / "metadata.json"
    assert loaded < 60  # most damage is detected


def test_entry_replaced_by_another_kernels_entry(cache: Path) -> None:
    launch(K.scale)
    (a,) = entries(cache)
    launch(K.shift)
    (b,) = [e for e in entries(cache) if e != a]
    shutil.rmtree(a)
    shutil.copytree(b, a)  # a's key now holds shift's entry
    STATS.reset()
    np.testing.assert_array_equal(launch(K.scale), expected(K.scale))
    assert STATS.disk_rejected == 1 and STATS.frontend_compiles == 1
    assert json.loads((a / "metadata.json").read_text())["key"] == a.name


def test_entry_for_another_constexpr_is_not_reused(cache: Path) -> None:
    np.testing.assert_array_equal(launch(K.scale, 3), expected(K.scale, 3))
    np.testing.assert_array_equal(launch(K.scale, 5), expected(K.scale, 5))
    assert len(entries(cache)) == 2


def test_read_only_file_system_degrades(monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc refuses mkdir even to root: a real read-only location."""
    monkeypatch.setenv("KDSL_CACHE_DIR", "/proc/self/kdsl-reliability-cache")
    monkeypatch.delenv("KDSL_ALWAYS_COMPILE", raising=False)
    STATS.reset()
    with pytest.warns(CacheWarning, match="in memory only"):
        out = launch(K.scale)
    np.testing.assert_array_equal(out, expected(K.scale))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per directory
        np.testing.assert_array_equal(launch(K.scale), expected(K.scale))


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))   # every file write past 64 bytes fails: EFBIG
import warnings
import numpy as np
import kdsl
import cache_kernels as K
x = np.arange(100, dtype=np.float32)
o = np.zeros(100, np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with kdsl.backend("interpreter"):
        K.scale[(4,)](x, o, 100, S=3, BLOCK=32)
        K.scale[(4,)](x, o, 100, S=4, BLOCK=32)
print(sum("in memory only" in str(w.message) for w in caught), bool(np.array_equal(o, 4 * x)))
"""


def test_full_disk_degrades_for_real(cache: Path) -> None:
    r = subprocess.run([sys.executable, "-c", FULL_DISK], env=_env(cache), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "True"], (r.stdout, r.stderr)
    assert not cache.exists() or not entries(cache)
    assert not cache.exists() or not [p for p in cache.iterdir() if p.name.startswith(".tmp")]


def test_cache_dir_is_created_owner_only(cache: Path) -> None:
    launch(K.scale)
    assert cache.stat().st_mode & 0o777 == 0o700
    for e in entries(cache):
        assert e.stat().st_mode & 0o077 == 0, oct(e.stat().st_mode)


def test_cpu_object_cache_entry_replaced_by_another_kernels(cache: Path) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("cpu backend unavailable")
    launch(K.scale, 2, "cpu")
    before = set((cache / "cpu").iterdir())
    launch(K.scale, 3, "cpu")
    (obj3,) = set((cache / "cpu").iterdir()) - before
    (obj2,) = before
    shutil.rmtree(obj2)
    shutil.copytree(obj3, obj2)
    for e in entries(cache):  # force the kdsl entry to recompile through the backend
        shutil.rmtree(e)
    # a new process: the backend keeps loaded objects in memory
    r = subprocess.run(
        [sys.executable, "-c", K.WORKER, "0", "cpu", "2"], env=_env(cache), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["ok"]
