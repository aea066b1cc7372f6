"""numpy arguments of a Vulkan launch: host views and aliasing groups.

A launch copies each numpy argument into device memory and copies back what
the kernel may have written. Arrays whose memory overlaps (the same array
passed twice, ``a[1:]`` and ``a[:-1]``, interleaved strided views) must be
*one* copy: with a copy per parameter a store through one parameter is not
seen through the other, and copying several written (or conservatively
"written") copies back lets a stale one overwrite the result (bug 9 in
docs/RELIABILITY.md). So overlapping arrays form a group with one device
allocation covering their byte span; each parameter points at its own offset
inside it, and the group is copied in and back once -- the same memory model
as the interpreter and the OpenCL runtime (``kdsl/runtime/opencl/hostargs.py``).

Overlap is first tested pairwise with ``np.may_share_memory`` (cheap);
host addresses are looked up only when some spans do overlap, with
``ndarray.ctypes.data`` -- never ``__array_interface__`` (slower, and numpy 2.4
grows an internal heap block on its reads, see docs/RELIABILITY.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kdsl.runtime import hostmem
from kdsl.runtime.hostmem import raw_view

ALIGN = 256  # the allocator's alignment: a group keeps its host address modulo this


def host_view(obj: Any, name: str) -> np.ndarray:
    """A contiguous view of the memory ``obj`` spans (:func:`kdsl.runtime.hostmem.host_view`)."""
    return hostmem.host_view(obj, name, "vulkan")


@dataclass
class HostArg:
    """One numpy pointer argument: where its address goes, its memory, whether the kernel writes it."""

    slot: int  # byte offset of the parameter in the parameter block
    view: np.ndarray  # host_view() of the argument
    written: bool


@dataclass
class Group:
    """Host arguments sharing one device copy.

    ``view`` is the memory copied in (and back when ``written``); ``pad`` is
    where its first byte lands in the allocation (chosen so that every member
    keeps its element alignment); ``members`` are (slot, byte offset from the
    start of ``view``).
    """

    view: np.ndarray
    written: bool
    pad: int = 0
    members: list[tuple[int, int]] = field(default_factory=list)

    @property
    def aliased(self) -> bool:
        """Two parameters reach this memory and the kernel may write it."""
        return self.written and len(self.members) > 1


def group_host_args(args: list[HostArg]) -> list[Group]:
    """Partition ``args`` into groups of overlapping memory (see module doc)."""
    if len(args) == 1 or not _any_overlap(args):  # the common cases: no address look-ups
        return [Group(a.view, a.written, 0, [(a.slot, 0)]) for a in args]
    spans = sorted(((int(a.view.ctypes.data), a) for a in args), key=lambda s: s[0])
    groups: list[Group] = []
    i = 0
    while i < len(spans):
        lo, first = spans[i]
        hi = lo + first.view.nbytes
        members = [spans[i]]
        i += 1
        while i < len(spans) and spans[i][0] < hi:
            hi = max(hi, spans[i][0] + spans[i][1].view.nbytes)
            members.append(spans[i])
            i += 1
        written = any(m.written for _, m in members)
        if len(members) == 1:
            groups.append(Group(first.view, written, 0, [(first.slot, 0)]))
            continue
        pad = _pad(lo, [(m_lo - lo, m.view.itemsize) for m_lo, m in members])
        groups.append(Group(raw_view(lo, hi - lo), written, pad, [(m.slot, m_lo - lo) for m_lo, m in members]))
    return groups


def _any_overlap(args: list[HostArg]) -> bool:
    """Whether two of the views' memory spans overlap.

    ``np.may_share_memory`` compares the spans in C (~0.6 us a pair here)
    where an address look-up costs ~3.5 us per array (``ndarray.ctypes``
    builds Python objects): pairwise is cheaper for the handful of pointer
    parameters kernels have.
    """
    views = [a.view for a in args]
    if len(views) > 8:
        return True  # let the sort decide
    return any(np.may_share_memory(views[i], views[j]) for i in range(len(views)) for j in range(i))


def _pad(lo: int, members: list[tuple[int, int]]) -> int:
    """Offset of the group's first byte in a ``ALIGN``-aligned allocation.

    The host's own placement (``lo % ALIGN``) keeps every member as aligned
    as it is in host memory; when some member is misaligned there (a float32
    view at an odd byte offset), the first offset that aligns every member,
    if one exists; else the host's placement (the shader then sees the same
    misaligned address the caller passed).
    """
    host = lo % ALIGN
    if all((host + off) % size == 0 for off, size in members):
        return host
    for pad in range(ALIGN):
        if all((pad + off) % size == 0 for off, size in members):
            return pad
    return host
