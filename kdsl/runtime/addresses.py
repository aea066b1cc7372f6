"""Host arrays whose address the host handed out: what the interpreter may reach through an integer.

Triton's grouped GEMM passes a device array of matrix addresses (``A.data_ptr()``) and the kernel
turns each back into a pointer (``kl.load(ptrs + g).to(kl.pointer_type(kl.float16))``). The
``cpu`` backend simply dereferences such an address; the interpreter checks every access against
the memory it knows of, so it needs to know which arrays an address may legitimately fall in.
Those are the kernel's array arguments and the arrays recorded here: every call to
``DeviceArray.data_ptr()`` (and ``kdsl.reinterpret(...).data_ptr()``) on host memory records the
array's numpy view. torch's ``Tensor.data_ptr()`` cannot be observed, so a live CPU torch tensor's
storage is reachable too (:class:`LaunchReach` looks it up, only for addresses that fell in no
known array): Triton's tutorial 08 host code builds its address arrays from torch tensors.

The book holds weak references only: an array that died (whose memory may already be reused) is
no longer reachable, so an address kept past its array's lifetime is an out-of-bounds error in the
interpreter instead of a read of someone else's memory. It is process-wide because addresses are.
"""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from typing import Any

import numpy as np


class AddressBook:
    """Live host arrays, by identity, whose addresses were handed out (weakly held)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref[np.ndarray[Any, Any]]] = {}
        self._lock = threading.Lock()

    def record(self, arr: np.ndarray[Any, Any]) -> int:
        """Remember ``arr`` while it lives; return the address of its element 0."""
        key = id(arr)
        with self._lock:
            if key not in self._refs:
                self._refs[key] = weakref.ref(arr, self._forget(key))
        return int(arr.ctypes.data)

    def _forget(self, key: int) -> Any:
        def drop(ref: weakref.ref[np.ndarray[Any, Any]]) -> None:
            # no lock: the collector may run this inside record(); dict ops are atomic
            if self._refs.get(key) is ref:
                del self._refs[key]

        return drop

    def live(self) -> list[np.ndarray[Any, Any]]:
        """The recorded arrays still alive (strong references: they stay alive while used)."""
        with self._lock:
            refs = list(self._refs.values())
        return [a for a in (r() for r in refs) if a is not None]


HOST_ADDRESSES = AddressBook()
"""The process's book of handed-out host addresses (see the module doc)."""



class LaunchReach:
    """What one launch's integer-made addresses may fall in: ``reach(addrs, itemsize)`` gives every
    recorded live array plus byte views of the live CPU torch storages holding some of ``addrs``.

    The torch storages come from :data:`TORCH_STORAGES`, once per launch and only when an address
    fell in no known array; a dead tensor is not found, so its stale address stays an error. The
    views keep their storages alive while the launch holds them."""

    def __init__(self) -> None:
        self._storages: list[tuple[int, int, Any]] | None = None

    def __call__(self, addrs: np.ndarray[Any, Any], itemsize: int) -> list[np.ndarray[Any, Any]]:
        return HOST_ADDRESSES.live() + self._torch_holding(addrs, itemsize)

    def _torch_holding(self, addrs: np.ndarray[Any, Any], itemsize: int) -> list[np.ndarray[Any, Any]]:
        torch = sys.modules.get("torch")
        if torch is None or addrs.size == 0:
            return []
        if self._storages is None:
            self._storages = TORCH_STORAGES.covering(torch, addrs, itemsize)
        return [_byte_view(torch, st, n) for lo, n, st in self._storages if _holds(lo, n, addrs, itemsize).any()]


def _holds(lo: int, n: int, addrs: np.ndarray[Any, Any], itemsize: int) -> np.ndarray[Any, Any]:
    return (addrs >= lo) & (addrs + itemsize <= lo + n)  # type: ignore[no-any-return]


class TorchStorages:
    """The live CPU torch storages, found by a scan of the objects the garbage collector tracks,
    remembered through weak references to tensors holding them.

    Why remembered: a scan costs time proportional to the whole heap (a second and more in a
    large process), and an autotuned interpreter launch repeats for every timing run; later
    launches reuse what the last scan found while those tensors live and still hold the same
    storage, and scan again only for an address none of them holds."""

    def __init__(self) -> None:
        self._seen: list[tuple[int, int, weakref.ref[Any]]] = []
        self._lock = threading.Lock()

    def covering(self, torch: Any, addrs: np.ndarray[Any, Any], itemsize: int) -> list[tuple[int, int, Any]]:
        """(address, bytes, storage) of live storages: the remembered ones when they hold every
        address of ``addrs``, else all of them, found afresh."""
        with self._lock:
            seen = list(self._seen)
        known = _alive(seen)
        covered = np.zeros(addrs.shape, bool)
        for lo, n, _ in known:
            covered |= _holds(lo, n, addrs, itemsize)
        if covered.all():
            return known
        found, refs = _scan(torch)
        with self._lock:
            self._seen = refs
        return found


def _alive(seen: list[tuple[int, int, weakref.ref[Any]]]) -> list[tuple[int, int, Any]]:
    out = []
    for lo, n, ref in seen:
        t = ref()
        if t is None:
            continue
        st = t.untyped_storage()
        if int(st.data_ptr()) == lo and int(st.nbytes()) == n:  # not resized or re-pointed since
            out.append((lo, n, st))
    return out


def _scan(torch: Any) -> tuple[list[tuple[int, int, Any]], list[tuple[int, int, weakref.ref[Any]]]]:
    """Every live CPU torch storage, each once, and a weak reference to a tensor holding it."""
    out: dict[int, tuple[int, int, Any]] = {}
    refs: list[tuple[int, int, weakref.ref[Any]]] = []
    tensor = torch.Tensor
    for obj in gc.get_objects():
        if not issubclass(type(obj), tensor):
            continue
        try:
            if obj.device.type != "cpu" or obj.layout != torch.strided:
                continue
            st = obj.untyped_storage()
            lo, n = int(st.data_ptr()), int(st.nbytes())
        except (RuntimeError, TypeError, NotImplementedError):  # meta, fake or storage-less tensors
            continue
        if n and lo not in out:
            out[lo] = (lo, n, st)
            refs.append((lo, n, weakref.ref(obj)))
    return list(out.values()), refs


def _byte_view(torch: Any, storage: Any, n: int) -> np.ndarray[Any, Any]:
    with torch.no_grad():
        flat = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (n,), (1,))
    view: np.ndarray[Any, Any] = flat.numpy()
    return view


TORCH_STORAGES = TorchStorages()
"""The process's remembered torch storages (a cache: see :class:`TorchStorages`)."""
