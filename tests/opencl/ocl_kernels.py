"""Kernels shared by the OpenCL tests (few distinct kernels: each PoCL build costs ~150 ms)."""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x, y, out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


@kdsl.kernel
def intops_kernel(a, b, q, r, shl, shr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(a + offs, mask=m, other=1)
    y = kl.load(b + offs, mask=m, other=1)
    kl.store(q + offs, x // y, mask=m)
    kl.store(r + offs, x % y, mask=m)
    kl.store(shl + offs, x << y, mask=m)
    kl.store(shr + offs, x >> y, mask=m)


@kdsl.kernel
def softmax_kernel(out, inp, stride, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK)
    m = cols < n_cols
    x = kl.load(inp + row * stride + cols, mask=m, other=-float("inf"))
    z = x - kl.max(x, axis=0)
    num = kl.exp(z)
    kl.store(out + row * stride + cols, num / kl.sum(num, axis=0), mask=m)


@kdsl.kernel
def matmul_kernel(a, b, c, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr, ACC: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        ma = (rm[:, None] < M) & (k + rk[None, :] < K)
        mb = (k + rk[:, None] < K) & (rn[None, :] < N)
        x = kl.load(a + rm[:, None] * K + (k + rk[None, :]), mask=ma, other=0)
        y = kl.load(b + (k + rk[:, None]) * N + rn[None, :], mask=mb, other=0)
        acc = kl.dot(x, y, acc)
    kl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@kdsl.kernel
def reduce_kernel(x, sums, maxs, argmaxs, cums, rcums, R: kl.constexpr, C: kl.constexpr, AXIS: kl.constexpr):
    r = kl.arange(0, R)
    c = kl.arange(0, C)
    t = kl.load(x + r[:, None] * C + c[None, :])
    o = kl.arange(0, R if AXIS == 1 else C)
    kl.store(sums + o, kl.sum(t, axis=AXIS))
    kl.store(maxs + o, kl.max(t, axis=AXIS))
    kl.store(argmaxs + o, kl.argmax(t, axis=AXIS))
    kl.store(cums + r[:, None] * C + c[None, :], kl.cumsum(t, axis=AXIS))
    kl.store(rcums + r[:, None] * C + c[None, :], kl.cumsum(t, axis=AXIS, reverse=True))


@kdsl.kernel
def shapes_kernel(x, t_out, j_out, s_out, R: kl.constexpr, C: kl.constexpr):
    r = kl.arange(0, R)
    c = kl.arange(0, C)
    t = kl.load(x + r[:, None] * C + c[None, :])
    kl.store(t_out + c[:, None] * R + r[None, :], kl.trans(t))
    j = kl.join(t, t * 2)  # (R, C, 2)
    k2 = kl.arange(0, 2)
    kl.store(j_out + r[:, None, None] * (2 * C) + c[None, :, None] * 2 + k2[None, None, :], j)
    a, b = kl.split(j)
    kl.store(s_out + r[:, None] * C + c[None, :], a + b)


@kdsl.kernel
def atomics_kernel(counter, fsum, lock, total, vals, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    v = kl.load(vals + kl.program_id(0) * BLOCK + offs)
    kl.atomic_add(counter, 1)
    kl.atomic_add(fsum + offs % 4, v)
    while kl.atomic_cas(lock, 0, 1) == 1:
        pass
    kl.store(total, kl.load(total) + kl.sum(v, axis=0))
    kl.atomic_xchg(lock, 0)


@kdsl.kernel
def loops_kernel(x, out, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    acc = kl.zeros((BLOCK,), dtype=kl.float32)
    i = 0
    while i < n:
        v = kl.load(x + i * BLOCK + offs)
        if i % 2 == 0:
            acc += v
        else:
            acc = acc - kl.trans(v[:, None]).reshape(BLOCK)
        i += 1
    kl.store(out + offs, acc)


@kdsl.kernel
def assert_kernel(x, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    v = kl.load(x + offs, mask=offs < n, other=1)
    kl.device_assert(v > 0, "values must be positive")  # ASSERT-LINE
