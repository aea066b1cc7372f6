"""The generated warm-launch function of one OpenCL kernel specialisation.

A launch whose pointer arguments are all device arrays (the hot, asynchronous
case) runs one generated function: unpack the arguments, check their types
with ``is``, check that no written buffer is also passed elsewhere, set every
buffer argument with one ``_set_arg_multi`` call and every scalar (byte offsets
included) with one ``_set_arg_buf_pack_multi`` call, and enqueue -- no loops,
no numpy scalar objects, no pyopencl argument introspection. The two setters
are the calls pyopencl's own generated invokers use. Anything else (numpy
arguments, aliasing, bad values, kernels with asserts or prints) falls back to
the kernel's fully checked path.

The synchronous numpy case (every pointer argument a C-contiguous numpy array,
no written array overlapping another argument) has its own generated branch:
wrap each array zero-copy (``Device.wrap_host``), set arguments, enqueue, then
make written arrays visible (``Device.write_back``: a blocking map/unmap on
shared memory) or, if nothing is written, wait for the queue.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyopencl._cl as _cl

from kdsl.ir.types import ScalarType
from kdsl.runtime.device_array import DeviceArray

Launch = Callable[[tuple[int, int, int], Sequence[Any]], None]

# what pyopencl's _set_arg_buf_pack_multi packs natively (native sizes: 'l' is 64-bit on LP64)
_PACKABLE = set("bBhHiIlLfd")


def pack_char(t: ScalarType) -> str | None:
    """The struct character a scalar parameter is passed as (matches ``_scalar_binder``)."""
    if t.name == "i1":
        return "B"
    if t.name in ("f16", "bf16"):
        return "f"
    ch: str = str(t.np_dtype.char)
    ch = {"q": "l", "Q": "L"}.get(ch, ch)
    if ch in ("l", "L") and struct.calcsize("l") != 8:
        return None
    return ch if ch in _PACKABLE else None


def make_fast_launch(
    kernel: Any,
    device: Any,
    num_threads: int,
    params: Sequence[tuple[str, bool, Callable[[Any], Any] | None, ScalarType | None]],
    slow: Launch,
    last: list[Any],
) -> Launch | None:
    """Generate the launch function, or None if some parameter cannot take the fast path.

    ``last[0]`` holds the arguments the kernel object currently has set by the
    device-array branch (buffers, offsets, non-float scalars): a launch with
    the same ones only enqueues (OpenCL kernel arguments persist between
    enqueues). Float scalars are always set again (``-0.0 == 0.0``). Whoever
    else sets this kernel's arguments must reset ``last[0] = None``. The
    buffers in ``last[0]`` stay referenced until the next launch with other
    arguments (pooled memory is kept by the pool anyway).
    """
    if not hasattr(kernel, "_set_arg_multi") or not hasattr(kernel, "_set_arg_buf_pack_multi"):
        return None
    ns: dict[str, Any] = {
        "_DA": DeviceArray, "_slow": slow, "_setm": kernel._set_arg_multi,
        "_pack": kernel._set_arg_buf_pack_multi, "_enq": _cl.enqueue_nd_range_kernel,
        "_q": device.queue, "_k": kernel, "_L": (num_threads, 1, 1),
        "_ND": np.ndarray, "_may": np.may_share_memory, "_wrap": device.wrap_host, "_back": device.write_back,
        "_fin": device.queue.finish, "_last": last,
    }
    names = [f"a{i}" for i in range(len(params))]
    ptrs: list[tuple[int, bool]] = []
    bufs: list[str] = []  # (slot, buffer variable) pairs for _set_arg_multi
    packs: list[str] = []  # (slot, struct char, value) triples for _set_arg_buf_pack_multi
    float_packs: list[str] = []  # the float scalars among them
    key: list[str] = []  # what identifies the arguments set by the device-array branch
    slot = 0
    for i, (_, written, bind, stype) in enumerate(params):
        if bind is None:
            ptrs.append((i, written))
            bufs += [str(slot), f"b{i}"]
            packs += [str(slot + 1), "b'L'", f"@OFF{i}@"]
            key += [f"b{i}", f"a{i}.offset"]
            slot += 2
            continue
        assert stype is not None
        ch = pack_char(stype)
        if ch is None:
            return None
        expr = f"a{i}"
        if stype.name in ("i1", "f16", "bf16"):
            ns[f"_cv{i}"] = bind
            expr = f"_cv{i}(a{i})"
        packs += [str(slot), repr(ch.encode()), expr]
        if ch in "fd":
            float_packs += [str(slot), repr(ch.encode()), expr]
        else:
            key.append(f"a{i}")
        slot += 1
    lines = [
        "def _launch(grid, args):",
        "    try:",
        f"        {', '.join(names)}{',' if len(names) == 1 else ''} = args",
        "    except ValueError:",
        "        return _slow(grid, args)",
    ]
    enqueue = f"    _enq(_q, _k, (grid[0] * {num_threads}, grid[1], grid[2]), _L, None, None, False, True)"

    def pack_lines(device_arrays: bool, which: list[str] = packs) -> list[str]:
        if not which:
            return []
        items = ", ".join(which)
        for i, _ in ptrs:
            items = items.replace(f"@OFF{i}@", f"a{i}.offset" if device_arrays else "0")
        return [
            "    try:",
            f"        _pack(({items},))",
            "    except (RuntimeError, TypeError, ValueError, OverflowError):",
            "        return _slow(grid, args)",
        ]
    if not ptrs:
        lines += ["    _last[0] = None", *pack_lines(False), enqueue, "    return None"]
        return _finish(lines, ns)
    # device arrays: asynchronous
    lines.append(f"    if {' and '.join(f'type(a{i}) is _DA' for i, _ in ptrs)}:")
    body = ["    " + "; ".join(f"b{i} = a{i}.buffer" for i, _ in ptrs)]
    alias = [f"b{w} is b{o}" for w, wr in ptrs if wr for o, _ in ptrs if o != w]
    if alias:
        body += [f"    if {' or '.join(alias)}:", "        return _slow(grid, args)"]
    body += [f"    key = ({', '.join(key)},)", "    if key != _last[0]:"]
    body += ["    " + ln for ln in [*pack_lines(True), f"    _setm(({', '.join(bufs)},))", "    _last[0] = key"]]
    if float_packs:
        body += ["    else:", *("    " + ln for ln in pack_lines(True, float_packs))]
    body += [enqueue, "    return None"]
    lines += ["    " + ln for ln in body]
    # numpy arrays: zero-copy wrap, synchronous
    cond = " and ".join(f"type(a{i}) is _ND and a{i}.flags.c_contiguous" for i, _ in ptrs)
    overlap = [f"_may(a{w}, a{o})" for w, wr in ptrs if wr for o, _ in ptrs if o != w]
    if overlap:
        cond += f" and not ({' or '.join(overlap)})"
    lines.append(f"    if {cond}:")
    body = ["    _last[0] = None", "    " + "; ".join(f"b{i} = _wrap(a{i})" for i, _ in ptrs)]
    body += [*pack_lines(False), f"    _setm(({', '.join(bufs)},))", enqueue]
    written_ptrs = [i for i, wr in ptrs if wr]
    body += [f"    _back(b{i}, a{i})" for i in written_ptrs] or ["    _fin()"]
    body.append("    return None")
    lines += ["    " + ln for ln in body]
    lines.append("    return _slow(grid, args)")
    return _finish(lines, ns)


def _finish(lines: list[str], ns: dict[str, Any]) -> Launch:
    exec(compile("\n".join(lines) + "\n", "<kdsl opencl launch>", "exec"), ns)
    fn: Launch = ns["_launch"]
    return fn
