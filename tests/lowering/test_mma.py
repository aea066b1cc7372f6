"""The register-blocked ``tile.dot`` lowering (``wi.mma``): when it is chosen, golden text,
and numbers on the OpenCL backend against the interpreter (odd sizes, masks, dtypes,
accumulators updated in place or copied).

Regenerate the golden files with ``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.opencl import render_opencl
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from tests.lowering.test_lowering_golden import _check


@kdsl.kernel
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    offs_m = kl.program_id(0) * BM + kl.arange(0, BM)
    offs_n = kl.program_id(1) * BN + kl.arange(0, BN)
    offs_k = kl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BK)):
        a = kl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BK), other=0.0)
        b = kl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BK) & (offs_n[None, :] < N), other=0.0)
        acc = kl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    kl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@kdsl.kernel
def dot_reuse_kernel(a_ptr, b_ptr, c_ptr, d_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    """The dot's accumulator is read again after the dot: it must not be updated in place."""
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    rk = kl.arange(0, K)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = kl.load(c_ptr + rm[:, None] * N + rn[None, :]) * 2.0
    out = kl.dot(a, b, acc)
    kl.store(d_ptr + rm[:, None] * N + rn[None, :], out - acc)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@kdsl.kernel
def carried_twice_kernel(a_ptr, b_ptr, c_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr, STEPS: kl.constexpr):
    """A loop-carried accumulator that the loop body also reads besides the dot."""
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    rk = kl.arange(0, K)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = kl.zeros((M, N), dtype=kl.float32) + 1.0
    for _ in range(STEPS):
        acc = kl.dot(a, b, acc) + acc * 0.5
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def _lowered(kernel: Any, signature: tuple[str, ...], layout: Layout, **meta: Any) -> Any:
    """``kernel`` specialised for ``signature`` and ``meta``, lowered with ``layout``, verified."""
    mod = kdsl.compile_to_ir(kernel, *signature, optimize=True, **meta)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout)
    verify(wmod)
    return wmod


def _wi(layout: Layout, **meta: Any) -> Any:
    return _lowered(mm_kernel, ("*f32", "*f32", "*f32", "i32", "i32", "i32"), layout, **meta)


def test_mma_only_when_opted_in() -> None:
    """Renderers that did not opt in (vector_width=1: cpu, vulkan) keep the scalar dot."""
    assert "wi.mma" not in print_op(_wi(Layout(1, 1), BM=16, BN=32, BK=8))
    assert "wi.mma" not in print_op(_wi(Layout(4, 1, vector_width=16), BM=16, BN=32, BK=8))
    text = print_op(_wi(Layout(1, 1, vector_width=16), BM=16, BN=32, BK=8))
    assert text.count("wi.mma") == 1
    assert "block_m = 8" in text and "block_n = 32" in text and "vector_width = 16" in text


def test_layout_from_options_targets() -> None:
    assert Layout.from_options(1, ()).vector_width == 1
    assert Layout.from_options(1, (), target="opencl").vector_width == 16
    lay = Layout.from_options(1, (("lower.dot_block_m", 4), ("lower.vector_width", 8)), target="opencl")
    assert (lay.dot_block_m, lay.vector_width, lay.dot_block_n) == (4, 8, 64)
    d = Layout.from_options(1, (), target="opencl")  # the cpu backend's and ops.matmul's blocking
    assert (d.dot_block_m, d.dot_block_n) == (4, 64)


def test_mma_golden() -> None:
    w = _wi(Layout(1, 1, vector_width=16, dot_block_m=4, dot_block_n=16), BM=8, BN=16, BK=4)
    _check("mma_bm8_bn16_bk4.mlir", print_op(w))
    assert print_op(parse_module(print_op(w))) == print_op(w)
    _check("mma_bm8_bn16_bk4.cl", render_opencl(w).source)


def test_mma_accumulator_in_place_and_narrow_vectors() -> None:
    """The loop-carried accumulator is updated in place (no copy loop); N=8 uses float8."""
    src = render_opencl(_wi(Layout(1, 1, vector_width=16), BM=16, BN=8, BK=16)).source
    mma = src[src.index("for (int mm"):]  # the micro-kernel (element loops may use other widths)
    assert "float8 mm" in mma and "float16 mm" not in mma
    text = print_op(_wi(Layout(1, 1, vector_width=16), BM=16, BN=8, BK=4))
    assert text.count("wi.alloc : memref<128xf32, private>") == 1  # acc only; no second output array


@pytest.fixture
def opencl() -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("no OpenCL device")


def _both(kernel: Any, grid: tuple[int, ...], args: list[np.ndarray[Any, Any]], **meta: Any) -> list[Any]:
    outs = []
    for be in ("interpreter", "opencl"):
        arrs = [a.copy() for a in args]
        with kdsl.backend(be):
            kernel[grid](*arrs, **meta)
        outs.append(arrs)
    return outs


@pytest.mark.parametrize(("m", "n", "k", "bm", "bn", "bk"), [
    (37, 45, 29, 16, 32, 8),     # odd sizes: masked rows, columns and K tail
    (64, 64, 64, 32, 64, 16),    # exact multiples, several column blocks
    (5, 3, 70, 16, 16, 32),      # tiny M/N, long K
    (24, 40, 16, 8, 8, 16),      # block_n narrower than the vector width
])
def test_mma_matmul_matches_interpreter(opencl: None, m: int, n: int, k: int, bm: int, bn: int, bk: int) -> None:
    rng = np.random.default_rng(m * 1000 + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    grid = (-(-m // bm), -(-n // bn))
    (_, _, ic), (_, _, oc) = _both(mm_kernel, grid, [a, b, c], M=m, N=n, K=k, BM=bm, BN=bn, BK=bk)
    ref = a.astype(np.float64) @ b
    np.testing.assert_allclose(ic, ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(oc, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.float64])
def test_dot_dtypes_match_interpreter(opencl: None, dtype: Any) -> None:
    rng = np.random.default_rng(7)
    m, n, k = 16, 32, 16
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-128, 128, (m, k)).astype(dtype)
        b = rng.integers(-128, 128, (k, n)).astype(dtype)
        out_t: Any = np.int32
    else:
        a = rng.standard_normal((m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        out_t = np.float64 if dtype == np.float64 else np.float32
    c = rng.standard_normal((m, n)).astype(out_t)
    d = np.zeros((m, n), out_t)
    (_, _, ic, idd), (_, _, oc, od) = _both(dot_reuse_kernel, (1,), [a, b, c, d], M=m, N=n, K=k)
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(od, idd)
    else:
        np.testing.assert_allclose(od, idd, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(oc, ic)


def test_carried_accumulator_read_twice(opencl: None) -> None:
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((16, 16)) * 0.1).astype(np.float32)
    b = (rng.standard_normal((16, 32)) * 0.1).astype(np.float32)
    c = np.zeros((16, 32), np.float32)
    (_, _, ic), (_, _, oc) = _both(carried_twice_kernel, (1,), [a, b, c], M=16, N=32, K=16, STEPS=3)
    np.testing.assert_allclose(oc, ic, rtol=1e-5, atol=1e-5)


@kdsl.kernel
def mm_epilogue_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr,
                       BK: kl.constexpr):
    """A dot, then ``tanh(acc + bias)`` stored under a row and column mask (a matmul epilogue)."""
    offs_m = kl.program_id(0) * BM + kl.arange(0, BM)
    offs_n = kl.program_id(1) * BN + kl.arange(0, BN)
    offs_k = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BK)):
        a = kl.load(a_ptr + offs_m[:, None] * K + (k * BK + offs_k)[None, :],
                    mask=(offs_m[:, None] < M) & ((k * BK + offs_k)[None, :] < K), other=0.0)
        b = kl.load(b_ptr + (k * BK + offs_k)[:, None] * N + offs_n[None, :],
                    mask=((k * BK + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = kl.dot(a, b, acc)
    bias = kl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    out = kl.extra.libdevice.tanh(acc + bias[None, :])
    kl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_epilogue_is_evaluated_in_rows_then_block_stored() -> None:
    """The elementwise epilogue of a stored tile under a column mask is evaluated into a private
    array (an unmasked element loop that vectorises) and stored as a block copy (``block.py``
    ``_epilogue``); fused into the store, the column mask kept its loop scalar."""
    w = _lowered(mm_epilogue_kernel, ("*f32", "*f32", "*f32", "*f32", "i32", "i32", "i32"),
                 Layout(1, 1, vector_width=16, dot_block_m=4, dot_block_n=16), BM=8, BN=16, BK=4)  # fmt: skip
    text = print_op(w)
    _check("mma_epilogue_bm8_bn16_bk4.mlir", text)
    assert text.count("wi.block_store") == 1
    assert not [line for line in text.splitlines() if "store" in line and "ptr<" in line and "block_store" not in line]


@pytest.mark.parametrize(("m", "n", "k"), [(37, 45, 29), (64, 64, 32)])
def test_epilogue_matches_interpreter(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n + k)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    want = np.tanh(a.astype(np.float64) @ b + bias)
    for be in [x for x in ("cpu", "opencl") if x in kdsl.available_backends()]:
        out = np.full(m * n + 40, 7.0, np.float32)  # elements past the tile must stay untouched
        with kdsl.backend(be):
            mm_epilogue_kernel[(-(-m // 16), -(-n // 32))](a, b, bias, out, m, n, k, BM=16, BN=32, BK=8)
        np.testing.assert_allclose(out[: m * n].reshape(m, n), want, rtol=1e-4, atol=1e-4, err_msg=be)
        assert (out[m * n :] == 7.0).all(), be


@kdsl.kernel
def mm_w8_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):
    """Weight-only quantisation: int8 ``b`` converted to f32 right before the dot."""
    offs_m = kl.program_id(0) * BM + kl.arange(0, BM)
    offs_n = kl.program_id(1) * BN + kl.arange(0, BN)
    offs_k = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BK)):
        a = kl.load(a_ptr + offs_m[:, None] * K + (k * BK + offs_k)[None, :],
                    mask=(offs_m[:, None] < M) & ((k * BK + offs_k)[None, :] < K), other=0.0)
        b = kl.load(b_ptr + (k * BK + offs_k)[:, None] * N + offs_n[None, :],
                    mask=((k * BK + offs_k)[:, None] < K) & (offs_n[None, :] < N), other=0)
        acc = kl.dot(a, b.to(kl.float32), acc)
    kl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_converted_dot_operand_is_block_copied_and_widened_in_vectors() -> None:
    """``b.to(f32)`` of an int8 load that only feeds a dot: the bytes are block-copied (``block.py``
    ``_feeds_dot`` looks through the conversion) and widened by a vector loop (``vectorize.py``:
    narrow integer lanes may be converted), not loaded element by element under the mask."""
    w = _lowered(mm_w8_kernel, ("*f32", "*i8", "*f32", "i32", "i32", "i32"), Layout(1, 1, vector_width=16),
                 BM=16, BN=32, BK=16)  # fmt: skip
    text = print_op(w)
    assert text.count("wi.block_load") == 2 and "memref<512xi8, private>" in text
    assert "vector<16xi8>" in text and "wi.gload" not in text


@pytest.mark.parametrize(("m", "n", "k"), [(37, 45, 29), (64, 64, 64)])
def test_converted_dot_operand_matches_numpy(m: int, n: int, k: int) -> None:
    rng = np.random.default_rng(m + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    want = a.astype(np.float64) @ b
    for be in [x for x in ("cpu", "opencl") if x in kdsl.available_backends()]:
        c = np.zeros((m, n), np.float32)
        with kdsl.backend(be):
            mm_w8_kernel[(-(-m // 16), -(-n // 32))](a, b, c, m, n, k, BM=16, BN=32, BK=16)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3, err_msg=be)
