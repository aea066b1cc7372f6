"""Kernels for the autotuner tests (a module, so worker processes can import them)."""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x, y, out, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=mask) + kl.load(y + offs, mask=mask), mask=mask)


@kdsl.kernel
def scale_kernel(x, out, n, BLOCK: kl.constexpr, FACTOR: kl.constexpr):
    """FACTOR is a meta-parameter that changes the result: a config with FACTOR != 1 is wrong."""
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=mask) * FACTOR, mask=mask)


@kdsl.kernel
def atomic_sum_kernel(x, total, n, BLOCK: kl.constexpr):
    """Accumulates into ``total`` with atomics: repeated runs need reset_to_zero."""
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.atomic_add(total, kl.sum(kl.load(x + offs, mask=mask, other=0.0), axis=0))


@kdsl.kernel
def inplace_inc_kernel(x, n, BLOCK: kl.constexpr):
    """x += 1 in place: repeated runs need restore_value."""
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(x + offs, kl.load(x + offs, mask=mask) + 1.0, mask=mask)


@kdsl.kernel
def maybe_hang_kernel(x, out, n, BLOCK: kl.constexpr, SPIN: kl.constexpr):
    """With SPIN=1 the program never terminates (an infinite loop on the interpreter)."""
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    i = 0
    if SPIN == 1:
        while i >= 0:
            i = (i + 1) % 7
    kl.store(out + offs, kl.load(x + offs, mask=mask) + 2.0, mask=mask)


@kdsl.kernel
def loop_sum_kernel(x, out, BLOCK: kl.constexpr, STEPS: kl.constexpr):
    """A constant-trip loop: ``unroll`` removes it unless ``unroll.max-trip`` < STEPS."""
    offs = kl.arange(0, BLOCK)
    acc = kl.zeros((BLOCK,), kl.float32)
    for i in range(STEPS):
        acc += kl.load(x + i * BLOCK + offs)
    kl.store(out + offs, acc)


@kdsl.kernel
def matmul_kernel(a, b, c, M, N, K, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr):
    """A small tiled matmul: the lowering knobs (vector width, ``tile.dot`` blocking) apply to it."""
    pid = kl.program_id(0)
    num_n = kl.cdiv(N, BLOCK_N)
    rm = (pid // num_n) * BLOCK_M + kl.arange(0, BLOCK_M)
    rn = (pid % num_n) * BLOCK_N + kl.arange(0, BLOCK_N)
    rk = kl.arange(0, BLOCK_K)
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_K)):
        kk = k * BLOCK_K + rk
        x = kl.load(a + rm[:, None] * K + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = kl.load(b + kk[:, None] * N + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(x, y)
    kl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@kdsl.kernel
def even_add_kernel(x, y, out, n, BLOCK: kl.constexpr, EVEN: kl.constexpr, TAG: kl.constexpr):
    """``EVEN`` (a heuristic: BLOCK divides n) drops the mask; ``TAG`` is written to ``out[n]`` so
    a test can see which value a launch got."""
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    if EVEN:
        kl.store(out + offs, kl.load(x + offs) + kl.load(y + offs))
    else:
        mask = offs < n
        kl.store(out + offs, kl.load(x + offs, mask=mask) + kl.load(y + offs, mask=mask), mask=mask)
    if pid == 0:
        kl.store(out + n, TAG)
