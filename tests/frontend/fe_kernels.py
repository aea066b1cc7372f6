"""Kernels shared by the frontend tests (golden IR and end-to-end runs).

They live in their own module so error locations and golden files stay
stable when the test files change.
"""

import kdsl
import kdsl.language as kl


@kdsl.kernel
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    y = kl.load(y_ptr + offs, mask=mask)
    kl.store(out_ptr + offs, x + y, mask=mask)


@kdsl.kernel
def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK)
    mask = cols < n_cols
    x = kl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - kl.max(x, axis=0)
    num = kl.exp(x)
    den = kl.sum(num, axis=0)
    kl.store(out_ptr + row * out_stride + cols, num / den, mask=mask)


@kdsl.kernel
def loop_sum(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    """Sum x[0:n] with a runtime-bounded loop carrying a tile and a scalar."""
    acc = kl.zeros((BLOCK,), dtype=kl.float32)
    count = 0
    for start in range(0, n, BLOCK):
        offs = start + kl.arange(0, BLOCK)
        acc += kl.load(x_ptr + offs, mask=offs < n, other=0.0)
        count += 1
    kl.store(out_ptr, kl.sum(acc, axis=0))
    kl.store(out_ptr + 1, count.to(kl.float32))


@kdsl.kernel
def if_else(x_ptr, out_ptr, flag):
    x = kl.load(x_ptr)
    if flag > 0:
        y = x * 2.0
        z = 1
    else:
        y = x - 1.0
        z = 2
    kl.store(out_ptr, y + z)


@kdsl.kernel
def while_loop(out_ptr, n):
    i = 0
    total = 0
    while i < n:
        total += i
        i += 1
    kl.store(out_ptr, total)


@kdsl.kernel
def early_return(x_ptr, out_ptr, n):
    pid = kl.program_id(0)
    if pid >= n:
        return
    kl.store(out_ptr + pid, kl.load(x_ptr + pid) + 1.0)


@kdsl.kernel
def helper(x, scale, BIAS: kl.constexpr = 1.0):
    return x * scale + BIAS, x - scale


@kdsl.kernel
def clamp_pos(x):
    if x < 0.0:
        return 0.0
    return x


@kdsl.kernel
def call_helper(x_ptr, out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    a, b = helper(x, 2.0)
    c, _ = helper(x, 3.0, BIAS=0.5)
    kl.store(out_ptr + offs, a + b + c)
    kl.store(out_ptr + BLOCK, clamp_pos(kl.load(x_ptr)))


@kdsl.kernel
def static_unroll(x_ptr, out_ptr, N: kl.constexpr):
    acc = kl.load(x_ptr)
    for i in kl.static_range(N):
        acc = acc * (i + 1)
    kl.store(out_ptr, acc)


@kdsl.kernel
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    pid_m = kl.program_id(0)
    pid_n = kl.program_id(1)
    rm = pid_m * BM + kl.arange(0, BM)
    rn = pid_n * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, K, BK):
        a = kl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = kl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += kl.dot(a, b)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    kl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=mask)
