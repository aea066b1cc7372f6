"""Triton's tutorial-03 matmul kernel as a Triton user writes it, for ``bench_matmul.py --kernel tutorial``.

Why a second kernel: ``kdsl.ops.matmul`` is kdsl's own tuned op; an outside benchmark takes the
tutorial's kernel as written -- offsets wrapped with ``% M`` / ``% N``, the K tail masked in every
step, the output cast to the output pointer's type -- autotuned over the tutorial's config list.
That is the code path ``wrap-version`` (docs/OPTIMIZER.md) and the block loads serve.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl

# Triton's tutorial-03 CUDA configs (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M); num_stages/num_warps
# have no effect on kdsl's CPU backends and are left at their defaults
CONFIGS = [(128, 256, 64, 8), (64, 256, 32, 8), (128, 128, 32, 8), (128, 64, 32, 8),
           (64, 128, 32, 8), (128, 32, 32, 8), (64, 32, 32, 8), (32, 64, 32, 8)]  # fmt: skip


@kdsl.autotune(
    configs=[kdsl.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": g})
             for m, n, k, g in CONFIGS],
    key=["M", "N", "K"],
)  # fmt: skip
@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,  # type: ignore[no-untyped-def]
                  BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr, BLOCK_SIZE_K: kl.constexpr,
                  GROUP_SIZE_M: kl.constexpr):  # fmt: skip
    pid = kl.program_id(axis=0)
    num_pid_m = kl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = kl.cdiv(N, BLOCK_SIZE_N)
    group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // group) * GROUP_SIZE_M
    size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    offs_am = (pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = kl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_SIZE_K)):
        a = kl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = kl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc = kl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    kl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The tutorial's host wrapper (numpy arrays; strides in elements)."""
    m, k = a.shape
    _, n = b.shape
    c = np.empty((m, n), dtype=a.dtype)
    grid = lambda meta: (kdsl.cdiv(m, meta["BLOCK_SIZE_M"]) * kdsl.cdiv(n, meta["BLOCK_SIZE_N"]),)  # noqa: E731
    s = a.itemsize
    matmul_kernel[grid](a, b, c, m, n, k, a.strides[0] // s, a.strides[1] // s, b.strides[0] // s,
                        b.strides[1] // s, c.strides[0] // s, c.strides[1] // s)  # fmt: skip
    return c
