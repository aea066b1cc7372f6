"""Persisted tuning results: ``<cache dir>/autotune/<digest>.json``.

One file per (kernel source hash, device + driver identity); inside, one
record per tuning key with every measured config's time (or failure reason)
and the chosen best. Because the file name hashes the kernel's source (its
callees and constexpr globals included) and the device/driver key, editing the
kernel or changing the driver simply looks somewhere else: stale results are
never read. A new config added to the list is the only one timed on the next
run; the others' times come from the file.

Writes are read-merge-write under an ``fcntl`` lock on a sibling ``.lock``
file, into a temporary file renamed over the old one (``os.replace``), so
concurrent tuners never lose each other's results and readers never see a
half-written file. Where locking is impossible, the merge still happens
(last writer wins only for the same config).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FORMAT = 1
ENV_DISABLE = "KDSL_AUTOTUNE_CACHE"  # "0" disables persistence


def autotune_dir() -> Path:
    from kdsl.runtime.cache import cache_dir

    return cache_dir() / "autotune"


def enabled() -> bool:
    return os.environ.get(ENV_DISABLE, "1").strip() not in ("0", "false", "no")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_suffix(".lock")
    try:
        import fcntl

        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class TuningDatabase:
    """Results of one kernel (source hash) on one device (device + driver key)."""

    def __init__(self, kernel: str, source_hash: str, device: str, root: Path | None = None) -> None:
        self.kernel = kernel
        self.source_hash = source_hash
        self.device = device
        digest = hashlib.sha256(f"{FORMAT}\0{kernel}\0{source_hash}\0{device}".encode()).hexdigest()[:32]
        self.root = autotune_dir() if root is None else root
        self.path = self.root / f"{digest}.json"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return self._empty()
        ok = (isinstance(data, dict) and data.get("format") == FORMAT and data.get("source") == self.source_hash
              and data.get("device") == self.device)
        return data if ok else self._empty()

    def _empty(self) -> dict[str, Any]:
        return {"format": FORMAT, "kernel": self.kernel, "source": self.source_hash, "device": self.device,
                "entries": {}}

    def lookup(self, key: str) -> dict[str, dict[str, Any]]:
        """{config identity: {"ms": float | None, "reason": str}} measured for ``key``."""
        entry = self._read()["entries"].get(key) or {}
        results = entry.get("results") or {}
        return {str(k): dict(v) for k, v in results.items() if isinstance(v, dict)}

    def record(self, key: str, key_desc: dict[str, Any], results: dict[str, dict[str, Any]], best: str | None) -> None:
        """Merge ``results`` for ``key`` into the file (locked, atomic)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        with _locked(self.path):
            data = self._read()
            entry = data["entries"].setdefault(key, {"key": key_desc, "results": {}})
            entry["results"].update(results)
            if best is not None:
                entry["best"] = best
            entry["updated"] = time.time()
            self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        import tempfile  # imported here: ``import kdsl`` imports this module and tempfile costs ~10 ms

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.root)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def list_databases(root: Path | None = None) -> list[dict[str, Any]]:
    """Every stored file's content (for ``python -m kdsl tune --show``), sorted by kernel."""
    base = autotune_dir() if root is None else root
    out: list[dict[str, Any]] = []
    for path in sorted(base.glob("*.json")) if base.is_dir() else []:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == FORMAT:
            data["path"] = str(path)
            out.append(data)
    return sorted(out, key=lambda d: (str(d.get("kernel")), str(d.get("device"))))
