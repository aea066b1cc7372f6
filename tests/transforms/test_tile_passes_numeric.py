"""Each tile-level pass against the untransformed kernel, on every present backend.

The kernel is compiled to tile IR once (default pipeline), run as is, then
run again after the pass under test; outputs must match (exactly for data
movement and integer code, to rounding for reassociated float sums). The
test also checks the pass *did* something, so a silently disabled rewrite
fails instead of passing vacuously.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kdsl
import kdsl.language as kl
from kdsl.ir.core import ModuleOp
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.backends import get_backend
from kdsl.transforms import default_pipeline, parse_pipeline

# --------------------------------------------------------------------------- kernels


@kdsl.kernel
def add_kernel(x, y, out, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


@kdsl.kernel
def add_hinted(x, y, out, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    n = kl.multiple_of(n, BLOCK)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m), mask=m)


@kdsl.kernel
def rowsum(x, out, n, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    acc = kl.zeros((BLOCK,), kl.float32)
    for k in range(0, n, BLOCK):
        offs = k + kl.arange(0, BLOCK)
        acc += kl.load(x + row * n + offs, mask=offs < n, other=0.0)
    kl.store(out + row, kl.sum(acc, 0))


@kdsl.kernel
def static_loop(x, out, STEPS: kl.constexpr, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    acc = kl.zeros((BLOCK,), kl.int32)
    for i in kl.static_range(STEPS):
        acc = acc * 3 + kl.load(x + offs) + i
    kl.store(out + offs, acc)


@kdsl.kernel
def matmul_bias(a, b, bias, c, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    rk = kl.arange(0, K)
    av = kl.load(a + rm[:, None] * K + rk[None, :])
    bv = kl.load(b + rk[:, None] * N + rn[None, :])
    out = kl.dot(av, bv) + kl.load(bias + rn)[None, :]
    kl.store(c + rm[:, None] * N + rn[None, :], out)


# --------------------------------------------------------------------------- harness


def _backends() -> list[str]:
    present = set(kdsl.available_backends())
    return [b for b in ("interpreter", "cpu", "opencl", "vulkan") if b in present]


def _run(backend: str, module: ModuleOp, grid: tuple[int, ...], args: list[Any]) -> list[Any]:
    entry = next(op.attributes["sym_name"] for op in module.body.ops if op.attributes.get("kernel"))
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel = get_backend(backend).compile(module, entry, LaunchOptions())
    kernel.launch((*grid, 1, 1)[:3], copies)  # type: ignore[arg-type]
    return copies


def _compare(kernel: Any, pipeline: str, grid: tuple[int, ...], args: list[Any], meta: dict[str, Any],
             changed: Callable[[str], bool], exact: bool = True) -> None:
    base = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    text = print_op(base)
    opt = parse_module(text)
    parse_pipeline(pipeline + ",canonicalize,cse,dce").run(opt)
    out_text = print_op(opt)
    assert changed(out_text), f"{pipeline} did not transform:\n{out_text}"
    for be in _backends():
        ref = _run(be, parse_module(text), grid, args)
        got = _run(be, opt, grid, args)
        for r, g in zip(ref, got):
            if not isinstance(r, np.ndarray):
                continue
            if exact:
                np.testing.assert_array_equal(g, r, err_msg=f"{be}: {pipeline}")
            else:
                np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5, err_msg=f"{be}: {pipeline}")


# --------------------------------------------------------------------------- tests


def _no_masked_access(text: str) -> bool:
    return not any(("tile.load" in ln or "tile.store" in ln) and "xi1>" in ln for ln in text.splitlines())


@pytest.mark.parametrize("n", [128, 160])
def test_mask_elim_uniform_branch(n: int) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    # BLOCK=16 divides n's divisibility (16): the mask is uniform per program;
    # the grid launches two programs beyond n: their accesses must stay off.
    _compare(add_kernel, "mask-elim", (n // 16 + 2,), [x, y, out, n], {"BLOCK": 16},
             lambda t: "scf.if" in t and _no_masked_access(t))


def test_mask_elim_multiple_of_hint() -> None:
    n = 256
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    _compare(add_hinted, "mask-elim", (n // 64 + 1,), [x, y, out, n], {"BLOCK": 64}, lambda t: "scf.if" in t and _no_masked_access(t))


@pytest.mark.parametrize("n", [256, 1000, 100])
def test_loop_split_and_licm(n: int) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(3 * n).astype(np.float32)
    out = np.zeros(3, np.float32)
    _compare(rowsum, "licm,loop-split", (3,), [x, out, n], {"BLOCK": 128},
             lambda t: t.count("scf.for") == 1 and "scf.if" in t)


def test_licm_alone() -> None:
    n = 300
    x = np.arange(2 * n, dtype=np.float32)
    out = np.zeros(2, np.float32)

    def hoisted(t: str) -> bool:
        body = t.split("scf.for")[1].split("scf.yield")[0]
        return "tile.arange" not in body and "arith.mul %row" not in body

    _compare(rowsum, "licm", (2,), [x, out, n], {"BLOCK": 64}, hoisted)


def test_unroll_static_loop() -> None:
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    _compare(static_loop, "unroll", (4,), [x, out], {"STEPS": 3, "BLOCK": 16}, lambda t: "scf.for" not in t)


def test_fuse_dot_epilogue() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    _compare(matmul_bias, "fuse", (1,), [a, b, bias, c], {"M": 16, "N": 16, "K": 16},
             lambda t: "arith.add" not in t.split("tile.dot")[1].split("tile.store")[0], exact=False)


@kdsl.kernel
def strided_rows(x, out, n, stride, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    acc = kl.zeros((BLOCK,), kl.float32)
    for k in range(0, n, BLOCK):
        offs = k + kl.arange(0, BLOCK)
        v = kl.load(x + row * stride + offs, mask=offs < n, other=1.0)
        acc = kl.maximum(acc, v) + 1.0
    kl.store(out + row * BLOCK + kl.arange(0, BLOCK), acc)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 200), block=st.sampled_from([8, 16, 32]), rows=st.integers(1, 3))
def test_default_tile_passes_random_bounds(n: int, block: int, rows: int) -> None:
    """The default pipeline's tile passes against the cleanup-only pipeline, on the interpreter."""
    stride = max(n, 1)
    x = np.random.default_rng(n).standard_normal(rows * stride).astype(np.float32)
    out = np.zeros(rows * block, np.float32)
    raw = print_op(kdsl.compile_to_ir(strided_rows, x, out, n, stride, BLOCK=block))
    ref_mod, opt_mod = parse_module(raw), parse_module(raw)
    default_pipeline(optimize=False).run(ref_mod)
    default_pipeline().run(opt_mod)
    values = {"x": x, "out": out, "n": n, "stride": stride}
    func = next(op for op in ref_mod.body.ops if op.attributes.get("kernel"))
    args = [values[a] for a in func.attributes["arg_names"]]  # ints equal to 1 are specialised away
    ref = _run("interpreter", ref_mod, (rows,), args)
    got = _run("interpreter", opt_mod, (rows,), args)
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            np.testing.assert_array_equal(g, r)


@kdsl.kernel
def wrapped_matmul(a, b, c, M, N, K, BM: kl.constexpr, BN: kl.constexpr, BK: kl.constexpr, WHERE: kl.constexpr):
    pid_m = kl.program_id(0)
    pid_n = kl.program_id(1)
    if WHERE:  # Triton's tutorial 09
        offs_m = pid_m * BM + kl.arange(0, BM)
        offs_m = kl.where(offs_m < M, offs_m, 0)
        offs_n = pid_n * BN + kl.arange(0, BN)
        offs_n = kl.where(offs_n < N, offs_n, 0)
    else:  # Triton's tutorial 03
        offs_m = (pid_m * BM + kl.arange(0, BM)) % M
        offs_n = (pid_n * BN + kl.arange(0, BN)) % N
    offs_k = kl.arange(0, BK)
    acc = kl.zeros((BM, BN), kl.float32)
    for k in range(0, kl.cdiv(K, BK)):
        x = kl.load(a + offs_m[:, None] * K + (k * BK + offs_k)[None, :], mask=offs_k[None, :] < K - k * BK, other=0.0)
        y = kl.load(b + (k * BK + offs_k)[:, None] * N + offs_n[None, :], mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = kl.dot(x, y, acc)
    rm = pid_m * BM + kl.arange(0, BM)
    rn = pid_n * BN + kl.arange(0, BN)
    kl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("where", [False, True])
def test_wrap_version_edge_programs(where: bool) -> None:
    """Programs inside the matrix take the wrap-free copy, edge programs the original: the output
    matches the unversioned kernel on every backend."""
    m, n, k = 40, 56, 24
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    args = [a, b, c, m, n, k]
    raw = print_op(kdsl.compile_to_ir(wrapped_matmul, *args, BM=16, BN=16, BK=16, WHERE=where))
    ref_mod, opt_mod = parse_module(raw), parse_module(raw)
    default_pipeline(options={"wrap-version.max-ops": 0}).run(ref_mod)
    default_pipeline().run(opt_mod)
    text = print_op(opt_mod)
    fast = text[text.index("scf.if"):].split("} {")[0]  # the then-branch
    assert "arith.rem" not in fast and "arith.select" not in fast and "tile.dot" in fast
    assert "scf.if" not in print_op(ref_mod).split("scf.for")[0]
    grid = (kdsl.cdiv(m, 16), kdsl.cdiv(n, 16))
    for be in _backends():
        ref = _run(be, ref_mod, grid, args)[2]
        got = _run(be, opt_mod, grid, args)[2]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=be)
        np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4, err_msg=be)
