"""``@kdsl.kernel``: the JIT function object, its compile cache and launches.

``k[grid](*args, **meta)`` binds the arguments, derives the specialisation
(types, constants, divisibility -- see ``args``), looks the compiled kernel up
in an in-memory cache keyed by (backend, specialisation, launch options) and
otherwise runs frontend -> verify -> default pass pipeline -> backend.compile,
then launches on the chosen backend.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, overload

from kdsl.errors import CompilationError, DirectCallError, KdslError, LaunchError, LaunchOptionError
from kdsl.frontend.compiler import generate_module
from kdsl.frontend.locations import SourceInfo, load_source
from kdsl.frontend.specialization import ParamSpec
from kdsl.ir.core import IRError, ModuleOp
from kdsl.ir.types import ScalarType
from kdsl.ir.verifier import verify
from kdsl.runtime import args as argmod
from kdsl.runtime.args import MAX_GRID_DIM
from kdsl.runtime.backend import Backend, LaunchOptions
from kdsl.runtime.backends import current_backend_name, resolve_backend
from kdsl.runtime.device_array import DeviceArray, check_backend
from kdsl.runtime.launcher import Launcher, env_flag_reader, make_binder
from kdsl.runtime.reinterpret import unwrap as unwrap_reinterpret
from kdsl.runtime.sanitize import sanitize_enabled

if TYPE_CHECKING:
    from kdsl.runtime.compile import Compiled
    from kdsl.runtime.warmup import WarmedKernel

_MISSING = object()
_debug_env = env_flag_reader("KDSL_DEBUG")


def debug_from_env() -> bool:
    return _debug_env()


class KernelFunction:
    """A Python function compiled to tile IR on launch (or inlined into callers)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        do_not_specialize: Iterable[int | str] = (),
        debug: bool | None = None,
        sanitize: bool | None = None,
        do_not_specialize_on_alignment: Iterable[int | str] = (),
        launch_metadata: Callable[..., Any] | None = None,
        repr: Callable[..., Any] | None = None,  # Triton's keyword (shadows the builtin here only)
        noinline: bool | None = None,
    ) -> None:
        if not inspect.isfunction(fn):
            raise TypeError(f"@kdsl.kernel needs a plain Python function, got {type(fn).__name__}")
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        self.constexpr_names = {n for n, p in self.signature.parameters.items() if _is_constexpr_annotation(p.annotation)}
        # ``ptr: kl.const`` parameters: stores through them are compile errors (frontend/readonly.py)
        self.const_names = frozenset(n for n, p in self.signature.parameters.items() if _is_const_annotation(p.annotation))
        # ``v: kl.uint8`` / ``v: "tl.uint8"``: a scalar argument gets that type (Triton's annotation_type)
        self.annotated_types = {n: t for n, p in self.signature.parameters.items()
                                if n not in self.constexpr_names and (t := _dtype_annotation(p.annotation)) is not None}
        self.do_not_specialize = self._names(do_not_specialize)
        self.do_not_specialize_on_alignment = self._names(do_not_specialize_on_alignment)
        # Triton's profiler hooks (proton reads them) and its no-inlining hint: kept for
        # introspection; kdsl has no profiler and inlines every call.
        self.launch_metadata = launch_metadata
        self.repr = repr
        self.noinline = noinline
        self.debug = debug
        self.sanitize = sanitize  # None: kdsl.set_sanitize / KDSL_SANITIZE decide
        self.cache: dict[tuple[Any, ...], Compiled] = {}
        self.pre_run_hooks: list[Callable[..., Any]] = []
        # Globals the compiled code read (constexprs, kernels, modules): part of the cache
        # key, so rebinding e.g. a module-level kl.constexpr recompiles instead of going stale.
        self.used_globals: dict[Any, Any] = {}
        # Fast path state: generated binder, launchers by cheap key, the identity of every
        # used global when the launchers were built (checked per launch: O(#globals)).
        self._binder = make_binder(self.signature, self.constexpr_names)
        self._launchers: dict[Any, Launcher] = {}
        # (namespace, name, object, its constexpr value or _MISSING) per global the code read
        self._global_snapshot: tuple[tuple[Any, str, Any, Any], ...] = ()
        self._globals_ids: dict[tuple[Any, ...], int] = {}
        self._globals_id = 0

    def _names(self, items: Iterable[int | str]) -> set[str]:
        out: set[str] = set()
        for it in items:
            if isinstance(it, int) and not isinstance(it, bool):
                if not 0 <= it < len(self.arg_names):
                    raise ValueError(f"do_not_specialize index {it} out of range for {self.__name__}")
                out.add(self.arg_names[it])
            elif isinstance(it, str) and it in self.signature.parameters:
                out.add(it)
            else:
                raise ValueError(f"do_not_specialize: {it!r} is not a parameter of {self.__name__}")
        return out

    @cached_property
    def source_info(self) -> SourceInfo:
        return load_source(self.fn)

    @property
    def src(self) -> str:
        return inspect.getsource(self.fn)

    def __repr__(self) -> str:
        return f"<kdsl.kernel {self.__qualname__}>"

    # --- calling ------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise DirectCallError(
            "a kernel is launched as kernel[grid](...) or called from another kernel", None, self.__name__
        )

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        run = self.run

        def launcher(*args: Any, **kwargs: Any) -> Any:
            return run(*args, grid=grid, **kwargs)

        return launcher

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        """Bind, specialise, compile (cached) and launch over ``grid``.

        The fast path (see ``kdsl.runtime.launcher``) costs one generated
        binder call, a globals identity check, a dict lookup and the backend's
        launch; everything else happens in :meth:`_run_slow` on a miss.
        ``warmup=True`` is Triton's ``run(..., warmup=True)``: compile only, as :meth:`warmup`.
        """
        for hook in self.pre_run_hooks:
            hook(*args, **kwargs)
        if warmup:
            return self.warmup(*args, grid=grid, **kwargs)
        binder = self._binder
        if binder is None:
            return self._run_slow(args, kwargs, grid)
        try:
            values, keys, opts = binder(*args, **kwargs)
            for ns, name, obj, val in self._global_snapshot:
                cur = ns.get(name, _MISSING)
                if cur is not obj or (val is not _MISSING and cur.value is not val):
                    self._globals_changed()
                    break
            key = (
                current_backend_name(),
                self._globals_id,
                bool(self.debug) or _debug_env(),
                self.sanitize if self.sanitize is not None else sanitize_enabled(),
                tuple(sorted(opts.items())) if opts else (),
                keys,
            )
            launcher = self._launchers.get(key)
        except TypeError:  # bad arguments or unhashable constants: the slow path explains
            return self._run_slow(args, kwargs, grid)
        if launcher is None:
            return self._run_slow(args, kwargs, grid, key)
        launch = launcher.call
        if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and 0 < grid[0] <= MAX_GRID_DIM:
            launch((grid[0], 1, 1), values)
            return launcher.handle
        grid3 = argmod.normalize_grid(grid, dict(zip(self.arg_names, values)), self.__name__)
        if 0 not in grid3:
            launch(grid3, values)
        return launcher.handle

    def add_pre_run_hook(self, hook: Callable[..., Any]) -> None:
        """Call ``hook(*args, **kwargs)`` with a launch's arguments before every launch (Triton's
        ``JITFunction.add_pre_run_hook``; e.g. to refuse some argument types by raising)."""
        if not callable(hook):
            raise TypeError(f"add_pre_run_hook needs a callable, got {type(hook).__name__}")
        self.pre_run_hooks.append(hook)

    def warmup(self, *args: Any, grid: Any, **kwargs: Any) -> WarmedKernel:
        """Compile (or fetch from the caches) the specialisation these arguments select, without
        running it: Triton's ``JITFunction.warmup``. Arrays only give their dtype and alignment.
        The result reports what the compiler produced and launches like the kernel."""
        from kdsl.runtime.warmup import WarmedKernel

        binding = argmod.bind(self.signature, args, dict(kwargs), self.__name__, self.constexpr_names)
        backend = resolve_backend()
        specs = self._specs_of(binding)
        if not any(isinstance(v, str) or argmod.mock_pointer(v) for k, v in binding.values.items()
                   if k not in self.constexpr_names):
            argmod.normalize_grid(grid, dict(binding.values), self.__name__)  # types alone fix no grid
        options = launch_options(binding.options, self.__name__)
        sanitize = self.sanitize if self.sanitize is not None else sanitize_enabled()
        debug = self._debug(binding.options)
        compiled = self._compiled(backend, specs, options, debug, sanitize)
        return WarmedKernel(self, compiled, specs, options, backend.name, debug)

    def _run_slow(self, args: Sequence[Any], kwargs: dict[str, Any], grid: Any, key: Any = None) -> WarmedKernel:
        """The fully checked launch: errors, compilation, and building the fast launcher. Returns the
        compiled kernel's handle (a :class:`~kdsl.runtime.warmup.WarmedKernel`: ``asm``, ``metadata``,
        ``n_regs``...), as Triton's launch returns its ``CompiledKernel``."""
        from kdsl.runtime.warmup import WarmedKernel

        binding = argmod.bind(self.signature, args, dict(kwargs), self.__name__, self.constexpr_names)
        grid3 = argmod.normalize_grid(grid, dict(binding.values), self.__name__)
        backend = resolve_backend()
        specs, _ = argmod.specialize(binding, self.constexpr_names, self.do_not_specialize, self.__name__,
                                     self.do_not_specialize_on_alignment, self.annotated_types)
        values = list(binding.values.values())
        for name, v in binding.values.items():
            arr = unwrap_reinterpret(v)
            if isinstance(arr, DeviceArray):
                check_backend(arr, backend.name, name, self.__name__)
        options = launch_options(binding.options, self.__name__)
        sanitize = self.sanitize if self.sanitize is not None else sanitize_enabled()
        debug = self._debug(binding.options)
        compiled = self._compiled(backend, specs, options, debug, sanitize)
        launch = Launcher(compiled.kernel, argmod.launch_leaves(specs), values, compiled.written, self.__name__,
                          compiled.sanitize)
        handle = launch.handle = WarmedKernel(self, compiled, specs, options, backend.name, debug)
        if key is not None and self._global_snapshot_fresh():
            # compiled matches the globals as they are now: file it under their id
            self._launchers[(key[0], self._globals_id, *key[2:])] = launch
        if 0 not in grid3:
            launch(grid3, values)
        return handle

    def _compiled(
        self, backend: Backend, specs: list[ParamSpec], options: LaunchOptions, debug: bool, sanitize: bool = False
    ) -> Compiled:
        """The compiled kernel for a specialisation: memory cache, then disk cache, then compile."""
        from kdsl.runtime.compile import compile_specialization

        ckey = (backend.name, tuple(s.key() for s in specs), options, debug) + (("sanitize",) if sanitize else ())
        compiled = self.cache.get(ckey + self.globals_key())
        if compiled is None:
            compiled = compile_specialization(self, backend, specs, options, debug, sanitize)
            self._snapshot_globals()
            self.cache[ckey + self.globals_key()] = compiled
        return compiled

    def _snapshot_globals(self) -> None:
        self._global_snapshot = tuple((g, n, o, _constexpr_value(o))
                                      for g, n in self.used_globals.values() for o in (g.get(n, _MISSING),))
        gk = self.globals_key()
        self._globals_id = self._globals_ids.setdefault(gk, len(self._globals_ids))

    def _global_snapshot_fresh(self) -> bool:
        return all(g.get(n, _MISSING) is o and _constexpr_value(o) is v for g, n, o, v in self._global_snapshot)

    def _globals_changed(self) -> None:
        """A global the compiled code read was rebound: launches re-resolve from now on."""
        self._snapshot_globals()

    def add_global_dependencies(self, deps: Iterable[tuple[dict[str, Any], str]]) -> None:
        """Record globals (namespace, name) the compiled code depends on."""
        for ns, name in deps:
            self.used_globals[(id(ns), name)] = (ns, name)

    # --- compilation ------------------------------------------------------------------
    def specialization(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[ParamSpec]:
        """ParamSpecs for an argument list; strings like ``"*f32"`` or ``"i32"`` give a type."""
        return self._specs_of(argmod.bind(self.signature, args, dict(kwargs), self.__name__, self.constexpr_names))

    def _specs_of(self, binding: argmod.Binding) -> list[ParamSpec]:
        """Specs of bound values, where a runtime parameter may also be given by its type alone: a
        signature string (``"*f32"``, ``"i32"``) or, as Triton's ``warmup`` takes, a dtype
        (``kl.float32``, ``torch.float32``, ``np.float32``) standing for a 16-byte aligned pointer."""
        typed: dict[str, Any] = {}
        for k, v in binding.values.items():
            if k in self.constexpr_names:
                continue
            if isinstance(v, str):
                typed[k] = ParamSpec.runtime(k, parse_signature_type(v, k, self.__name__))
            elif (ptr := argmod.mock_pointer(v)) is not None:
                typed[k] = ParamSpec.runtime(k, ptr, 16)
        rest = argmod.Binding({k: v for k, v in binding.values.items() if k not in typed}, binding.options)
        specs, _ = argmod.specialize(rest, self.constexpr_names, self.do_not_specialize, self.__name__,
                                     self.do_not_specialize_on_alignment, self.annotated_types)
        by_name = {s.name: s for s in specs}
        return [typed[name] if name in typed else by_name[name] for name in binding.values]

    def globals_key(self) -> tuple[Any, ...]:
        """Current values of the globals earlier compilations depended on."""
        from kdsl.language.core import constexpr

        out: list[Any] = []
        for g, name in self.used_globals.values():
            v = g.get(name, None)
            out.append((name, ("c", _hashable(v.value)) if isinstance(v, constexpr) else ("id", id(v))))
        return tuple(out)

    def _debug(self, options: dict[str, Any] | None = None) -> bool:
        """The debug flag of a launch, Triton's rule: its ``debug=`` option, else ``@kernel(debug=)``,
        either or'ed with KDSL_DEBUG (Triton's TRITON_DEBUG turns debugging on everywhere)."""
        flag = options.get("debug") if options and options.get("debug") is not None else self.debug
        return bool(flag) or debug_from_env()

    def compile_module(
        self,
        specs: list[ParamSpec],
        optimize: bool = True,
        debug: bool | None = None,
        stages: dict[str, bytes] | None = None,
        pass_options: dict[str, Any] | None = None,
    ) -> tuple[ModuleOp, str]:
        """Generate, verify and (optionally) optimise the module for ``specs``.

        ``stages``, if given, receives ``tile.mlir`` (frontend output) and
        ``opt.mlir`` (after the passes), printed with locations.
        ``pass_options`` (``{"pass.option": value}``, see :func:`pass_options`)
        configures the default pipeline's passes for this compilation.
        """
        from kdsl.ir.printer import print_op

        dbg = self._debug() if debug is None else debug
        module, entry = generate_module(self, specs, debug=dbg, used_globals=self.used_globals)
        _verify(module)
        if stages is not None:
            stages["tile.mlir"] = print_op(module, locations=True).encode()
        if optimize:
            run_default_pipeline(module, pass_options)  # verifies its output
            if stages is not None:
                stages["opt.mlir"] = print_op(module, locations=True).encode()
        return module, entry


def _constexpr_value(obj: Any) -> Any:
    """The value of a ``kl.constexpr`` global (it may be mutated in place: ``c.value = 43``), else
    ``_MISSING``: the fast path checks both the global's identity and this value."""
    from kdsl.language.core import constexpr

    return obj.value if isinstance(obj, constexpr) else _MISSING


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return (type(v).__name__, v)


def _verify(module: ModuleOp) -> None:
    try:
        verify(module)
    except IRError as exc:
        raise CompilationError(f"internal error: generated IR does not verify: {exc.message}", exc.loc) from exc


def run_default_pipeline(module: ModuleOp, pass_options: dict[str, Any] | None = None) -> None:
    """The default pipeline on a module the caller has just verified.

    It verifies once at the end, not after every pass (that doubled compile
    times); ``KDSL_VERIFY_EACH_PASS=1`` (or ``KDSL_DUMP``) restores per-pass
    verification to find the pass that broke the IR. ``pass_options``
    configure its passes (``{"unroll.max-trip": 0}``).
    """
    from kdsl.transforms.pass_manager import default_pipeline, verify_each_from_env

    try:
        pm = default_pipeline(verify_each=verify_each_from_env(), options=pass_options)
        pm.run(module, input_verified=True)
    except KdslError:
        raise
    except IRError as exc:
        raise CompilationError(f"internal error in the optimiser: {exc.message}", exc.loc) from exc


def launch_options(opts: dict[str, Any], kernel: str) -> LaunchOptions:
    """Checked launch options. Dotted names are compiler knobs (see :func:`check_knob`)."""
    num_threads = opts.get("num_threads", 0) or 0
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise LaunchError(f"must be a non-negative int, got {num_threads!r}", "num_threads", kernel)
    num_warps = opts.get("num_warps")
    if num_warps is not None and (isinstance(num_warps, bool) or not isinstance(num_warps, int) or num_warps <= 0
                                  or num_warps & (num_warps - 1)):  # Triton's compile options assert it
        raise LaunchOptionError(f"num_warps must be a power of 2, got {num_warps!r}", "num_warps", kernel)
    if opts.get("extern_libs"):  # Triton links these CUDA/HIP bitcode files; nothing here could
        raise LaunchError(f"kdsl links no external libraries, got {opts['extern_libs']!r}: the functions of "
                          "kl.extra.libdevice are built in (leave extern_libs out)", "extern_libs", kernel)
    extra = tuple(
        sorted((k, check_knob(k, v, kernel) if "." in k else v) for k, v in opts.items()
               if k not in ("num_threads", "debug", "extern_libs") and v is not None)
    )  # debug is the compilation's own flag (KernelFunction._debug), not a backend option
    return LaunchOptions(num_threads=num_threads, extra=extra)


LOWER_PREFIX = "lower."


def check_knob(name: str, value: Any, kernel: str) -> Any:
    """Validate one dotted launch option; returns its value (lists as tuples: part of cache keys).

    ``"lower.<knob>"`` goes to the backend's lowering (``Layout.from_options``;
    :data:`kdsl.lowering.layout.LAUNCH_KNOBS`): a positive int (the off switches of
    ``KNOB_MINIMUM`` may be 0). ``"<pass>.<option>"``
    configures that pass of the default pipeline for this compilation; an unknown
    pass or option or a wrongly typed value is a LaunchError naming the option.
    """
    if name.startswith(LOWER_PREFIX):
        from kdsl.lowering.layout import KNOB_MINIMUM, LAUNCH_KNOBS

        if name not in LAUNCH_KNOBS:
            raise LaunchError(f"unknown lowering knob (known: {', '.join(LAUNCH_KNOBS)})", name, kernel)
        least = KNOB_MINIMUM.get(name, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            what = "a positive int" if least == 1 else f"an int >= {least}"
            raise LaunchError(f"must be {what}, got {value!r}", name, kernel)
        return value
    from kdsl.transforms.base import PassError
    from kdsl.transforms.pass_manager import default_pipeline

    try:
        default_pipeline(options={name: value})
    except PassError as exc:
        raise LaunchError(str(exc).removeprefix(f"option '{name}': "), name, kernel) from None
    return tuple(value) if isinstance(value, list) else value


def pass_options(options: LaunchOptions) -> dict[str, Any]:
    """The pass knobs (``"pass.option"`` launch options) of ``options``, for the default pipeline."""
    return {k: v for k, v in options.extra if "." in k and not k.startswith(LOWER_PREFIX)}


_SIG_ALIASES = {"fp16": "f16", "fp32": "f32", "fp64": "f64", "bf16": "bf16", "i1": "i1", "int1": "i1", "bool": "i1"}


def parse_signature_type(text: str, name: str = "", kernel: str = "") -> Any:
    """Triton-style signature types: ``*fp32``/``*f32`` pointers, ``i32``, ``fp32``, ``u64``..."""
    from kdsl.ir.types import PointerType, ScalarType, TypeParseError, parse_type

    t = text.strip()
    is_ptr = t.startswith("*")
    base = t[1:].strip() if is_ptr else t
    base = _SIG_ALIASES.get(base, base)
    try:
        parsed = parse_type(base)
    except TypeParseError as exc:
        raise LaunchError(f"bad signature type {text!r}: {exc}", name or None, kernel or None) from exc
    if is_ptr:
        if not isinstance(parsed, ScalarType):
            raise LaunchError(f"bad pointer type {text!r}", name or None, kernel or None)
        return PointerType(parsed)
    return parsed


def _is_constexpr_annotation(ann: Any) -> bool:
    if ann is inspect.Parameter.empty:
        return False
    if isinstance(ann, str):
        return ann.split(".")[-1].strip() == "constexpr"
    from kdsl.language.core import constexpr

    return ann is constexpr


_ANNOTATION_PREFIXES = ("triton.language.", "kdsl.language.", "tl.", "kl.")


def _dtype_annotation(ann: Any) -> ScalarType | None:
    """The scalar dtype a parameter annotation names (``kl.uint8``, ``"tl.uint8"``, ``"int16"``,
    ``"fp32"``, ``"bool"``), or None (no annotation, ``int``, ``torch.Tensor``, ``kl.constexpr``...)."""
    if isinstance(ann, ScalarType):
        return ann
    if not isinstance(ann, str):
        return None
    text = ann.strip()
    for prefix in _ANNOTATION_PREFIXES:
        text = text.removeprefix(prefix)
    if text == "bool":
        return ScalarType("i1")
    import kdsl.language as kl

    found = getattr(kl, text, None)
    if isinstance(found, ScalarType):
        return found
    try:  # Triton's short names: i32, u8, fp16, bf16, ...
        return ScalarType({"fp16": "f16", "fp32": "f32", "fp64": "f64"}.get(text, text))
    except ValueError:
        return None


def _is_const_annotation(ann: Any) -> bool:
    if isinstance(ann, str):
        return ann.split(".")[-1].strip() == "const"
    from kdsl.language.types import const

    return ann is const


@overload
def kernel(fn: Callable[..., Any]) -> KernelFunction: ...


@overload
def kernel(
    fn: None = None,
    *,
    do_not_specialize: Iterable[int | str] = (),
    debug: bool | None = None,
    sanitize: bool | None = None,
    do_not_specialize_on_alignment: Iterable[int | str] = (),
    launch_metadata: Callable[..., Any] | None = None,
    repr: Callable[..., Any] | None = None,
    noinline: bool | None = None,
    version: Any = None,
) -> Callable[[Callable[..., Any]], KernelFunction]: ...


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    do_not_specialize: Iterable[int | str] = (),
    debug: bool | None = None,
    sanitize: bool | None = None,
    do_not_specialize_on_alignment: Iterable[int | str] = (),
    launch_metadata: Callable[..., Any] | None = None,
    repr: Callable[..., Any] | None = None,  # Triton's keyword (shadows the builtin here only)
    noinline: bool | None = None,
    version: Any = None,
) -> KernelFunction | Callable[[Callable[..., Any]], KernelFunction]:
    """Decorator turning a Python function into a kdsl kernel (``@kdsl.kernel`` or ``@kdsl.kernel(...)``).

    ``sanitize=True`` bounds-checks every load, store and atomic on every
    backend (see ``kdsl.set_sanitize``); ``None`` follows the global setting. Triton's other
    ``triton.jit`` keywords are accepted: ``do_not_specialize_on_alignment`` (those parameters
    get no divisibility-by-16 facts; ``== 1`` is still specialised), ``launch_metadata``,
    ``repr`` and ``noinline`` (profiler hooks and a hint, kept on the kernel object), and
    ``version`` (ignored).
    """
    extra: dict[str, Any] = {"do_not_specialize_on_alignment": do_not_specialize_on_alignment,
                             "launch_metadata": launch_metadata, "repr": repr, "noinline": noinline}  # fmt: skip
    if fn is not None:
        return KernelFunction(fn, do_not_specialize, debug, sanitize, **extra)

    def deco(f: Callable[..., Any]) -> KernelFunction:
        return KernelFunction(f, do_not_specialize, debug, sanitize, **extra)

    return deco


jit = kernel
