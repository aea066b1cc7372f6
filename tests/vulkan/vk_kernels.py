"""Kernels for the Vulkan backend tests (in a file: the frontend reads kernel source)."""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, BLOCK)
    x = kl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
    num = kl.exp(x - kl.max(x, axis=0))
    kl.store(out_ptr + row * out_stride + offs, num / kl.sum(num, axis=0), mask=offs < n_cols)


@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        a = kl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0.0)
        b = kl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@kdsl.kernel
def binop_kernel(x_ptr, y_ptr, out_ptr, BLOCK: kl.constexpr, OP: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    y = kl.load(y_ptr + offs)
    if OP == "div":
        r = x // y
    elif OP == "mod":
        r = x % y
    elif OP == "shl":
        r = x << y
    elif OP == "shr":
        r = x >> y
    elif OP == "mul":
        r = x * y
    else:
        r = x + y
    kl.store(out_ptr + offs, r)


@kdsl.kernel
def cast_kernel(x_ptr, out_ptr, BLOCK: kl.constexpr, DST: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs).to(DST))


@kdsl.kernel
def scan_sum_kernel(x_ptr, out_ptr, total_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.store(out_ptr + offs, kl.cumsum(x, axis=0))
    kl.store(total_ptr, kl.sum(x, axis=0))


@kdsl.kernel
def atomic_kernel(x_ptr, sum_ptr, max_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    kl.atomic_add(sum_ptr, kl.sum(x, axis=0))
    kl.atomic_max(max_ptr + offs * 0, x, mask=mask)


@kdsl.kernel
def while_kernel(n_ptr, out_ptr):
    n = kl.load(n_ptr)
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    kl.store(out_ptr, steps)


@kdsl.kernel
def print_kernel(x_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    kl.device_print("v=", kl.load(x_ptr + offs))


@kdsl.kernel
def assert_kernel(x_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.device_assert(x < 100, "x must stay below 100")
