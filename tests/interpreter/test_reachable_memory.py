"""The interpreter's memory beyond the arguments: reachable arrays adopted on a miss.

``Memory(reachable=...)`` is given to kernels that make pointers from integers; an address no
argument holds is looked up among those arrays, which then join the launch's memory.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import KernelRuntimeError, OutOfBoundsError
from kdsl.interpreter.memory import AccessSite, Memory
from kdsl.runtime.addresses import AddressBook


def _site(n: int) -> AccessSite:
    return AccessSite("load", None, "k", (1, n), lambda row: (row, 0, 0))


def test_a_miss_adopts_the_reachable_array_holding_it() -> None:
    arg = np.zeros(4, np.float32)
    other = np.arange(6, dtype=np.float32)
    unused = np.ones(3, np.float32)
    mem = Memory([("x", arg)], reachable=lambda addrs, isz: [unused, other])
    addrs = other.ctypes.data + 4 * np.array([5, 0, 2], np.int64)
    np.testing.assert_array_equal(mem.gather(addrs, np.dtype(np.float32), _site(3)), [5.0, 0.0, 2.0])
    assert [r.name for r in mem.regions] == ["x", None]  # only the array holding the address joined
    mem.scatter(addrs[:1], np.array([9.0], np.float32), _site(1))
    assert other[5] == 9.0


def test_a_read_only_reachable_array_is_not_written() -> None:
    ro = np.arange(4, dtype=np.int32)
    ro.flags.writeable = False
    mem = Memory([], reachable=lambda addrs, isz: [ro])
    with pytest.raises(KernelRuntimeError, match="read-only"):
        mem.scatter(np.array([ro.ctypes.data], np.int64), np.array([1], np.int32), _site(1))


def test_without_reachable_arrays_a_miss_is_out_of_bounds() -> None:
    arg = np.zeros(4, np.float32)
    other = np.arange(6, dtype=np.float32)
    mem = Memory([("x", arg)])
    with pytest.raises(OutOfBoundsError, match="relative to argument 'x'"):
        mem.gather(np.array([other.ctypes.data], np.int64), np.dtype(np.float32), _site(1))


def test_address_book_forgets_dead_arrays() -> None:
    book = AddressBook()
    a = np.zeros(3)
    assert book.record(a) == a.ctypes.data and book.record(a) == a.ctypes.data
    assert [id(x) for x in book.live()] == [id(a)]
    del a
    assert book.live() == []


@kdsl.jit
def _far_load(x_ptr, out_ptr, delta):
    kl.store(out_ptr, kl.load(x_ptr + delta))


def test_plain_pointer_arithmetic_does_not_reach_recorded_arrays() -> None:
    """Only kernels that make pointers from integers reach beyond their arguments: ``x + delta``
    landing in another (recorded) array is still out of bounds, as before."""
    with kdsl.backend("interpreter"):
        x, out = kdsl.zeros(4), kdsl.zeros(1)
        other = kdsl.tensor(np.arange(4, dtype=np.float32))
        delta = (other.data_ptr() - x.data_ptr()) // 4
        # the report names the argument nearest the address, which depends on the allocator
        with pytest.raises(OutOfBoundsError, match=r"relative to argument '(x_ptr|out_ptr)'"):
            _far_load[(1,)](x, out, delta)


def test_torch_storages_are_remembered_between_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A heap scan finds a tensor's storage once; later launches reuse it while the tensor lives
    and holds the same storage, and scan again for an address nothing remembered holds."""
    torch = pytest.importorskip("torch", reason="torch storages are only looked up when torch is imported")
    from kdsl.runtime import addresses

    scans = []
    real = addresses._scan
    monkeypatch.setattr(addresses, "_scan", lambda t: scans.append(1) or real(t))
    book = addresses.TorchStorages()
    a = torch.arange(8, dtype=torch.float32)
    at = np.array([a.data_ptr() + 4], np.int64)
    first = book.covering(torch, at, 4)
    assert len(scans) == 1 and any(lo == a.data_ptr() for lo, _, _ in first)
    again = book.covering(torch, at, 4)
    assert len(scans) == 1 and any(lo == a.data_ptr() for lo, _, _ in again)
    b = torch.ones(3)  # born after the scan: found by a second one
    assert any(lo == b.data_ptr() for lo, _, _ in book.covering(torch, np.array([b.data_ptr()], np.int64), 4))
    assert len(scans) == 2
    old = a.data_ptr()
    a.set_(torch.zeros(2).untyped_storage())  # a now holds another storage: its old entry is stale
    assert not any(lo == old for lo, _, _ in addresses._alive(book._seen))
