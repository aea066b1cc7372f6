"""One specialisation from source to a launchable kernel, through the disk cache.

``compile_specialization`` is what the JIT calls on an in-memory miss:

1. unless ``KDSL_ALWAYS_COMPILE=1``: compute the disk key (cheap: a static
   scan of the kernel and its callees, no frontend) and try the entry; a
   verified entry is rebuilt with ``Backend.load`` if the backend has it,
   else by parsing the stored ``opt.mlir`` and calling ``Backend.compile``;
2. otherwise run frontend -> passes -> ``Backend.compile``, collecting every
   stage, and store the entry (JIT stages + the backend's ``artifacts()``).
"""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple

from kdsl.frontend.specialization import ParamSpec
from kdsl.ir.analysis import written_pointer_args
from kdsl.ir.core import ModuleOp
from kdsl.runtime import cache as cachemod
from kdsl.runtime.backend import ArtifactKernel, Backend, CompiledKernel, LaunchOptions, LoadingBackend
from kdsl.runtime.cache import STATS, DiskCache

if TYPE_CHECKING:
    from kdsl.runtime.jit import KernelFunction
    from kdsl.transforms.sanitize import SanitizeInfo


def device_key(backend: Backend) -> tuple[str, str]:
    """(device name, device key) of ``backend`` for cache keys and metadata."""
    from kdsl.runtime.device_array import device_of

    dev = device_of(backend)
    key = getattr(dev, "key", None) or f"{dev.name}|{getattr(dev, 'driver_version', getattr(dev, 'driver', ''))}"
    return str(dev.name), f"{backend.name}:{key}"


def key_fields(
    kfn: KernelFunction,
    backend: Backend,
    specs: list[ParamSpec],
    options: LaunchOptions,
    debug: bool,
    sanitize: bool = False,
) -> dict[str, str] | None:
    """The disk-cache key fields, or None if this kernel must not be disk-cached."""
    source_digest, deps = cachemod.kernel_dependencies(kfn)
    kfn.add_global_dependencies(deps)
    if source_digest is None:
        return None
    dev_name, dev_key = device_key(backend)
    fields = {
        "compiler": cachemod.compiler_fingerprint(),
        "kernel": f"{kfn.__module__}.{kfn.__qualname__}",
        "source": source_digest,
        "signature": cachemod.describe_specs(specs),
        "options": json.dumps({"num_threads": options.num_threads, "extra": [[k, repr(v)] for k, v in options.extra]}),
        "debug": str(bool(debug)),
        "backend": backend.name,
        "device": dev_key,
        "device_name": dev_name,
    }
    if sanitize:  # only when on: keys of ordinary kernels stay as they were
        fields["sanitize"] = "True"
    return fields


class Compiled(NamedTuple):
    """A launchable kernel plus what the launch path must check before running it.

    ``written`` holds the entry function's parameter indices (runtime
    arguments, in order) that the kernel may store through: a read-only array
    passed there is a LaunchError before anything runs. ``sanitize`` is set
    when the kernel was instrumented with bounds checks (its hidden
    parameters and check table, see ``kdsl.transforms.sanitize``).
    """

    kernel: CompiledKernel
    written: frozenset[int]
    sanitize: SanitizeInfo | None = None


def _written(module: ModuleOp, entry: str) -> frozenset[int]:
    func = module.lookup(entry)
    return written_pointer_args(func) if func is not None else frozenset()


def compile_fresh(
    kfn: KernelFunction,
    backend: Backend,
    specs: list[ParamSpec],
    options: LaunchOptions,
    debug: bool,
    stages: dict[str, bytes] | None = None,
    sanitize: bool = False,
) -> tuple[Compiled, str]:
    """Frontend -> passes -> (sanitiser) -> backend; returns (kernel, entry name)."""
    from kdsl.runtime.jit import pass_options

    module, entry = kfn.compile_module(specs, optimize=True, debug=debug, stages=stages,
                                       pass_options=pass_options(options))
    STATS.frontend_compiles += 1
    san = None
    if sanitize and not getattr(backend, "checks_bounds", False):  # the interpreter always checks
        san = _instrument(module, entry, stages, backend.name)
    written = _written(module, entry)
    compiled = backend.compile(module, entry, options)
    STATS.backend_compiles += 1
    return Compiled(compiled, written, san), entry


# Backends whose default layouts keep a tile in one work-item: a gating or-reduction there
# costs no local memory (see kdsl.transforms.sanitize.instrument).
_GATED_BACKENDS = ("cpu", "opencl")


def _instrument(module: ModuleOp, entry: str, stages: dict[str, bytes] | None, backend_name: str) -> SanitizeInfo:
    """Add the sanitiser's bounds checks; the stored ``opt.mlir`` is the instrumented IR."""
    from kdsl.ir.printer import print_op
    from kdsl.transforms.sanitize import instrument

    info = instrument(module, entry, gate=backend_name in _GATED_BACKENDS)
    if stages is not None:
        stages["opt.mlir"] = print_op(module, locations=True).encode()
    return info


def rebuild(backend: Backend, files: dict[str, bytes], meta: dict[str, Any], options: LaunchOptions) -> Compiled:
    """A kernel from a verified entry, without the frontend (and without compiling if possible)."""
    written = meta.get("written")
    san = _sanitize_info(meta.get("sanitize"))
    if isinstance(backend, LoadingBackend) and meta.get("backend_loadable") and isinstance(written, list):
        kernel: CompiledKernel = backend.load(files, dict(meta.get("backend_metadata") or {}))
        return Compiled(kernel, frozenset(int(i) for i in written), san)
    from kdsl.ir.parser import parse_module  # only when the backend must recompile (~60 ms import)

    module = parse_module(files["opt.mlir"].decode(), f"<kdsl cache {meta.get('key', '')[:12]}>")
    kernel = backend.compile(module, str(meta["entry"]), options)
    STATS.backend_compiles += 1
    return Compiled(kernel, _written(module, str(meta["entry"])), san)


def _sanitize_info(data: Any) -> SanitizeInfo | None:
    if not data:
        return None
    from kdsl.transforms.sanitize import SanitizeInfo

    return SanitizeInfo.from_json(data)


def compile_specialization(
    kfn: KernelFunction,
    backend: Backend,
    specs: list[ParamSpec],
    options: LaunchOptions,
    debug: bool,
    sanitize: bool = False,
) -> Compiled:
    if cachemod.always_compile():
        return compile_fresh(kfn, backend, specs, options, debug, sanitize=sanitize)[0]
    disk = DiskCache()
    if not disk.usable:
        return compile_fresh(kfn, backend, specs, options, debug, sanitize=sanitize)[0]
    fields = key_fields(kfn, backend, specs, options, debug, sanitize)
    if fields is None:
        return compile_fresh(kfn, backend, specs, options, debug, sanitize=sanitize)[0]
    key = cachemod.make_key(fields)
    entry = disk.load(key)
    if entry is not None:
        try:
            kernel = rebuild(backend, entry[0], entry[1], options)
        except Exception as exc:  # an unusable entry is rebuilt, never trusted
            STATS.disk_rejected += 1
            warnings.warn(f"kdsl: cache entry {key[:12]} could not be loaded ({exc}); recompiling",
                          cachemod.CacheWarning, stacklevel=2)
        else:
            STATS.disk_hits += 1
            return kernel
    STATS.disk_misses += 1
    stages: dict[str, bytes] = {}
    compiled, entry_name = compile_fresh(kfn, backend, specs, options, debug, stages, sanitize)
    files = dict(stages)
    meta: dict[str, Any] = {
        "fields": fields,
        "kernel": kfn.__qualname__,
        "entry": entry_name,
        "kdsl_version": cachemod.kdsl_version(),
        "backend_loadable": False,
        "written": sorted(compiled.written),
    }
    if compiled.sanitize is not None:
        meta["sanitize"] = compiled.sanitize.to_json()
    if isinstance(compiled.kernel, ArtifactKernel):
        extra, backend_meta = compiled.kernel.artifacts()
        clash = cachemod.RESERVED.intersection(extra)
        if clash:
            raise ValueError(f"backend {backend.name!r} returned reserved artefact names {sorted(clash)}")
        files.update(extra)
        meta["backend_metadata"] = backend_meta
        meta["backend_loadable"] = isinstance(backend, LoadingBackend)
    disk.store(key, files, meta)
    return compiled
