"""The host caching allocator behind cpu/interpreter device arrays (kdsl/runtime/hostpool.py)."""

from __future__ import annotations

import gc
import itertools
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl import ops
from kdsl.runtime.device_array import HOST_DEVICE, DeviceArray, empty_cache
from kdsl.runtime.hostpool import ALIGN, HOST_POOL, PAGE_ALIGN, HostPool, size_class

from . import rt_kernels as K


@pytest.fixture(params=["cpu", "interpreter"])
def host_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable")
    with kdsl.backend(name):
        yield name


def _addr(d: DeviceArray) -> int:
    assert d._host is not None
    return int(d._host.ctypes.data)


def test_size_classes() -> None:
    assert [size_class(n) for n in (0, 1, 64, 65, 4096)] == [64, 64, 64, 128, 4096]
    for n in (4097, 5000, 100_000, 64 << 20, (64 << 20) + 1, 123_456_789):
        c = size_class(n)
        assert n <= c <= n * 1.125 + 1, (n, c)
        assert size_class(c) == c  # classes are fixed points: a freed block serves its own class


def test_reuse_same_address(host_backend: str) -> None:
    a = kdsl.empty((1000, 37), np.float32)
    addr = _addr(a)
    assert addr % ALIGN == 0
    del a
    b = kdsl.empty((1000, 37), np.float32)
    assert _addr(b) == addr
    c = kdsl.empty((37, 1000), np.float32)  # same size class, the first block is taken: a new one
    assert _addr(c) != addr


def test_large_blocks_page_aligned(host_backend: str) -> None:
    a = kdsl.empty((1024, 1024), np.float32)
    assert _addr(a) % PAGE_ALIGN == 0
    for n in (1, 3, 17, 1000):
        assert _addr(kdsl.empty(n, np.int8)) % ALIGN == 0


def test_no_reuse_while_host_view_alive(host_backend: str) -> None:
    a = kdsl.tensor(np.arange(999, dtype=np.float32))
    addr = _addr(a)
    view = a._host[10:20]  # a numpy view of the host memory: it must pin the block
    del a
    gc.collect()
    b = kdsl.empty(999, np.float32)
    assert _addr(b) != addr
    assert np.array_equal(view, np.arange(10, 20, dtype=np.float32))
    b._host[:] = -1  # writing the new array does not touch the view's memory
    assert np.array_equal(view, np.arange(10, 20, dtype=np.float32))
    del view  # the last reference: now the block returns to the pool
    c1, c2 = kdsl.empty(999, np.float32), kdsl.empty(999, np.float32)
    assert addr in (_addr(c1), _addr(c2))


def test_no_reuse_while_buffer_shared(host_backend: str) -> None:
    a = kdsl.tensor(np.arange(24, dtype=np.int32).reshape(4, 6) + 1000)
    addr = _addr(a)
    r = ops._common.reshape(a, (6, 4))  # a second DeviceArray on the same buffer (what ops do)
    del a
    b = kdsl.zeros((4, 6), np.int32)
    assert _addr(b) != addr
    assert np.array_equal(r.numpy(), np.arange(24, dtype=np.int32).reshape(6, 4) + 1000)


def test_numpy_result_is_a_copy_and_does_not_pin(host_backend: str) -> None:
    a = kdsl.tensor(np.full(777, 5, np.int16))
    addr = _addr(a)
    got = a.numpy()
    arr = np.asarray(a)
    del a
    b = kdsl.zeros(777, np.int16)  # reuses the block: .numpy()/asarray results are copies
    assert _addr(b) == addr
    assert np.all(got == 5) and np.all(arr == 5) and np.all(b.numpy() == 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint64])
def test_zeros_from_reused_block(host_backend: str, dtype: Any) -> None:
    shape = (33, 65)
    a = kdsl.tensor(np.full(shape, 7, dtype))
    addr = _addr(a)
    del a
    z = kdsl.zeros(shape, dtype)
    assert _addr(z) == addr
    assert np.array_equal(z.numpy(), np.zeros(shape, dtype))
    del z
    like = kdsl.zeros_like(np.empty(shape, dtype))
    assert _addr(like) == addr and np.array_equal(like.numpy(), np.zeros(shape, dtype))


def test_cap_respected_and_lru_release() -> None:
    kib = 1 << 10
    pool = HostPool(limit=40 * kib)
    blocks = [pool.allocate(16 * kib) for _ in range(4)]
    addrs = [int(b.ctypes.data) for b in blocks]
    assert len(set(addrs)) == 4
    while blocks:  # free in allocation order: blocks 0 and 1 are the least recently freed
        blocks.pop(0)
    s = pool.stats()
    assert s.pooled_bytes == 32 * kib and s.pooled_blocks == 2 and s.in_use_bytes == 0  # the two oldest went
    assert s.pooled_bytes <= pool.limit
    again = pool.allocate(16 * kib)
    assert int(again.ctypes.data) == addrs[3]  # the most recently freed, kept
    big = pool.allocate(64 * kib)  # larger than the cap: never pooled
    del big
    assert pool.stats().pooled_bytes <= pool.limit
    pool.set_limit(0)
    assert pool.stats().pooled_bytes == 0


def test_cap_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KDSL_CPU_POOL_BYTES", "12345")
    assert HostPool().limit == 12345
    monkeypatch.setenv("KDSL_CPU_POOL_BYTES", "0")
    pool = HostPool()
    a = pool.allocate(1000)
    addr = int(a.ctypes.data)
    del a
    assert pool.stats().pooled_bytes == 0
    b = pool.allocate(1000)
    assert pool.stats().hits == 0 and b.nbytes == 1000 and addr % ALIGN == 0
    monkeypatch.setenv("KDSL_CPU_POOL_BYTES", "lots")
    with pytest.raises(ValueError, match="KDSL_CPU_POOL_BYTES"):
        HostPool()


def test_empty_cache(host_backend: str) -> None:
    a = kdsl.empty(50_000, np.float64)
    nbytes = size_class(a.nbytes)
    del a
    assert HOST_POOL.stats().pooled_bytes >= nbytes
    assert empty_cache() >= nbytes
    assert HOST_POOL.stats().pooled_bytes == 0
    assert HOST_DEVICE.pool is HOST_POOL


def test_kernel_results_with_pooled_outputs(host_backend: str) -> None:
    rng = np.random.default_rng(1)
    n = 3000
    x_np = rng.standard_normal(n).astype(np.float32)
    y_np = rng.standard_normal(n).astype(np.float32)
    x, y = kdsl.tensor(x_np), kdsl.tensor(y_np)
    for _ in range(4):
        poison = kdsl.tensor(np.full(n, np.nan, np.float32))  # the next output reuses this dirty block
        addr = _addr(poison)
        del poison
        out = kdsl.empty(n, np.float32)
        assert _addr(out) == addr
        K.add[(kdsl.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
        np.testing.assert_array_equal(out.numpy(), x_np + y_np)
        del out
    if host_backend == "cpu":  # a full op with fresh (pooled) outputs every call
        m = rng.standard_normal((64, 300)).astype(np.float32)
        dm = kdsl.tensor(m)
        ref = ops.softmax_ref(m)
        kept = []
        for _ in range(5):
            r = ops.softmax(dm)
            np.testing.assert_allclose(r.numpy(), ref, rtol=1e-5, atol=1e-6)
            kept.append(r.numpy())
        for k in kept:
            np.testing.assert_allclose(k, ref, rtol=1e-5, atol=1e-6)


def test_threads_allocate_concurrently() -> None:
    pool = HostPool(limit=1 << 20)
    errors: list[str] = []
    live: list[list[tuple[int, int, np.ndarray[Any, Any]]]] = [[] for _ in range(4)]

    def work(tid: int) -> None:
        rng = np.random.default_rng(tid)
        mine = live[tid]
        for i in range(400):
            n = int(rng.integers(1, 20_000))
            buf = pool.allocate(n)
            buf[:] = (tid * 31 + i) % 251
            mine.append((n, (tid * 31 + i) % 251, buf))
            if len(mine) > 6:
                k = int(rng.integers(0, len(mine)))
                n_k, v_k, b_k = mine.pop(k)
                if b_k.nbytes != n_k or not np.all(b_k == v_k):
                    errors.append(f"thread {tid}: block overwritten while alive")
            if i % 50 == 0:  # finalisers run while other threads allocate; young generation only:
                gc.collect(0)  # a full collection in a long test session's heap took ~2 s each

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    spans = sorted((int(b.ctypes.data), int(b.ctypes.data) + b.nbytes) for m in live for _, _, b in m)
    assert all(hi <= lo2 for (_, hi), (lo2, _) in itertools.pairwise(spans))  # live blocks disjoint
    for m in live:
        for _, v, b in m:
            assert np.all(b == v)
    s = pool.stats()
    assert s.hits > 0 and s.pooled_bytes <= pool.limit
    live.clear()
    del m, b
    gc.collect()
    s = pool.stats()
    assert s.in_use_bytes == 0 and s.pooled_bytes <= pool.limit
