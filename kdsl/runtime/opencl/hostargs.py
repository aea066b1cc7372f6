"""numpy arguments of an OpenCL launch: host views, aliasing groups, zero-copy buffers.

A numpy argument is wrapped in a buffer for the launch (``USE_HOST_PTR``:
zero-copy where the device shares host memory, as PoCL does; a copy in
elsewhere) and, if the kernel may write through it, made visible again
afterwards (a blocking map/unmap on shared memory, a copy out elsewhere).
Arrays whose memory overlaps share one buffer so the kernel sees one memory,
as the interpreter does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.runtime import hostmem
from kdsl.runtime.hostmem import raw_view

if TYPE_CHECKING:
    from kdsl.runtime.opencl.device import Device


def host_view(obj: Any, name: str) -> np.ndarray:
    """A contiguous view of the memory ``obj`` spans (:func:`kdsl.runtime.hostmem.host_view`)."""
    return hostmem.host_view(obj, name, "opencl")


def bind_arrays(
    dev: Device, arrays: list[tuple[int, np.ndarray, bool]], values: list[Any]
) -> tuple[list[tuple[Any, np.ndarray]], bool]:
    """Fill ``values[slot]``/``values[slot + 1]`` with (buffer, byte offset) for each array.

    Returns the (buffer, host view) pairs to write back, and whether some
    written memory is reachable through two parameters.
    """
    if len(arrays) == 1:  # the common single-array case without sorting
        slot, host, written = arrays[0]
        buf = dev.wrap_host(host)
        values[slot] = buf
        values[slot + 1] = np.uint64(0)
        return ([(buf, host)] if written else []), False
    aliased = False
    spans = []
    for slot, host, written in arrays:
        lo = int(host.ctypes.data)  # not __array_interface__ (slower; numpy 2.4 grows a heap block on it)
        spans.append((lo, lo + host.nbytes, slot, host, written))
    spans.sort(key=lambda s: s[0])
    back: list[tuple[Any, np.ndarray]] = []
    i = 0
    while i < len(spans):
        lo, hi, _, host, written = spans[i]
        members = [spans[i]]
        j = i + 1
        while j < len(spans) and spans[j][0] < hi:
            hi = max(hi, spans[j][1])
            written = written or spans[j][4]
            members.append(spans[j])
            j += 1
        aliased = aliased or (written and len(members) > 1)
        view = host if len(members) == 1 else raw_view(lo, hi - lo)
        buf = dev.wrap_host(view)
        for m_lo, _, slot, _, _ in members:
            values[slot] = buf
            values[slot + 1] = np.uint64(m_lo - lo)
        if written:
            back.append((buf, view))
        i = j
    return back, aliased
