"""The tutorial kernels (01 vector add, 02 fused softmax, 03 matmul) whose OpenCL C is kept as golden files."""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    kl.store(output_ptr + offsets, x + y, mask=mask)


@kdsl.kernel
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: kl.constexpr):
    for row_idx in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        col_offsets = kl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = kl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - kl.max(row, axis=0)
        numerator = kl.exp(row_minus_max)
        out = numerator / kl.sum(numerator, axis=0)
        kl.store(output_ptr + row_idx * output_row_stride + col_offsets, out, mask=mask)


@kdsl.kernel
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr, GROUP_M: kl.constexpr):
    pid = kl.program_id(axis=0)
    num_pid_m = kl.cdiv(M, BLOCK_M)
    num_pid_n = kl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
    offs_k = kl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = kl.zeros((BLOCK_M, BLOCK_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = kl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = kl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = kl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    kl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
