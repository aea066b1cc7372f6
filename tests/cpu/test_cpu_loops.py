"""Loop rewrites of the LLVM renderer: the dot micro-kernel and delinearised 2-D loops.

Both are checked numerically against numpy and the interpreter over shapes
that hit every branch of the blocking plan (1, 2, 4 vectors per row block,
several blocks per row, narrower vectors for short rows, fallback to the
literal loop), and structurally: the rendered IR of a matmul holds vector
``fmuladd`` and no gathers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.cpu import compiler

from ._helpers import compile_cpu, run_both


@kdsl.kernel
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr,
              ACC: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rm = pm * BM + kl.arange(0, BM)
    rn = pn * BN + kl.arange(0, BN)
    rk = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=ACC)
    for k in range(0, K, BK):
        a = kl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                    other=0)
        b = kl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                    other=0)
        acc = kl.dot(a, b, acc, out_dtype=ACC)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


_KL = {np.float32: kl.float32, np.float64: kl.float64, np.int32: kl.int32, np.float16: kl.float16}
_ACC = {np.float32: np.float32, np.float64: np.float64, np.float16: np.float32, np.int8: np.int32}

SHAPES = [  # (M, N, K, BM, BN, BK)
    (64, 128, 64, 32, 128, 16),  # 4+ vectors per row: 4 per block, 2 blocks per row
    (64, 64, 64, 32, 64, 16),  # 4 vectors per row
    (30, 32, 17, 16, 32, 16),  # 2 vectors, masked rows and a masked K tail
    (7, 16, 5, 16, 16, 8),  # 1 vector, masked rows and K
    (16, 8, 8, 16, 8, 8),  # row shorter than a vector: narrower vectors
    (2, 16, 8, 2, 16, 8),  # two rows: one block of 2
    (8, 2, 8, 8, 2, 8),  # 2 columns: literal loop (vectors would be too short)
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, "f16acc"],
                         ids=["f32", "f64", "f16", "i8", "f16acc"])
def test_blocked_dot_matches_numpy_and_interpreter(shape: tuple[int, ...], dtype: Any) -> None:
    m, n, k, bm, bn, bk = shape
    rng = np.random.default_rng(sum(shape))
    acc = np.float16 if dtype == "f16acc" else _ACC[dtype]
    dtype = np.float16 if dtype == "f16acc" else dtype
    if dtype == np.int8:
        a = rng.integers(-128, 128, (m, k)).astype(dtype)
        b = rng.integers(-128, 128, (k, n)).astype(dtype)
    else:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    c = np.zeros((m, n), acc)
    grid = (-(-m // bm), -(-n // bn))
    cpu, ref = run_both(mm_kernel, grid, [a, b, c, m, n, k], BM=bm, BN=bn, BK=bk, ACC=_KL[acc])
    if dtype == np.int8:
        np.testing.assert_array_equal(cpu[2], a.astype(np.int32) @ b.astype(np.int32))
        np.testing.assert_array_equal(cpu[2], ref[2])
    else:
        want = a.astype(np.float64) @ b.astype(np.float64)
        tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 0.25}[acc]  # f16: ~64 roundings of ~8
        np.testing.assert_allclose(cpu[2], want, rtol=tol, atol=tol)
        np.testing.assert_allclose(cpu[2], ref[2], rtol=tol, atol=tol)


def _ir(shape: tuple[int, int, int], dtype: type = np.float32) -> tuple[str, str, str]:
    from kdsl.ir.printer import print_op

    m, n, k = shape
    a, b, c = np.zeros((m, k), dtype), np.zeros((k, n), dtype), np.zeros((m, n), dtype)
    kern = compile_cpu(mm_kernel, [a, b, c, m, n, k], BM=32, BN=64, BK=16, ACC=_KL[dtype])
    text = kern.stages.rendered.ir
    return print_op(kern.stages.wi_module), text, compiler.optimised_ir(text)


def test_matmul_renders_vector_fma_and_no_gathers() -> None:
    from kdsl.runtime.cpu.target import host

    wi, raw, opt = _ir((64, 64, 64))
    assert "wi.mma" in wi  # the cpu backend opts into the lowering's register-blocked dot
    lanes = host().vector_bytes // 4
    assert f"llvm.fmuladd.v{lanes}f32" in raw  # wi.mma (float dots) or the matched literal nest
    assert "gather" not in opt
    assert "fmuladd" in opt or "fma" in opt


def test_integer_dot_is_a_vector_micro_kernel() -> None:
    """Integer dots lower to ``wi.mma`` as float ones do: int8 x int8 -> int32 is ``vpdpbusd`` on
    a host with AVX-512 VNNI, else widened vector multiplies and adds."""
    from kdsl.ir.printer import print_op
    from kdsl.runtime.cpu.target import host

    m = n = k = 32
    a, b, c = np.zeros((m, k), np.int8), np.zeros((k, n), np.int8), np.zeros((m, n), np.int32)
    kern = compile_cpu(mm_kernel, [a, b, c, m, n, k], BM=32, BN=32, BK=16, ACC=kl.int32)
    assert "wi.mma" in print_op(kern.stages.wi_module)
    text = kern.stages.rendered.ir
    if host().int8_dot:
        assert "llvm.x86.avx512.vpdpbusd.512" in text
    else:
        assert "mul <" in text and "sext <" in text


def test_int8_dot_with_short_k_blocks_widens_in_vectors() -> None:
    """An int8 dot whose K block is not a multiple of 16 takes the generic integer micro-kernel
    (sign-extended vector multiplies and adds); numerics against numpy, overflow wrapping."""
    m, n, k = 32, 32, 40
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    kern = compile_cpu(mm_kernel, [a, b, c, m, n, k], BM=32, BN=32, BK=8, ACC=kl.int32)
    text = kern.stages.rendered.ir
    assert "vpdpbusd" not in text and "mul <" in text and "sext <" in text
    with kdsl.backend("cpu"):
        mm_kernel[(1, 1)](a, b, c, m, n, k, BM=32, BN=32, BK=8, ACC=kl.int32)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


@kdsl.kernel
def tile2d_kernel(x_ptr, y_ptr, out_ptr, R: kl.constexpr, C: kl.constexpr, D: kl.constexpr):
    r = kl.arange(0, R)
    c = kl.arange(0, C)
    d = kl.arange(0, D)
    x = kl.load(x_ptr + r[:, None] * C + c[None, :])  # rows of C
    y = kl.load(y_ptr + d[:, None] * (R * C // D) + kl.arange(0, R * C // D)[None, :])  # rows of R*C/D
    z = kl.reshape(x, (D, R * C // D)) * 2.0 + y
    kl.store(out_ptr + d[:, None] * (R * C // D) + kl.arange(0, R * C // D)[None, :], z)


@pytest.mark.parametrize("rcd", [(16, 32, 8), (8, 64, 4), (32, 8, 16), (4, 4, 2)], ids=str)
def test_delinearised_loops_are_bit_identical(rcd: tuple[int, int, int]) -> None:
    r, c, d = rcd
    rng = np.random.default_rng(1)
    x = rng.standard_normal((r, c)).astype(np.float32)
    y = rng.standard_normal((d, r * c // d)).astype(np.float32)
    out = np.zeros((d, r * c // d), np.float32)
    cpu, ref = run_both(tile2d_kernel, (1,), [x, y, out], R=r, C=c, D=d)
    np.testing.assert_array_equal(cpu[2], ref[2])
    np.testing.assert_array_equal(cpu[2], x.reshape(d, -1) * np.float32(2.0) + y)
