"""A cheap analytical cost model: rank launch configurations without running them.

Given a kernel's tile IR, its launch grid, the scalar argument values and a
:class:`~kdsl.target.Target`, :func:`estimate` counts per program

* FLOPs -- ``2*M*N*K`` per ``tile.dot``, one per element of elementwise
  arithmetic (transcendentals weigh :data:`TRANSCENDENTAL`), reductions;
* bytes moved by ``tile.load`` / ``tile.store`` (every lane of the tile: on
  the CPU targets masked-off lanes still cost a vector slot);
* loop iterations (constant bounds exactly, runtime bounds evaluated from the
  scalar arguments when they are simple arithmetic of them);

and turns them into time with a roofline: ``max(compute, memory)`` (plus
half the shorter one: overlap is never perfect) where
compute runs at the target's fp32 peak scaled by how well the grid fills the
compute units (waves) and by vector-lane use (a tile's last dimension
narrower than the SIMD width wastes lanes), and memory is unique bytes at
DRAM bandwidth plus re-read bytes at cache bandwidth. Working sets above the
register file, the per-core cache or the local memory add penalties;
per-program and per-iteration overheads make tiny tiles lose. Absolute
numbers are rough; the *ranking* is what the autotuner's pruning uses
(``prune_configs_by={"perf_model": perf_model(kernel, target, grid)}``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kdsl.ir.core import BlockArgument, ModuleOp, Operation, Value
from kdsl.ir.types import PointerType
from kdsl.target import Target
from kdsl.transforms.utils import const_value

TRANSCENDENTAL = 8.0  # FLOP weight of exp/log/sin/... (vectorised polynomial of ~8 FMAs)
_TRANSCENDENTAL_OPS = {"math.exp", "math.exp2", "math.log", "math.log2", "math.sin", "math.cos", "math.tanh",
                       "math.erf", "math.pow", "math.sqrt", "math.rsqrt", "math.sqrt_rn", "math.div_rn"}
_FREE = {"arith.constant", "tile.splat", "tile.broadcast", "tile.expand_dims", "tile.reshape", "tile.hint",
         "tile.program_id", "tile.num_programs", "tile.arange", "scf.yield", "scf.condition", "tile.return"}
UNKNOWN_TRIPS = 8  # iterations assumed for a loop whose bounds cannot be evaluated
PROGRAM_OVERHEAD_S = 0.5e-6  # per program instance (scheduling, prologue)
ITERATION_OVERHEAD_S = 5e-9  # per loop iteration per program (branch, induction update)
LAUNCH_OVERHEAD_S = 10e-6
CACHE_BW_FACTOR = 4.0  # cache bandwidth relative to DRAM bandwidth
OVERLAP_LOSS = 0.5  # share of the shorter of compute / memory time not hidden behind the longer


@dataclass
class Counts:
    """Per-program work of a kernel body."""

    flops: float = 0.0
    bytes: float = 0.0
    iterations: float = 0.0
    narrow_flops: float = 0.0  # flops on tiles narrower than the SIMD width (wasted lanes)
    working_set: int = 0  # bytes of the largest simultaneously live dot operands / tiles

    def add(self, other: Counts, times: float = 1.0) -> None:
        self.flops += other.flops * times
        self.bytes += other.bytes * times
        self.iterations += other.iterations * times
        self.narrow_flops += other.narrow_flops * times
        self.working_set = max(self.working_set, other.working_set)


@dataclass(frozen=True)
class Estimate:
    """The model's answer for one launch, in seconds, with its ingredients."""

    seconds: float
    compute_s: float
    memory_s: float
    overhead_s: float
    penalty: float
    flops: float
    bytes: float
    programs: int

    @property
    def ms(self) -> float:
        return self.seconds * 1e3


def _numel(v: Value) -> int:
    return math.prod(v.type.shape) if v.type.shape else 1


def _tile_bytes(v: Value) -> int:
    e = v.type.scalar
    size = 8 if isinstance(e, PointerType) else e.itemsize
    return _numel(v) * size


class _Counter:
    """Walks one function body accumulating :class:`Counts` (loops multiply)."""

    def __init__(self, target: Target, env: Mapping[Value, int], grid: tuple[int, int, int]) -> None:
        self.target, self.env, self.grid = target, dict(env), grid

    def scalar(self, v: Value, depth: int = 0) -> int | None:
        """The integer value of a scalar when it follows from constants and argument values."""
        if v in self.env:
            return self.env[v]
        c = const_value(v)
        if c is not None:
            return int(c)
        op = v.owner_op
        if op is None or depth > 16 or v.type.shape:
            return None
        if op.NAME == "tile.num_programs":
            return self.grid[int(op.attributes["axis"])]
        if op.NAME == "tile.program_id":
            return 0
        if op.NAME in ("arith.cast", "tile.hint"):
            return self.scalar(op.operand, depth + 1)
        fns: dict[str, Callable[[int, int], int]] = {
            "arith.add": lambda a, b: a + b, "arith.sub": lambda a, b: a - b, "arith.mul": lambda a, b: a * b,
            "arith.div": lambda a, b: int(a / b) if b else 0, "arith.max": max, "arith.min": min,
            "arith.rem": lambda a, b: int(math.fmod(a, b)) if b else 0,
        }
        fn = fns.get(op.NAME)
        if fn is None:
            return None
        a, b = self.scalar(op.lhs, depth + 1), self.scalar(op.rhs, depth + 1)
        return None if a is None or b is None else fn(a, b)

    def trips(self, loop: Operation) -> float:
        if loop.NAME != "scf.for":
            return UNKNOWN_TRIPS
        lb, ub, st = (self.scalar(v) for v in (loop.lower, loop.upper, loop.step))
        if lb is None or ub is None or not st:
            return UNKNOWN_TRIPS
        n = (ub - lb + st - 1) // st if st > 0 else (lb - ub - st - 1) // (-st)
        return float(max(0, n))

    def block(self, ops: list[Operation]) -> Counts:
        out = Counts()
        for op in ops:
            out.add(self.op(op))
        return out

    def op(self, op: Operation) -> Counts:
        name = op.NAME
        c = Counts()
        if name in ("scf.for", "scf.while"):
            n = self.trips(op)
            for r in op.regions:
                c.add(self.block(r.block.ops), n)
            c.iterations += n
            return c
        if name == "scf.if":
            branches = [self.block(r.block.ops) for r in op.regions]
            return max(branches, key=lambda b: b.flops + b.bytes)
        if name in ("tile.reduce", "tile.scan"):
            n = _numel(op.operands[0])
            inner = self.block(op.regions[0].block.ops)
            c.flops = max(inner.flops, 1.0) * n
            return c
        if name == "tile.dot":
            return self._dot(op)
        if name in ("tile.load", "tile.store"):
            v = op.result if name == "tile.load" else op.value
            c.bytes = float(_tile_bytes(v))
            c.working_set = _tile_bytes(v)
            return c
        if name in _FREE or not op.results:
            return c
        weight = TRANSCENDENTAL if name in _TRANSCENDENTAL_OPS else 1.0
        n = _numel(op.results[0])
        c.flops = weight * n
        last = op.results[0].type.shape[-1] if op.results[0].type.shape else 1
        if last < self.target.simd_lanes("f32"):
            c.narrow_flops = c.flops
        return c

    def _dot(self, op: Operation) -> Counts:
        *batch, m, k = op.a.type.shape
        n = op.b.type.shape[-1]
        c = Counts()
        c.flops = 2.0 * math.prod(batch) * m * n * k
        c.working_set = _tile_bytes(op.a) + _tile_bytes(op.b) + _tile_bytes(op.acc)
        if n < self.target.simd_lanes("f32"):
            c.narrow_flops = c.flops
        return c


def kernel_func(module: ModuleOp) -> Operation:
    """The launchable ``tile.func`` of ``module``."""
    funcs = [op for op in module.body.ops if op.NAME == "tile.func"]
    kernels = [f for f in funcs if f.attributes.get("kernel")]
    if not (kernels or funcs):
        raise ValueError("module has no tile.func")
    return (kernels or funcs)[0]


def _grid3(grid: tuple[int, ...] | int) -> tuple[int, int, int]:
    g = (grid,) if isinstance(grid, int) else tuple(int(x) for x in grid)
    return (*g, 1, 1, 1)[:3]  # type: ignore[return-value]


def estimate(module: ModuleOp, grid: tuple[int, ...] | int, target: Target,
             args: Mapping[str, Any] | None = None) -> Estimate:
    """Estimated run time of launching ``module``'s kernel on ``grid`` programs.

    ``args`` maps parameter names to launch values: integers let runtime loop
    bounds be evaluated; arrays give the unique bytes (first touch from DRAM).
    """
    func = kernel_func(module)
    names = func.attributes.get("arg_names") or tuple(f"arg{i}" for i in range(len(func.regions[0].block.args)))
    args = dict(args or {})
    env: dict[Value, int] = {}
    for a, name in zip(func.regions[0].block.args, names):
        v = args.get(name)
        if isinstance(a, BlockArgument) and isinstance(v, int) and not isinstance(v, bool):
            env[a] = v
    g = _grid3(grid)
    counts = _Counter(target, env, g).block(func.regions[0].block.ops)
    return _roofline(counts, g, target, _unique_bytes(args))


def _unique_bytes(args: Mapping[str, Any]) -> float:
    return float(sum(int(getattr(v, "nbytes", 0)) for v in args.values() if hasattr(v, "shape")))


def _roofline(c: Counts, grid: tuple[int, int, int], t: Target, unique: float) -> Estimate:
    programs = max(1, math.prod(grid))
    cu = max(1, t.compute_units)
    waves = math.ceil(programs / cu)
    fill = programs / (waves * cu)  # fraction of compute units busy over all waves
    flops, moved = c.flops * programs, c.bytes * programs
    lanes = t.simd_lanes("f32")
    narrow_share = c.narrow_flops / c.flops if c.flops else 0.0
    vector_eff = 1.0 - narrow_share * (1.0 - 1.0 / lanes) * 0.5
    compute = flops / (t.peak_gflops * 1e9 * fill * vector_eff)
    bw = t.bandwidth_gbs * 1e9
    first = min(unique, moved) if unique else moved
    memory = first / bw + max(0.0, moved - first) / (bw * CACHE_BW_FACTOR * fill)
    penalty = _penalty(c.working_set, t)
    overhead = LAUNCH_OVERHEAD_S + waves * PROGRAM_OVERHEAD_S + c.iterations * waves * ITERATION_OVERHEAD_S
    busy = compute * penalty
    seconds = max(busy, memory) + OVERLAP_LOSS * min(busy, memory) + overhead
    return Estimate(seconds, compute, memory, overhead, penalty, flops, moved, programs)


def _penalty(working_set: int, t: Target) -> float:
    """Slow-down when a program's live tiles outgrow registers, cache or local memory."""
    p = 1.0
    regs = t.register_bytes * (1 if t.is_cpu else max(1, t.max_work_group_size // 4))
    if working_set > regs:
        p *= 1.0 + 0.05 * math.log2(working_set / regs)  # register blocks cycle through L1: mild
    if working_set > t.cache_bytes:
        p *= working_set / t.cache_bytes  # thrashes the per-core cache: severe
    if t.promote_to_local and working_set > t.local_memory_bytes:
        p *= 2.0
    return p


# --------------------------------------------------------------------------- autotuner hook
GridSpec = tuple[int, ...] | int | Callable[[dict[str, Any]], Any]


def perf_model(kernel: Any, target: Target | None = None,
               grid: GridSpec | None = None) -> Callable[..., float]:
    """A Triton-style ``perf_model`` for ``@kdsl.autotune(prune_configs_by=...)``.

    The returned callable takes the launch's named arguments plus a config's
    meta-parameters as keywords (what the autotuner passes) and returns the
    estimated milliseconds. ``grid`` is the launch grid: a tuple, or a
    callable of the keyword dict (Triton's ``lambda META: (...)``); without
    one, one program per compute unit is assumed. ``target`` defaults to
    the current backend's. IR is compiled once per distinct keyword set.
    """
    from kdsl.runtime.jit import KernelFunction

    fn = kernel if isinstance(kernel, KernelFunction) else getattr(kernel, "fn", None)  # @autotune wraps one
    if not isinstance(fn, KernelFunction):
        raise TypeError(f"perf_model needs a @kdsl.kernel function, got {type(kernel).__name__}")
    cache: dict[Any, ModuleOp] = {}

    def model(**kwargs: Any) -> float:
        import kdsl
        from kdsl.target import target_for

        tgt = target if target is not None else target_for()
        params = {k: v for k, v in kwargs.items() if k in fn.arg_names}
        key = tuple(sorted((k, _key(v)) for k, v in params.items()))
        module = cache.get(key)
        if module is None:
            module = kdsl.compile_to_ir(fn, optimize=True, **params)
            cache[key] = module
        g: Any = grid(kwargs) if callable(grid) else grid
        if g is None:
            g = (tgt.compute_units,)
        return estimate(module, g, tgt, params).ms

    return model


def _key(v: Any) -> Any:
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return ("array", tuple(v.shape), str(v.dtype))
    try:
        hash(v)
    except TypeError:
        return repr(v)
    return v


__all__ = ["Counts", "Estimate", "estimate", "kernel_func", "perf_model"]
