"""int8 x int8 -> int32 dots on OpenCL: the VNNI micro-kernel (``codegen/opencl/mma_i8.py``) on a
CPU device whose host has AVX-512 VNNI, the generic integer micro-kernel otherwise; both exact."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def i8_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    rm = kl.program_id(0) * BM + kl.arange(0, BM)
    rn = kl.program_id(1) * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.full((BM, BN), 3, kl.int32)  # a non-zero start: the kernels must add to it
    for k in range(0, K, BK):
        a = kl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0)
        b = kl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0)
        acc = kl.dot(a, b, acc)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _operands(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    a[0, :], b[:, 0] = -128, -128  # the extremes of the unsigned-offset trick
    return a, b


def _run(m: int, n: int, k: int, bk: int) -> tuple[np.ndarray, np.ndarray, str]:
    a, b = _operands(m, n, k)
    c = np.zeros((m, n), np.int32)
    grid = (kdsl.cdiv(m, 32), kdsl.cdiv(n, 64))
    with kdsl.backend("opencl"):
        i8_mm_kernel[grid](a, b, c, m, n, k, BM=32, BN=64, BK=bk)
        source = i8_mm_kernel.warmup(a, b, c, m, n, k, BM=32, BN=64, BK=bk, grid=grid).asm["kernel.cl"]
    return c, a.astype(np.int64) @ b.astype(np.int64) + 3, source


@pytest.mark.parametrize(("m", "n", "k"), [(64, 128, 96), (45, 70, 100)])
def test_vnni_micro_kernel_is_exact(m: int, n: int, k: int) -> None:
    from kdsl.runtime.opencl.device import get_device

    got, want, source = _run(m, n, k, bk=32)
    np.testing.assert_array_equal(got, want.astype(np.int32))
    vnni = get_device().int8_dot
    assert ("__builtin_ia32_vpdpbusd512" in source) == vnni
    if vnni:
        assert 'target("avx512vnni' in source  # PoCL's CPU name may lack the feature


def test_generic_integer_micro_kernel_is_exact() -> None:
    """A K block that is not a multiple of 16 takes the generic kernel: widened int lanes,
    unsigned arithmetic (wrapping, no signed-overflow UB)."""
    got, want, source = _run(40, 64, 56, bk=8)
    np.testing.assert_array_equal(got, want.astype(np.int32))
    assert "vpdpbusd" not in source
    assert "as_uint16(convert_int16(" in source


@kdsl.kernel
def i8_dot_reuse_kernel(a_ptr, b_ptr, c_ptr, d_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    """The accumulator is read again after the dot: the micro-kernel starts from it (``init``)
    and writes a separate array."""
    rm, rn, rk = kl.arange(0, M), kl.arange(0, N), kl.arange(0, K)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = kl.cumsum(kl.load(c_ptr + rm[:, None] * N + rn[None, :]), axis=1)  # a stored tile
    out = kl.dot(a, b, acc)
    kl.store(d_ptr + rm[:, None] * N + rn[None, :], out - acc + 1)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@pytest.mark.parametrize("backend", ["cpu", "opencl"])
def test_int8_dot_from_a_live_accumulator(backend: str) -> None:
    a, b = _operands(32, 64, 64)
    c = np.random.default_rng(5).integers(-1000, 1000, (32, 64)).astype(np.int32)
    d = np.zeros((32, 64), np.int32)
    want_c = np.cumsum(c, axis=1, dtype=np.int32)
    with kdsl.backend(backend):
        i8_dot_reuse_kernel[(1,)](a, b, c, d, M=32, N=64, K=64)
    np.testing.assert_array_equal(d, (a.astype(np.int64) @ b.astype(np.int64) + 1).astype(np.int32))
    np.testing.assert_array_equal(c, want_c)
