"""The compiler-source hash in every cache key: memoised on disk, never stale after an edit."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kdsl.runtime import cache as cachemod
from kdsl.runtime.cache import package_fingerprint

from . import rt_kernels as K


def make_package(root: Path) -> Path:
    pkg = root / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("A = 1\n")
    (pkg / "sub" / "mod.py").write_text("def f():\n    return 2\n")
    (pkg / "sub" / "data.txt").write_text("not python\n")
    return pkg


def memo_files(memo: Path) -> list[Path]:
    return sorted(memo.glob(".compiler-*.json"))


def bump_mtime(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_memo_gives_the_same_hash_as_a_full_scan(tmp_path: Path) -> None:
    pkg, memo = make_package(tmp_path), tmp_path / "cache"
    full = package_fingerprint(pkg, None)
    assert package_fingerprint(pkg, memo) == full  # computes and writes the memo
    assert len(memo_files(memo)) == 1
    assert package_fingerprint(pkg, memo) == full  # read from the memo


def test_an_edited_source_file_changes_the_hash(tmp_path: Path) -> None:
    pkg, memo = make_package(tmp_path), tmp_path / "cache"
    before = package_fingerprint(pkg, memo)
    mod = pkg / "sub" / "mod.py"
    mod.write_text("def f():\n    return 3\n")  # same size: only the mtime betrays the edit
    bump_mtime(mod)
    after = package_fingerprint(pkg, memo)
    assert after != before and after == package_fingerprint(pkg, None)


def test_added_and_removed_files_change_the_hash(tmp_path: Path) -> None:
    pkg, memo = make_package(tmp_path), tmp_path / "cache"
    base = package_fingerprint(pkg, memo)
    (pkg / "sub" / "new.py").write_text("")
    added = package_fingerprint(pkg, memo)
    (pkg / "sub" / "new.py").unlink()
    assert added != base and package_fingerprint(pkg, memo) == base
    (pkg / "sub" / "data.txt").write_text("changed, but not a .py file\n")
    assert package_fingerprint(pkg, memo) == base


def test_a_bad_memo_is_recomputed_not_trusted(tmp_path: Path) -> None:
    pkg, memo = make_package(tmp_path), tmp_path / "cache"
    good = package_fingerprint(pkg, memo)
    (path,) = memo_files(memo)
    stamp = json.loads(path.read_text())["stamp"]
    for damage in ("{not json", json.dumps({"stamp": stamp, "fingerprint": "short"}), json.dumps([1, 2])):
        path.write_text(damage)
        assert package_fingerprint(pkg, memo) == good
    # a memo for another stamp (the files changed since) is ignored
    path.write_text(json.dumps({"stamp": "0" * 64, "fingerprint": "f" * 64}))
    assert package_fingerprint(pkg, memo) == good


def test_unwritable_memo_dir_still_gives_the_hash(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert package_fingerprint(pkg, blocker / "cache") == package_fingerprint(pkg, None)


def test_the_key_follows_the_compiler_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit of kdsl itself changes the compiler field, hence every key."""
    from kdsl.runtime.backend import LaunchOptions
    from kdsl.runtime.backends import get_backend
    from kdsl.runtime.compile import key_fields

    k = K.add
    specs = k.specialization(("*f32", "*f32", "*f32", "i32"), {"BLOCK": 64})
    fields = key_fields(k, get_backend("interpreter"), specs, LaunchOptions(), False)
    assert fields is not None and fields["compiler"] == cachemod.compiler_fingerprint()
    key = cachemod.make_key(fields)
    monkeypatch.setattr(cachemod, "compiler_fingerprint", lambda: "edited")
    fields2 = key_fields(k, get_backend("interpreter"), specs, LaunchOptions(), False)
    assert fields2 is not None and cachemod.make_key(fields2) != key


def test_compiler_fingerprint_is_memoised_in_the_cache_dir(isolated_cache: Path) -> None:
    cachemod.compiler_fingerprint.cache_clear()
    try:
        fp = cachemod.compiler_fingerprint()
        assert len(memo_files(isolated_cache)) == 1
        root = Path(cachemod.__file__).resolve().parent.parent
        assert fp == package_fingerprint(root, None)
    finally:
        cachemod.compiler_fingerprint.cache_clear()
