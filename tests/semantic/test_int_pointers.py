"""Pointers made from integer addresses: Triton's grouped GEMM (tutorial 08), int <-> pointer
round trips, and what the interpreter reports for an address it cannot reach.

Triton facts (python/tutorials/08-grouped-gemm.py, language/core.py ``tensor.to``/``cast``): the
host stores ``A.data_ptr()`` of each matrix in an int64 device tensor; the kernel loads one and
casts it with ``.to(tl.pointer_type(tl.float16))``; a pointer cast to ``tl.int64`` is its address
and casting that integer back gives the same pointer; pointer arithmetic advances by elements.

Where the address comes from, per backend: ``DeviceArray.data_ptr()`` (``kdsl.tensor``/
``kdsl.empty``) on the interpreter, cpu and vulkan (on vulkan the buffer's device address). OpenCL
1.2 buffers have no address (``data_ptr()`` raises), so on opencl the matrices are numpy arrays and
the addresses their host addresses, which PoCL's CPU device reads directly (the README's claim).
The interpreter reaches array arguments and the live arrays whose address was handed out, and
reports anything else as out of bounds; on device backends a wild address is undefined, not tested.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import OutOfBoundsError


@kdsl.jit
def grouped_matmul_kernel(
    group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
    NUM_SM: kl.constexpr, BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr,
    BLOCK_SIZE_K: kl.constexpr, DTYPE: kl.constexpr,
):  # fmt: skip
    # Triton's tutorial 08 with tl -> kl; DTYPE replaces its hard-coded tl.float16
    tile_idx = kl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = kl.load(group_gemm_sizes + g * 3)
        gn = kl.load(group_gemm_sizes + g * 3 + 1)
        gk = kl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = kl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = kl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = kl.load(g_lds + g * 3)
            ldb = kl.load(g_lds + g * 3 + 1)
            ldc = kl.load(g_lds + g * 3 + 2)
            a_ptr = kl.load(group_a_ptrs + g).to(kl.pointer_type(DTYPE))
            b_ptr = kl.load(group_b_ptrs + g).to(kl.pointer_type(DTYPE))
            c_ptr = kl.load(group_c_ptrs + g).to(kl.pointer_type(DTYPE))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles
            offs_am = tile_m_idx * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
            offs_k = kl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
            for kk in range(0, kl.cdiv(k, BLOCK_SIZE_K)):  # noqa: B007 (the tutorial's name)
                kl.multiple_of(a_ptrs, [16, 16])
                kl.multiple_of(b_ptrs, [16, 16])
                a = kl.load(a_ptrs)
                b = kl.load(b_ptrs)
                accumulator += kl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(DTYPE)
            offs_cm = tile_m_idx * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
            offs_cn = tile_n_idx * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
            c_ptrs = c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :]
            kl.store(c_ptrs, c)
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


def _place(arr: np.ndarray, on_host: bool) -> Any:
    """The array as the kernel will reach it: numpy (host memory) or a device array."""
    return np.ascontiguousarray(arr) if on_host else kdsl.tensor(arr)


def _address(arr: Any) -> int:
    return int(arr.ctypes.data) if isinstance(arr, np.ndarray) else arr.data_ptr()


def _numpy(arr: Any) -> np.ndarray:
    return arr if isinstance(arr, np.ndarray) else arr.numpy()


def group_gemm_fn(group_a: list[Any], group_b: list[Any], on_host: bool, num_sm: int) -> list[Any]:
    """Tutorial 08's host function: allocate each C, collect addresses, sizes and strides."""
    a_addrs, b_addrs, c_addrs, g_sizes, g_lds, group_c = [], [], [], [], [], []
    for a, b in zip(group_a, group_b):
        (m, k), (_, n) = a.shape, b.shape
        c = np.empty((m, n), a.dtype) if on_host else kdsl.empty((m, n), a.dtype)
        group_c.append(c)
        a_addrs.append(_address(a))
        b_addrs.append(_address(b))
        c_addrs.append(_address(c))
        g_sizes += [m, n, k]
        g_lds += [a.strides[0] // a.itemsize, b.strides[0] // b.itemsize, c.strides[0] // c.itemsize]
    d_a_ptrs = _place(np.array(a_addrs, np.int64), on_host)
    d_b_ptrs = _place(np.array(b_addrs, np.int64), on_host)
    d_c_ptrs = _place(np.array(c_addrs, np.int64), on_host)
    d_g_sizes = _place(np.array(g_sizes, np.int32), on_host)
    d_g_lds = _place(np.array(g_lds, np.int32), on_host)
    grouped_matmul_kernel[(num_sm,)](
        d_a_ptrs, d_b_ptrs, d_c_ptrs, d_g_sizes, d_g_lds, len(group_a),
        NUM_SM=num_sm, BLOCK_SIZE_M=16, BLOCK_SIZE_N=16, BLOCK_SIZE_K=16,
        DTYPE=kl.float16 if group_a[0].dtype == np.float16 else kl.float32,
    )  # fmt: skip
    return group_c


# full tiles only, as the tutorial assumes; more tiles than programs, so programs loop
SIZES = [(32, 48, 64), (16, 16, 32), (48, 32, 16), (16, 64, 48)]


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_grouped_gemm_tutorial(backend: str, dtype: type) -> None:
    on_host = backend == "opencl"
    rng = np.random.default_rng(8)
    host_a = [rng.random((m, k), dtype=np.float32).astype(dtype) for m, _, k in SIZES]
    host_b = [rng.random((k, n), dtype=np.float32).astype(dtype) for _, n, k in SIZES]
    group_a = [_place(a, on_host) for a in host_a]
    group_b = [_place(b, on_host) for b in host_b]
    group_c = group_gemm_fn(group_a, group_b, on_host, num_sm=5)
    tol = 2e-2 if dtype == np.float16 else 1e-4
    for a, b, c in zip(host_a, host_b, group_c):
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(_numpy(c).astype(np.float64), ref, rtol=tol, atol=tol)


def test_grouped_gemm_numpy_addresses_on_cpu() -> None:
    """The cpu backend runs in host memory: numpy arrays' own addresses work too."""
    rng = np.random.default_rng(3)
    group_a = [rng.random((m, k), dtype=np.float32) for m, _, k in SIZES[:2]]
    group_b = [rng.random((k, n), dtype=np.float32) for _, n, k in SIZES[:2]]
    with kdsl.backend("cpu"):
        group_c = group_gemm_fn(group_a, group_b, on_host=True, num_sm=3)
    for a, b, c in zip(group_a, group_b, group_c):
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_device_array_data_ptr_on_opencl_says_why() -> None:
    if "opencl" not in kdsl.available_backends():
        pytest.skip("opencl backend unavailable (install pocl-opencl-icd)")
    with pytest.raises(TypeError, match="no address"):
        kdsl.zeros(4, backend="opencl").data_ptr()


@kdsl.jit
def roundtrip_kernel(x_ptr, out_ptr, ints_ptr, flags_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    base = x_ptr.to(kl.int64)
    kl.store(ints_ptr, base)  # the address of x as the kernel sees it
    ints = (x_ptr + offs).to(kl.int64)
    kl.store(ints_ptr + 1 + offs, ints - base)  # element i is 4 * i bytes on
    shifted = kl.cast(ints + 2 * 4, kl.pointer_type(kl.float32))  # two elements further
    back = shifted - 2  # arithmetic on a rebuilt pointer
    v = kl.load(shifted, mask=offs + 2 < n, other=-1.0)
    w = kl.load(back)
    kl.store(out_ptr + offs, v * 100.0 + w)
    same = (back == x_ptr + offs) & (shifted > back) & (back.to(kl.int64) == ints)
    kl.store(flags_ptr + offs, same.to(kl.int32))


def test_pointer_int_roundtrip(backend: str) -> None:
    n = 8
    host_x = np.arange(1, n + 1, dtype=np.float32)
    on_host = backend == "opencl"
    x = _place(host_x, on_host)
    out, ints, flags = (_place(np.zeros(s, d), on_host) for s, d in ((n, np.float32), (n + 1, np.int64), (n, np.int32)))
    roundtrip_kernel[(1,)](x, out, ints, flags, n, BLOCK=n)
    got_ints = _numpy(ints)
    if not on_host:  # the kernel's address of a device array is what data_ptr() returned
        assert int(got_ints[0]) == x.data_ptr()
    np.testing.assert_array_equal(got_ints[1:], 4 * np.arange(n))
    shifted = np.where(np.arange(n) + 2 < n, np.roll(host_x, -2), -1.0)
    np.testing.assert_array_equal(_numpy(out), shifted * 100.0 + host_x)
    np.testing.assert_array_equal(_numpy(flags), np.ones(n, np.int32))


@kdsl.jit
def address_of(x_ptr, addr_ptr):
    kl.store(addr_ptr, x_ptr.to(kl.int64))


@kdsl.jit
def load_through(addr_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    p = kl.load(addr_ptr).to(kl.pointer_type(kl.float32))
    kl.store(out_ptr + offs, kl.load(p + offs, mask=offs < n), mask=offs < n)


def test_address_from_one_launch_used_in_the_next(backend: str) -> None:
    """A kernel hands out an argument's address; a later kernel loads through it without x as
    an argument (the array stays alive and, for device arrays, on the device)."""
    if backend == "opencl":
        pytest.skip("opencl: numpy arguments are wrapped per launch, device arrays have no address")
    x = kdsl.tensor(np.arange(5, dtype=np.float32) * 3)
    addr, out = kdsl.zeros(1, np.int64), kdsl.zeros(8, np.float32)
    address_of[(1,)](x, addr)
    load_through[(1,)](addr, out, 5, BLOCK=8)
    np.testing.assert_array_equal(out.numpy()[:5], x.numpy())


def _wild_launch(addr: int, n: int, mask_all: bool = False) -> np.ndarray:
    out = np.zeros(8, np.float32)
    load_through[(1,)](np.array([addr], np.int64), out, 0 if mask_all else n, BLOCK=8)
    return out


def test_interpreter_reports_unreachable_addresses() -> None:
    with kdsl.backend("interpreter"):
        plain = np.arange(4, dtype=np.float32)  # numpy: its address was never handed out
        with pytest.raises(OutOfBoundsError, match="must point into an array argument or into a live array") as info:
            _wild_launch(int(plain.ctypes.data), 4)
        assert "test_int_pointers.py" in str(info.value) and "load" in str(info.value)
        x = kdsl.tensor(np.arange(4, dtype=np.float32))
        addr = x.data_ptr()
        np.testing.assert_array_equal(_wild_launch(addr, 4)[:4], x.numpy())
        with pytest.raises(OutOfBoundsError, match=r"element index 4 relative to the live array at 0x[0-9a-f]+ "):
            _wild_launch(addr, 5)  # one past the end
        np.testing.assert_array_equal(_wild_launch(16, 4, mask_all=True), np.zeros(8))  # masked lanes: no access
        with pytest.raises(OutOfBoundsError, match="address 0x10 is in no array the kernel can reach"):
            _wild_launch(16, 1)
        del x
        gc.collect()
        with pytest.raises(OutOfBoundsError):  # a dead array's address is no longer reachable
            _wild_launch(addr, 4)
