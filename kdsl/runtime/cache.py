"""The on-disk compile cache: keys, entries, verification, degradation.

One directory per key under ``KDSL_CACHE_DIR`` (default ``~/.cache/kdsl``,
created 0700). An entry holds every stage the compile produced (``tile.mlir``,
``opt.mlir`` from the JIT, plus whatever the backend's ``artifacts()``
returned) and ``metadata.json`` with the key fields and the sha256 and size
of every file. Entries are written into a temporary directory and renamed
into place, so readers never see half an entry; a file whose checksum or
size does not match makes the entry a miss (it is then rebuilt and replaced).
Nothing is unpickled: JSON and raw bytes only.

The key is the sha256 of the fields from :func:`key_fields`: kdsl's version
and a hash of its own sources (once per process), the kernel's source and
location, the kernels it calls and the constexpr globals it reads (found by a
static scan of the source, transitively), the specialisation, launch options,
debug flag, backend and device identity. See docs/CACHE.md.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import shutil
import time
import types
import warnings
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kdsl.frontend.specialization import ParamSpec
from kdsl.ir.types import Type

if TYPE_CHECKING:
    from kdsl.runtime.jit import KernelFunction

FORMAT = 1
METADATA = "metadata.json"
RESERVED = frozenset({METADATA, "tile.mlir", "opt.mlir"})


class CacheWarning(UserWarning):
    """The disk cache could not be used (read-only, full...): in-memory caching continues."""


@dataclass
class CacheStats:
    """Process-wide counters (tests and benchmarks read them; ``reset()`` zeroes them)."""

    frontend_compiles: int = 0  # frontend + passes runs
    backend_compiles: int = 0  # Backend.compile calls
    disk_hits: int = 0  # kernels rebuilt from a disk entry
    disk_misses: int = 0  # no usable entry
    disk_rejected: int = 0  # an entry existed but was corrupt/mismatched/unloadable
    disk_writes: int = 0  # entries written

    def reset(self) -> None:
        for f in fields(self):
            setattr(self, f.name, 0)

    def as_dict(self) -> dict[str, int]:
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}


STATS = CacheStats()
_DISABLED: set[str] = set()  # cache directories that failed in this process (warned once)


# --- configuration ------------------------------------------------------------------
def cache_dir() -> Path:
    env = os.environ.get("KDSL_CACHE_DIR", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "kdsl"


def always_compile() -> bool:
    return os.environ.get("KDSL_ALWAYS_COMPILE", "0") not in ("", "0")


def kdsl_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kdsl")
    except PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """A hash of every ``.py`` file of the package (once per process, memoised on disk).

    This subsumes kdsl's version (a release that changes no source compiles
    the same code); the version itself is recorded in each entry's metadata
    but not looked up here, as ``importlib.metadata`` costs ~70 ms to import.
    Hashing ~190 files costs ~12 ms, a quarter of a warm start's budget, so
    the content hash is memoised in the cache directory under a *stamp* of
    every file's path, size and mtime (one ``scandir`` walk, ~1-2 ms): editing
    any source file (dev checkout) changes the stamp and the hash is redone.
    """
    root = Path(__file__).resolve().parent.parent
    return package_fingerprint(root, cache_dir())


def _source_files(root: str) -> list[tuple[str, int, int]]:
    """(path relative to ``root``, size, mtime_ns) of every ``.py`` file below ``root``, sorted."""
    out: list[tuple[str, int, int]] = []
    todo = [("", root)]
    while todo:
        rel, d = todo.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:  # unreadable (or not a directory: a zipped install): as Path.rglob, skip it
            continue
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__":
                    todo.append((f"{rel}{e.name}/", e.path))
            elif e.name.endswith(".py"):
                st = e.stat()
                out.append((rel + e.name, st.st_size, st.st_mtime_ns))
    out.sort()
    return out


def package_fingerprint(root: Path, memo_dir: Path | None) -> str:
    """The content hash of ``root``'s ``.py`` files, through a memo in ``memo_dir`` (None: no memo).

    The memo file is named after the package's location (two installs may
    share a cache directory) and holds the stamp it was computed for; a memo
    that is missing, unreadable, malformed or for another stamp is recomputed
    and rewritten (atomically). Any failure to write it is ignored: the memo
    only saves time.
    """
    files = _source_files(str(root))
    stamp = hashlib.sha256(repr((str(root), files)).encode()).hexdigest()
    memo = None
    if memo_dir is not None:
        memo = memo_dir / f".compiler-{hashlib.sha256(str(root).encode()).hexdigest()[:16]}.json"
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(memo.read_bytes())
            fp = data.get("fingerprint") if isinstance(data, dict) and data.get("stamp") == stamp else None
            if isinstance(fp, str) and len(fp) == 64:
                return fp
    h = hashlib.sha256(b"kdsl-compiler\0")
    for rel, _, _ in files:
        h.update(rel.encode() + b"\0")
        h.update((root / rel).read_bytes())
    fp = h.hexdigest()
    if memo is not None:
        with contextlib.suppress(OSError):
            memo.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stamp": stamp, "fingerprint": fp}))
            os.replace(tmp, memo)
    return fp


# --- what a kernel depends on ------------------------------------------------------------
def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _roots(tree: ast.AST) -> set[tuple[str, ...]]:
    """Every name and attribute chain (``a``, ``a.b.c``) read in ``tree``."""
    out: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            chain = _dotted(node)
            if chain:
                out.add(tuple(chain))
    return out


def _resolve(kfn: KernelFunction, chain: tuple[str, ...]) -> tuple[Any, dict[str, Any] | None, str] | None:
    """(value, namespace dict, name) a chain resolves to through globals/modules, or None.

    The namespace is None for closure cells (fixed when the kernel was defined)."""
    from kdsl.frontend.scope import closure_vars

    g = kfn.fn.__globals__
    closure = closure_vars(kfn.fn)
    ns: dict[str, Any] | None
    if chain[0] in closure:  # a closure cell shadows a global (frontend/scope.py)
        ns, value = None, closure[chain[0]]
    elif chain[0] in g:
        ns, value = g, g[chain[0]]
    else:
        return None
    name = chain[0]
    for attr in chain[1:]:
        if not isinstance(value, types.ModuleType) or attr not in vars(value):
            break
        ns, name, value = vars(value), attr, vars(value)[attr]
    return value, ns, name


def describe_value(value: Any) -> str:
    """A process-independent description of a compile-time value (for keys)."""
    from kdsl.language.core import constexpr
    from kdsl.runtime.jit import KernelFunction

    if isinstance(value, constexpr):
        value = value.value
    if isinstance(value, KernelFunction):
        return f"kernel:{value.__module__}.{value.__qualname__}"
    if isinstance(value, Type):
        return f"type:{value.text()}"
    if isinstance(value, tuple):
        return "(" + ",".join(describe_value(v) for v in value) + ")"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"fn:{getattr(value, '__module__', '?')}.{getattr(value, '__qualname__', '?')}"
    return f"{type(value).__name__}:{value!r}"


def kernel_dependencies(kfn: KernelFunction) -> tuple[str | None, list[tuple[dict[str, Any], str]]]:
    """(digest, globals read) of ``kfn`` and every kernel it reaches, by a static scan.

    The digest covers each kernel's source text, file and first line (stored
    IR carries locations) and the value of every constexpr global read. It is
    None when a kernel has compile-time side effects (``kl.static_print``),
    which must happen at every compile: such kernels are not disk-cached.
    """
    from kdsl.language.core import constexpr
    from kdsl.runtime.jit import KernelFunction

    h = hashlib.sha256()
    deps: list[tuple[dict[str, Any], str]] = []
    seen: set[int] = set()
    side_effects = False
    todo = [kfn]
    while todo:
        k = todo.pop()
        if id(k) in seen:
            continue
        seen.add(id(k))
        info = k.source_info
        h.update(f"\0kernel {k.__module__}.{k.__qualname__} {info.file}:{info.first_line}\n".encode())
        # The definition's text with its file and first line fixes the AST and every
        # location in it; ``ast.dump`` of the tree took ~3 ms for the matmul tutorial kernel.
        h.update(info.text.encode() if info.text else ast.dump(info.tree, include_attributes=True).encode())
        for chain in sorted(_roots(info.tree)):
            if chain[-1] == "static_print":
                side_effects = True
            found = _resolve(k, chain)
            if found is None:
                continue
            value, ns, name = found
            if isinstance(value, KernelFunction):
                todo.append(value)
                h.update(f"\0call {'.'.join(chain)}={describe_value(value)}".encode())
            elif isinstance(value, constexpr):
                h.update(f"\0const {'.'.join(chain)}={describe_value(value)}".encode())
            else:
                continue
            if ns is not None:
                deps.append((ns, name))
    return (None if side_effects else h.hexdigest()), deps


def describe_specs(specs: list[ParamSpec]) -> str:
    parts = []
    for s in specs:
        if s.is_const:
            parts.append(f"{s.name}=const {describe_value(s.value)}")
        elif s.tree is not None:
            leaves = ",".join(f"{t.text()}/div{d}" for t, d in zip(s.arg_types, s.arg_divisibility))
            parts.append(f"{s.name}:{s.tree!r}[{leaves}]")
        else:
            assert s.type is not None
            parts.append(f"{s.name}:{s.type.text()}/div{s.divisibility}" + ("/large" if s.large else ""))
    return "; ".join(parts)


def make_key(key_fields: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()


# --- the directory ------------------------------------------------------------------------
def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DiskCache:
    """One cache directory. All failures degrade (warn once, then memory-only)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else cache_dir()

    @property
    def usable(self) -> bool:
        return str(self.root) not in _DISABLED

    def _disable(self, what: str, exc: BaseException) -> None:
        if str(self.root) in _DISABLED:
            return
        _DISABLED.add(str(self.root))
        warnings.warn(
            f"kdsl: cannot {what} the compile cache at {self.root} ({exc}); caching in memory only",
            CacheWarning,
            stacklevel=4,
        )

    def entry_dir(self, key: str) -> Path:
        return self.root / key

    def load(self, key: str) -> tuple[dict[str, bytes], dict[str, Any]] | None:
        """The verified files and metadata of ``key``, or None (missing or bad)."""
        d = self.entry_dir(key)
        try:
            raw = (d / METADATA).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._disable("read", exc)
            return None
        result = verify_entry(d, key, raw)
        if result is None:
            STATS.disk_rejected += 1
        return result

    def store(self, key: str, files: dict[str, bytes], metadata: dict[str, Any]) -> bool:
        """Write an entry atomically (temp dir + rename). False if the cache is unusable."""
        if not self.usable:
            return False
        tmp: Path | None = None
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            tmp = self.root / f".tmp-{key[:16]}-{os.getpid()}-{time.monotonic_ns()}"
            tmp.mkdir(mode=0o700)
            meta = dict(metadata, format=FORMAT, key=key, created=time.time())
            meta["files"] = {n: {"sha256": _sha(b), "size": len(b)} for n, b in sorted(files.items())}
            for name, data in files.items():
                (tmp / name).write_bytes(data)
            (tmp / METADATA).write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))
            self._install(tmp, self.entry_dir(key))
        except OSError as exc:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            self._disable("write to", exc)
            return False
        STATS.disk_writes += 1
        return True

    @staticmethod
    def _install(tmp: Path, final: Path) -> None:
        try:
            os.replace(tmp, final)
            return
        except OSError:
            if not final.exists():
                raise
        # A stale (corrupt) entry is in the way: move it aside, then retry once.
        trash = final.with_name(f".old-{final.name[:16]}-{os.getpid()}-{time.monotonic_ns()}")
        with contextlib.suppress(OSError):
            os.replace(final, trash)
        try:
            os.replace(tmp, final)
        except OSError:  # another process installed a fresh entry first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(trash, ignore_errors=True)

    # --- maintenance (the CLI) --------------------------------------------------------------
    def entry_keys(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))

    def metadata(self, key: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.entry_dir(key) / METADATA).read_text())
        except (OSError, ValueError):
            return None
        return data

    def clear(self) -> int:
        n = 0
        if not self.root.is_dir():
            return 0
        for p in self.root.iterdir():
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
                n += not p.name.startswith(".")
        return n


def verify_entry(d: Path, key: str, raw_meta: bytes) -> tuple[dict[str, bytes], dict[str, Any]] | None:
    """Files + metadata if every check passes (format, key, size, sha256), else None."""
    try:
        meta = json.loads(raw_meta)
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("key") != key:
        return None
    listed = meta.get("files")
    if not isinstance(listed, dict):
        return None
    files: dict[str, bytes] = {}
    for name, info in listed.items():
        if "/" in name or name.startswith(".") or not isinstance(info, dict):
            return None
        try:
            data = (d / name).read_bytes()
        except OSError:
            return None
        if len(data) != info.get("size") or _sha(data) != info.get("sha256"):
            return None
        files[name] = data
    return files, meta
