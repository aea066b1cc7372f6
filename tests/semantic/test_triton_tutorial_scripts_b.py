# The kernels and host code keep the tutorials' spelling (unused loop counters, if/else blocks, ``O``).
# ruff: noqa: B007, SIM108, E741, RUF059, SIM300
"""The host code of Triton's tutorials 06-09, written as a Triton user writes it, on every backend.

tests/semantic/test_tutorials.py checks the tutorial *kernels* with numpy arrays. This file checks
what a user porting the tutorial *scripts* meets: torch CPU tensors created with
``device=DEVICE`` (``kdsl.runtime.driver.active.get_active_torch_device()``), ``.stride()``,
``.data_ptr()`` lists turned into pointer tensors, the scripts' ``is_cuda``/``is_hip``/
``supports_host_descriptor``/``supports_tma``/``is_blackwell`` helpers (which must pick the
portable branch), ``torch.autograd.Function`` with ``ctx.save_for_backward``, grid lambdas over
``META``, ``Config`` lists with ``pre_hook``, ``keep`` filters and ``prune_configs_by``, host
``TensorDescriptor`` objects with a dummy block shape the pre-hook fixes, ``set_allocator``
before device-side descriptors, ``tl.range(..., flatten=..., warp_specialize=...)``, ``NUM_SMS``
from the driver's device properties, libdevice calls and the ``perf_report`` wrappers.

The only changes from Triton's scripts are the names (``triton`` -> ``kdsl``, ``triton.language``
-> ``kdsl.language``), smaller problems and tile sizes (16-32, so the interpreter and vulkan stay
fast) and fewer autotuning configs. References are torch computations, as in the scripts.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the tutorial scripts' host code builds torch tensors (pip install torch)")

import kdsl  # noqa: E402
import kdsl.language as tl  # noqa: E402
from kdsl.language.extra import libdevice  # noqa: E402
from kdsl.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

DEVICE = kdsl.runtime.driver.active.get_active_torch_device()


# --------------------------------------------------------------- the scripts' device helpers


def is_hip() -> bool:
    return kdsl.runtime.driver.active.get_current_target().backend == "hip"


def is_cuda() -> bool:
    return kdsl.runtime.driver.active.get_current_target().backend == "cuda"


def supports_host_descriptor() -> bool:
    return is_cuda() and torch.cuda.get_device_capability()[0] >= 9


def supports_tma() -> bool:
    return is_cuda() and torch.cuda.get_device_capability()[0] >= 9


def is_blackwell() -> bool:
    return is_cuda() and torch.cuda.get_device_capability()[0] == 10


def is_hopper() -> bool:
    return is_cuda() and torch.cuda.get_device_capability()[0] == 9


def num_sms() -> int:
    """The persistent kernels' program count: compute units of the active device."""
    device = kdsl.runtime.driver.active.get_current_device()
    return kdsl.runtime.driver.active.utils.get_device_properties(device)["multiprocessor_count"]


def test_device_helpers_take_the_portable_branch(backend: str) -> None:
    assert DEVICE == torch.device("cpu")
    assert not (is_cuda() or is_hip() or supports_host_descriptor() or supports_tma() or is_blackwell())
    assert kdsl.runtime.driver.active.get_current_target().backend == backend
    assert num_sms() >= 1


# --------------------------------------------------------------- 07 extern functions (libdevice)


@kdsl.jit
def asin_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x = libdevice.asin(x)
    tl.store(y_ptr + offsets, x, mask=mask)


def test_07_libdevice_asin(backend: str) -> None:
    torch.manual_seed(0)
    size = 3000
    x = torch.rand(size, device=DEVICE)
    output_kdsl = torch.zeros(size, device=DEVICE)
    output_torch = torch.asin(x)
    n_elements = output_torch.numel()
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731
    asin_kernel[grid](x, output_kdsl, n_elements, BLOCK_SIZE=1024)
    torch.testing.assert_close(output_kdsl, output_torch, atol=2e-6, rtol=1e-6)
    # the script's second launch into ``torch.empty_like(x)``
    output_kdsl = torch.empty_like(x)
    asin_kernel[grid](x, output_kdsl, n_elements, BLOCK_SIZE=1024)
    torch.testing.assert_close(output_kdsl, output_torch, atol=2e-6, rtol=1e-6)


def test_tensors_that_require_grad_are_passed_by_storage(backend: str) -> None:
    """Triton takes ``data_ptr()`` of any tensor; torch refuses to export one that requires grad,
    so kdsl passes its storage (tutorial 06 launches on ``q``, ``k``, ``v`` inside autograd)."""
    x = torch.rand(100, device=DEVICE, requires_grad=True)
    y = torch.zeros(100, device=DEVICE, requires_grad=True)
    asin_kernel[(2,)](x, y, 100, BLOCK_SIZE=64)
    torch.testing.assert_close(y.detach(), torch.asin(x.detach()), atol=2e-6, rtol=1e-6)


def test_07_extern_libs_is_refused_clearly(backend: str) -> None:
    """The script's custom-path launch passes ``extern_libs={'libdevice': path}`` (CUDA/HIP bitcode):
    kdsl links no bitcode, and says so instead of ignoring the user's library."""
    x = torch.rand(64, device=DEVICE)
    y = torch.empty_like(x)
    with pytest.raises(kdsl.LaunchError, match="extern_libs"):
        asin_kernel[(1,)](x, y, 64, BLOCK_SIZE=64, extern_libs={"libdevice": "/nonexistent/libdevice.10.bc"})


# --------------------------------------------------------------- 08 grouped GEMM


@kdsl.autotune(
    configs=[
        kdsl.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "NUM_SM": 4}),
        kdsl.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 16, "BLOCK_SIZE_K": 16, "NUM_SM": 3}),
        kdsl.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16, "NUM_SM": num_sms()}),
    ],
    key=["group_size"],
)
@kdsl.jit
def grouped_matmul_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                          NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                          BLOCK_SIZE_K: tl.constexpr):
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            k = gk
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            tl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def group_gemm_fn(group_A: list[Any], group_B: list[Any]) -> list[Any]:
    assert len(group_A) == len(group_B)
    group_size = len(group_A)
    A_addrs, B_addrs, C_addrs, g_sizes, g_lds, group_C = [], [], [], [], [], []
    for A, B in zip(group_A, group_B):
        assert A.shape[1] == B.shape[0]
        M, K = A.shape
        K, N = B.shape
        C = torch.empty((M, N), device=DEVICE, dtype=A.dtype)
        group_C.append(C)
        A_addrs.append(A.data_ptr())
        B_addrs.append(B.data_ptr())
        C_addrs.append(C.data_ptr())
        g_sizes += [M, N, K]
        g_lds += [A.stride(0), B.stride(0), C.stride(0)]
    d_a_ptrs = torch.tensor(A_addrs, device=DEVICE)
    d_b_ptrs = torch.tensor(B_addrs, device=DEVICE)
    d_c_ptrs = torch.tensor(C_addrs, device=DEVICE)
    d_g_sizes = torch.tensor(g_sizes, dtype=torch.int32, device=DEVICE)
    d_g_lds = torch.tensor(g_lds, dtype=torch.int32, device=DEVICE)
    grid = lambda META: (META["NUM_SM"],)  # noqa: E731
    grouped_matmul_kernel[grid](d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, group_size)
    return group_C


@kdsl.jit
def _load_through(addr_ptr, out_ptr, n, BLOCK: tl.constexpr):
    p = tl.load(addr_ptr).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(p + offs, mask=offs < n, other=0.0))


def test_interpreter_reaches_torch_tensors_by_data_ptr() -> None:
    """torch's ``data_ptr()`` cannot be observed, so the interpreter finds the live CPU torch
    storage holding an address made from an integer; a freed tensor's address stays an error."""
    import gc

    with kdsl.backend("interpreter"):
        x = torch.arange(8, dtype=torch.float32)[2:]  # a view: its data_ptr is inside the storage
        out = torch.zeros(8)
        _load_through[(1,)](torch.tensor([x.data_ptr()]), out, 6, BLOCK=8)
        torch.testing.assert_close(out[:6], x)
        with pytest.raises(kdsl.OutOfBoundsError, match="live CPU torch tensor"):
            _load_through[(1,)](torch.tensor([x.data_ptr()]), out, 7, BLOCK=8)  # one past the storage
        addr = x.data_ptr()
        del x
        gc.collect()
        with pytest.raises(kdsl.OutOfBoundsError):
            _load_through[(1,)](torch.tensor([addr]), out, 1, BLOCK=8)


def test_08_grouped_gemm(backend: str) -> None:
    torch.manual_seed(0)
    group_m, group_n, group_k = [64, 32, 32, 96], [64, 32, 64, 32], [32, 64, 16, 48]  # multiples of the tiles
    group_A = [torch.rand((m, k), device=DEVICE, dtype=torch.float16) for m, k in zip(group_m, group_k)]
    group_B = [torch.rand((k, n), device=DEVICE, dtype=torch.float16) for k, n in zip(group_k, group_n)]
    tri_out = group_gemm_fn(group_A, group_B)
    ref_out = [torch.matmul(a, b) for a, b in zip(group_A, group_B)]
    for ref, tri in zip(ref_out, tri_out):
        assert torch.allclose(ref, tri, atol=1e-2, rtol=1e-3)


# The script misspells one key (``gropup_c_ptrs``); Triton skips it, kdsl warns and skips it.
with pytest.warns(UserWarning, match="gropup_c_ptrs"):
    @kdsl.autotune(
        [kdsl.Config({"BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": BN, "BLOCK_SIZE_K": BK}, num_stages=s, num_warps=w)
         for BM in [32] for BN in [16, 32] for BK in [16] for s in [3] for w in [4]],
        key=["group_a_ptrs", "group_b_ptrs", "gropup_c_ptrs", "group_size"],  # sic: the script's misspelt key
    )
    @kdsl.jit
    def grouped_matmul_tma_kernel(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                                  NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                  BLOCK_SIZE_K: tl.constexpr, FP8: tl.constexpr):
        dtype = tl.float8e4nv if FP8 else tl.float16
        tile_idx = tl.program_id(0)
        last_problem_end = 0
        for g in range(group_size):
            gm = tl.load(group_gemm_sizes + g * 3)
            gn = tl.load(group_gemm_sizes + g * 3 + 1)
            gk = tl.load(group_gemm_sizes + g * 3 + 2)
            num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
            num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
            num_tiles = num_m_tiles * num_n_tiles
            if tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
                lda = tl.load(g_lds + g * 3)
                ldb = tl.load(g_lds + g * 3 + 1)
                ldc = tl.load(g_lds + g * 3 + 2)
                a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(dtype))
                b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(dtype))
                c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(dtype))
                a_desc = tl.make_tensor_descriptor(a_ptr, shape=[gm, gk], strides=[lda, 1],
                                                   block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
                b_desc = tl.make_tensor_descriptor(b_ptr, shape=[gn, gk], strides=[ldb, 1],
                                                   block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
                c_desc = tl.make_tensor_descriptor(c_ptr, shape=[gm, gn], strides=[ldc, 1],
                                                   block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])
                while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
                    k = gk
                    tile_idx_in_gemm = tile_idx - last_problem_end
                    tile_m_idx = tile_idx_in_gemm // num_n_tiles
                    tile_n_idx = tile_idx_in_gemm % num_n_tiles
                    offs_am = tile_m_idx * BLOCK_SIZE_M
                    offs_bn = tile_n_idx * BLOCK_SIZE_N
                    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
                    for kk in range(0, tl.cdiv(k, BLOCK_SIZE_K)):
                        a = a_desc.load([offs_am, kk * BLOCK_SIZE_K])
                        b = b_desc.load([offs_bn, kk * BLOCK_SIZE_K])
                        accumulator += tl.dot(a, b.T)
                    offs_cm = tile_m_idx * BLOCK_SIZE_M
                    offs_cn = tile_n_idx * BLOCK_SIZE_N
                    c = accumulator.to(dtype)
                    c_desc.store([offs_cm, offs_cn], c)
                    tile_idx += NUM_SM
            last_problem_end = last_problem_end + num_tiles


def group_gemm_tma_fn(group_A: list[Any], group_B: list[Any]) -> list[Any]:
    """The script's TMA variant: B is given transposed (N, K); descriptors are made on the device."""
    group_size = len(group_A)
    A_addrs, B_addrs, C_addrs, g_sizes, g_lds, group_C = [], [], [], [], [], []
    for A, B in zip(group_A, group_B):
        assert A.shape[1] == B.shape[1]
        M, K = A.shape
        N, K = B.shape
        C = torch.empty((M, N), device=DEVICE, dtype=A.dtype)
        group_C.append(C)
        A_addrs.append(A.data_ptr())
        B_addrs.append(B.data_ptr())
        C_addrs.append(C.data_ptr())
        g_sizes += [M, N, K]
        g_lds += [A.stride(0), B.stride(0), C.stride(0)]
    d_a_ptrs = torch.tensor(A_addrs, device=DEVICE)
    d_b_ptrs = torch.tensor(B_addrs, device=DEVICE)
    d_c_ptrs = torch.tensor(C_addrs, device=DEVICE)
    d_g_sizes = torch.tensor(g_sizes, dtype=torch.int32, device=DEVICE)
    d_g_lds = torch.tensor(g_lds, dtype=torch.int32, device=DEVICE)

    def alloc_fn(size: int, alignment: int, stream: int | None) -> Any:
        return torch.empty(size, device=DEVICE, dtype=torch.int8)

    kdsl.set_allocator(alloc_fn)
    grid = lambda META: (META["NUM_SM"],)  # noqa: E731
    grouped_matmul_tma_kernel[grid](d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, group_size,
                                    FP8=torch.float8_e4m3fn == group_A[0].dtype, NUM_SM=num_sms())
    return group_C


def test_08_grouped_gemm_device_descriptors(backend: str) -> None:
    torch.manual_seed(1)
    group_m, group_n, group_k = [64, 32, 48], [32, 48, 16], [32, 16, 48]
    group_A = [torch.rand((m, k), device=DEVICE, dtype=torch.float16) for m, k in zip(group_m, group_k)]
    group_B = [torch.rand((k, n), device=DEVICE, dtype=torch.float16) for k, n in zip(group_k, group_n)]
    ref_out = [torch.matmul(a, b) for a, b in zip(group_A, group_B)]
    group_B_T = [b.T.contiguous() for b in group_B]
    tri_out = group_gemm_tma_fn(group_A, group_B_T)
    for ref, tri in zip(ref_out, tri_out):
        assert torch.allclose(ref, tri, atol=1e-2, rtol=1e-3)


def triton_perf_fn(a_ptrs: Any, b_ptrs: Any, c_ptrs: Any, sizes: Any, lds: Any, group_size: int) -> None:
    grid = lambda META: (META["NUM_SM"],)  # noqa: E731
    grouped_matmul_kernel[grid](a_ptrs, b_ptrs, c_ptrs, sizes, lds, group_size)


def torch_perf_fn(group_A: list[Any], group_B: list[Any]) -> None:
    for a, b in zip(group_A, group_B):
        torch.matmul(a, b)


@kdsl.testing.perf_report(
    kdsl.testing.Benchmark(
        x_names=["N"],
        x_vals=[2**i for i in range(5, 7)],  # multiples of every config's tiles: the kernel assumes full tiles
        line_arg="provider",
        line_vals=["torch", "kdsl"],
        line_names=["Torch", "kdsl"],
        styles=[("green", "-"), ("blue", "-")],
        ylabel="runtime(ms)",
        plot_name="group-gemm-performance",
        args={},
    ))
def benchmark_square_matrices(N: int, provider: str) -> tuple[float, float, float]:
    group_size = 2
    group_A, group_B, group_C = [], [], []
    A_addrs, B_addrs, C_addrs, g_sizes, g_lds = [], [], [], [], []
    for _ in range(group_size):
        A = torch.rand((N, N), device=DEVICE, dtype=torch.float16)
        B = torch.rand((N, N), device=DEVICE, dtype=torch.float16)
        C = torch.empty((N, N), device=DEVICE, dtype=torch.float16)
        group_A.append(A)
        group_B.append(B)
        group_C.append(C)
        A_addrs.append(A.data_ptr())
        B_addrs.append(B.data_ptr())
        C_addrs.append(C.data_ptr())
        g_sizes += [N, N, N]
        g_lds += [N, N, N]
    d_a_ptrs = torch.tensor(A_addrs, device=DEVICE)
    d_b_ptrs = torch.tensor(B_addrs, device=DEVICE)
    d_c_ptrs = torch.tensor(C_addrs, device=DEVICE)
    d_g_sizes = torch.tensor(g_sizes, dtype=torch.int32, device=DEVICE)
    d_g_lds = torch.tensor(g_lds, dtype=torch.int32, device=DEVICE)
    quantiles = [0.5, 0.2, 0.8]
    if provider == "torch":
        ms, min_ms, max_ms = kdsl.testing.do_bench(lambda: torch_perf_fn(group_A, group_B), quantiles=quantiles,
                                                   warmup=1, rep=1)
    if provider == "kdsl":
        ms, min_ms, max_ms = kdsl.testing.do_bench(
            lambda: triton_perf_fn(d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, group_size),
            quantiles=quantiles, warmup=1, rep=1)
        for a, b, c in zip(group_A, group_B, group_C):  # the timed launches computed the products
            assert torch.allclose(torch.matmul(a, b), c, atol=1e-2, rtol=1e-3)
    return ms, max_ms, min_ms


def test_08_perf_report(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    benchmark_square_matrices.run(show_plots=False, print_data=True)
    out = capsys.readouterr().out
    assert "group-gemm-performance" in out and "kdsl" in out


# --------------------------------------------------------------- 09 persistent matmul


def _matmul_launch_metadata(grid: Any, kernel: Any, args: dict[str, Any]) -> dict[str, Any]:
    ret: dict[str, Any] = {}
    M, N, K, WS = args["M"], args["N"], args["K"], args.get("WARP_SPECIALIZE", False)
    ret["name"] = f"{kernel.name}{'_ws' if WS else ''} [M={M}, N={N}, K={K}]"
    bytes_per_elem = args["c_ptr"].element_size() if "c_ptr" in args else (1 if args["FP8_OUTPUT"] else 2)
    ret[f"flops{bytes_per_elem * 8}"] = 2.0 * M * N * K
    ret["bytes"] = bytes_per_elem * (M * K + N * K + M * N)
    return ret


HAS_TENSOR_DESC = supports_tma() and hasattr(tl, "make_tensor_descriptor")
HAS_WARP_SPECIALIZE = is_cuda() and HAS_TENSOR_DESC


def matmul_get_configs(pre_hook: Any = None) -> list[Any]:
    return [
        kdsl.Config({"BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": BN, "BLOCK_SIZE_K": BK, "GROUP_SIZE_M": 2},
                    num_stages=s, num_warps=w, pre_hook=pre_hook)
        for BM in [32] for BN in [16, 32] for BK in [16] for s in [3] for w in [4]
    ]


@kdsl.autotune(configs=matmul_get_configs(), key=["M", "N", "K"])
@kdsl.jit(launch_metadata=_matmul_launch_metadata)
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    start_m = pid_m * BLOCK_SIZE_M
    start_n = pid_n * BLOCK_SIZE_N
    offs_am = start_m + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = start_n + tl.arange(0, BLOCK_SIZE_N)
    offs_am = tl.where(offs_am < M, offs_am, 0)
    offs_bn = tl.where(offs_bn < N, offs_bn, 0)
    offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if (c_ptr.dtype.element_ty == tl.float8e4nv):
        c = accumulator.to(tl.float8e4nv)
    else:
        c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: Any, b: Any) -> Any:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    assert a.dtype == b.dtype, "Incompatible dtypes"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"]),)  # noqa: E731
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1))
    return c


def matmul_tma_set_block_size_hook(nargs: dict[str, Any]) -> None:
    EPILOGUE_SUBTILE = nargs.get("EPILOGUE_SUBTILE", False)
    BLOCK_M = nargs["BLOCK_SIZE_M"]
    BLOCK_N = nargs["BLOCK_SIZE_N"]
    BLOCK_K = nargs["BLOCK_SIZE_K"]
    nargs["a_desc"].block_shape = [BLOCK_M, BLOCK_K]
    nargs["b_desc"].block_shape = [BLOCK_N, BLOCK_K]
    nargs["c_desc"].block_shape = [BLOCK_M, BLOCK_N // 2] if EPILOGUE_SUBTILE else [BLOCK_M, BLOCK_N]


@kdsl.autotune(configs=matmul_get_configs(pre_hook=matmul_tma_set_block_size_hook),
               key=["M", "N", "K", "WARP_SPECIALIZE"])
@kdsl.jit(launch_metadata=_matmul_launch_metadata)
def matmul_kernel_tma(a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, FP8_OUTPUT: tl.constexpr,
                      WARP_SPECIALIZE: tl.constexpr):
    dtype = tl.float8e4nv if FP8_OUTPUT else tl.float16
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    offs_am = pid_m * BLOCK_SIZE_M
    offs_bn = pid_n * BLOCK_SIZE_N
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in tl.range(k_tiles, warp_specialize=WARP_SPECIALIZE):
        offs_k = k * BLOCK_SIZE_K
        a = a_desc.load([offs_am, offs_k])
        b = b_desc.load([offs_bn, offs_k])
        accumulator = tl.dot(a, b.T, accumulator)
    c = accumulator.to(dtype)
    offs_cm = pid_m * BLOCK_SIZE_M
    offs_cn = pid_n * BLOCK_SIZE_N
    c_desc.store([offs_cm, offs_cn], c)


def matmul_tma(a: Any, b: Any, warp_specialize: bool) -> Any:
    assert a.shape[1] == b.shape[1], "Incompatible dimensions"  # b is transposed
    assert a.dtype == b.dtype, "Incompatible dtypes"
    M, K = a.shape
    N, K = b.shape
    dtype = a.dtype
    c = torch.empty((M, N), device=a.device, dtype=dtype)
    dummy_block = [1, 1]  # the autotuner's pre-hook sets the real block shapes
    a_desc = TensorDescriptor.from_tensor(a, dummy_block)
    b_desc = TensorDescriptor.from_tensor(b, dummy_block)
    c_desc = TensorDescriptor.from_tensor(c, dummy_block)

    def grid(META: dict[str, Any]) -> tuple[int]:
        BLOCK_M = META["BLOCK_SIZE_M"]
        BLOCK_N = META["BLOCK_SIZE_N"]
        return (kdsl.cdiv(M, BLOCK_M) * kdsl.cdiv(N, BLOCK_N),)

    matmul_kernel_tma[grid](a_desc, b_desc, c_desc, M, N, K, FP8_OUTPUT=dtype == torch.float8_e4m3fn,
                            WARP_SPECIALIZE=warp_specialize)
    return c


@kdsl.jit
def _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@kdsl.autotune(configs=matmul_get_configs(), key=["M", "N", "K"])
@kdsl.jit(launch_metadata=_matmul_launch_metadata)
def matmul_kernel_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                             stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                             BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    tile_id_c = start_pid - NUM_SMS
    offs_k_for_mask = tl.arange(0, BLOCK_SIZE_K)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        start_m = pid_m * BLOCK_SIZE_M
        start_n = pid_n * BLOCK_SIZE_N
        offs_am = start_m + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = start_n + tl.arange(0, BLOCK_SIZE_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        if (c_ptr.dtype.element_ty == tl.float8e4nv):
            c = accumulator.to(tl.float8e4nv)
        else:
            c = accumulator.to(tl.float16)
        tl.store(c_ptrs, c, mask=c_mask)


def matmul_persistent(a: Any, b: Any, NUM_SMS: int | None = None) -> Any:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    assert a.dtype == b.dtype, "Incompatible dtypes"
    NUM_SMS = num_sms() if NUM_SMS is None else NUM_SMS
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (min(NUM_SMS, kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"])),)  # noqa: E731
    matmul_kernel_persistent[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1), NUM_SMS=NUM_SMS)
    return c


def matmul_tma_persistent_get_configs(pre_hook: Any = None) -> list[Any]:
    return [
        kdsl.Config({"BLOCK_SIZE_M": BM, "BLOCK_SIZE_N": BN, "BLOCK_SIZE_K": BK, "GROUP_SIZE_M": 2,
                     "EPILOGUE_SUBTILE": SUBTILE}, num_stages=s, num_warps=w, pre_hook=pre_hook)
        for BM in [32] for BN in [32] for BK in [16] for s in [3] for w in [4] for SUBTILE in [True, False]
    ]


@kdsl.autotune(configs=matmul_tma_persistent_get_configs(pre_hook=matmul_tma_set_block_size_hook),
               key=["M", "N", "K", "WARP_SPECIALIZE", "FLATTEN"])
@kdsl.jit(launch_metadata=_matmul_launch_metadata)
def matmul_kernel_tma_persistent(a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                                 BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                                 GROUP_SIZE_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
                                 NUM_SMS: tl.constexpr, WARP_SPECIALIZE: tl.constexpr, FLATTEN: tl.constexpr):
    dtype = c_desc.dtype
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    tile_id_c = start_pid - NUM_SMS
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        offs_am_c = pid_m * BLOCK_SIZE_M
        offs_bn_c = pid_n * BLOCK_SIZE_N
        if EPILOGUE_SUBTILE:
            acc = tl.reshape(accumulator, (BLOCK_SIZE_M, 2, BLOCK_SIZE_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c0 = acc0.to(dtype)
            c_desc.store([offs_am_c, offs_bn_c], c0)
            c1 = acc1.to(dtype)
            c_desc.store([offs_am_c, offs_bn_c + BLOCK_SIZE_N // 2], c1)
        else:
            accumulator = accumulator.to(dtype)
            c_desc.store([offs_am_c, offs_bn_c], accumulator)


def matmul_tma_persistent(a: Any, b: Any, warp_specialize: bool) -> Any:
    assert a.shape[1] == b.shape[1], "Incompatible dimensions"  # b is transposed
    M, K = a.shape
    N, K = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    NUM_SMS = num_sms()
    dummy_block = [1, 1]
    a_desc = TensorDescriptor.from_tensor(a, dummy_block)
    b_desc = TensorDescriptor.from_tensor(b, dummy_block)
    c_desc = TensorDescriptor.from_tensor(c, dummy_block)

    def grid(META: dict[str, Any]) -> tuple[int]:
        nonlocal a_desc, b_desc, c_desc
        return (min(NUM_SMS, kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"])),)

    matmul_kernel_tma_persistent[grid](a_desc, b_desc, c_desc, M, N, K, NUM_SMS=NUM_SMS,
                                       WARP_SPECIALIZE=warp_specialize, FLATTEN=not warp_specialize)
    return c


def prune_invalid_configs(configs: list[Any], named_args: dict[str, Any], **kwargs: Any) -> list[Any]:
    FLATTEN = kwargs["FLATTEN"]
    return [conf for conf in configs if not (conf.kwargs.get("EPILOGUE_SUBTILE", True) and FLATTEN is False)]


@kdsl.autotune(configs=matmul_tma_persistent_get_configs(), key=["M", "N", "K", "WARP_SPECIALIZE", "FLATTEN"],
               prune_configs_by={"early_config_prune": prune_invalid_configs})
@kdsl.jit(launch_metadata=_matmul_launch_metadata)
def matmul_kernel_descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                                        BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                                        GROUP_SIZE_M: tl.constexpr, EPILOGUE_SUBTILE: tl.constexpr,
                                        NUM_SMS: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
                                        FLATTEN: tl.constexpr):
    dtype = c_ptr.dtype.element_ty
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N if not EPILOGUE_SUBTILE
                                                    else BLOCK_SIZE_N // 2])
    tile_id_c = start_pid - NUM_SMS
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)
        offs_cm = pid_m * BLOCK_SIZE_M
        offs_cn = pid_n * BLOCK_SIZE_N
        if EPILOGUE_SUBTILE:
            acc = tl.reshape(accumulator, (BLOCK_SIZE_M, 2, BLOCK_SIZE_N // 2))
            acc = tl.permute(acc, (0, 2, 1))
            acc0, acc1 = tl.split(acc)
            c0 = acc0.to(dtype)
            c_desc.store([offs_cm, offs_cn], c0)
            c1 = acc1.to(dtype)
            c_desc.store([offs_cm, offs_cn + BLOCK_SIZE_N // 2], c1)
        else:
            c = accumulator.to(dtype)
            c_desc.store([offs_cm, offs_cn], c)


def matmul_descriptor_persistent(a: Any, b: Any, warp_specialize: bool) -> Any:
    assert a.shape[1] == b.shape[1], "Incompatible dimensions"  # b is transposed
    M, K = a.shape
    N, K = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    NUM_SMS = num_sms()

    def alloc_fn(size: int, alignment: int, stream: int | None) -> Any:
        return torch.empty(size, device=DEVICE, dtype=torch.int8)

    kdsl.set_allocator(alloc_fn)
    flatten = not warp_specialize
    grid = lambda META: (min(NUM_SMS, kdsl.cdiv(M, META["BLOCK_SIZE_M"]) * kdsl.cdiv(N, META["BLOCK_SIZE_N"])),)  # noqa: E731
    matmul_kernel_descriptor_persistent[grid](a, b, c, M, N, K, NUM_SMS=NUM_SMS, WARP_SPECIALIZE=warp_specialize,
                                              FLATTEN=flatten)
    return c


def torch_matmul(a: Any, b: Any) -> Any:
    M, K = a.shape
    N, K = b.shape
    return torch.matmul(a, b.T)


def run_test(expect: Any, fn: Any, a: Any, b: Any, label: str, enabled: bool = True, *args: Any) -> bool | None:
    if not enabled:
        return None
    actual = fn(a, b, *args)
    return bool(torch.allclose(expect, actual.to(expect.dtype), atol=1.0))


def test_09_validate(backend: str) -> None:
    """The script's ``validate``: every variant against the naive kernel, on a problem whose sizes
    are not multiples of the tiles and with more tiles than programs (the persistent loops)."""
    torch.manual_seed(0)
    M, N, K = 80, 72, 40
    dtype = torch.float16
    a = torch.randn((M, K), device=DEVICE, dtype=torch.float16).to(dtype)
    b = torch.randn((K, N), device=DEVICE, dtype=torch.float16).to(dtype)
    b = b.T.contiguous()
    naive_result = matmul(a, b.T).to(torch.float16)
    ref = torch.matmul(a.float(), b.T.float())
    torch.testing.assert_close(naive_result.float(), ref, atol=2e-2, rtol=2e-3)
    assert run_test(naive_result, torch_matmul, a, b, "Torch", enabled=dtype == torch.float16)
    assert run_test(naive_result, matmul_persistent, a, b.T, "Persistent")
    torch.testing.assert_close(matmul_persistent(a, b.T, NUM_SMS=3), naive_result, atol=0, rtol=0)
    kernels = [(matmul_tma, "TMA"), (matmul_tma_persistent, "TMA Persistent"),
               (matmul_descriptor_persistent, "Tensor Descriptor Persistent")]
    # the script runs these when supports_tma(); every kdsl backend has tensor descriptors
    for (kernel, label), warp_specialize in itertools.product(kernels, [False, True]):
        c = kernel(a, b, warp_specialize)
        torch.testing.assert_close(c, naive_result, atol=0, rtol=0, msg=f"{label} ws={warp_specialize}")


def test_09_set_allocator_records_the_function() -> None:
    """``kdsl.set_allocator`` takes Triton's ``alloc_fn(size, alignment, stream)``; kdsl's
    tensor descriptors need no global scratch, so the function is recorded, not called."""
    calls: list[tuple[int, int, Any]] = []

    def alloc_fn(size: int, alignment: int, stream: int | None) -> Any:
        calls.append((size, alignment, stream))
        return torch.empty(size, device=DEVICE, dtype=torch.int8)

    kdsl.set_allocator(alloc_fn)
    try:
        assert kdsl.get_allocator() is alloc_fn
        a = torch.randn((32, 16), dtype=torch.float16)
        b = torch.randn((32, 16), dtype=torch.float16)
        with kdsl.backend("interpreter"):
            c = matmul_descriptor_persistent(a, b, False)
        torch.testing.assert_close(c.float(), a.float() @ b.T.float(), atol=2e-2, rtol=2e-3)
        assert calls == []
    finally:
        kdsl.set_allocator(None)
    with pytest.raises(TypeError, match="set_allocator"):
        kdsl.set_allocator(42)  # type: ignore[arg-type]


# --------------------------------------------------------------- 06 fused attention


@kdsl.jit
def _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype: tl.constexpr, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m: tl.constexpr, offs_n: tl.constexpr, N_CTX: tl.constexpr,
                    warp_specialize: tl.constexpr, IS_HOPPER: tl.constexpr):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    if dtype == tl.float8e5:
        offsetv_y = offset_y * HEAD_DIM + lo
    else:
        offsetv_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=warp_specialize):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        if not IS_HOPPER and warp_specialize and BLOCK_M == 128 and HEAD_DIM == 128:
            BM: tl.constexpr = acc.shape[0]
            BN: tl.constexpr = acc.shape[1]
            acc0, acc1 = acc.reshape([BM, 2, BN // 2]).permute(0, 2, 1).split()
            acc0 = acc0 * alpha[:, None]
            acc1 = acc1 * alpha[:, None]
            acc = tl.join(acc0, acc1).permute(0, 2, 1).reshape([BM, BN])
        else:
            acc = acc * alpha[:, None]
        if dtype == tl.float8e5:
            v = desc_v.load([0, offsetv_y]).T
        else:
            v = desc_v.load([offsetv_y, 0])
        p = p.to(dtype)
        acc = tl.dot(p, v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


def _host_descriptor_pre_hook(nargs: dict[str, Any]) -> None:
    BLOCK_M = nargs["BLOCK_M"]
    BLOCK_N = nargs["BLOCK_N"]
    HEAD_DIM = nargs["HEAD_DIM"]
    if not isinstance(nargs["desc_q"], TensorDescriptor):
        return
    nargs["desc_q"].block_shape = [BLOCK_M, HEAD_DIM]
    if nargs["FP8_OUTPUT"]:
        nargs["desc_v"].block_shape = [HEAD_DIM, BLOCK_N]
    else:
        nargs["desc_v"].block_shape = [BLOCK_N, HEAD_DIM]
    nargs["desc_k"].block_shape = [BLOCK_N, HEAD_DIM]
    nargs["desc_o"].block_shape = [BLOCK_M, HEAD_DIM]


NUM_STAGES_OPTIONS = [1] if is_hip() else [2, 3]

attn_configs = [
    kdsl.Config({"BLOCK_M": BM, "BLOCK_N": BN}, num_stages=s, num_warps=w, pre_hook=_host_descriptor_pre_hook)
    for BM in [16, 32, 128] for BN in [16] for s in NUM_STAGES_OPTIONS for w in [4, 8]
]


def keep(conf: Any) -> bool:
    """The script drops 8-warp configs with small tiles on Hopper; these tests keep one warp count."""
    return not (is_cuda() and torch.cuda.get_device_capability()[0] == 9) and conf.num_warps == 4 \
        and conf.num_stages == NUM_STAGES_OPTIONS[0]


def prune_invalid_configs(configs: list[Any], named_args: dict[str, Any], **kwargs: Any) -> list[Any]:
    N_CTX = kwargs["N_CTX"]
    STAGE = kwargs["STAGE"]
    return [conf for conf in configs if conf.kwargs.get("BLOCK_M", 0) <= N_CTX and (
        conf.kwargs.get("BLOCK_M", 0) >= conf.kwargs.get("BLOCK_N", 0) or STAGE == 1)]


@kdsl.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)


@kdsl.autotune(configs=list(filter(keep, attn_configs)), key=["N_CTX", "HEAD_DIM", "FP8_OUTPUT", "warp_specialize"],
               prune_configs_by={"early_config_prune": prune_invalid_configs})
@kdsl.jit
def _attn_fwd(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FP8_OUTPUT: tl.constexpr, STAGE: tl.constexpr,
              warp_specialize: tl.constexpr, IS_HOPPER: tl.constexpr):
    dtype = tl.float8e5 if FP8_OUTPUT else tl.float16
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    y_dim = Z * H * N_CTX
    desc_q = _maybe_make_tensor_desc(desc_q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    if FP8_OUTPUT:
        desc_v = _maybe_make_tensor_desc(desc_v, shape=[HEAD_DIM, y_dim], strides=[N_CTX, 1],
                                         block_shape=[HEAD_DIM, BLOCK_N])
    else:
        desc_v = _maybe_make_tensor_desc(desc_v, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                         block_shape=[BLOCK_N, HEAD_DIM])
    desc_k = _maybe_make_tensor_desc(desc_k, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = _maybe_make_tensor_desc(desc_o, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX,
                                        warp_specialize, IS_HOPPER)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX,
                                        warp_specialize, IS_HOPPER)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


@kdsl.jit
def _attn_bwd_preprocess(O, DO, Delta, Z, H, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    o = tl.load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@kdsl.jit
def _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                   BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, HEAD_DIM: tl.constexpr,
                   start_n, start_m, num_steps, MASK: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    curr_m = start_m
    step_m = BLOCK_M1
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if MASK:
            mask = (offs_m[None, :] >= offs_n[:, None])
            pT = tl.where(mask, pT, 0.0)
        do = tl.load(do_ptrs)
        ppT = pT
        ppT = ppT.to(tl.float16)
        dv += tl.dot(ppT, do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dsT = dsT.to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += step_m
        qT_ptrs += step_m * stride_tok
        do_ptrs += step_m * stride_tok
    return dk, dv


@kdsl.jit
def _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2: tl.constexpr,
                 BLOCK_N2: tl.constexpr, HEAD_DIM: tl.constexpr, start_m, start_n, num_steps, MASK: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = start_n + tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    Di = tl.load(D + offs_m)
    tl.static_assert(BLOCK_M2 % BLOCK_N2 == 0)
    curr_n = start_n
    step_n = BLOCK_N2
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if MASK:
            offs_n = curr_n + tl.arange(0, BLOCK_N2)
            mask = (offs_m[:, None] >= offs_n[None, :])
            p = tl.where(mask, p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        ds = ds.to(tl.float16)
        dq += tl.dot(ds, tl.trans(kT))
        curr_n += step_n
        kT_ptrs += step_n * stride_tok
        vT_ptrs += step_n * stride_tok
    return dq


@kdsl.jit
def _attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
              BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
              BLK_SLICE_FACTOR: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    LN2: tl.constexpr = 0.6931471824645996
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_k = tl.arange(0, HEAD_DIM)
    start_n = pid * BLOCK_N1
    start_m = 0
    MASK_BLOCK_M1: tl.constexpr = BLOCK_M1 // BLK_SLICE_FACTOR
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    if CAUSAL:
        start_m = start_n
        num_steps = BLOCK_N1 // MASK_BLOCK_M1
        dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                                MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=True)
        start_m += num_steps * MASK_BLOCK_M1
    num_steps = (N_CTX - start_m) // BLOCK_M1
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                            BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=False)
    dv_ptrs = DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d
    tl.store(dv_ptrs, dv)
    dk *= sm_scale
    dk_ptrs = DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d
    tl.store(dk_ptrs, dk)
    start_m = pid * BLOCK_M2
    start_n = 0
    num_steps = N_CTX // BLOCK_N2
    MASK_BLOCK_N2: tl.constexpr = BLOCK_N2 // BLK_SLICE_FACTOR
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    m = tl.load(M + offs_m)
    m = m[:, None]
    if CAUSAL:
        end_n = start_m + BLOCK_M2
        num_steps = BLOCK_M2 // MASK_BLOCK_N2
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2, MASK_BLOCK_N2,
                          HEAD_DIM, start_m, end_n - num_steps * MASK_BLOCK_N2, num_steps, MASK=True)
        end_n -= num_steps * MASK_BLOCK_N2
        num_steps = end_n // BLOCK_N2
        start_n = end_n - num_steps * BLOCK_N2
    dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2, BLOCK_N2, HEAD_DIM,
                      start_m, start_n, num_steps, MASK=False)
    dq_ptrs = DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    dq *= LN2
    tl.store(dq_ptrs, dq)


class _attention(torch.autograd.Function):

    @staticmethod
    def forward(ctx: Any, q: Any, k: Any, v: Any, causal: bool, sm_scale: float,  # type: ignore[override]
                warp_specialize: bool = True) -> Any:
        HEAD_DIM_Q, HEAD_DIM_K = q.shape[-1], k.shape[-1]
        HEAD_DIM_V = v.shape[-1]
        assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V
        assert HEAD_DIM_K in {16, 32, 64, 128, 256}
        o = torch.empty_like(q)
        stage = 3 if causal else 1
        extra_kern_args: dict[str, Any] = {}
        if is_hip():
            waves_per_eu = 3 if HEAD_DIM_K <= 64 else 2
            extra_kern_args = {"waves_per_eu": waves_per_eu, "allow_flush_denorm": True}
        M = torch.empty((q.shape[0], q.shape[1], q.shape[2]), device=q.device, dtype=torch.float32)
        if supports_host_descriptor() and not (is_hopper() and warp_specialize):
            y_dim = q.shape[0] * q.shape[1] * q.shape[2]
            dummy_block = [1, 1]
            desc_q = TensorDescriptor(q, shape=[y_dim, HEAD_DIM_K], strides=[HEAD_DIM_K, 1], block_shape=dummy_block)
            if q.dtype == torch.float8_e5m2:
                desc_v = TensorDescriptor(v, shape=[HEAD_DIM_K, y_dim], strides=[q.shape[2], 1],
                                          block_shape=dummy_block)
            else:
                desc_v = TensorDescriptor(v, shape=[y_dim, HEAD_DIM_K], strides=[HEAD_DIM_K, 1],
                                          block_shape=dummy_block)
            desc_k = TensorDescriptor(k, shape=[y_dim, HEAD_DIM_K], strides=[HEAD_DIM_K, 1], block_shape=dummy_block)
            desc_o = TensorDescriptor(o, shape=[y_dim, HEAD_DIM_K], strides=[HEAD_DIM_K, 1], block_shape=dummy_block)
        else:
            desc_q = q
            desc_v = v
            desc_k = k
            desc_o = o

        def alloc_fn(size: int, align: int, _: Any) -> Any:
            return torch.empty(size, dtype=torch.int8, device=DEVICE)

        kdsl.set_allocator(alloc_fn)

        def grid(META: dict[str, Any]) -> tuple[int, int, int]:
            return (kdsl.cdiv(q.shape[2], META["BLOCK_M"]), q.shape[0] * q.shape[1], 1)

        ctx.grid = grid
        if is_blackwell() and warp_specialize:
            extra_kern_args["maxnreg"] = 168 if HEAD_DIM_K == 128 and q.dtype == torch.float16 else 80
        _attn_fwd[grid](sm_scale, M, q.shape[0], q.shape[1], desc_q, desc_k, desc_v, desc_o, N_CTX=q.shape[2],
                        HEAD_DIM=HEAD_DIM_K, FP8_OUTPUT=q.dtype == torch.float8_e5m2, STAGE=stage,
                        warp_specialize=warp_specialize, IS_HOPPER=is_hopper(), **extra_kern_args)
        ctx.save_for_backward(q, k, v, o, M)
        ctx.sm_scale = sm_scale
        ctx.HEAD_DIM = HEAD_DIM_K
        ctx.causal = causal
        return o

    @staticmethod
    def backward(ctx: Any, do: Any) -> Any:  # type: ignore[override]
        q, k, v, o, M = ctx.saved_tensors
        assert do.is_contiguous()
        assert q.stride() == k.stride() == v.stride() == o.stride() == do.stride()
        dq = torch.empty_like(q)
        dk = torch.empty_like(k)
        dv = torch.empty_like(v)
        BATCH, N_HEAD, N_CTX = q.shape[:3]
        NUM_WARPS, NUM_STAGES = 4, 5
        BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2 = 16, 32, 32, 16  # the script: 32, 128, 128, 32
        BLK_SLICE_FACTOR = 2
        RCP_LN2 = 1.4426950408889634
        arg_k = k
        arg_k = arg_k * (ctx.sm_scale * RCP_LN2)
        PRE_BLOCK = 32  # the script: 128
        assert N_CTX % PRE_BLOCK == 0
        pre_grid = (N_CTX // PRE_BLOCK, BATCH * N_HEAD)
        delta = torch.empty_like(M)
        _attn_bwd_preprocess[pre_grid](o, do, delta, BATCH, N_HEAD, N_CTX, BLOCK_M=PRE_BLOCK,
                                       HEAD_DIM=ctx.HEAD_DIM)
        grid = (N_CTX // BLOCK_N1, 1, BATCH * N_HEAD)
        _attn_bwd[grid](q, arg_k, v, ctx.sm_scale, do, dq, dk, dv, M, delta, q.stride(0), q.stride(1), q.stride(2),
                        q.stride(3), N_HEAD, N_CTX, BLOCK_M1=BLOCK_M1, BLOCK_N1=BLOCK_N1, BLOCK_M2=BLOCK_M2,
                        BLOCK_N2=BLOCK_N2, BLK_SLICE_FACTOR=BLK_SLICE_FACTOR, HEAD_DIM=ctx.HEAD_DIM,
                        CAUSAL=ctx.causal, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
        return dq, dk, dv, None, None, None, None


attention = _attention.apply


def _reference(q: Any, k: Any, v: Any, causal: bool, sm_scale: float) -> Any:
    N_CTX = q.shape[2]
    M = torch.tril(torch.ones((N_CTX, N_CTX), device=DEVICE))
    p = torch.matmul(q, k.transpose(2, 3)) * sm_scale
    if causal:
        p[:, :, M == 0] = float("-inf")
    p = torch.softmax(p.float(), dim=-1).to(q.dtype)
    return torch.matmul(p, v).half()


@pytest.mark.parametrize("causal", [True, False])
def test_06_fused_attention_forward_backward(backend: str, causal: bool) -> None:
    """The script's ``test_op`` (fp16, forward and backward) at Z=1, H=2, N_CTX=64, HEAD_DIM=16.
    The script's own backward covers causal attention only; the non-causal branch here skips
    the masked diagonal blocks (``CAUSAL`` constexpr), which is this test's one addition."""
    Z, H, N_CTX, HEAD_DIM, dtype = 1, 2, 64, 16, torch.float16
    torch.manual_seed(20)
    q = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5).requires_grad_()
    k = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5).requires_grad_()
    v = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=dtype, device=DEVICE).normal_(mean=0.0, std=0.5).requires_grad_()
    sm_scale = 0.5
    dout = torch.randn_like(q)
    ref_out = _reference(q, k, v, causal, sm_scale)
    ref_out.backward(dout)
    ref_dv, v.grad = v.grad.clone(), None
    ref_dk, k.grad = k.grad.clone(), None
    ref_dq, q.grad = q.grad.clone(), None
    tri_out = attention(q, k, v, causal, sm_scale, False).half()
    torch.testing.assert_close(tri_out, ref_out, atol=1e-2, rtol=0)
    tri_out.backward(dout)
    tri_dv, v.grad = v.grad.clone(), None
    tri_dk, k.grad = k.grad.clone(), None
    tri_dq, q.grad = q.grad.clone(), None
    torch.testing.assert_close(tri_dv, ref_dv, atol=1e-2, rtol=0)
    torch.testing.assert_close(tri_dk, ref_dk, atol=1e-2, rtol=0)
    torch.testing.assert_close(tri_dq, ref_dq, atol=1e-2, rtol=0)


def test_06_fp8_forward(backend: str) -> None:
    """The script's ``triton-fp8`` forward: q, k in ``float8_e5m2`` and v transposed in memory
    (``permute(0, 1, 3, 2).contiguous().permute(0, 1, 3, 2)``) before its cast, so the kernel's
    ``FP8_OUTPUT`` branch loads v through a ``[HEAD_DIM, Z*H*N_CTX]`` descriptor with strides
    ``[N_CTX, 1]``. Those bounds hold head 0 only (head b starts at column b*N_CTX*HEAD_DIM), so
    this runs one head; the output is e5m2 (2 mantissa bits), compared against a float32
    reference of the same e5m2 inputs within one e5m2 step of the values (|o| < 1)."""
    torch.manual_seed(20)
    shape = (1, 1, 64, 16)
    q, k, v = (torch.empty(shape, dtype=torch.float16, device=DEVICE).normal_(mean=0.0, std=0.5) for _ in range(3))
    q = q.to(torch.float8_e5m2)
    k = k.to(torch.float8_e5m2)
    v = v.permute(0, 1, 3, 2).contiguous()
    v = v.permute(0, 1, 3, 2)
    v = v.to(torch.float8_e5m2)
    assert v.stride() == (1024, 1024, 1, 64)
    out = attention(q, k, v, True, 0.5, False)
    assert out.dtype == torch.float8_e5m2
    ref = _reference(q.float(), k.float(), v.float(), True, 0.5)
    torch.testing.assert_close(out.float(), ref.float(), atol=0.125, rtol=0)


def test_06_host_descriptor_branch(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The branch the script takes on Hopper and newer: host ``TensorDescriptor`` objects with a
    dummy block shape, fixed by the configs' ``pre_hook`` before each trial and the launch."""
    import sys

    monkeypatch.setattr(sys.modules[__name__], "supports_host_descriptor", lambda: True)
    torch.manual_seed(3)
    q, k, v = (torch.randn((1, 2, 32, 16), dtype=torch.float16, device=DEVICE) for _ in range(3))
    with torch.no_grad():
        out = attention(q, k, v, True, 0.3, False)
    torch.testing.assert_close(out, _reference(q, k, v, True, 0.3), atol=1e-2, rtol=0)
    assert isinstance(_attn_fwd.best_config, kdsl.Config) and _attn_fwd.best_config.kwargs["BLOCK_M"] <= 32


def test_06_perf_report(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``bench_flash_attention`` through ``perf_report`` with ``Benchmark`` configs built in a loop,
    forward and backward, at tiny sizes."""
    configs = []
    for mode in ["fwd", "bwd"]:
        configs.append(kdsl.testing.Benchmark(
            x_names=["N_CTX"], x_vals=[32], line_arg="provider", line_vals=["kdsl-fp16"],
            line_names=["kdsl [FP16]"], styles=[("red", "-")], ylabel="TFLOPS",
            plot_name=f"fused-attention-batch1-head2-d16-{mode}-causal=True",
            args={"H": 2, "BATCH": 1, "HEAD_DIM": 16, "mode": mode, "causal": True}))

    @kdsl.testing.perf_report(configs)
    def bench_flash_attention(BATCH: int, H: int, N_CTX: int, HEAD_DIM: int, causal: bool, mode: str,
                              provider: str, device: Any = DEVICE) -> float:
        dtype = torch.float16
        q = torch.randn((BATCH, H, N_CTX, HEAD_DIM), dtype=dtype, device=device, requires_grad=True)
        k = torch.randn((BATCH, H, N_CTX, HEAD_DIM), dtype=dtype, device=device, requires_grad=True)
        v = torch.randn((BATCH, H, N_CTX, HEAD_DIM), dtype=dtype, device=device, requires_grad=True)
        fn = lambda: attention(q, k, v, causal, 1.3)  # noqa: E731
        if mode == "bwd":
            o = fn()
            do = torch.randn_like(o)
            fn = lambda: o.backward(do, retain_graph=True)  # noqa: E731
        ms = kdsl.testing.do_bench(fn, warmup=1, rep=1)
        total_flops = 2 * 2.0 * BATCH * H * N_CTX * N_CTX * HEAD_DIM * 0.5
        if mode == "bwd":
            total_flops *= 2.5
        return total_flops * 1e-12 / (ms * 1e-3)

    bench_flash_attention.run(save_path="", print_data=True)
    out = capsys.readouterr().out
    assert "fused-attention-batch1-head2-d16-fwd-causal=True" in out and "bwd" in out
