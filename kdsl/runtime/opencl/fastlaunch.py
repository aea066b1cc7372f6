"""The generated warm-launch function of one OpenCL kernel specialisation.

A launch whose pointer arguments are all device arrays (the hot, asynchronous
case) runs one generated function: unpack the arguments, check their types
with ``is``, check that no written buffer is also passed elsewhere, set every
buffer argument with one ``_set_arg_multi`` call and every scalar (byte offsets
included) with one ``_set_arg_buf_pack_multi`` call, and enqueue -- no loops,
no numpy scalar objects, no pyopencl argument introspection. The two setters
are the calls pyopencl's own generated invokers use; the pyopencl kernel object
(a view of our ``cl_kernel``) is bound on the first device-array launch (device
arrays mean pyopencl is loaded already: its memory pool made them). Anything
else (numpy arguments, aliasing, bad values, kernels with asserts or prints)
falls back to the kernel's fully checked path.

The synchronous numpy case (every pointer argument a C-contiguous numpy array,
no written array overlapping another argument) has its own generated branch
that calls OpenCL through :mod:`~kdsl.runtime.opencl.clapi` (ctypes), so the
first launch of a new process never imports pyopencl: wrap each array
zero-copy (``Device.wrap_host_handle``), set arguments (``clSetKernelArg`` with
``struct``-packed bytes), enqueue, then make written arrays visible
(``Device.write_back_handle``: a blocking map/unmap on shared memory) or, if
nothing is written, wait for the queue; the wrapping buffers are released.
Kernels with only scalar parameters enqueue through clapi too (asynchronous).
"""

from __future__ import annotations

import ctypes
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kdsl.ir.types import ScalarType
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.opencl import clapi

Launch = Callable[[tuple[int, int, int], Sequence[Any]], None]

# what pyopencl's _set_arg_buf_pack_multi packs natively (native sizes: 'l' is 64-bit on LP64)
_PACKABLE = set("bBhHiIlLfd")
_MEM_SIZE = ctypes.sizeof(ctypes.c_void_p)
# Where the numpy branch looks for an imported pyopencl (tests replace it to force the clapi variant).
MODULES: dict[str, Any] = sys.modules
_PACK_ERRORS = (struct.error, RuntimeError, TypeError, ValueError, OverflowError)


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
    kernel_handle: int,
    kernel_name: str,
    bind_pyopencl: Callable[[], Any],
    device: Any,
    num_threads: int,
    params: Sequence[tuple[str, bool, Callable[[Any], Any] | None, ScalarType | None]],
    claim: int,
    slow: Launch,
    last: list[Any],
    unused: frozenset[int] = frozenset(),
) -> Launch | None:
    """Generate the launch function, or None if some parameter cannot take the fast path.

    ``kernel_handle`` is the ``cl_kernel`` the numpy branch sets arguments on
    through clapi; ``bind_pyopencl()`` returns the pyopencl view of the same
    kernel, asked on the first device-array launch.

    ``last[0]`` holds the arguments the kernel object currently has set by the
    device-array branch (buffers, offsets, non-float scalars): a launch with
    the same ones only enqueues (OpenCL kernel arguments persist between
    enqueues). Float scalars are always set again (``-0.0 == 0.0``). Whoever
    else sets this kernel's arguments must reset ``last[0] = None``. The
    buffers in ``last[0]`` stay referenced until the next launch with other
    arguments (pooled memory is kept by the pool anyway).

    ``claim`` > 0: the kernel claims its program ids (``kdsl/codegen/opencl/claim.py``) and takes
    the device's counters, the grid and the claim divisor after its parameters; the global size
    comes from ``Device.claim_geometry``.

    ``unused``: pointer parameters the kernel never reads; they take no part in the aliasing
    checks (an absent bias passed as the output must not force the slow path).
    """
    api = clapi.lib()
    ns: dict[str, Any] = _Namespace(
        {
            "_DA": DeviceArray,
            "_slow": slow,
            "_last": last,
            "_ND": np.ndarray,
            "_may": np.may_share_memory,
            # device-array branch (pyopencl; bound by _bind on first use)
            "_k": None,
            "_setm": None,
            "_pack": None,
            "_enq": None,
            "_q": None,
            "_CLE": (),
            "_try": True,
            "_lock": threading.Lock(),
            "_mods": MODULES,
            "_pwrap": device.wrap_host,
            "_pback": device.write_back,
            # numpy and scalar-only branches (clapi)
            "_kh": kernel_handle,
            "_qh": device.queue_handle,
            "_set": api.clSetKernelArg,
            "_enqc": api.clEnqueueNDRangeKernel,
            "_rel": api.clReleaseMemObject,
            "_wrap": device.wrap_host_handle,
            "_back": device.write_back_handle,
            "_fin": device.synchronize,
            "_G": struct.Struct("3N").pack,
            "_LB": struct.pack("3N", num_threads, 1, 1),
            "_P": struct.Struct("P").pack,
            "_Z": bytes(8),
            "_PE": _PACK_ERRORS,
            "_L": (num_threads, 1, 1),
        }
    )

    _add_bindings(ns, device, bind_pyopencl, kernel_name)
    device.register_launch(ns)
    names = [f"a{i}" for i in range(len(params))]
    ptrs: list[tuple[int, bool]] = []
    bufs: list[str] = []  # (slot, buffer variable) pairs for _set_arg_multi
    packs: list[str] = []  # (slot, struct char, value) triples for _set_arg_buf_pack_multi
    float_packs: list[str] = []  # the float scalars among them
    key: list[str] = []  # what identifies the arguments set by the device-array branch
    csets: list[str] = []  # the clapi branch: one clSetKernelArg call per OpenCL argument
    cbufs: list[str] = []  # ... of which the buffers (new every launch); the rest only when changed
    cpacks: list[str] = []  # ... and the struct packing of its scalars (before any buffer exists)
    slot = 0
    for i, (_, written, bind, stype) in enumerate(params):
        if bind is None:
            ptrs.append((i, written))
            bufs += [str(slot), f"b{i}"]
            packs += [str(slot + 1), "b'L'", f"@OFF{i}@"]
            key += [f"b{i}", f"a{i}.offset"]
            cbufs.append(f"_set(_kh, {slot}, {_MEM_SIZE}, _P(b{i}))")
            csets += [cbufs[-1], f"_set(_kh, {slot + 1}, 8, _Z)"]
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
        ns[f"_pk{i}"] = struct.Struct(ch).pack
        cpacks.append(f"s{i} = _pk{i}({expr})")
        csets.append(f"_set(_kh, {slot}, {struct.calcsize(ch)}, s{i})")
        if ch in "fd":
            float_packs += [str(slot), repr(ch.encode()), expr]
        else:
            key.append(f"a{i}")
        slot += 1
    gsize = f"(grid[0] * {num_threads}, grid[1], grid[2])"
    if claim:  # the counters, the grid (int) and the claim divisor (ulong), after the parameters
        ns["_geo"], ns["_schedh"], ns["_claim"] = device.claim_geometry, device.sched_handle, claim
        ns["_pki"], ns["_pkQ"] = struct.Struct("i").pack, struct.Struct("Q").pack
        bufs += [str(slot), "_sched"]
        packs += [str(slot + 1), "b'i'", "grid[0]", str(slot + 2), "b'i'", "grid[1]", str(slot + 3), "b'i'",
                  "grid[2]", str(slot + 4), "b'L'", "_ch"]  # fmt: skip
        key.append("grid")
        cbufs.append(f"_set(_kh, {slot}, {_MEM_SIZE}, _P(_schedh))")
        cpacks += ["sg0 = _pki(grid[0]); sg1 = _pki(grid[1]); sg2 = _pki(grid[2]); sch = _pkQ(_ch)"]
        csets += [cbufs[-1], *(f"_set(_kh, {slot + 1 + a}, 4, sg{a})" for a in range(3)), f"_set(_kh, {slot + 4}, 8, sch)"]
        gsize = "_gs"
    lines = [
        "def _launch(grid, args):",
        "    try:",
        f"        {', '.join(names) + (',' if len(names) == 1 else '') or '()'} = args",
        "    except ValueError:",
        "        return _slow(grid, args)",
    ]
    if claim:
        lines += ["    try:", "        _gs, _ch = _geo(grid, _claim)", "    except (TypeError, IndexError):",
                  "        return _slow(grid, args)"]  # fmt: skip
    enqueue = [
        "    try:",
        f"        _enq(_q, _k, {gsize}, _L, None, None, False, True)",
        "    except _CLE as e:",
        "        _pyfail(e)",
    ]
    cenqueue = [
        f"    st = _enqc(_qh, _kh, 3, None, _G(*{gsize}), _LB, 0, None, None)",
        "    if st:",
        "        _fail('clEnqueueNDRangeKernel', st)",
    ]
    cpack_lines = ["    try:", *(f"        {c}" for c in cpacks), "    except _PE:", "        return _slow(grid, args)"]
    cset_lines = [f"    if {' or '.join(csets)}:", "        return _slow(grid, args)"] if csets else []

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

    if not ptrs:  # scalars only: clapi, asynchronous
        lines += ["    _last[0] = None", *(cpack_lines if cpacks else []), *cset_lines, *cenqueue, "    return None"]
        return _finish(lines, ns)
    # device arrays: asynchronous
    lines.append(f"    if {' and '.join(f'type(a{i}) is _DA' for i, _ in ptrs)}:")
    body = ["    if _k is None and not _bind():", "        return _slow(grid, args)"]
    body += ["    " + "; ".join(f"b{i} = a{i}.buffer" for i, _ in ptrs)]
    used = [(i, w) for i, w in ptrs if i not in unused]
    alias = [f"b{w} is b{o}" for w, wr in used if wr for o, _ in used if o != w]
    if alias:
        body += [f"    if {' or '.join(alias)}:", "        return _slow(grid, args)"]
    body += [f"    key = ({', '.join(key)},)", "    if key != _last[0]:"]
    body += ["    " + ln for ln in [*pack_lines(True), f"    _setm(({', '.join(bufs)},))", "    _last[0] = key"]]
    if float_packs:
        body += ["    else:", *("    " + ln for ln in pack_lines(True, float_packs))]
    body += [*enqueue, "    return None"]
    lines += ["    " + ln for ln in body]
    py_numpy = [*pack_lines(False), f"    _setm(({', '.join(bufs)},))", *enqueue]
    # numpy branch via clapi: offsets (0) and scalars persist on the kernel; set them only when they changed
    ckey = "('c', " + "".join(f"s{i}, " for i, (_, _, b, _) in enumerate(params) if b is not None)
    ckey += ("sg0, sg1, sg2, sch, " if claim else "") + ")"
    fixed = [c for c in csets if c not in cbufs]
    cset_lines = [f"    if {ckey} != _last[0]:", "        _last[0] = None"]
    if fixed:
        cset_lines += [f"        if {' or '.join(fixed)}:", "            return _slow(grid, args)"]
    cset_lines += [f"        _last[0] = {ckey}", f"    if {' or '.join(cbufs)}:", "        return _slow(grid, args)"]
    lines += _numpy_branch(ptrs, used, cpack_lines if cpacks else [], cset_lines, cenqueue, py_numpy)
    lines.append("    return _slow(grid, args)")
    return _finish(lines, ns)


def _add_bindings(ns: dict[str, Any], device: Any, bind_pyopencl: Callable[[], Any], kernel_name: str) -> None:
    """``_bind`` (the device-array branch's late binding to pyopencl) and the fault reporters."""

    def _bind() -> bool:
        """Bind the device-array branch to pyopencl's view of the kernel; False if it lacks the setters."""
        k = bind_pyopencl()
        if not hasattr(k, "_set_arg_multi") or not hasattr(k, "_set_arg_buf_pack_multi"):
            ns["_try"] = False
            return False
        import pyopencl._cl as _cl

        ns.update(
            _k=k,
            _sched=device.sched_buffer if "_geo" in ns else None,
            _setm=k._set_arg_multi,
            _pack=k._set_arg_buf_pack_multi,
            _enq=_cl.enqueue_nd_range_kernel,
            _q=device.queue,
            _CLE=_cl.Error,
        )
        return True

    def _fail(function: str, status: int) -> None:
        device.fault(function, status, kernel_name)

    def _pyfail(e: Any) -> None:
        device.fault(str(e.routine), int(e.code), kernel_name)

    ns["_bind"], ns["_fail"], ns["_pyfail"] = _bind, _fail, _pyfail


class _Namespace(dict[str, Any]):
    """The generated function's globals (a dict subclass, so the device can hold it weakly)."""


def _numpy_branch(
    ptrs: list[tuple[int, bool]],
    used: list[tuple[int, bool]],
    cpack_lines: list[str],
    cset_lines: list[str],
    cenqueue: list[str],
    py_numpy: list[str],
) -> list[str]:
    """The synchronous numpy branch: wrap zero-copy, launch, make writes visible.

    Two variants. While pyopencl is not imported (a warm start, a numpy-only
    process): clapi -- wrap, set arguments, enqueue, write back, release. Once
    pyopencl is loaded anyway (device arrays were used), its calls, which make
    fewer Python-to-C transitions per launch (one ``_set_arg_multi`` for every
    buffer, buffers created and released inside one call each). Only ``used`` pointers are
    checked for overlaps.
    """
    cond = " and ".join(f"type(a{i}) is _ND and a{i}.flags.c_contiguous" for i, _ in ptrs)
    overlap = [f"_may(a{w}, a{o})" for w, wr in used if wr for o, _ in used if o != w]
    if overlap:
        cond += f" and not ({' or '.join(overlap)})"
    written_ptrs = [i for i, wr in ptrs if wr]
    body = [
        "    if _k is None and _try and 'pyopencl' in _mods:",
        "        _bind()",
        "    if _k is not None:",
        "        _last[0] = None",
        "        " + "; ".join(f"b{i} = _pwrap(a{i})" for i, _ in ptrs),
        *("    " + ln for ln in py_numpy),
        *([f"        _pback(b{i}, a{i})" for i in written_ptrs] or ["        _fin()"]),
        "        return None",
        *cpack_lines,
    ]
    body.append("    " + " = ".join(f"b{i}" for i, _ in ptrs) + " = 0")
    # ctypes releases the GIL in every call: the lock keeps another thread's launch of this
    # kernel from setting its arguments between ours and our enqueue
    body += ["    with _lock:", "        try:"]
    inner = ["    " + "; ".join(f"b{i} = _wrap(a{i})" for i, _ in ptrs), *cset_lines, *cenqueue]
    inner += [f"    _back(b{i}, a{i})" for i in written_ptrs] or ["    _fin()"]
    body += ["        " + ln for ln in inner]
    body += ["        finally:", *(f"            if b{i}: _rel(b{i})" for i, _ in ptrs)]
    body.append("    return None")
    return [f"    if {cond}:", *("    " + ln for ln in body)]


def _finish(lines: list[str], ns: dict[str, Any]) -> Launch:
    exec(compile("\n".join(lines) + "\n", "<kdsl opencl launch>", "exec"), ns)
    fn: Launch = ns["_launch"]
    return fn
