"""How the elements of a tile are spread over the work-items of a work-group.

A blocked layout on the tile's row-major *flat* index, like Triton's
``BlockedEncoding`` without warps: the flat index space is cut into chunks
of ``chunk`` consecutive elements; chunk ``c`` belongs to work-item
``c % num_threads``. Work-item ``t`` therefore owns the flat indices::

    e(slot) = ((slot // chunk) * num_threads + t) * chunk + slot % chunk

for ``slot`` in ``[0, slots(numel))``, and keeps them in a private array of
that many slots. When ``num_threads * chunk`` does not divide ``numel``
(small tiles) the excess slots are guarded off, so each element still has
exactly one owner (atomics and stores happen once).

Why flat: every elementwise op, ``reshape`` and ``expand_dims`` keep the
flat index, so they never move data between work-items; only ``broadcast``,
``permute``, ``join``/``split`` of stored tiles and the collective ops
(reduce, scan, dot) read other work-items' elements, and they do it through
one ``__local`` copy of the tile. With ``num_threads == 1`` (the default,
right for CPU devices such as PoCL) the private array *is* the whole tile
and no local memory or barrier is ever used.

The knobs (``num_threads``, ``chunk``) are the autotuner's search space:
see :data:`TUNABLES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdsl.errors import CompilationError

TUNABLES: dict[str, tuple[int, ...]] = {
    "num_threads": (1, 2, 4, 8, 16, 32, 64, 128, 256),
    "chunk": (1, 2, 4, 8, 16),
    "lower.dot_block_m": (2, 4, 6, 8, 12, 16),
    "lower.dot_block_n": (16, 32, 48, 64),
    "lower.vector_width": (1, 4, 8, 16),
}

# The lowering's launch options (read by :meth:`Layout.from_options` and the cpu
# backend's layout): the JIT rejects any other ``lower.*`` name.
LAUNCH_KNOBS: tuple[str, ...] = (
    "lower.vector_width", "lower.dot_block_m", "lower.dot_block_n", "lower.chunk",
    "lower.claim",  # OpenCL CPU devices: work-groups claim program ids (kdsl/codegen/opencl/claim.py)
    "lower.prefetch",  # 0 / 1: software prefetch of the next row (kdsl/lowering/prefetch.py)
    "lower.align_stores",  # 0 / 1: streaming-store loops start aligned (kdsl/lowering/align_stores.py)
    "lower.stream_stores",  # 0 / 1: stream vector stores to large write-only arrays (lowering/stream_stores.py)
)
# Layout switches (0 / 1) that CPU targets turn on: the cpu backend and OpenCL CPU devices
CPU_STEPS: tuple[str, ...] = ("stream_stores", "prefetch", "align_stores")
# knobs that may be 0 (the off switches above); every other knob is a positive int
KNOB_MINIMUM: dict[str, int] = {f"lower.{name}": 0 for name in CPU_STEPS}



def knob_choices(default: int, candidates: tuple[int, ...]) -> tuple[int, ...]:
    """``default`` followed by the other ``candidates``: a backend's declared values for one
    lowering knob (the autotuner's config 0 -- its reference -- is then the untuned layout)."""
    return (default, *(c for c in candidates if c != default))


# Renderer-facing features are opt-in per target: a renderer that has not
# declared them keeps getting the scalar wi IR it already prints.
# OpenCL (PoCL on a CPU): float16 vectors, and the dot's register blocking of the cpu backend and
# of ``kdsl.ops.matmul`` -- 4 rows x 4 vectors of accumulators (4 broadcasts and 4 loads per 16
# FMAs); 8 x 32 (8 broadcasts, 2 loads) measured 4-8 % slower in attention on PoCL (session 6).
TARGET_DEFAULTS: dict[str, dict[str, int]] = {
    "opencl": {"vector_width": 16, "dot_block_m": 4, "dot_block_n": 64},
}


@dataclass(frozen=True)
class Layout:
    """Work-group size and chunk length of the blocked layout (see module doc)."""

    num_threads: int = 1
    chunk: int = 1
    # register blocking of ``tile.dot`` (``wi.mma``): rows x columns of the
    # accumulator held in registers, and the vector width of the renderer
    # (1: no vector ops in the wi IR, the scalar lowering of every renderer)
    vector_width: int = 1
    dot_block_m: int = 8
    dot_block_n: int = 32
    # software prefetch of the next row (lowering/prefetch.py): on for CPU targets, where nothing
    # else keeps the memory system busy while a row is computed on; 0 elsewhere
    prefetch: int = 0
    # a lane-count head before vector loops with streaming stores, so that their vectors are aligned
    # (lowering/align_stores.py): x86's streaming stores are whole aligned vectors; on for CPU targets
    align_stores: int = 0
    # streaming stores without a hint, to a large array the kernel only writes (lowering/stream_stores.py):
    # skips the read-for-ownership of lines no cache would keep anyway; on for CPU targets
    stream_stores: int = 0

    def __post_init__(self) -> None:
        if min(self.num_threads, self.chunk, self.vector_width, self.dot_block_m, self.dot_block_n) < 1:
            raise CompilationError(f"invalid layout {self}: every parameter must be >= 1")

    @property
    def group(self) -> int:
        """Elements covered by one round of all work-items."""
        return self.num_threads * self.chunk

    def slots(self, numel: int) -> int:
        """Private slots per work-item for a tile of ``numel`` elements."""
        rounds = -(-numel // self.group)
        return rounds * self.chunk

    def exact(self, numel: int) -> bool:
        """True when every slot of every work-item holds an element."""
        return numel % self.group == 0

    @staticmethod
    def from_options(num_threads: int, extra: tuple[tuple[str, Any], ...], target: str = "") -> Layout:
        """The layout of a launch: ``extra`` keys ``chunk`` and ``lower.<field>`` override
        the defaults of ``target`` (see :data:`TARGET_DEFAULTS`)."""
        opts = dict(extra)
        nt = num_threads or int(opts.get("num_threads", 1))
        fields: dict[str, int] = dict(TARGET_DEFAULTS.get(target, {}))
        for name in ("vector_width", "dot_block_m", "dot_block_n", *CPU_STEPS):
            if f"lower.{name}" in opts:
                fields[name] = int(opts[f"lower.{name}"])
        return Layout(num_threads=nt, chunk=int(opts.get("lower.chunk", opts.get("chunk", 1))), **fields)
