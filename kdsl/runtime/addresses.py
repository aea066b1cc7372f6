"""Host arrays whose address the host handed out: what the interpreter may reach through an integer.

Triton's grouped GEMM passes a device array of matrix addresses (``A.data_ptr()``) and the kernel
turns each back into a pointer (``kl.load(ptrs + g).to(kl.pointer_type(kl.float16))``). The
``cpu`` backend simply dereferences such an address; the interpreter checks every access against
the memory it knows of, so it needs to know which arrays an address may legitimately fall in.
Those are the kernel's array arguments and the arrays recorded here: every call to
``DeviceArray.data_ptr()`` (and ``kdsl.reinterpret(...).data_ptr()``) on host memory records the
array's numpy view.

The book holds weak references only: an array that died (whose memory may already be reused) is
no longer reachable, so an address kept past its array's lifetime is an out-of-bounds error in the
interpreter instead of a read of someone else's memory. It is process-wide because addresses are.
"""

from __future__ import annotations

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
