"""LLVM IR text -> optimised host object code, through the disk cache.

``compile_object(ir_text)`` returns the object file bytes for the host. The
pass pipeline is LLVM's O3 (loop and SLP vectorisation, unrolling, inlining of
the ``alwaysinline`` kernel and math functions into the driver loop).

Cache: ``<KDSL_CACHE_DIR or ~/.cache/kdsl>/cpu/<key>/`` holding ``kernel.ll``
(for inspection), ``kernel.o`` and ``meta.json`` with the object's SHA-256.
The key hashes the IR text with :attr:`Host.fingerprint` (llvmlite version,
triple, CPU name, feature string), so another CPU or LLVM never reuses an
entry. Writes go to a temporary file renamed into place (atomic); an entry
whose checksum does not match is rebuilt, never loaded. ``KDSL_ALWAYS_COMPILE=1``
bypasses the cache.

Build failures: LLVM rejecting or failing on the IR kdsl generated is a kdsl
(or LLVM) bug, never the user's; it raises :class:`LLVMBuildError` carrying
LLVM's own diagnostic (the "driver log") and the offending IR line, stores
nothing in the cache, and leaves the backend as it was: the next compilation
starts from scratch (llvmlite keeps no state between modules).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

from kdsl.errors import CompilationError
from kdsl.ir.core import Location
from kdsl.runtime.cpu.elf import undefined_symbols
from kdsl.runtime.cpu.target import Host, host

CACHE_VERSION = "1"


class LLVMBuildError(CompilationError):
    """LLVM could not build a kernel kdsl generated; ``log`` is LLVM's diagnostic."""

    def __init__(self, kernel: str, stage: str, log: str, loc: Location | None = None) -> None:
        self.kernel = kernel
        self.stage = stage
        self.log = log
        super().__init__(
            f"cpu: LLVM failed to {stage} kernel '{kernel}' (a kdsl bug: please report it "
            f"with this message); LLVM says:\n{log}",
            loc,
        )


def _with_ir_line(log: str, ir_text: str) -> str:
    """LLVM's message plus the IR line it points at (``<string>:LINE:COL: error: ...``)."""
    m = re.search(r"<string>:(\d+):(\d+)", log)
    lines = ir_text.splitlines()
    if m is None or not 1 <= int(m.group(1)) <= len(lines):
        return log.strip()
    return f"{log.strip()}\n  IR line {m.group(1)}: {lines[int(m.group(1)) - 1].strip()}"


def cache_root() -> Path:
    base = os.environ.get("KDSL_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "kdsl")
    return Path(base) / "cpu"


def cache_key(ir_text: str, h: Host) -> str:
    digest = hashlib.sha256()
    for part in (CACHE_VERSION, h.fingerprint, ir_text):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:40]


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _load_cached(entry: Path) -> bytes | None:
    """The entry's object code, only if it is intact AND was built for this key.

    The key check matters: an entry copied or moved under another key is
    self-consistent (its checksum matches) but is another kernel's machine
    code -- loading it would execute the wrong program.
    """
    try:
        meta = json.loads((entry / "meta.json").read_text())
        obj = (entry / "kernel.o").read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("sha256") != hashlib.sha256(obj).hexdigest():
        return None
    if meta.get("key") != entry.name:
        return None
    return obj


def _store(entry: Path, ir_text: str, obj: bytes, h: Host) -> None:
    try:
        root = entry.parent
        if not root.parent.exists():
            root.parent.mkdir(parents=True, mode=0o700)  # the kdsl cache dir: private to the user
        root.mkdir(exist_ok=True, mode=0o700)
        entry.mkdir(exist_ok=True, mode=0o700)
        _atomic_write(entry / "kernel.ll", ir_text.encode())
        _atomic_write(entry / "kernel.o", obj)
        meta = {
            "sha256": hashlib.sha256(obj).hexdigest(),
            "key": entry.name,
            "host": h.fingerprint,
            "version": CACHE_VERSION,
        }
        _atomic_write(entry / "meta.json", json.dumps(meta, indent=1).encode())
    except OSError:
        pass  # a read-only or full disk only costs a recompile next time


def optimise(ir_text: str, h: Host) -> llvm.ModuleRef:
    mod = llvm.parse_assembly(ir_text)
    mod.triple = h.triple
    mod.data_layout = h.data_layout
    mod.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = True
    pb = llvm.create_pass_builder(h.tm, pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def compile_object(
    ir_text: str, use_cache: bool = True, kernel: str = "?", loc: Location | None = None
) -> tuple[bytes, bool]:
    """(object code, whether it came from the disk cache); :class:`LLVMBuildError` if LLVM fails
    (``kernel``/``loc`` name the kernel in that error)."""
    h = host()
    use_cache = use_cache and os.environ.get("KDSL_ALWAYS_COMPILE", "") not in ("1", "true", "yes")
    entry = cache_root() / cache_key(ir_text, h)
    if use_cache:
        obj = _load_cached(entry)
        if obj is not None:
            _check_links(obj, kernel, loc)
            return obj, True
    try:
        mod = optimise(ir_text, h)
    except RuntimeError as exc:  # llvmlite's parse/verify/pass failures carry LLVM's text
        raise LLVMBuildError(kernel, "parse and optimise", _with_ir_line(str(exc), ir_text), loc) from None
    try:
        obj = h.tm.emit_object(mod)
    except RuntimeError as exc:
        raise LLVMBuildError(kernel, "generate machine code for", str(exc).strip(), loc) from None
    _check_links(obj, kernel, loc)
    if use_cache:
        _store(entry, ir_text, obj, h)
    return obj, False


_LINKER_DEFINED = frozenset({"_GLOBAL_OFFSET_TABLE_"})


def _in_process(name: str) -> bool:
    """Whether the JIT linker finds ``name``: a symbol kdsl registered, or one of the process."""
    if llvm.address_of_symbol(name):
        return True
    try:
        return bool(ctypes.cast(getattr(_process(), name), ctypes.c_void_p).value)
    except AttributeError:
        return False


@functools.cache
def _process() -> ctypes.CDLL:
    return ctypes.CDLL(None)


def _check_links(obj: bytes, kernel: str, loc: Location | None) -> None:
    """Refuse object code calling a function this process cannot supply (MCJIT would link the
    call to address 0 and the kernel would crash when run: ``kdsl/runtime/cpu/elf.py``)."""
    missing = [n for n in undefined_symbols(obj) or [] if n not in _LINKER_DEFINED and not _in_process(n)]
    if missing:
        raise LLVMBuildError(kernel, "link", f"the object code calls {', '.join(sorted(missing))}, "
                             "which this process does not provide", loc)


def optimised_ir(ir_text: str) -> str:
    """The O3-optimised LLVM IR (for dumps and vectorisation checks)."""
    return str(optimise(ir_text, host()))


def assembly(ir_text: str) -> str:
    """Host assembly of the optimised module (for dumps)."""
    h = host()
    text: str = h.tm.emit_assembly(optimise(ir_text, h))
    return text
