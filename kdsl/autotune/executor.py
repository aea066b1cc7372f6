"""Where candidates compile and run: trials, the watchdog, pools and executors.

A *trial* (:class:`TrialSpec` -> :class:`TrialResult`) is one candidate
config measured from scratch: launch once (compiling if needed), copy every
array argument (the outputs the autotuner checks against the reference
config), then time with ``do_bench`` while ``reset_to_zero`` /
``restore_value`` keep repeated runs sound. :func:`run_trial` is a plain
module-level function of picklable data, so any ``concurrent.futures``-style
executor (a process pool, ``dask.distributed.Client``) can run it on its own
process/machine and device.

Default local path (no executor):

1. :func:`precompile` compiles the candidates in a process pool (``fork``):
   each child runs frontend -> passes -> backend for one config through the
   JIT's disk cache, so the parent's launch is a disk-cache hit (it skips the
   frontend and the passes; backends that can ``load`` skip compiling too).
   A child that raises or dies marks its config failed with the reason.
2. Trials run one at a time in the calling process (timing in parallel on
   shared cores would corrupt the measurements), each in a watchdog thread:
   past ``timeout`` seconds the trial thread gets an asynchronous
   :class:`TrialTimeout` exception (``PyThreadState_SetAsyncExc``), which
   stops code running Python bytecode -- the interpreter backend, a spinning
   host loop. A hang inside native code (a driver call) cannot be interrupted
   in-process: the thread is abandoned (daemon) and the config recorded as
   hung; use ``isolate=True`` (each trial in a killed-on-timeout child process)
   for backends where that can happen.
"""

from __future__ import annotations

# multiprocessing, concurrent.futures and ctypes are imported where trials use them:
# ``import kdsl`` imports this module, and they cost ~30 ms of every start-up.
import contextlib
import contextvars
import importlib
import importlib.util
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.autotune.config import Config

if TYPE_CHECKING:
    from kdsl.runtime.jit import KernelFunction

# Kernels registered by the process that tunes: forked children find them here
# (a cache of objects, not state that changes behaviour).
_REGISTRY: dict[str, Any] = {}

_EXECUTOR: contextvars.ContextVar[Any] = contextvars.ContextVar("kdsl_autotune_executor", default=None)


class TrialTimeout(BaseException):
    """Raised asynchronously inside a trial thread that ran past its timeout."""


# Trial threads the watchdog gave up on. The asynchronous TrialTimeout only fires when the thread
# runs Python again, and native code that calls back into Python (a driver callback through
# cffi) may swallow it; such a thread would go on to launch its candidate on the user's arrays
# while later trials use them -- a wrong reference, a wrong answer. So a trial also checks this
# set between compiling and launching and before every launch (:func:`_check_abandoned`).
_ABANDONED: set[int] = set()


def _check_abandoned() -> None:
    if threading.get_ident() in _ABANDONED:
        raise TrialTimeout


@contextlib.contextmanager
def use_executor(executor: Any) -> Iterator[Any]:
    """``with kdsl.autotune.use_executor(client): ...`` -- tune with ``executor`` inside the block.

    ``executor`` is anything with ``submit(fn, *args) -> future`` whose futures
    have ``result(timeout=...)`` (``concurrent.futures`` executors, Dask's
    ``Client``). An ``executor=`` argument of ``@kdsl.autotune`` wins over this.
    """
    token = _EXECUTOR.set(executor)
    try:
        yield executor
    finally:
        _EXECUTOR.reset(token)


def current_executor() -> Any:
    return _EXECUTOR.get()


# --- kernel references -----------------------------------------------------------------
@dataclass(frozen=True)
class KernelRef:
    """How another process finds a kernel: registry token (fork), module, file, qualname."""

    token: str
    module: str
    qualname: str
    file: str
    source_hash: str

    @staticmethod
    def of(kfn: KernelFunction, source_hash: str) -> KernelRef:
        token = f"{id(kfn):x}:{source_hash[:16]}"
        _REGISTRY[token] = kfn
        return KernelRef(token, kfn.__module__, kfn.__qualname__, str(kfn.source_info.file), source_hash)


def resolve_kernel(ref: KernelRef) -> KernelFunction:
    """The kernel ``ref`` names, in this process (registry, then import, then the file)."""
    from kdsl.runtime.jit import KernelFunction

    found = _REGISTRY.get(ref.token)
    if isinstance(found, KernelFunction):
        return found
    module = sys.modules.get(ref.module) if ref.module != "__main__" else None
    if module is None and ref.module != "__main__":
        with contextlib.suppress(ImportError):
            module = importlib.import_module(ref.module)
    if module is None:
        module = _load_file(ref.file)
    obj: Any = module
    for part in ref.qualname.split("."):
        obj = getattr(obj, part)
    while not isinstance(obj, KernelFunction) and hasattr(obj, "fn"):
        obj = obj.fn  # an Autotuner (or another wrapper) around the kernel
    if not isinstance(obj, KernelFunction):
        raise TypeError(f"{ref.module}.{ref.qualname} is not a kdsl kernel in this process")
    _REGISTRY[ref.token] = obj
    return obj


def _load_file(path: str) -> Any:
    name = f"_kdsl_tune_{abs(hash(path)):x}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load kernel file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# --- trials ------------------------------------------------------------------------------
@dataclass
class TrialSpec:
    """Everything one candidate's measurement needs (picklable: arrays are numpy)."""

    index: int
    kernel: KernelRef
    backend: str
    arg_names: list[str]
    values: list[Any]  # bound runtime values in parameter order (without the config's meta)
    device_arrays: list[str]  # names of arguments to turn into device arrays on the worker
    grid: tuple[int, int, int]
    config: Config
    reset_to_zero: list[str] = field(default_factory=list)
    restore_value: list[str] = field(default_factory=list)
    warmup: float = 25.0
    rep: float = 100.0
    max_repeats: int | None = None
    want_outputs: bool = True
    pre_hook: Callable[..., Any] | None = None
    post_hook: Callable[..., Any] | None = None
    bench: Callable[..., Any] | None = None


@dataclass
class TrialResult:
    index: int
    ok: bool
    ms: float = float("inf")
    reason: str = ""
    outputs: dict[str, np.ndarray[Any, Any]] | None = None
    seconds: float = 0.0
    samples: list[float] = field(default_factory=list)


def _host(v: Any) -> np.ndarray[Any, Any] | None:
    """A host copy of an array argument (numpy, device array, or any array-like the launcher views
    without copying, e.g. a torch CPU tensor); None for everything else (scalars, ``None``)."""
    from kdsl.runtime.device_array import DeviceArray

    if isinstance(v, DeviceArray):
        return v.numpy()
    view = _view(v)
    return None if view is None else view.copy()


def _view(v: Any) -> np.ndarray[Any, Any] | None:
    from kdsl.runtime.args import as_array, is_array_like

    if v is None or not is_array_like(v):
        return None
    return as_array(v)


def _restore(v: Any, saved: np.ndarray[Any, Any]) -> None:
    from kdsl.runtime.device_array import DeviceArray

    if isinstance(v, DeviceArray):
        v.copy_from(saved)
        return
    view = _view(v)
    if view is not None:
        view[...] = saved


def _zero(v: Any) -> None:
    """``reset_to_zero`` of one argument; ``None`` (an optional array not passed) is skipped, as in Triton."""
    from kdsl.runtime.device_array import DeviceArray

    if isinstance(v, DeviceArray):
        v.copy_from(np.zeros(v.shape, dtype=v.dtype))
        return
    view = _view(v)
    if view is not None:
        view[...] = 0


def run_trial(spec: TrialSpec) -> TrialResult:
    """Measure one candidate (see the module docstring). Never raises for candidate errors."""
    from kdsl.runtime.backends import backend as use_backend

    start = time.perf_counter()
    try:
        with use_backend(spec.backend):
            return _measure(spec, start)
    except TrialTimeout:
        raise
    except Exception as exc:
        return TrialResult(spec.index, False, reason=_describe(exc), seconds=time.perf_counter() - start)


def _describe(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{where}"


def _measure(spec: TrialSpec, start: float) -> TrialResult:
    from kdsl.runtime.device_array import tensor
    from kdsl.testing.timing import do_bench

    values = [tensor(v, backend=spec.backend) if n in spec.device_arrays and isinstance(v, np.ndarray) else v
              for n, v in zip(spec.arg_names, spec.values)]
    named = dict(zip(spec.arg_names, values))
    saved = {n: _host(named[n]) for n in spec.restore_value}
    call = _kernel_call(spec, named, saved)
    # compile first (the long native step on lavapipe), then launch only if still wanted
    warm = getattr(resolve_kernel(spec.kernel), "warmup", None)
    if warm is not None:
        with contextlib.suppress(Exception):  # the launch reports it, post-hook included (as in Triton)
            warm(**named, **spec.config.all_kwargs(), grid=spec.grid)
    _check_abandoned()
    call()
    outputs = None
    if spec.want_outputs:
        outputs = {n: h for n, v in named.items() if (h := _host(v)) is not None}
    if spec.bench is None:
        raw = do_bench(call, warmup=spec.warmup, rep=spec.rep, return_mode="all", max_repeats=spec.max_repeats)
        samples = [float(x) for x in raw]
        ms = float(np.median(samples))
    else:  # Triton's convention: do_bench(kernel_call, quantiles) -> [median, p20, p80] (or one number)
        got = spec.bench(call, quantiles=(0.5, 0.2, 0.8))
        ms = float(got[0] if isinstance(got, (list, tuple)) else got)
        samples = [ms]
    for n, s in saved.items():
        if s is not None:
            _restore(named[n], s)
    if not np.isfinite(ms):
        return TrialResult(spec.index, False, reason=f"non-finite time {ms}", seconds=time.perf_counter() - start)
    return TrialResult(spec.index, True, ms, outputs=outputs, seconds=time.perf_counter() - start, samples=samples)


def _kernel_call(spec: TrialSpec, named: dict[str, Any], saved: dict[str, Any]) -> Callable[[], None]:
    """One run of the candidate, bracketed like Triton's ``kernel_call``: reset/restore, the config's
    and the tuner's pre-hooks before; ``post_hook(args, exception=...)`` after every run, with the
    exception (then re-raised) if the launch failed."""
    kfn = resolve_kernel(spec.kernel)
    meta = spec.config.all_kwargs()

    def hooks_before() -> None:
        for n in spec.reset_to_zero:
            _zero(named[n])
        for n, s in saved.items():
            if s is not None:
                _restore(named[n], s)
        if spec.config.pre_hook is not None:
            spec.config.pre_hook({**named, **meta})
        if spec.pre_hook is not None:
            spec.pre_hook({**named, **meta})

    def call() -> None:
        _check_abandoned()
        hooks_before()
        _check_abandoned()  # a hook may have caught the interrupt
        try:
            kfn[spec.grid](**named, **meta)  # by name: the values need not be a positional prefix
        except Exception as exc:
            if spec.post_hook is not None:
                spec.post_hook({**named, **meta}, exception=exc)
            raise
        if spec.post_hook is not None:
            spec.post_hook({**named, **meta}, exception=None)

    return call


def run_with_watchdog(spec: TrialSpec, timeout: float | None) -> TrialResult:
    """:func:`run_trial` in a thread that is interrupted (or abandoned) after ``timeout`` s."""
    box: list[TrialResult] = []

    def target() -> None:
        try:
            with contextlib.suppress(TrialTimeout):
                box.append(run_trial(spec))
        finally:
            _ABANDONED.discard(threading.get_ident())

    thread = threading.Thread(target=target, name=f"kdsl-trial-{spec.index}", daemon=True)
    thread.start()
    thread.join(timeout)
    if not thread.is_alive():
        return box[0] if box else TrialResult(spec.index, False, reason="trial ended without a result")
    if thread.ident is not None:
        _ABANDONED.add(thread.ident)
    _interrupt(thread)
    thread.join(2.0)
    state = "interrupted" if not thread.is_alive() else "abandoned (still running in native code)"
    return TrialResult(spec.index, False, reason=f"timeout: no result after {timeout:g} s; trial {state}",
                       seconds=float(timeout or 0))


def _interrupt(thread: threading.Thread) -> None:
    import ctypes

    ident = thread.ident
    if ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(TrialTimeout))


# Backends whose runtime a forked child can use (the cpu backend's thread pool restarts in the
# child); an OpenCL or Vulkan driver used by the parent hangs the child's first blocking call.
FORK_SAFE_BACKENDS = ("interpreter", "cpu")


def run_isolated(spec: TrialSpec, timeout: float | None) -> TrialResult:
    """:func:`run_trial` in a forked child process, killed after ``timeout`` s (hangs in native code)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_isolated_main, args=(spec, child), daemon=True)
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            result: TrialResult = parent.recv()
            return result
        return TrialResult(spec.index, False, reason=f"timeout: no result after {timeout:g} s; child process killed",
                           seconds=float(timeout or 0))
    except EOFError:
        return TrialResult(spec.index, False, reason=f"crashed: child process exited with {proc.exitcode}")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()


def _isolated_main(spec: TrialSpec, conn: Any) -> None:
    conn.send(run_trial(spec))
    conn.close()


def run_on_executor(executor: Any, specs: Sequence[TrialSpec], timeout: float | None) -> list[TrialResult]:
    """Submit every trial to ``executor`` (concurrent.futures or Dask), gather in order."""
    import concurrent.futures as cf

    futures = [(s, executor.submit(run_trial, s)) for s in specs]
    out: list[TrialResult] = []
    for spec, fut in futures:
        try:
            out.append(fut.result(timeout=timeout))
        except (TimeoutError, cf.TimeoutError):
            with contextlib.suppress(Exception):
                fut.cancel()
            out.append(TrialResult(spec.index, False, reason=f"timeout: no result after {timeout:g} s on the executor"))
        except Exception as exc:  # a worker that died, an unpicklable argument...
            out.append(TrialResult(spec.index, False, reason=f"executor: {_describe(exc)}"))
    return out


# --- parallel compilation ------------------------------------------------------------------
@dataclass
class CompileJob:
    index: int
    kernel: KernelRef
    backend: str
    specs: list[Any]
    options: Any
    debug: bool


def _compile_one(job: CompileJob) -> tuple[int, str]:
    """In a pool worker: compile through the disk cache; '' or the failure reason."""
    from kdsl.runtime.backends import resolve_backend
    from kdsl.runtime.compile import compile_specialization

    try:
        kfn = resolve_kernel(job.kernel)
        compile_specialization(kfn, resolve_backend(job.backend), job.specs, job.options, job.debug)
    except Exception as exc:
        return job.index, _describe(exc)
    return job.index, ""


def precompile(jobs: Sequence[CompileJob], workers: int, timeout: float | None) -> dict[int, str]:
    """Compile ``jobs`` in a forked process pool; returns {index: failure reason} for failures."""
    if not jobs:
        return {}
    import concurrent.futures as cf
    import multiprocessing as mp

    failures: dict[int, str] = {}
    ctx = mp.get_context("fork")
    pool = cf.ProcessPoolExecutor(max_workers=max(1, min(workers, len(jobs))), mp_context=ctx)
    try:
        futures = {pool.submit(_compile_one, j): j.index for j in jobs}
        deadline = None if timeout is None else time.monotonic() + timeout * max(1, len(jobs))
        for fut, index in futures.items():
            left = None if deadline is None else max(0.1, deadline - time.monotonic())
            try:
                i, reason = fut.result(timeout=left)
            except cf.TimeoutError:
                failures[index] = "compile timeout"
                continue
            except Exception as exc:  # BrokenProcessPool: a compiler crash
                failures[index] = f"compile crashed: {_describe(exc)}"
                continue
            if reason:
                failures[i] = f"compile failed: {reason}"
    finally:
        for proc in list(getattr(pool, "_processes", {}).values()):
            if proc.is_alive() and failures:
                proc.kill()
        pool.shutdown(wait=True, cancel_futures=True)
    return failures
