"""Triton's tutorials 01-05 as a Triton user runs them: torch CPU tensors and Triton's host code.

tests/semantic/test_tutorials.py checks the tutorial *kernels* with numpy arrays. Here the host
side is the subject, written the way the tutorials write it with only the module renamed
(``triton`` -> ``kdsl``, ``triton.language`` -> ``kdsl.language``, ``triton.jit`` ->
``kdsl.jit``): ``DEVICE = kdsl.runtime.driver.active.get_active_torch_device()``, tensors made
with ``device=DEVICE``, ``x.stride(0)`` / ``torch.empty_like`` / ``x.element_size()``, the
``is_cuda()`` / ``is_hip()`` / ``is_cdna()`` helpers built on ``get_current_target()``,
``kernel.warmup(...)`` occupancy arithmetic (02), ``@kdsl.autotune`` over the tutorial's
configuration list (03: the non-CUDA branch is the one kdsl's targets take), a
``torch.autograd.Function`` with a spin-locked backward (05), and the ``perf_report`` /
``Benchmark`` benchmark functions run with ``.run(print_data=True, show_plots=False)`` on tiny
sizes with ``do_bench`` and quantiles. Results are compared with torch's own operators.

Sizes are shrunk from the tutorials' (98432 elements, 1823x781, 512x512, 1151x8192) so the
interpreter and vulkan stay fast; each shrunk size still has the property the tutorial's size
exercises (a partial last block, an irregular row count, sizes that are not block multiples, a
lock shared by several rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="Triton's tutorial host code needs torch (pip install torch)")

import kdsl  # noqa: E402
import kdsl.language as kl  # noqa: E402
from kdsl.runtime import driver  # noqa: E402

from . import test_tutorials as tutorial_kernels  # noqa: E402
from .test_random import philox_ref, uniform_ref  # noqa: E402
from .test_tutorials import _layer_norm_bwd_dwdb, _layer_norm_fwd_fused  # noqa: E402

DEVICE = kdsl.runtime.driver.active.get_active_torch_device()
# Cheap timing budgets for the benchmark functions (Triton's defaults are 25/100 ms).
BENCH = {"warmup": 1, "rep": 5}


def is_cuda() -> bool:
    return bool(kdsl.runtime.driver.active.get_current_target().backend == "cuda")


def is_hip() -> bool:
    return bool(kdsl.runtime.driver.active.get_current_target().backend == "hip")


def is_cdna() -> bool:
    return is_hip() and kdsl.runtime.driver.active.get_current_target().arch in (
        "gfx940", "gfx941", "gfx942", "gfx90a", "gfx908")


def is_hip_cdna2() -> bool:
    target = kdsl.runtime.driver.active.get_current_target()
    return bool(target.backend == "hip" and target.arch == "gfx90a")


# --------------------------------------------------------------------------- 01 vector add


@kdsl.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    kl.store(output_ptr + offsets, x + y, mask=mask)


def add(x: Any, y: Any) -> Any:
    output = torch.empty_like(x)
    assert x.device == DEVICE and y.device == DEVICE and output.device == DEVICE
    n_elements = output.numel()
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


@kdsl.testing.perf_report(
    kdsl.testing.Benchmark(
        x_names=["size"], x_vals=[2**i for i in range(10, 13)], x_log=True,
        line_arg="provider", line_vals=["triton", "torch"], line_names=["Triton", "Torch"],
        styles=[("blue", "-"), ("green", "-")], ylabel="GB/s", plot_name="vector-add-performance", args={},
    ))
def bench_add(size: int, provider: str) -> tuple[float, float, float]:
    x = torch.rand(size, device=DEVICE, dtype=torch.float32)
    y = torch.rand(size, device=DEVICE, dtype=torch.float32)
    quantiles = [0.5, 0.2, 0.8]
    if provider == "torch":
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: x + y, quantiles=quantiles, **BENCH)
    if provider == "triton":
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: add(x, y), quantiles=quantiles, **BENCH)
    gbps = lambda ms: 3 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)  # noqa: E731
    return gbps(ms), gbps(max_ms), gbps(min_ms)


def test_01_vector_add(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    size = 9843  # the tutorial's 98432 / 10: a partial last block
    x = torch.rand(size, device=DEVICE)
    y = torch.rand(size, device=DEVICE)
    output_torch = x + y
    output_triton = add(x, y)
    assert torch.max(torch.abs(output_torch - output_triton)).item() == 0.0
    table = bench_add.run(print_data=True, show_plots=False)
    assert "vector-add-performance:" in capsys.readouterr().out
    assert table.column("size") == [1024, 2048, 4096]
    assert all(v > 0 for v in table.column("Triton") + table.column("Torch"))


# --------------------------------------------------------------------------- 02 fused softmax


@kdsl.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: kl.constexpr, num_stages: kl.constexpr):
    row_start = kl.program_id(0)
    row_step = kl.num_programs(0)
    for row_idx in kl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = kl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = kl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - kl.max(row, axis=0)
        numerator = kl.exp(row_minus_max)
        denominator = kl.sum(numerator, axis=0)
        output_ptrs = output_ptr + row_idx * output_row_stride + col_offsets
        kl.store(output_ptrs, numerator / denominator, mask=mask)


def softmax(x: Any) -> Any:
    """Tutorial 02's host function: warm up, size a persistent grid from occupancy, launch."""
    properties = driver.active.utils.get_device_properties(DEVICE.index)
    NUM_SM = properties["multiprocessor_count"]
    NUM_REGS = properties["max_num_regs"]
    SIZE_SMEM = properties["max_shared_mem"]
    WARP_SIZE = properties["warpSize"]
    n_rows, n_cols = x.shape
    BLOCK_SIZE = kdsl.next_power_of_2(n_cols)
    num_warps = 8
    num_stages = 4 if SIZE_SMEM > 200000 else 2
    y = torch.empty_like(x)
    kernel = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                   num_stages=num_stages, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    n_regs = kernel.n_regs
    size_smem = kernel.metadata.shared
    if is_hip():
        NUM_GPRS = NUM_REGS * 2 if is_cdna() else NUM_REGS
        max_num_waves = properties["max_threads_per_sm"] // WARP_SIZE
        occupancy = min(NUM_GPRS // WARP_SIZE // n_regs, max_num_waves) // num_warps
    else:
        occupancy = NUM_REGS // (n_regs * WARP_SIZE * num_warps)
    occupancy = min(occupancy, SIZE_SMEM // size_smem)
    num_programs = min(NUM_SM * occupancy, n_rows)
    assert num_programs >= 1
    kernel[(num_programs, 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE, num_stages)
    return y


@kdsl.testing.perf_report(
    kdsl.testing.Benchmark(
        x_names=["N"], x_vals=[128 * i for i in range(2, 4)], line_arg="provider",
        line_vals=["triton", "torch"], line_names=["Triton", "Torch"],
        styles=[("blue", "-"), ("green", "-")], ylabel="GB/s", plot_name="softmax-performance", args={"M": 64},
    ))
def bench_softmax(M: int, N: int, provider: str) -> float:
    x = torch.randn(M, N, device=DEVICE, dtype=torch.float32)
    # The tutorial also makes a stream here: ``getattr(torch, DEVICE.type).Stream()`` works on the
    # CPU device; ``torch.cpu.set_stream`` does not exist in torch (a torch gap, not kdsl's).
    getattr(torch, DEVICE.type).Stream()
    if provider == "torch":
        ms = kdsl.testing.do_bench(lambda: torch.softmax(x, axis=-1), **BENCH)
    if provider == "triton":
        ms = kdsl.testing.do_bench(lambda: softmax(x), **BENCH)
    gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)  # noqa: E731
    return float(gbps(ms))


def test_02_fused_softmax(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    torch.manual_seed(0)
    x = torch.randn(183, 781, device=DEVICE)  # the tutorial's 1823 rows / 10, its 781 columns
    y_triton = softmax(x)
    y_torch = torch.softmax(x, axis=1)
    assert torch.allclose(y_triton, y_torch), (y_triton, y_torch)
    table = bench_softmax.run(show_plots=False, print_data=True)
    assert "softmax-performance:" in capsys.readouterr().out
    assert table.column("N") == [256, 384] and all(v > 0 for v in table.column("Triton"))


# --------------------------------------------------------------------------- 03 matmul


def get_cuda_autotune_config() -> list[Any]:
    return [
        kdsl.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3,
                    num_warps=8),
        kdsl.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5,
                    num_warps=2),
    ]


def get_hip_autotune_config() -> list[Any]:
    """The tutorial's AMD list, ``waves_per_eu`` (a HIP compile option) included."""
    return [
        kdsl.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 1, "waves_per_eu": 2},
                    num_warps=4, num_stages=2),
        kdsl.Config({"BLOCK_SIZE_M": 256, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 4, "waves_per_eu": 2},
                    num_warps=8, num_stages=2),
        kdsl.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 1, "waves_per_eu": 2},
                    num_warps=8, num_stages=2),
        kdsl.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "waves_per_eu": 3},
                    num_warps=4, num_stages=2),
        kdsl.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 1, "waves_per_eu": 8},
                    num_warps=4, num_stages=2),
    ]


def get_autotune_config() -> list[Any]:
    return get_cuda_autotune_config() if is_cuda() else get_hip_autotune_config()


# the tutorial's kernel (``leaky_relu`` included) is tests/semantic/test_tutorials.py's, under the
# tutorial's ``@triton.autotune`` decorator
matmul_kernel = kdsl.autotune(configs=get_autotune_config(), key=["M", "N", "K"])(tutorial_kernels.matmul_kernel)


def matmul(a: Any, b: Any, activation: str = "") -> Any:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    assert a.is_contiguous(), "Matrix A must be contiguous"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), ACTIVATION=activation)
    return c


def _bench_matmul_configs() -> list[Any]:
    ref_lib = "cuBLAS" if is_cuda() else "rocBLAS"
    configs = []
    for fp8_inputs in [False, True]:
        if fp8_inputs and (not hasattr(torch, "float8_e5m2") or not is_cuda()):
            continue
        configs.append(kdsl.testing.Benchmark(
            x_names=["M", "N", "K"], x_vals=[72], line_arg="provider",
            line_vals=["triton"] if fp8_inputs else [ref_lib.lower(), "triton"],
            line_names=["Triton"] if fp8_inputs else [ref_lib, "Triton"],
            styles=[("green", "-"), ("blue", "-")], ylabel="TFLOPS",
            plot_name="matmul-performance-" + ("fp16" if not fp8_inputs else "fp8"), args={"fp8_inputs": fp8_inputs},
        ))
    return configs


def bench_matmul(M: int, N: int, K: int, provider: str, fp8_inputs: bool) -> tuple[float, float, float]:
    a = torch.randn((M, K), device=DEVICE, dtype=torch.float16)
    b = torch.randn((K, N), device=DEVICE, dtype=torch.float16)
    quantiles = [0.5, 0.2, 0.8]
    if provider == ("cublas" if is_cuda() else "rocblas"):
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: torch.matmul(a, b), quantiles=quantiles, **BENCH)
    if provider == "triton":
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: matmul(a, b), quantiles=quantiles, **BENCH)
    perf = lambda ms: 2 * M * N * K * 1e-12 / (ms * 1e-3)  # noqa: E731
    return perf(ms), perf(max_ms), perf(min_ms)


def test_03_matrix_multiplication(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert not is_cuda() and not is_hip_cdna2()
    torch.manual_seed(0)
    # The tutorial's 512x512 shrunk to 72x72, a multiple of no configuration's blocks; the
    # benchmark below uses the same size, so the tuning done here is reused there.
    a = torch.randn((72, 72), device=DEVICE, dtype=torch.float16)
    b = torch.randn((72, 72), device=DEVICE, dtype=torch.float16)
    triton_output = matmul(a, b)
    torch_output = torch.matmul(a, b)
    rtol = 1e-2 if is_hip_cdna2() else 0
    assert torch.allclose(triton_output, torch_output, atol=1e-2, rtol=rtol)  # the tutorial prints "match"
    assert matmul_kernel.best_config in get_autotune_config()
    relu = matmul(a, b, activation="leaky_relu")
    ref = torch.nn.functional.leaky_relu(torch.matmul(a.float(), b.float()), 0.01).to(torch.float16)
    torch.testing.assert_close(relu, ref, atol=1 / 32, rtol=1e-3)
    tables = kdsl.testing.perf_report(_bench_matmul_configs())(bench_matmul).run(show_plots=False, print_data=True)
    assert "matmul-performance-fp16:" in capsys.readouterr().out
    assert len(tables) == 1 and tables[0].column("Triton")[0] > 0


# --------------------------------------------------------------------------- 04 dropout


@kdsl.jit
def _dropout(x_ptr, x_keep_ptr, output_ptr, n_elements, p, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    x_keep = kl.load(x_keep_ptr + offsets, mask=mask)
    output = kl.where(x_keep, x / (1 - p), 0.0)
    kl.store(output_ptr + offsets, output, mask=mask)


def dropout(x: Any, x_keep: Any, p: float) -> Any:
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    _dropout[grid](x, x_keep, output, n_elements, p, BLOCK_SIZE=1024)
    return output


@kdsl.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: kl.constexpr):
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    random = kl.rand(seed, offsets)
    x_keep = random > p
    output = kl.where(x_keep, x / (1 - p), 0.0)
    kl.store(output_ptr + offsets, output, mask=mask)


def seeded_dropout(x: Any, p: float, seed: int) -> Any:
    output = torch.empty_like(x)
    assert x.is_contiguous()
    n_elements = x.numel()
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    _seeded_dropout[grid](x, output, n_elements, p, seed, BLOCK_SIZE=1024)
    return output


def test_04_low_memory_dropout(backend: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(size=(10,), device=DEVICE)
    p = 0.5
    x_keep = (torch.rand(size=(10,), device=DEVICE) > p).to(torch.int32)
    output = dropout(x, x_keep=x_keep, p=p)
    torch.testing.assert_close(output, torch.where(x_keep.bool(), x / (1 - p), 0.0), rtol=0, atol=0)

    x = torch.randn(size=(1500,), device=DEVICE)  # the tutorial's 10 elements, and a second block
    output = seeded_dropout(x, p=0.5, seed=123)
    output2 = seeded_dropout(x, p=0.5, seed=123)
    output3 = seeded_dropout(x, p=0.5, seed=512)
    assert torch.equal(output, output2) and not torch.equal(output, output3)
    for seed, out in ((123, output), (512, output3)):
        keep = torch.from_numpy(uniform_ref(philox_ref(seed, np.arange(1500))[0]) > 0.5)
        torch.testing.assert_close(out, torch.where(keep, x / 0.5, 0.0), rtol=0, atol=0)


# --------------------------------------------------------------------------- 05 layer norm


@kdsl.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr):
    row = kl.program_id(0)
    cols = kl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = kl.load(X + cols, mask=mask, other=0).to(kl.float32)
    dy = kl.load(DY + cols, mask=mask, other=0).to(kl.float32)
    w = kl.load(W + cols, mask=mask).to(kl.float32)
    mean = kl.load(Mean + row)
    rstd = kl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = kl.where(mask, xhat, 0.)
    wdy = kl.where(mask, wdy, 0.)
    c1 = kl.sum(xhat * wdy, axis=0) / N
    c2 = kl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    kl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while kl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = kl.load(Count)
    if count == 0:
        kl.atomic_xchg(Count, 1)
    else:
        partial_dw += kl.load(DW, mask=mask)
        partial_db += kl.load(DB, mask=mask)
    kl.store(DW, partial_dw, mask=mask)
    kl.store(DB, partial_db, mask=mask)
    kl.debug_barrier()
    kl.atomic_xchg(Lock, 0)


class LayerNorm(torch.autograd.Function):
    """Tutorial 05's autograd wrapper (forward: one program per row; backward: locked partial sums)."""

    @staticmethod
    def forward(ctx: Any, x: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float) -> Any:
        y = torch.empty_like(x)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        mean = torch.empty((M,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((M,), dtype=torch.float32, device=x.device)
        MAX_FUSED_SIZE = 65536 // x.element_size()
        BLOCK_SIZE = min(MAX_FUSED_SIZE, kdsl.next_power_of_2(N))
        if N > BLOCK_SIZE:
            raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        _layer_norm_fwd_fused[(M,)](x_arg, y, weight, bias, mean, rstd, x_arg.stride(0), N, eps,
                                    BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps, num_ctas=1)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx: Any, dy: Any) -> Any:
        x, w, _b, m, v = ctx.saved_tensors
        N = w.shape[0]
        GROUP_SIZE_M = 64
        if N <= 8192:
            GROUP_SIZE_M = 96
        if N <= 4096:
            GROUP_SIZE_M = 128
        if N <= 1024:
            GROUP_SIZE_M = 256
        locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=w.device)
        _dw = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        _db = torch.zeros((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
        dw = torch.empty((N,), dtype=w.dtype, device=w.device)
        db = torch.empty((N,), dtype=w.dtype, device=w.device)
        dx = torch.empty_like(dy)
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        _layer_norm_bwd_dx_fused[(M,)](dx, dy, _dw, _db, x, w, m, v, locks, x_arg.stride(0), N,
                                       BLOCK_SIZE_N=ctx.BLOCK_SIZE, GROUP_SIZE_M=GROUP_SIZE_M, num_warps=ctx.num_warps)
        grid = lambda meta: (kdsl.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
        _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128,
                                   num_ctas=1)
        return dx, None, dw, db, None


layer_norm = LayerNorm.apply


def _layer_norm_data(M: int, N: int, dtype: Any) -> tuple[Any, Any, Any, Any, tuple[int]]:
    w_shape = (N,)
    weight = torch.rand(w_shape, dtype=dtype, device=DEVICE, requires_grad=True)
    bias = torch.rand(w_shape, dtype=dtype, device=DEVICE, requires_grad=True)
    x = -2.3 + 0.5 * torch.randn((M, N), dtype=dtype, device=DEVICE)
    dy = .1 * torch.randn_like(x)
    x.requires_grad_(True)
    return x, weight, bias, dy, w_shape


def check_layer_norm(M: int, N: int, dtype: Any, eps: float = 1e-5) -> None:
    """The tutorial's ``test_layer_norm``: forward and backward against torch's layer_norm.

    One change: torch's reference runs on float32 copies of the fp16 data. On the CPU torch sums
    dw/db over the rows in fp16 (0.02 off the float64 sums for 300 rows, past the tutorial's
    atol); the tutorial's CUDA reference accumulates in float32, as the kernels do."""
    x, weight, bias, dy, w_shape = _layer_norm_data(M, N, dtype)
    y_tri = layer_norm(x, w_shape, weight, bias, eps)
    y_tri.backward(dy, retain_graph=True)
    dx_tri, dw_tri, db_tri = [t.grad.clone() for t in [x, weight, bias]]
    x, weight, bias = [t.detach().float().requires_grad_(True) for t in [x, weight, bias]]
    y_ref = torch.nn.functional.layer_norm(x, w_shape, weight, bias, eps)
    y_ref.backward(dy.float(), retain_graph=True)
    y_ref = y_ref.to(dtype)
    dx_ref, dw_ref, db_ref = [t.grad.to(dtype) for t in [x, weight, bias]]
    assert torch.allclose(y_tri, y_ref, atol=1e-2, rtol=0)
    assert torch.allclose(dx_tri, dx_ref, atol=1e-2, rtol=0)
    assert torch.allclose(db_tri, db_ref, atol=1e-2, rtol=0)
    assert torch.allclose(dw_tri, dw_ref, atol=1e-2, rtol=0)


@kdsl.testing.perf_report(
    kdsl.testing.Benchmark(
        x_names=["N"], x_vals=[512 * i for i in range(2, 3)], line_arg="provider",
        line_vals=["triton", "torch"], line_names=["Triton", "Torch"],
        styles=[("blue", "-"), ("green", "-"), ("orange", "-")], ylabel="GB/s", plot_name="layer-norm-backward",
        args={"M": 64, "dtype": torch.float16, "mode": "backward"},
    ))
def bench_layer_norm(M: int, N: int, dtype: Any, provider: str, mode: str = "backward",
                     eps: float = 1e-5) -> tuple[float, float, float]:
    x, weight, bias, dy, w_shape = _layer_norm_data(M, N, dtype)
    quantiles = [0.5, 0.2, 0.8]

    def y_fwd() -> Any:
        if provider == "triton":
            return layer_norm(x, w_shape, weight, bias, eps)
        return torch.nn.functional.layer_norm(x, w_shape, weight, bias, eps)

    if mode == "forward":
        gbps = lambda ms: 2 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)  # noqa: E731
        ms, min_ms, max_ms = kdsl.testing.do_bench(y_fwd, quantiles=quantiles, **BENCH)
    if mode == "backward":
        y = y_fwd()
        gbps = lambda ms: 3 * x.numel() * x.element_size() * 1e-9 / (ms * 1e-3)  # noqa: E731
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: y.backward(dy, retain_graph=True), quantiles=quantiles,
                                                   grad_to_none=[x], **BENCH)
    return gbps(ms), gbps(max_ms), gbps(min_ms)


def test_05_layer_norm(backend: str, capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    torch.manual_seed(0)
    # The tutorial's 1151x8192 fp16, shrunk: 300 rows share the 256 locks of N <= 1024, so rows
    # r and r + 256 accumulate into one partial-sum buffer under the spin lock.
    check_layer_norm(300, 781, torch.float16)
    table = bench_layer_norm.run(save_path=str(tmp_path), print_data=True)
    assert "layer-norm-backward:" in capsys.readouterr().out
    assert (tmp_path / "layer-norm-backward.csv").exists() and table.column("Triton")[0] > 0


# --------------------------------------------------------------------------- the tutorials' own widths

def test_02_fused_softmax_wide_rows(backend: str) -> None:
    """The tutorial's benchmark sweeps N up to 12672 columns; 8192 is the first width past 32 KiB
    (vulkan's reductions fold owned elements, no row copy in __local memory)."""
    torch.manual_seed(0)
    x = torch.randn(8, 8192, device=DEVICE)
    assert torch.allclose(softmax(x), torch.softmax(x, axis=1))


def test_05_layer_norm_tutorial_width(backend: str) -> None:
    """The tutorial's N=8192 fp16 (its 1151 rows cut to 100: GROUP_SIZE_M is 96 there, so rows
    96..99 take locks already used)."""
    torch.manual_seed(0)
    check_layer_norm(100, 8192, torch.float16)
