"""A small ctypes binding of the OpenCL 1.2 entry points a warm launch needs.

Why not pyopencl for everything: ``import pyopencl`` costs ~90 ms (``pyopencl.tools``
pulls in pytools, ``importlib.metadata``, attrs, its persistent dict), more than the
whole warm-start budget (a new process running a kernel whose binary is in the disk
cache: < 50 ms). This module talks to the *same* ICD loader pyopencl links against
(the ``libOpenCL`` bundled in its wheel, found without importing pyopencl; else the
system ``libOpenCL.so.1``, Debian ``ocl-icd-libopencl1``), so the context, queue,
programs and kernels created here are ordinary OpenCL handles: pyopencl wraps them
with ``from_int_ptr(handle, retain=True)`` when a path that uses it (device arrays,
asserts, aliasing) runs, and both share one context.

Handles are plain ints. Every call checks its status; a failure raises
:class:`CLError` (a :class:`kdsl.errors.KernelRuntimeError`) naming the entry point
and the status (``CL_OUT_OF_RESOURCES``, ...).
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache
from importlib.util import find_spec
from typing import Any

from kdsl.errors import KernelRuntimeError

# --- constants (cl.h, OpenCL 1.2) ---------------------------------------------------------
DEVICE_TYPE_CPU = 1 << 1
DEVICE_TYPE_GPU = 1 << 2
DEVICE_TYPE_ALL = 0xFFFFFFFF
QUEUE_PROFILING_ENABLE = 1 << 1
MEM_READ_WRITE = 1 << 0
MEM_READ_ONLY = 1 << 2
MEM_USE_HOST_PTR = 1 << 3
MEM_COPY_HOST_PTR = 1 << 5
MAP_READ = 1 << 0

PLATFORM_VERSION = 0x0901
DEVICE_TYPE = 0x1000
DEVICE_MAX_COMPUTE_UNITS = 0x1002
DEVICE_MAX_WORK_GROUP_SIZE = 0x1004
DEVICE_LOCAL_MEM_SIZE = 0x1023
DEVICE_NAME = 0x102B
DRIVER_VERSION = 0x102D
DEVICE_VERSION = 0x102F
DEVICE_EXTENSIONS = 0x1030
DEVICE_PLATFORM = 0x1031
DEVICE_HOST_UNIFIED_MEMORY = 0x1035
DEVICE_OPENCL_C_VERSION = 0x103D
PROGRAM_BINARY_SIZES = 0x1165
PROGRAM_BINARIES = 0x1166
PROGRAM_BUILD_LOG = 0x1183

ERROR_NAMES: dict[int, str] = {
    0: "CL_SUCCESS",
    -1: "CL_DEVICE_NOT_FOUND",
    -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE",
    -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -7: "CL_PROFILING_INFO_NOT_AVAILABLE",
    -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH",
    -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
    -11: "CL_BUILD_PROGRAM_FAILURE",
    -12: "CL_MAP_FAILURE",
    -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
    -15: "CL_COMPILE_PROGRAM_FAILURE",
    -16: "CL_LINKER_NOT_AVAILABLE",
    -17: "CL_LINK_PROGRAM_FAILURE",
    -18: "CL_DEVICE_PARTITION_FAILED",
    -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
    -30: "CL_INVALID_VALUE",
    -31: "CL_INVALID_DEVICE_TYPE",
    -32: "CL_INVALID_PLATFORM",
    -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT",
    -35: "CL_INVALID_QUEUE_PROPERTIES",
    -36: "CL_INVALID_COMMAND_QUEUE",
    -37: "CL_INVALID_HOST_PTR",
    -38: "CL_INVALID_MEM_OBJECT",
    -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
    -40: "CL_INVALID_IMAGE_SIZE",
    -41: "CL_INVALID_SAMPLER",
    -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS",
    -44: "CL_INVALID_PROGRAM",
    -45: "CL_INVALID_PROGRAM_EXECUTABLE",
    -46: "CL_INVALID_KERNEL_NAME",
    -47: "CL_INVALID_KERNEL_DEFINITION",
    -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX",
    -50: "CL_INVALID_ARG_VALUE",
    -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS",
    -53: "CL_INVALID_WORK_DIMENSION",
    -54: "CL_INVALID_WORK_GROUP_SIZE",
    -55: "CL_INVALID_WORK_ITEM_SIZE",
    -56: "CL_INVALID_GLOBAL_OFFSET",
    -57: "CL_INVALID_EVENT_WAIT_LIST",
    -58: "CL_INVALID_EVENT",
    -59: "CL_INVALID_OPERATION",
    -60: "CL_INVALID_GL_OBJECT",
    -61: "CL_INVALID_BUFFER_SIZE",
    -62: "CL_INVALID_MIP_LEVEL",
    -63: "CL_INVALID_GLOBAL_WORK_SIZE",
    -64: "CL_INVALID_PROPERTY",
    -1001: "CL_PLATFORM_NOT_FOUND_KHR",
}
# Statuses after which the context or queue cannot be trusted any more (the device recreates them).
FATAL = frozenset({-5, -6, -34, -36, -14})


class CLError(KernelRuntimeError):
    """An OpenCL call failed: ``function`` returned ``code`` (``name``)."""

    def __init__(self, function: str, code: int, detail: str = "", where: str = "") -> None:
        self.function = function
        self.code = code
        self.name = ERROR_NAMES.get(code, f"CL error {code}")
        head = f"opencl: {where}: " if where else "opencl: "
        super().__init__(f"{head}{function} failed: {self.name} ({code}){': ' + detail if detail else ''}")


# --- the library ------------------------------------------------------------------------
def library_path() -> str:
    """The ICD loader pyopencl links against (found without importing it), else the system one.

    The loader bundled in pyopencl's wheel (a patched ocl-icd) reads ``PYOPENCL_HOME``
    and crashes in ``clGetPlatformIDs`` when it is unset; ``import pyopencl`` sets it
    to the package directory, so we set the same value before loading it.
    """
    try:
        spec = find_spec("pyopencl")
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec is not None else []:
        libs = os.path.join(loc, ".libs")
        try:  # not glob: it compiles a regular expression (~2 ms of a warm start)
            found = sorted(n for n in os.listdir(libs) if n.startswith("libOpenCL") and ".so" in n)
        except OSError:
            continue
        if found:
            os.environ["PYOPENCL_HOME"] = os.path.abspath(loc)
            return os.path.join(libs, found[0])
    return "libOpenCL.so.1"


_vp, _u32, _i32, _u64, _sz = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_size_t
_pi32 = ctypes.POINTER(_i32)
_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "clGetPlatformIDs": (_i32, [_u32, _vp, ctypes.POINTER(_u32)]),
    "clGetPlatformInfo": (_i32, [_vp, _u32, _sz, _vp, ctypes.POINTER(_sz)]),
    "clGetDeviceIDs": (_i32, [_vp, _u64, _u32, _vp, ctypes.POINTER(_u32)]),
    "clGetDeviceInfo": (_i32, [_vp, _u32, _sz, _vp, ctypes.POINTER(_sz)]),
    "clCreateContext": (_vp, [_vp, _u32, _vp, _vp, _vp, _pi32]),
    "clCreateCommandQueue": (_vp, [_vp, _vp, _u64, _pi32]),
    "clCreateProgramWithSource": (_vp, [_vp, _u32, _vp, _vp, _pi32]),
    "clCreateProgramWithBinary": (_vp, [_vp, _u32, _vp, _vp, _vp, _pi32, _pi32]),
    "clBuildProgram": (_i32, [_vp, _u32, _vp, ctypes.c_char_p, _vp, _vp]),
    "clGetProgramBuildInfo": (_i32, [_vp, _vp, _u32, _sz, _vp, ctypes.POINTER(_sz)]),
    "clGetProgramInfo": (_i32, [_vp, _u32, _sz, _vp, ctypes.POINTER(_sz)]),
    "clCreateKernel": (_vp, [_vp, ctypes.c_char_p, _pi32]),
    "clSetKernelArg": (_i32, [_vp, _u32, _sz, ctypes.c_char_p]),
    "clCreateBuffer": (_vp, [_vp, _u64, _sz, _vp, _pi32]),
    "clEnqueueNDRangeKernel": (_i32, [_vp, _vp, _u32, _vp, ctypes.c_char_p, ctypes.c_char_p, _u32, _vp, _vp]),
    "clEnqueueMapBuffer": (_vp, [_vp, _vp, _u32, _u64, _sz, _sz, _u32, _vp, _vp, _pi32]),
    "clEnqueueUnmapMemObject": (_i32, [_vp, _vp, _vp, _u32, _vp, _vp]),
    "clEnqueueReadBuffer": (_i32, [_vp, _vp, _u32, _sz, _sz, _vp, _u32, _vp, _vp]),
    "clEnqueueWriteBuffer": (_i32, [_vp, _vp, _u32, _sz, _sz, _vp, _u32, _vp, _vp]),
    "clFinish": (_i32, [_vp]),
    "clRetainMemObject": (_i32, [_vp]),
    "clReleaseMemObject": (_i32, [_vp]),
    "clReleaseKernel": (_i32, [_vp]),
    "clReleaseProgram": (_i32, [_vp]),
    "clReleaseCommandQueue": (_i32, [_vp]),
    "clReleaseContext": (_i32, [_vp]),
}


class _Lib:
    """The loaded ICD loader with typed entry points as attributes (``lib.clFinish(q)``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        dll = ctypes.CDLL(path)
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(dll, name)
            fn.restype, fn.argtypes = restype, argtypes
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:  # for mypy: the entry points are set in __init__
        raise AttributeError(name)


@lru_cache(maxsize=1)
def lib() -> _Lib:
    """The ICD loader, loaded once (raises ``OSError`` when there is none)."""
    return _Lib(library_path())


def check(function: str, status: int, detail: str = "") -> None:
    if status != 0:
        raise CLError(function, status, detail)


# --- queries ------------------------------------------------------------------------------
def platforms() -> list[int]:
    """Every platform's handle ([] when the loader finds no ICD)."""
    n = _u32(0)
    status = lib().clGetPlatformIDs(0, None, ctypes.byref(n))
    if status == -1001 or n.value == 0:  # CL_PLATFORM_NOT_FOUND_KHR: no ICD registered
        return []
    check("clGetPlatformIDs", status)
    ids = (_vp * n.value)()
    check("clGetPlatformIDs", lib().clGetPlatformIDs(n.value, ids, None))
    return [int(p or 0) for p in ids]


def devices(platform: int) -> list[int]:
    """Every device of ``platform`` ([] when it has none)."""
    n = _u32(0)
    status = lib().clGetDeviceIDs(platform, DEVICE_TYPE_ALL, 0, None, ctypes.byref(n))
    if status == -1 or n.value == 0:  # CL_DEVICE_NOT_FOUND
        return []
    check("clGetDeviceIDs", status)
    ids = (_vp * n.value)()
    check("clGetDeviceIDs", lib().clGetDeviceIDs(platform, DEVICE_TYPE_ALL, n.value, ids, None))
    return [int(d or 0) for d in ids]


def _info_bytes(fn: str, *head: Any) -> bytes:
    get = getattr(lib(), fn)
    size = _sz(0)
    check(fn, get(*head, 0, None, ctypes.byref(size)))
    buf = ctypes.create_string_buffer(size.value)
    check(fn, get(*head, size.value, buf, None))
    return buf.raw


def _str(raw: bytes) -> str:
    """An info string as pyopencl reports it: up to the first NUL, decoded."""
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def platform_str(platform: int, param: int) -> str:
    return _str(_info_bytes("clGetPlatformInfo", platform, param))


def device_str(device: int, param: int) -> str:
    return _str(_info_bytes("clGetDeviceInfo", device, param))


def device_int(device: int, param: int) -> int:
    """An integer property (cl_uint / cl_bool / cl_ulong / size_t: sized by the driver's answer)."""
    return int.from_bytes(_info_bytes("clGetDeviceInfo", device, param), "little")


# --- objects --------------------------------------------------------------------------------
def _err() -> Any:
    return _i32(0)


def create_context(device: int) -> int:
    err = _err()
    ids = (_vp * 1)(device)
    ctx = lib().clCreateContext(None, 1, ids, None, None, ctypes.byref(err))
    check("clCreateContext", err.value)
    return int(ctx)


def create_queue(context: int, device: int, properties: int) -> int:
    err = _err()
    q = lib().clCreateCommandQueue(context, device, properties, ctypes.byref(err))
    check("clCreateCommandQueue", err.value)
    return int(q)


def build_log(program: int, device: int) -> str:
    try:
        return _str(_info_bytes("clGetProgramBuildInfo", program, device, PROGRAM_BUILD_LOG)).strip()
    except CLError:
        return ""


def _build(program: int, device: int, options: str) -> int:
    ids = (_vp * 1)(device)
    status = lib().clBuildProgram(program, 1, ids, options.encode(), None, None)
    if status != 0:
        log = build_log(program, device)
        lib().clReleaseProgram(program)
        check("clBuildProgram", status, log)
    return program


def program_from_source(context: int, device: int, source: str, options: str) -> int:
    """A built program (raises :class:`CLError` with the build log)."""
    err = _err()
    src = ctypes.c_char_p(source.encode())
    strings = (ctypes.c_char_p * 1)(src.value)
    prog = lib().clCreateProgramWithSource(context, 1, strings, None, ctypes.byref(err))
    check("clCreateProgramWithSource", err.value)
    return _build(int(prog), device, options)


def program_from_binary(context: int, device: int, binary: bytes, options: str) -> int:
    """A built program from a binary this driver produced (raises :class:`CLError` if rejected)."""
    err, status = _err(), _err()
    ids = (_vp * 1)(device)
    lengths = (_sz * 1)(len(binary))
    data = ctypes.create_string_buffer(binary, len(binary))
    ptrs = (_vp * 1)(ctypes.addressof(data))
    prog = lib().clCreateProgramWithBinary(context, 1, ids, lengths, ptrs, ctypes.byref(status), ctypes.byref(err))
    check("clCreateProgramWithBinary", err.value or status.value)
    return _build(int(prog), device, options)


def program_binary(program: int) -> bytes:
    """The (single-device) program's binary."""
    sizes = _info_bytes("clGetProgramInfo", program, PROGRAM_BINARY_SIZES)
    n = int.from_bytes(sizes[: ctypes.sizeof(_sz)], "little")
    buf = ctypes.create_string_buffer(n)
    ptrs = (_vp * 1)(ctypes.addressof(buf))
    check("clGetProgramInfo", lib().clGetProgramInfo(program, PROGRAM_BINARIES, ctypes.sizeof(ptrs), ptrs, None))
    return buf.raw


def create_kernel(program: int, name: str) -> int:
    err = _err()
    k = lib().clCreateKernel(program, name.encode(), ctypes.byref(err))
    check("clCreateKernel", err.value, name)
    return int(k)


def create_buffer(context: int, flags: int, size: int, host_ptr: int | None) -> int:
    err = _err()
    buf = lib().clCreateBuffer(context, flags, size, host_ptr, ctypes.byref(err))
    check("clCreateBuffer", err.value)
    return int(buf)


def map_unmap_read(queue: int, buffer: int, size: int) -> None:
    """A blocking read map + unmap: makes the device's writes visible in a ``USE_HOST_PTR`` buffer's memory."""
    api = lib()
    ptr = api.clEnqueueMapBuffer(queue, buffer, 1, MAP_READ, 0, size, 0, None, None, None)
    if not ptr:  # ask again for the status (the fast call passes no error slot)
        err = _err()
        ptr = api.clEnqueueMapBuffer(queue, buffer, 1, MAP_READ, 0, size, 0, None, None, ctypes.byref(err))
        check("clEnqueueMapBuffer", err.value or (0 if ptr else -12))
    check("clEnqueueUnmapMemObject", api.clEnqueueUnmapMemObject(queue, buffer, ptr, 0, None, None))


def read_buffer(queue: int, buffer: int, size: int, host_ptr: int) -> None:
    check("clEnqueueReadBuffer", lib().clEnqueueReadBuffer(queue, buffer, 1, 0, size, host_ptr, 0, None, None))


def write_buffer(queue: int, buffer: int, size: int, host_ptr: int) -> None:
    """A blocking write of ``size`` bytes at offset 0."""
    check("clEnqueueWriteBuffer", lib().clEnqueueWriteBuffer(queue, buffer, 1, 0, size, host_ptr, 0, None, None))


def finish(queue: int) -> None:
    check("clFinish", lib().clFinish(queue))


def release(kind: str, handle: int) -> None:
    """``clRelease<kind>`` (``MemObject``, ``Kernel``, ``Program``, ``CommandQueue``, ``Context``); errors ignored."""
    getattr(lib(), f"clRelease{kind}")(handle)
