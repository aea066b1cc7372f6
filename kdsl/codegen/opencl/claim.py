"""Kernels whose work-groups claim programs at run time (OpenCL CPU devices, opt-in).

Why: PoCL's pthread driver hands each of its threads a run of work-groups at
once -- half of what is left, up to 64 groups per thread -- so a grid of
64 programs on 2 cores is split 32/16/8/...: the first thread to wake is
committed to half the launch, and when another tenant slows that core the
whole launch waits for it. With the launch option ``lower.claim=k`` the kernel
does the scheduling itself, as the ``cpu`` pool does: one work-group per compute
unit, each claiming the next ``1/(k x units)`` of the program ids left (guided
self-scheduling: large claims first, single programs at the end) with an atomic
compare-and-swap on a counter, until none is left -- a fast core runs more.

Opt-in, not the default, because it did not pay everywhere: in one-process A/B
runs (docs/OPTIMIZER.md, session 14) attention 1x8x1024x64 ran 9-25 % faster,
conv2d NHWC the same, and a 256 x 256-tile matmul 8-10 % slower, 5-7 % of that on
one thread, although PoCL's code for the matmul's inner loop is the same
instruction for instruction in both (the called body's frame is only 16-byte
aligned; whether that explains it was not settled on this noisy machine).

The kernel body becomes a function of the program ids and the grid size; the
``__kernel`` wraps it. Trailing arguments (after the parameters and
``kd_status``), set by :mod:`kdsl.runtime.opencl.kernel`:

* ``__global ulong* kd_sched`` -- two counters, zero between launches: program
  ids handed out, work-groups finished (the last one to finish zeroes both, so
  the next launch on the in-order queue starts from zero). 64-bit, so any grid
  Triton allows (2^31 x 65535 x 65535 programs) is counted without overflow;
* ``int kd_np0, kd_np1, kd_np2`` -- the launch grid (``kl.num_programs``);
* ``ulong kd_chunk`` -- the claim divisor ``k x units`` (``Device.claim_geometry``).

Programs run in increasing id order within a claim and claims are handed out
in increasing order, so a program that waits for a lower one (a lock, a
stream-K fix-up) waits for one that has started: forward progress holds as
with a plain launch. Only single-work-item programs without work-group barriers
or ``__local`` memory are claimable -- those declare state at kernel scope and
synchronise the whole group, which a loop around the body would break.
"""

from __future__ import annotations

from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType

PID = "kd_pid"  # + axis: the program id inside the body
NPROGRAMS = "kd_np"  # + axis: the grid size inside the body
BODY_SUFFIX = "_kd_body"


def claimable(func: Operation) -> bool:
    """Whether ``func`` (a ``wi.func``) can run as a loop over claimed program ids."""
    if func.attributes.get("num_threads", 1) != 1:
        return False
    for op in func.walk():
        if op.NAME == "wi.barrier":
            return False
        if op.NAME == "wi.alloc" and isinstance(op.result.type, MemRefType) and op.result.type.space == "local":
            return False
    return True


def kernel(name: str, params: list[str], names: list[str], body: list[str]) -> list[str]:
    """The body function and the claiming ``__kernel`` (source lines)."""
    ids = [f"int {PID}{a}" for a in range(3)] + [f"int {NPROGRAMS}{a}" for a in range(3)]
    grid = ", ".join(f"{NPROGRAMS}{a}" for a in range(3))
    fwd = ", ".join(names)
    fwd = fwd + ", " if fwd else ""
    sig = ",\n    ".join([*params, *ids])
    ksig = ",\n    ".join(
        [*params, "__global ulong* kd_sched", *(f"int {NPROGRAMS}{a}" for a in range(3)), "ulong kd_chunk"]
    )
    body_fn = f"{name}{BODY_SUFFIX}"
    # One call of the body, not inlined: PoCL builds several work-group functions around the
    # __kernel, each would get its own copy of an inlined body (measured: slower builds), and the
    # inlined body ran slower than the called one (see the module doc).
    return [
        f"__attribute__((noinline)) void {body_fn}(\n    {sig})\n{{\n",
        *body,
        "}\n",
        f"__kernel void {name}(\n    {ksig})\n{{\n",
        f"  const ulong kd_n0 = (ulong){NPROGRAMS}0, kd_n1 = (ulong){NPROGRAMS}1;\n",
        f"  const ulong kd_total = kd_n0 * kd_n1 * (ulong){NPROGRAMS}2;\n",
        "  volatile __global ulong* const kd_next = (volatile __global ulong*)kd_sched;\n",
        "  for (;;) {\n",
        "    const ulong kd_first = atom_add(kd_next, 0UL);\n",
        "    if (kd_first >= kd_total) break;\n",
        "    const ulong kd_end = min(kd_first + max(1UL, (kd_total - kd_first) / kd_chunk), kd_total);\n",
        "    if (atom_cmpxchg(kd_next, kd_first, kd_end) != kd_first) continue;  /* another group took it */\n",
        "    for (ulong kd_t = kd_first; kd_t < kd_end; ++kd_t) {\n",
        "      const ulong kd_r = kd_t / kd_n0;\n",
        f"      {body_fn}({fwd}(int)(kd_t - kd_r * kd_n0), (int)(kd_r % kd_n1), (int)(kd_r / kd_n1), {grid});\n",
        "    }\n",
        "  }\n",
        "  if (atom_inc((volatile __global ulong*)kd_sched + 1) == get_num_groups(0) - 1) {\n",
        "    kd_sched[0] = 0;  /* the last work-group out: the next launch starts from zero */\n",
        "    kd_sched[1] = 0;\n",
        "  }\n",
        "}\n",
    ]
