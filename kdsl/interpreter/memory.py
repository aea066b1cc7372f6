"""Global memory of one launch: real addresses, bounds checks, gathers, scatters.

Each numpy array argument is a *region*: the byte extent it spans
(``np.byte_bounds``, so non-contiguous views and negative strides are covered).
Overlapping regions (views of one buffer) merge into *segments*; each segment
is read and written through a ``uint8`` view of its bytes, reinterpreted as the
accessed element type. A pointer value is a plain ``int64`` address, so any
pointer arithmetic a kernel does (addptr, casts to integers and back,
bitcasts to other pointees) works exactly as on a device.

Every access checks that ``[addr, addr + itemsize)`` lies inside one segment
and that ``addr`` is aligned to the element size; the failure names the
argument, the element index within it and the program (see ``AccessSite``).

Pointers a kernel makes from integers (Triton's grouped GEMM loads matrix
addresses from an array and casts them with ``.to(kl.pointer_type(...))``)
may point into arrays that are not arguments. An address that no region holds
is looked up among the *reachable* arrays the launch was given (the live host
arrays whose address ``DeviceArray.data_ptr()`` handed out:
``kdsl.runtime.addresses``); an array holding it joins the launch's regions
(kept alive until the launch ends) and the access is checked against it like
an argument. Anything else is out of bounds, as before.
"""

from __future__ import annotations

import bisect
import ctypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kdsl.errors import KernelRuntimeError, OutOfBoundsError
from kdsl.interpreter.values import Array


@dataclass
class Region:
    """One array's memory: an argument's, or a reachable array's (``name`` is then None)."""

    name: str | None
    array: Array
    lo: int  # first byte
    hi: int  # one past the last byte
    first: int  # address of element 0 (what the kernel receives)

    @classmethod
    def of(cls, name: str | None, arr: Array) -> Region:
        lo, hi = _byte_bounds(arr)
        return cls(name, arr, lo, hi, int(arr.ctypes.data))

    def describe(self) -> str:
        a = self.array
        what = f"argument '{self.name}'" if self.name is not None else f"the live array at {self.first:#x}"
        return f"{what} ({a.dtype} array of shape {a.shape})"


@dataclass
class Segment:
    """A maximal run of bytes covered by (possibly overlapping) regions."""

    lo: int
    hi: int
    raw: Array  # uint8 view of [lo, hi)
    writeable: bool
    aligned: bool
    typed: dict[np.dtype[Any], Array] = field(default_factory=dict)

    def view(self, dtype: np.dtype[Any]) -> Array:
        v = self.typed.get(dtype)
        if v is None:
            n = (self.hi - self.lo) // dtype.itemsize * dtype.itemsize
            v = self.raw[:n].view(dtype)
            self.typed[dtype] = v
        return v


@dataclass
class AccessSite:
    """Who is accessing memory, for error messages.

    ``shape`` is the (batch, *tile) shape the flat address list came from and
    ``program_ids`` maps a batch row to its (x, y, z) program id.
    """

    what: str
    loc: Any
    kernel: str
    shape: tuple[int, ...]
    program_ids: Callable[[int], tuple[int, int, int]]
    lanes: Array | None = None  # flat position in ``shape`` of each address, if compressed


def _byte_view(lo: int, n: int) -> Array:
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    buf = (ctypes.c_uint8 * n).from_address(lo)
    return np.ctypeslib.as_array(buf)


class Memory:
    """The regions of one launch and the segments they form."""

    def __init__(
        self,
        arrays: Sequence[tuple[str, Array]],
        check_alignment: bool = True,
        reachable: Callable[[Array, int], Sequence[Array]] | None = None,
    ) -> None:
        """``reachable(addrs, itemsize)`` lists the arrays beyond the arguments that the addresses
        ``addrs``, made from integers, may legitimately fall in; None when the kernel makes no
        such pointers."""
        self.regions = [Region.of(name, arr) for name, arr in arrays]
        self._want_alignment = check_alignment
        self._reachable = reachable
        self._index()

    def _index(self) -> None:
        self.segments = self._build_segments()
        self.starts = [s.lo for s in self.segments]
        self._starts_np = np.array(self.starts, dtype=np.int64)
        self._ends_np = np.array([s.hi for s in self.segments], dtype=np.int64)
        self.check_alignment = self._want_alignment and all(s.aligned for s in self.segments)

    def _adopt(self, addrs: Array, isz: int) -> bool:
        """Add the reachable arrays holding some of ``addrs`` as regions; True if any was added."""
        if self._reachable is None:
            return False
        known = {id(r.array) for r in self.regions}
        found = []
        for arr in self._reachable(addrs, isz):
            if id(arr) in known:
                continue
            reg = Region.of(None, arr)
            if ((addrs >= reg.lo) & (addrs + isz <= reg.hi)).any():
                found.append(reg)
        self.regions += found
        if found:
            self._index()
        return bool(found)

    def _build_segments(self) -> list[Segment]:
        spans = sorted(((r.lo, r.hi, r) for r in self.regions if r.hi > r.lo), key=lambda s: (s[0], s[1]))
        groups: list[tuple[int, int, list[Region]]] = []
        for lo, hi, reg in spans:
            if groups and lo < groups[-1][1]:
                glo, ghi, members = groups[-1]
                groups[-1] = (glo, max(ghi, hi), [*members, reg])
            else:
                groups.append((lo, hi, [reg]))
        segs = []
        for lo, hi, members in groups:
            writeable = all(m.array.flags.writeable for m in members)
            aligned = all(m.array.flags.aligned for m in members)
            segs.append(Segment(lo, hi, _byte_view(lo, hi - lo), writeable, aligned))
        return segs

    # --- lookup -------------------------------------------------------------------
    def _contiguous_run(self, addrs: Array, isz: int) -> tuple[Segment, int] | None:
        """(segment, element index) when ``addrs`` are consecutive elements of
        one segment, aligned and in bounds -- the common case (a block of a
        contiguous array) served by a slice instead of a gather."""
        n = addrs.size
        a0 = int(addrs[0])
        last = int(addrs[-1])
        if n < 16 or last - a0 != (n - 1) * isz or isz & (isz - 1):
            return None
        i = bisect.bisect_right(self.starts, a0) - 1
        if i < 0:
            return None
        seg = self.segments[i]
        rel = a0 - seg.lo
        if rel % isz or seg.lo % isz or last + isz > seg.hi:
            return None
        if not np.array_equal(addrs, np.arange(a0, a0 + n * isz, isz, dtype=np.int64)):
            return None
        return seg, rel // isz

    def _segment_holding(self, addrs: Array, isz: int) -> Segment | None:
        """The segment containing every ``[addr, addr + isz)``, if one does.

        One pass: offsets from the first address's segment, read as unsigned,
        so addresses below the segment become huge and fail the same test."""
        i = bisect.bisect_right(self.starts, int(addrs[0])) - 1
        if i < 0:
            return None
        seg = self.segments[i]
        span = seg.hi - seg.lo - isz
        if span < 0:
            return None
        top = int((addrs - seg.lo).view(np.uint64).max())
        return seg if top <= span else None

    def _locate(self, addrs: Array, itemsize: int) -> Array:
        """Segment index per address, -1 where out of bounds."""
        idx = np.searchsorted(self._starts_np, addrs, side="right") - 1
        safe = np.maximum(idx, 0)
        ok = (idx >= 0) & (addrs + itemsize <= self._ends_np[safe]) if len(self.segments) else idx < -1
        return np.where(ok, idx, -1)

    def _find(self, addrs: Array, isz: int, site: AccessSite) -> Array:
        """Segment index per address, adopting reachable arrays for the misses; raises if some
        address is still in no segment."""
        idx = self._locate(addrs, isz)
        miss = idx < 0
        if miss.any() and self._adopt(addrs[miss], isz):
            idx = self._locate(addrs, isz)
        self._check_found(addrs, idx, site)
        return idx

    # --- access -------------------------------------------------------------------
    def gather(self, addrs: Array, dtype: np.dtype[Any], site: AccessSite) -> Array:
        """Read one ``dtype`` element at each address (1-D ``addrs``)."""
        n = addrs.size
        if n == 0:
            return np.zeros(0, dtype=dtype)
        isz = dtype.itemsize
        run = self._contiguous_run(addrs, isz)
        if run is not None:
            run_seg, start = run
            return run_seg.view(dtype)[start : start + n].copy()
        seg = self._segment_holding(addrs, isz)
        if seg is None:
            idx = self._find(addrs, isz, site)
        self._check_aligned(addrs, isz, site)
        if seg is not None:
            return self._gather_in(seg, addrs, dtype)
        out = np.empty(n, dtype=dtype)
        for s in np.unique(idx):
            sel = idx == s
            out[sel] = self._gather_in(self.segments[int(s)], addrs[sel], dtype)
        return out

    def _gather_in(self, seg: Segment, addrs: Array, dtype: np.dtype[Any]) -> Array:
        isz = dtype.itemsize
        off = addrs - seg.lo
        out: Array
        if isz == 1:
            out = seg.raw[off].view(dtype)
        elif seg.lo % isz == 0:
            out = seg.view(dtype)[off >> (isz.bit_length() - 1)]
        else:
            out = seg.raw[off[:, None] + np.arange(isz)].view(dtype).reshape(-1)
        return out

    def scatter(self, addrs: Array, values: Array, site: AccessSite) -> None:
        """Write ``values[i]`` at ``addrs[i]``; later lanes win on duplicates."""
        if addrs.size == 0:
            return
        isz = values.dtype.itemsize
        run = self._contiguous_run(addrs, isz)
        if run is not None:
            run_seg, start = run
            if not run_seg.writeable:
                raise KernelRuntimeError(f"{site.what} in kernel '{site.kernel}' writes to a read-only array", site.loc)
            run_seg.view(values.dtype)[start : start + addrs.size] = values
            return
        seg = self._segment_holding(addrs, isz)
        if seg is None:
            idx = self._find(addrs, isz, site)
        self._check_aligned(addrs, isz, site)
        if seg is not None:
            self._scatter_in(seg, addrs, values, site)
            return
        for s in np.unique(idx):
            sel = idx == s
            self._scatter_in(self.segments[int(s)], addrs[sel], values[sel], site)

    def _scatter_in(self, seg: Segment, addrs: Array, values: Array, site: AccessSite) -> None:
        if not seg.writeable:
            raise KernelRuntimeError(f"{site.what} in kernel '{site.kernel}' writes to a read-only array", site.loc)
        isz = values.dtype.itemsize
        off = addrs - seg.lo
        if isz == 1:
            seg.raw[off] = values.view(np.uint8)
            return
        if seg.lo % isz == 0:
            seg.view(values.dtype)[off >> (isz.bit_length() - 1)] = values
            return
        byte_idx = off[:, None] + np.arange(isz)
        seg.raw[byte_idx] = np.ascontiguousarray(values).view(np.uint8).reshape(-1, isz)

    # --- errors -------------------------------------------------------------------
    def _check_aligned(self, addrs: Array, isz: int, site: AccessSite) -> None:
        if isz == 1 or not self.check_alignment or isz & (isz - 1):
            return
        bad = (addrs & (isz - 1)) != 0
        if bad.any():
            i = int(np.argmax(bad))
            raise KernelRuntimeError(
                f"misaligned {site.what} in kernel '{site.kernel}': address {int(addrs[i]):#x} is not a multiple "
                f"of {isz} ({self._where(int(addrs[i]), i, site)})",
                site.loc,
            )

    def _check_found(self, addrs: Array, idx: Array, site: AccessSite) -> None:
        bad = idx < 0
        if bad.any():
            i = int(np.argmax(bad))
            raise self.out_of_bounds(int(addrs[i]), i, site)

    def out_of_bounds(self, addr: int, flat_index: int, site: AccessSite) -> OutOfBoundsError:
        return OutOfBoundsError(
            f"out-of-bounds {site.what} in kernel '{site.kernel}': {self._where(addr, flat_index, site)}", site.loc
        )

    def _where(self, addr: int, flat_index: int, site: AccessSite) -> str:
        if site.lanes is not None:
            flat_index = int(site.lanes[flat_index])
        pos = np.unravel_index(flat_index, site.shape) if site.shape else (0,)
        pid = site.program_ids(int(pos[0]))
        lane = tuple(int(p) for p in pos[1:])
        where = f"program id {pid}" + (f", tile index {lane}" if lane else "")
        reg = self.nearest_region(addr)
        if reg is None:
            return f"address {addr:#x} is not in any array argument ({where}){self._reach_hint()}"
        if self._reachable is not None and _distance(reg, addr) > reg.hi - reg.lo:  # a wild integer
            return (
                f"address {addr:#x} is in no array the kernel can reach (the nearest, {reg.describe()}, is "
                f"{_distance(reg, addr)} bytes away) ({where}){self._reach_hint()}"
            )
        isz = reg.array.itemsize
        rel, rem = divmod(addr - reg.first, isz)
        elem = f"element index {rel}" if rem == 0 else f"byte offset {addr - reg.first}"
        first_ok = (reg.lo - reg.first) // isz
        last_ok = (reg.hi - reg.first) // isz - 1
        inside = reg.lo <= addr < reg.hi
        rel_txt = "inside" if inside else "outside"
        return (
            f"address {addr:#x} is {elem} relative to {reg.describe()} ({rel_txt} its valid element range "
            f"[{first_ok}, {last_ok}]) ({where}){'' if inside else self._reach_hint()}"
        )

    def _reach_hint(self) -> str:
        if self._reachable is None:
            return ""
        return (
            "; a pointer made from an integer must point into an array argument or into a live array whose "
            "address was handed out (by DeviceArray.data_ptr(), or by a kernel casting a pointer argument to an integer), "
            "or into a live CPU torch tensor"
        )

    def nearest_region(self, addr: int) -> Region | None:
        """The region (argument, adopted or reachable array) nearest to ``addr``, for messages."""
        candidates = list(self.regions)
        if self._reachable is not None:
            known = {id(r.array) for r in candidates}
            probe = np.array([addr], dtype=np.int64)
            candidates += [Region.of(None, a) for a in self._reachable(probe, 1) if id(a) not in known]
        return min(candidates, key=lambda r: _distance(r, addr), default=None)


def _distance(r: Region, addr: int) -> int:
    """Bytes from ``r`` to ``addr`` (0 inside)."""
    return 0 if r.lo <= addr < r.hi else (r.lo - addr if addr < r.lo else addr - r.hi + 1)


def _byte_bounds(arr: Array) -> tuple[int, int]:
    if arr.size == 0:
        p = int(arr.ctypes.data)
        return p, p
    low = high = int(arr.ctypes.data)
    for n, s in zip(arr.shape, arr.strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high + arr.itemsize
