"""Affine pointer tiles and bound masks lowered to ``wi.block_load``/``wi.block_store``.

Checks that the matmul-style kernel keeps no tile of pointers in memory and moves its dot
operands and result as block copies where the layout has vectors, keeps the per-element path
where it does not (Vulkan), and that the results match the interpreter on every backend
for masks of every supported shape: ``<``, ``<=``, ``>`` bounds, a uniform condition, a
non-zero ``other``, row strides of non-contiguous views and partial K blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from tests.lowering.test_mma import mm_kernel


@kdsl.kernel
def masked_dot(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, LIMIT,
               BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):  # fmt: skip
    pid = kl.program_id(0)
    rm = pid * BM + kl.arange(0, BM)
    rn = kl.arange(0, BN)
    rk = kl.arange(0, BK)
    a_mask = (rm[:, None] <= M - 1) & (K > rk[None, :]) & (pid < LIMIT)  # noqa: SIM300  (the `>` form on purpose)
    a = kl.load(a_ptr + rm[:, None] * sam + rk[None, :], mask=a_mask, other=1.0)
    b = kl.load(b_ptr + rk[:, None] * sbk + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=2.0)
    c = kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * scm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _wi_text(layout: Layout, operands: str = "*f32") -> str:
    mod = kdsl.compile_to_ir(mm_kernel, operands, operands, "*f32", "i32", "i32", "i32", optimize=True, BM=16, BN=32,
                             BK=8)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout)
    verify(wmod)
    return print_op(wmod)


def test_block_copies_replace_pointer_arrays() -> None:
    text = _wi_text(Layout(1, 1, vector_width=16))
    assert text.count("wi.block_load") == 2 and text.count("wi.block_store") == 1
    half = _wi_text(Layout(1, 1, vector_width=16), "*f16")  # fp16 operands (Triton's tutorial 03)
    assert half.count("wi.block_load") == 2 and "xptr<" not in half
    # widened once at the copy (the dot accumulates in f32): f16 memory into f32 arrays
    loads = [ln for ln in half.splitlines() if "wi.block_load" in ln]
    assert all("xf32, private>, ptr<f16>" in ln for ln in loads)
    assert "xptr<" not in text  # no private array of pointers
    assert "wi.gload" not in text and "wi.gstore" not in text


def test_scalar_layout_keeps_element_accesses() -> None:
    """Without vectors (Vulkan) the accesses stay per element, but pointers are still not stored."""
    text = _wi_text(Layout(1, 1))
    assert "wi.block_load" not in text and "wi.gload" in text
    assert "xptr<" not in text


def _backends() -> list[str]:
    present = set(kdsl.available_backends())
    return [b for b in ("cpu", "opencl", "vulkan") if b in present]


def _run(backend: str, args: list[Any], grid: tuple[int, ...], meta: dict[str, Any]) -> np.ndarray[Any, Any]:
    arrs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with kdsl.backend(backend):
        masked_dot[grid](*arrs, **meta)
    out: np.ndarray[Any, Any] = arrs[2]
    return out


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize(("m", "n", "k", "limit"), [(37, 29, 13, 99), (32, 32, 16, 99), (40, 20, 7, 2)])
def test_block_masks_against_interpreter(backend: str, dtype: Any, m: int, n: int, k: int, limit: int) -> None:
    """f16 operands too: their block loads widen whole rows (OpenCL ``vload_halfN``)."""
    rng = np.random.default_rng(m * n + k)
    a_full = rng.standard_normal((m, k + 5)).astype(dtype)
    b_full = rng.standard_normal((k, n + 3)).astype(dtype)
    a, b = a_full[:, :k], b_full[:, :n]  # row strides k + 5 and n + 3
    c = np.full((m, n + 1), 7.0, np.float32)  # the last column must stay untouched
    bm, bn, bk = 16, 32, 16
    size = a_full.itemsize
    args: list[Any] = [a_full, b_full, c, m, n, k, a.strides[0] // size, b.strides[0] // size, c.strides[0] // 4, limit]
    meta = {"BM": bm, "BN": bn, "BK": bk}
    grid = (kdsl.cdiv(m, bm),)
    ref = _run("interpreter", args, grid, meta)
    got = _run(backend, args, grid, meta)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    assert (got[:, n] == 7.0).all()


# --- the ops themselves, 1-D and 2-D, straight from work-item IR ------------------------------
def _block_module() -> Any:
    """``y[:40] <- x[:40]`` over the first ``n`` elements (1-D), then a 3 x 8 block of ``x`` with
    row stride 10 and extents (2, 5), ``other`` -1, stored whole at ``y + 64`` (row stride 8)."""
    from kdsl.ir import types as T
    from kdsl.ir.core import Block, Builder, ModuleOp, Region
    from kdsl.ir.dialects import arith, wi
    from kdsl.ir.types import MemRefType, PointerType

    f32, i32 = T.f32, T.i32
    m = ModuleOp.empty()
    body = Block()
    x, y, n = body.add_arg(PointerType(f32), "x"), body.add_arg(PointerType(f32), "y"), body.add_arg(i32, "n")
    attrs = {"sym_name": "blk", "arg_names": ("x", "y", "n"), "num_threads": 1}
    Builder(m.body).create(wi.FuncOp, attributes=attrs, regions=[Region([body])])
    b = Builder(body)

    def c(v: Any, t: Any) -> Any:
        return b.create(arith.ConstantOp, [], [t], {"value": v}).result

    one = b.create(wi.AllocOp, [], [MemRefType(40, f32)]).result
    two = b.create(wi.AllocOp, [], [MemRefType(24, f32)]).result
    other = c(-1.0, f32)
    b.create(wi.BlockLoadOp, [one, x, other, n], [], {"shape": (40,)})
    b.create(wi.BlockStoreOp, [one, y, n], [], {"shape": (40,)})
    b.create(wi.BlockLoadOp, [two, x, other, c(10, i32), c(2, i32), c(5, i32)], [], {"shape": (3, 8)})
    y64 = b.create(wi.AddPtrOp, [y, c(64, i32)], [PointerType(f32)]).result
    b.create(wi.BlockStoreOp, [two, y64, c(8, i32), c(3, i32), c(8, i32)], [], {"shape": (3, 8)})
    b.create(wi.ReturnOp)
    verify(m)
    return m


def _expected(x: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    y = np.full(96, 5.0, np.float32)
    y[: min(n, 40)] = x[: min(n, 40)]
    blk = np.full((3, 8), -1.0, np.float32)
    blk[:2, :5] = x[:30].reshape(3, 10)[:2, :5]
    y[64:88] = blk.ravel()
    return y


@pytest.mark.parametrize("n", [40, 17, 0])
def test_block_ops_opencl(n: int) -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("no OpenCL device")
    import pyopencl as cl

    from kdsl.codegen.opencl import render_opencl
    from kdsl.runtime.opencl.device import get_device

    src = render_opencl(_block_module()).source
    assert "KD_VLD(float, 8, " in src and "KD_VLD(float, 4, " not in src  # 40 = 5 x 8: full rows as float8
    dev = get_device()
    x = np.arange(100, dtype=np.float32)
    y = np.full(96, 5.0, np.float32)
    mf = cl.mem_flags
    xb = cl.Buffer(dev.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    yb = cl.Buffer(dev.ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    prog = cl.Program(dev.ctx, src).build()
    off = np.uint64(0)
    prog.blk(dev.queue, (1,), (1,), xb, off, yb, off, np.int32(n))
    cl.enqueue_copy(dev.queue, y, yb)
    np.testing.assert_array_equal(y, _expected(x, n))


@pytest.mark.parametrize("n", [40, 17, 0])
def test_block_ops_llvm(n: int) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("no cpu backend")
    import ctypes

    from kdsl.codegen.llvm import render_llvm
    from kdsl.runtime.cpu.compiler import compile_object
    from kdsl.runtime.cpu.loader import LoadedObject
    from kdsl.runtime.cpu.target import host

    rendered = render_llvm(_block_module(), vector_bytes=host().vector_bytes)
    assert "load <" in rendered.ir  # full rows as vectors
    loaded = LoadedObject(compile_object(rendered.ir, use_cache=False)[0])
    x = np.arange(100, dtype=np.float32)
    y = np.full(96, 5.0, np.float32)
    status = np.zeros(1, np.int32)
    argv = (ctypes.c_uint64 * 4)(x.ctypes.data, y.ctypes.data, n, status.ctypes.data)
    loaded.run(ctypes.addressof(argv), 1, 1, 1, 0, 1)
    np.testing.assert_array_equal(y, _expected(x, n))


# --- B packed panel-major for the register-blocked dot (kdsl/codegen/packing.py) -------------
def test_dot_b_operand_is_packed_panel_major() -> None:
    """A dot's ``b`` that is only block-loaded and read by ``wi.mma`` is stored panel-major when
    the mma's ``block_n`` is narrower than the tile; ``a`` and a full-width ``b`` stay row-major."""
    from kdsl.codegen.packing import b_panel

    mod = kdsl.compile_to_ir(mm_kernel, "*f32", "*f32", "*f32", "i32", "i32", "i32", optimize=True, BM=16, BN=64, BK=8)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    for block_n, panel in ((16, 16), (64, 0)):
        wmod = lower_to_wi(mod, entry, Layout(1, 1, vector_width=16, dot_block_n=block_n))
        verify(wmod)
        mmas = [op for op in wmod.walk() if op.NAME == "wi.mma"]
        assert [b_panel(op.b) for op in mmas] == [panel]
        assert b_panel(mmas[0].a) == 0


@pytest.mark.parametrize("backend", [b for b in _backends() if b != "vulkan"])
@pytest.mark.parametrize(("m", "n", "k", "limit"), [(37, 50, 13, 99), (32, 64, 16, 99), (40, 33, 7, 2)])
def test_packed_panels_against_interpreter(backend: str, m: int, n: int, k: int, limit: int) -> None:
    """Panel-major ``b`` (16-column panels of a 64-wide tile): full rows, partial rows (``n``
    not a multiple of 16), rows past ``K`` and a non-zero ``other`` (2.0) all land right."""
    rng = np.random.default_rng(m * n + k)
    a_full = rng.standard_normal((m, k + 5)).astype(np.float32)
    b_full = rng.standard_normal((k, n + 3)).astype(np.float32)
    a, b = a_full[:, :k], b_full[:, :n]
    c = np.full((m, n + 1), 7.0, np.float32)
    bm, bn, bk = 16, 64, 16
    args: list[Any] = [a_full, b_full, c, m, n, k, a.strides[0] // 4, b.strides[0] // 4, c.strides[0] // 4, limit]
    grid = (kdsl.cdiv(m, bm),)
    ref = _run("interpreter", args, grid, {"BM": bm, "BN": bn, "BK": bk})
    got = _run(backend, args, grid, {"BM": bm, "BN": bn, "BK": bk, "lower.dot_block_n": 16})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    assert (got[:, n] == 7.0).all()


@pytest.mark.parametrize("backend", _backends())
def test_bf16_block_loads_against_interpreter(backend: str) -> None:
    """bf16 dot operands (torch tensors): block loads widen them by a 16-bit shift."""
    torch = pytest.importorskip("torch")
    m, n, k = 37, 29, 13
    gen = torch.Generator().manual_seed(5)
    a_full = torch.randn((m, k + 5), generator=gen).to(torch.bfloat16)
    b_full = torch.randn((k, n + 3), generator=gen).to(torch.bfloat16)
    c = np.full((m, n + 1), 7.0, np.float32)
    args: list[Any] = [a_full, b_full, c, m, n, k, k + 5, n + 3, n + 1, 99]
    meta = {"BM": 16, "BN": 32, "BK": 16}
    grid = (kdsl.cdiv(m, 16),)
    ref = _run("interpreter", args, grid, meta)
    got = _run(backend, args, grid, meta)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)
    want = a_full[:, :k].float().numpy() @ b_full[:, :n].float().numpy() + 1.0 * 2.0 * (16 - k)  # masked k: others
    np.testing.assert_allclose(got[:, :n], want, rtol=1e-4, atol=1e-4)


@kdsl.kernel
def windowed_dot(a_ptr, b_ptr, c_ptr, R0, C0, RLO, RHI, CLO, CHI, M, N, K,
                 BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr):  # fmt: skip
    """A dot whose operand rows/columns are valid only inside a window on both ends, as a tensor
    descriptor checks them: the block copies carry lower bounds (``starts``)."""
    rm = R0 + kl.arange(0, BM)
    rk = C0 + kl.arange(0, BK)
    rn = kl.arange(0, BN)
    a_mask = (rm[:, None] >= RLO) & (rm[:, None] < RHI) & (rk[None, :] >= CLO) & (rk[None, :] < CHI)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=a_mask, other=0.5)
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] >= CLO) & (rk[:, None] < CHI), other=0.0)
    c = kl.dot(a, b)
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] >= RLO) & (rm[:, None] < RHI))


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize(("r0", "c0", "rlo", "rhi", "clo", "chi"), [
    (0, 0, 0, 40, 0, 24),      # everything valid
    (4, 0, 6, 18, 3, 21),      # both ends cut inside the block
    (8, 8, -5, 99, 10, 12),    # a narrow column window
    (0, 0, 30, 40, 0, 24),     # no valid row
])  # fmt: skip
def test_lower_bounds_against_interpreter(backend: str, r0: int, c0: int, rlo: int, rhi: int, clo: int,
                                          chi: int) -> None:  # fmt: skip
    m, n, k = 40, 32, 24
    rng = np.random.default_rng(r0 + c0 + rlo)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), 7.0, np.float32)
    args: list[Any] = [a, b, c, r0, c0, rlo, rhi, clo, chi, m, n, k]
    meta = {"BM": 16, "BN": 32, "BK": 16}
    outs = {}
    for be in ("interpreter", backend):
        arrs = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        with kdsl.backend(be):
            windowed_dot[(1,)](*arrs, **meta)
        outs[be] = arrs[2]
    np.testing.assert_allclose(outs[backend], outs["interpreter"], rtol=1e-5, atol=1e-5)


def test_lower_bounds_become_block_starts() -> None:
    mod = kdsl.compile_to_ir(windowed_dot, "*f32", "*f32", "*f32", *(["i32"] * 9), optimize=True, BM=16, BN=32, BK=16)
    wmod = lower_to_wi(mod, "windowed_dot", Layout(1, 1, vector_width=16))
    verify(wmod)
    text = print_op(wmod)
    assert text.count("starts = true") == 3 and "wi.gload" not in text and "wi.gstore" not in text
