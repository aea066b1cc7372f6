"""The disk compile cache: hits, invalidation, corruption, degradation, the CLI."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.cli import cache as cli
from kdsl.runtime import cache as cachemod
from kdsl.runtime.cache import STATS, CacheWarning, DiskCache
from kdsl.runtime.device_array import HOST_DEVICE

from . import rt_kernels as K

HERE = Path(__file__).resolve().parent


def launch_add(k: kdsl.KernelFunction | None = None) -> None:
    k = kdsl.kernel(K.add.fn) if k is None else k  # fresh in-memory caches
    x = np.arange(100, dtype=np.float32)
    o = np.zeros(100, np.float32)
    with kdsl.backend("interpreter"):
        k[(2,)](x, x, o, 100, BLOCK=64)
    assert np.array_equal(o, 2 * x)


def entries(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def test_entry_layout_and_metadata(isolated_cache: Path) -> None:
    launch_add()
    assert STATS.disk_misses == 1 and STATS.disk_writes == 1
    (entry,) = entries(isolated_cache)
    assert (isolated_cache.stat().st_mode & 0o777) == 0o700
    meta = json.loads((entry / "metadata.json").read_text())
    assert meta["key"] == entry.name and meta["entry"] == "add" and meta["fields"]["backend"] == "interpreter"
    assert set(meta["files"]) == {"tile.mlir", "opt.mlir"}
    text = (entry / "opt.mlir").read_text()
    assert "tile.func @add" in text and "loc(" in text
    assert "x_ptr:ptr<f32>/div16" in meta["fields"]["signature"] and "BLOCK=const int:64" in meta["fields"]["signature"]


def test_hit_in_process_skips_the_frontend() -> None:
    launch_add()
    launch_add()
    assert STATS.disk_hits == 1 and STATS.frontend_compiles == 1


def test_always_compile_bypasses_the_disk(isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KDSL_ALWAYS_COMPILE", "1")
    launch_add()
    launch_add()
    assert STATS.frontend_compiles == 2 and STATS.disk_writes == 0 and not isolated_cache.exists()


def test_different_device_key_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    launch_add()
    monkeypatch.setattr(HOST_DEVICE, "key", "host:some-other-cpu")
    launch_add()
    assert STATS.disk_misses == 2 and STATS.disk_hits == 0
    monkeypatch.undo()


@pytest.mark.parametrize(
    ("name", "damage"),
    [("opt.mlir", "flip"), ("opt.mlir", "truncate"), ("metadata.json", "truncate"), ("tile.mlir", "delete")],
)
def test_corrupt_entry_is_rebuilt(isolated_cache: Path, name: str, damage: str) -> None:
    launch_add()
    (entry,) = entries(isolated_cache)
    path = entry / name
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    else:
        path.unlink()
    launch_add()  # must not load the bad entry, must still be right
    assert STATS.disk_rejected == 1 and STATS.frontend_compiles == 2 and STATS.disk_writes == 2
    launch_add()  # the rebuilt entry is good
    assert STATS.disk_hits == 1 and STATS.frontend_compiles == 2


def test_unloadable_entry_is_recompiled(isolated_cache: Path) -> None:
    launch_add()
    (entry,) = entries(isolated_cache)
    meta = json.loads((entry / "metadata.json").read_text())
    bad = b"this is not IR"
    (entry / "opt.mlir").write_bytes(bad)
    import hashlib

    meta["files"]["opt.mlir"] = {"sha256": hashlib.sha256(bad).hexdigest(), "size": len(bad)}
    (entry / "metadata.json").write_text(json.dumps(meta))
    with pytest.warns(CacheWarning, match="could not be loaded"):
        launch_add()
    assert STATS.disk_rejected == 1 and STATS.frontend_compiles == 2


def test_changed_global_constexpr(monkeypatch: pytest.MonkeyPatch) -> None:
    k = kdsl.kernel(K.scaled_copy.fn)
    x = np.arange(32, dtype=np.float32)
    o = np.zeros(32, np.float32)
    with kdsl.backend("interpreter"):
        k[(1,)](x, o, 32, BLOCK=32)
        assert np.array_equal(o, 2 * x)
        monkeypatch.setattr(K, "SCALE", kl.constexpr(3))
        k[(1,)](x, o, 32, BLOCK=32)  # same KernelFunction: detected at launch
        assert np.array_equal(o, 3 * x)
        assert STATS.frontend_compiles == 2
        kdsl.kernel(K.scaled_copy.fn)[(1,)](x, o, 32, BLOCK=32)  # disk entry for SCALE=3
        assert STATS.disk_hits == 1
        monkeypatch.undo()
        k[(1,)](x, o, 32, BLOCK=32)  # back to 2: the first compile, from memory
        assert np.array_equal(o, 2 * x) and STATS.frontend_compiles == 2


def test_kernels_with_static_print_are_not_disk_cached(
    isolated_cache: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    @kdsl.kernel
    def noisy(out_ptr, BLOCK: kl.constexpr):
        kl.static_print("noisy-marker", BLOCK)
        kl.store(out_ptr + kl.arange(0, BLOCK), kl.arange(0, BLOCK))

    out = np.zeros(16, np.int32)
    with kdsl.backend("interpreter"):
        noisy[(1,)](out, BLOCK=16)
        kdsl.kernel(noisy.fn)[(1,)](out, BLOCK=16)
    assert capfd.readouterr().out.count("noisy-marker") == 2
    assert not isolated_cache.exists() or not entries(isolated_cache)


def test_unwritable_cache_degrades_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("KDSL_CACHE_DIR", str(blocker / "cache"))
    with pytest.warns(CacheWarning, match="in memory only"):
        launch_add()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per directory
        launch_add()
    assert STATS.frontend_compiles == 2 and STATS.disk_writes == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_cache_dir(isolated_cache: Path) -> None:
    isolated_cache.mkdir(mode=0o500)
    try:
        with pytest.warns(CacheWarning):
            launch_add()
    finally:
        isolated_cache.chmod(0o700)


def test_full_disk_degrades(monkeypatch: pytest.MonkeyPatch, isolated_cache: Path) -> None:
    def full(tmp: Path, final: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(DiskCache, "_install", staticmethod(full))
    with pytest.warns(CacheWarning, match="No space left"):
        launch_add()
    assert not entries(isolated_cache)  # the temporary directory was removed too
    assert not list(isolated_cache.iterdir())


def test_key_fields_cover_callees_and_globals() -> None:
    digest, deps = cachemod.kernel_dependencies(K.scaled_copy)
    assert digest is not None
    assert (vars(K), "SCALE") in deps and (vars(K), "scale_of") in deps
    assert cachemod.kernel_dependencies(K.add)[0] != digest


def _run(script: str, cache: Path, *argv: str) -> dict[str, object]:
    env = dict(os.environ, KDSL_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    env.pop("KDSL_ALWAYS_COMPILE", None)
    out = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


LAUNCH_ADD = textwrap.dedent(
    """
    import json, numpy as np, kdsl, rt_kernels as K
    from kdsl.runtime.cache import STATS
    x = np.arange(100, dtype=np.float32); o = np.zeros(100, np.float32)
    with kdsl.backend("interpreter"):
        K.add[(2,)](x, x, o, 100, BLOCK=64)
    assert np.array_equal(o, 2 * x)
    print(json.dumps(STATS.as_dict()))
    """
)


def test_hit_on_second_process_start(isolated_cache: Path) -> None:
    first = _run(LAUNCH_ADD, isolated_cache)
    assert first["frontend_compiles"] == 1 and first["disk_writes"] == 1
    second = _run(LAUNCH_ADD, isolated_cache)
    assert second["frontend_compiles"] == 0 and second["disk_hits"] == 1


CALLER = textwrap.dedent(
    """
    import kdsl, kdsl.language as kl
    from helper import twice

    @kdsl.kernel
    def caller(x_ptr, out_ptr, BLOCK: kl.constexpr):
        offs = kl.arange(0, BLOCK)
        kl.store(out_ptr + offs, twice(kl.load(x_ptr + offs)))
    """
)
HELPER = textwrap.dedent(
    """
    import kdsl, kdsl.language as kl
    FACTOR = kl.constexpr({factor})

    @kdsl.kernel
    def twice(x):
        return x {op} FACTOR
    """
)
RUN_CALLER = textwrap.dedent(
    """
    import json, sys, numpy as np, kdsl
    sys.path.insert(0, sys.argv[1])
    from caller import caller
    from kdsl.runtime.cache import STATS
    x = np.arange(16, dtype=np.int32); o = np.zeros(16, np.int32)
    with kdsl.backend("interpreter"):
        caller[(1,)](x, o, BLOCK=16)
    print(json.dumps(dict(STATS.as_dict(), out=o.tolist())))
    """
)


def test_invalidation_by_callee_source_and_global(tmp_path: Path, isolated_cache: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "caller.py").write_text(CALLER)
    x = np.arange(16)

    def run(op: str, factor: int) -> dict[str, object]:
        (src / "helper.py").write_text(HELPER.format(op=op, factor=factor))
        return _run(RUN_CALLER, isolated_cache, str(src))

    r = run("*", 2)
    assert r["frontend_compiles"] == 1 and r["out"] == (2 * x).tolist()
    assert run("*", 2)["disk_hits"] == 1
    r = run("+", 2)  # the called kernel's source changed; the caller's did not
    assert r["frontend_compiles"] == 1 and r["disk_hits"] == 0 and r["out"] == (x + 2).tolist()
    r = run("+", 5)  # a constexpr global the callee reads changed
    assert r["frontend_compiles"] == 1 and r["out"] == (x + 5).tolist()
    assert run("+", 5)["disk_hits"] == 1
    assert len(entries(isolated_cache)) == 3


def test_cli(isolated_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list"]) == 0
    assert "(empty)" in capsys.readouterr().out
    launch_add()
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "add" in out and "interpreter" in out and "1 entries" in out
    (entry,) = entries(isolated_cache)
    assert cli.main(["info", entry.name[:10]]) == 0
    out = capsys.readouterr().out
    assert entry.name in out and "opt.mlir" in out and "status   ok" in out
    (entry / "opt.mlir").write_text("garbage")
    assert cli.main(["info", entry.name]) == 0
    assert "CORRUPT" in capsys.readouterr().out
    assert cli.main(["info", "zzzz"]) == 1
    assert cli.main(["dir"]) == 0 and str(isolated_cache) in capsys.readouterr().out
    assert cli.main(["clear"]) == 0
    assert "removed 1" in capsys.readouterr().out and not entries(isolated_cache)


def test_opencl_entry_round_trip(isolated_cache: Path) -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("opencl backend unavailable")
    x = np.arange(100, dtype=np.float32)
    for _ in range(2):
        o = np.zeros(100, np.float32)
        with kdsl.backend("opencl"):
            kdsl.kernel(K.add.fn)[(2,)](x, x, o, 100, BLOCK=64)
        assert np.array_equal(o, 2 * x)
    assert STATS.disk_hits == 1 and STATS.frontend_compiles == 1
