"""``python -m kdsl cache list|info KEY|clear|dir``: inspect and empty the compile cache.

``list`` shows one line per entry (key prefix, kernel, backend, device, size,
age); ``info KEY`` (a unique prefix is enough) prints the key fields, every
stored stage with its size and whether its checksum still matches, and the
entry's directory -- the stage files are the debugging dump of that compile;
``clear`` deletes every entry; ``dir`` prints the cache directory.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from kdsl.runtime.cache import METADATA, DiskCache, cache_dir, verify_entry


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _resolve(cache: DiskCache, prefix: str) -> str | None:
    matches = [k for k in cache.entry_keys() if k.startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    what = "no entry" if not matches else f"{len(matches)} entries"
    print(f"kdsl cache: {what} match {prefix!r}", file=sys.stderr)
    return None


def cmd_list(cache: DiskCache) -> int:
    keys = cache.entry_keys()
    if not keys:
        print(f"(empty) {cache.root}")
        return 0
    now = time.time()
    rows = []
    for key in keys:
        meta = cache.metadata(key) or {}
        fields = meta.get("fields") or {}
        size = sum(p.stat().st_size for p in cache.entry_dir(key).iterdir())
        age = now - float(meta.get("created") or now)
        rows.append((key[:16], str(meta.get("kernel", "?")), str(fields.get("backend", "?")),
                     str(fields.get("device_name", "?")), _size(size), f"{age / 60:.0f} min"))
    header = ("key", "kernel", "backend", "device", "size", "age")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"{len(rows)} entries in {cache.root}")
    return 0


def cmd_info(cache: DiskCache, prefix: str) -> int:
    key = _resolve(cache, prefix)
    if key is None:
        return 1
    d = cache.entry_dir(key)
    try:
        raw = (d / METADATA).read_bytes()
        meta = json.loads(raw)
    except (OSError, ValueError) as exc:
        print(f"kdsl cache: entry {key[:16]} has unreadable metadata ({exc}); it will be rebuilt")
        return 1
    ok = verify_entry(d, key, raw) is not None
    print(f"key      {key}")
    print(f"dir      {d}")
    print(f"kernel   {meta.get('kernel')} (entry {meta.get('entry')}), kdsl {meta.get('kdsl_version')}")
    print(f"status   {'ok' if ok else 'CORRUPT (will be rebuilt on next use)'}")
    print("fields:")
    for name, value in sorted((meta.get("fields") or {}).items()):
        print(f"  {name:<12} {value}")
    print("stages:")
    for name, info in sorted((meta.get("files") or {}).items()):
        print(f"  {name:<16} {_size(int(info.get('size', 0))):>10}  sha256 {str(info.get('sha256'))[:16]}")
    if meta.get("backend_metadata"):
        print("backend metadata: " + json.dumps(meta["backend_metadata"], sort_keys=True))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kdsl cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="cache directory (default: $KDSL_CACHE_DIR or ~/.cache/kdsl)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list entries")
    info = sub.add_parser("info", help="show one entry's key fields and stages")
    info.add_argument("key", help="key or unique key prefix")
    sub.add_parser("clear", help="delete every entry")
    sub.add_parser("dir", help="print the cache directory")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from pathlib import Path

    cache = DiskCache(Path(args.dir).expanduser() if args.dir else cache_dir())
    if args.command == "list":
        return cmd_list(cache)
    if args.command == "info":
        return cmd_info(cache, args.key)
    if args.command == "clear":
        n = cache.clear()
        print(f"removed {n} entries from {cache.root}")
        return 0
    print(cache.root)
    return 0
