"""The cost model ranks obviously bad configurations below good ones."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.target import Target, host_cpu_target
from kdsl.transforms.costmodel import estimate, perf_model


@kdsl.kernel
def matmul(a, b, c, M, N, K, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr, BLOCK_K: kl.constexpr):
    pid = kl.program_id(0)
    grid_n = kl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + kl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + kl.arange(0, BLOCK_N)
    rk = kl.arange(0, BLOCK_K)
    acc = kl.zeros((BLOCK_M, BLOCK_N), kl.float32)
    for k in range(0, K, BLOCK_K):
        av = kl.load(a + rm[:, None] * K + (k + rk)[None, :])
        bv = kl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc = kl.dot(av, bv, acc)
    kl.store(c + rm[:, None] * N + rn[None, :], acc)


@kdsl.kernel
def softmax(x, y, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, BLOCK)
    m = offs < n_cols
    v = kl.load(x + row * n_cols + offs, mask=m, other=-float("inf"))
    e = kl.exp(v - kl.max(v, 0))
    kl.store(y + row * n_cols + offs, e / kl.sum(e, 0), mask=m)


def _cpu() -> Target:
    return Target(name="test-cpu", backend="cpu", kind="cpu", compute_units=2, simd_bytes=64,
                  preferred_vector=(("f32", 16),), local_memory_bytes=0, local_memory_real=False,
                  max_work_group_size=1, subgroup_size=0, fp64=True, fp16=False, cache_bytes=1 << 20)


def _matmul_ms(model, size: int, bm: int, bn: int, bk: int) -> float:  # type: ignore[no-untyped-def]
    a = np.zeros((size, size), np.float32)
    return float(model(a=a, b=a, c=a, M=size, N=size, K=size, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk))


def test_matmul_ranking() -> None:
    grid = lambda meta: (kdsl.cdiv(meta["M"], meta["BLOCK_M"]) * kdsl.cdiv(meta["N"], meta["BLOCK_N"]),)  # noqa: E731
    model = perf_model(matmul, _cpu(), grid)
    good = _matmul_ms(model, 1024, 64, 64, 32)
    tiny = _matmul_ms(model, 1024, 16, 16, 16)     # reloads operands 4x more often, many programs
    narrow = _matmul_ms(model, 1024, 64, 4, 32)    # 4 columns: a quarter of each vector register
    huge = _matmul_ms(model, 1024, 512, 512, 64)   # 1 MiB accumulator: spills the cache; 4 programs
    assert good < tiny and good < narrow and good < huge, (good, tiny, narrow, huge)
    # a plausible magnitude: 2 GFLOP at <= the target's peak
    assert good >= 2 * 1024**3 / (_cpu().peak_gflops * 1e9) * 1e3


def test_softmax_ranking() -> None:
    rows, cols = 4096, 1000
    x = np.zeros((rows, cols), np.float32)
    model = perf_model(softmax, _cpu(), lambda meta: (rows,))
    fit = model(x=x, y=x, n_cols=cols, BLOCK=1024)
    wasteful = model(x=x, y=x, n_cols=cols, BLOCK=8192)
    assert fit < wasteful


def test_estimate_counts_matmul_flops_exactly() -> None:
    a = np.zeros((256, 256), np.float32)
    module = kdsl.compile_to_ir(matmul, a, a, a, 256, 256, 256, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, optimize=True)
    est = estimate(module, (16,), _cpu(), {"M": 256, "N": 256, "K": 256, "a": a, "b": a, "c": a})
    # dot flops dominate: 2*M*N*K, plus the small elementwise address arithmetic
    assert 2 * 256**3 <= est.flops <= 2 * 256**3 * 1.05
    assert est.programs == 16
    # every program streams its A and B panels once per K step and writes its C tile
    assert est.bytes == pytest.approx(16 * (256 // 32) * (64 * 32 + 32 * 64) * 4 + 16 * 64 * 64 * 4)


def test_fewer_programs_than_cores_is_slower() -> None:
    a = np.zeros((256, 256), np.float32)
    args = {"M": 256, "N": 256, "K": 256}
    t = _cpu().with_(compute_units=8)
    small = kdsl.compile_to_ir(matmul, a, a, a, 256, 256, 256, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, optimize=True)
    big = kdsl.compile_to_ir(matmul, a, a, a, 256, 256, 256, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, optimize=True)
    # same work: 16 programs fill 8 compute units, 4 programs leave half of them idle
    assert estimate(big, (4,), t, args).compute_s == pytest.approx(2 * estimate(small, (16,), t, args).compute_s, rel=0.02)


def test_perf_model_default_target_runs() -> None:
    model = perf_model(softmax, host_cpu_target(), (8,))
    x = np.zeros((8, 64), np.float32)
    assert model(x=x, y=x, n_cols=64, BLOCK=64, num_threads=0) > 0
