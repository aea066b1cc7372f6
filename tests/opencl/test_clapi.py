"""The ctypes OpenCL binding (``clapi``) and pyopencl share one loader, one context and every object."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest

import kdsl
from kdsl.errors import CompilationError, KernelRuntimeError
from kdsl.runtime.opencl import clapi, get_device
from kdsl.runtime.opencl.device import BUILD_OPTIONS, all_devices

from . import ocl_kernels as K

SRC = "__kernel void scale(__global float* a, float s) { a[get_global_id(0)] *= s; }"
OPTS = " ".join(BUILD_OPTIONS)


def test_device_strings_are_pyopencls() -> None:
    """The cache key is made of the strings pyopencl reported: entries written before stay valid."""
    dev = get_device()
    d = cl.Device.from_int_ptr(dev.handle, retain=True)
    assert dev.name == d.name and dev.driver == d.driver_version
    assert dev.platform_version == d.platform.version
    assert dev.c_version == str(getattr(d, "opencl_c_version", "") or d.version)
    assert dev.fp64 == ("cl_khr_fp64" in d.extensions)
    assert dev.int64_atomics == ("cl_khr_int64_base_atomics" in d.extensions)
    assert dev.is_cpu == bool(d.type & cl.device_type.CPU)
    assert dev.local_mem == d.local_mem_size and dev.max_group == d.max_work_group_size
    # the flat device list is pyopencl's, in its order
    flat = [x for p in cl.get_platforms() for x in p.get_devices()]
    assert [r.handle for r in all_devices()] == [x.int_ptr for x in flat]
    assert [r.name for r in all_devices()] == [x.name for x in flat]


def test_one_loader_in_the_process() -> None:
    """clapi loads the ICD loader pyopencl's extension links against, not a second one."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    loaded = {line.split()[-1] for line in maps if "libOpenCL" in line}
    assert loaded == {clapi.lib().path}, loaded


def test_pyopencl_wraps_our_handles() -> None:
    dev = get_device()
    assert dev.ctx.int_ptr == dev.ctx_handle and dev.queue.int_ptr == dev.queue_handle
    assert dev.dev.int_ptr == dev.handle and dev.queue.context == dev.ctx
    # a pyopencl buffer in our context runs a clapi-built kernel, through pyopencl
    prog = dev.build(SRC)
    knl = cl.Kernel.from_int_ptr(clapi.create_kernel(prog, "scale"), retain=False)
    a = np.arange(16, dtype=np.float32)
    buf = cl.Buffer(dev.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    knl(dev.queue, (16,), None, buf, np.float32(3))
    out = np.empty_like(a)
    cl.enqueue_copy(dev.queue, out, buf)
    np.testing.assert_array_equal(out, 3 * a)


def test_binary_round_trip_and_launch_through_clapi() -> None:
    dev = get_device()
    prog = clapi.program_from_source(dev.ctx_handle, dev.handle, SRC, OPTS)
    try:
        binary = clapi.program_binary(prog)
        assert binary == bytes(cl.Program.from_int_ptr(prog, retain=True).get_info(cl.program_info.BINARIES)[0])
    finally:
        clapi.release("Program", prog)
    prog2 = clapi.program_from_binary(dev.ctx_handle, dev.handle, binary, OPTS)
    k = clapi.create_kernel(prog2, "scale")
    a = np.arange(64, dtype=np.float32)
    buf = dev.wrap_host_handle(a)
    try:
        lib = clapi.lib()
        assert lib.clSetKernelArg(k, 0, 8, struct.pack("P", buf)) == 0
        assert lib.clSetKernelArg(k, 1, 4, struct.pack("f", 0.5)) == 0
        g = struct.pack("3N", 64, 1, 1)
        assert lib.clEnqueueNDRangeKernel(dev.queue_handle, k, 3, None, g, None, 0, None, None) == 0
        dev.write_back_handle(buf, a)
    finally:
        clapi.release("MemObject", buf)
        clapi.release("Kernel", k)
        clapi.release("Program", prog2)
    np.testing.assert_array_equal(a, 0.5 * np.arange(64, dtype=np.float32))


def test_errors_are_named_kdsl_errors() -> None:
    dev = get_device()
    with pytest.raises(clapi.CLError) as e:
        clapi.program_from_binary(dev.ctx_handle, dev.handle, b"not a binary", OPTS)
    assert isinstance(e.value, KernelRuntimeError) and e.value.name == "CL_INVALID_BINARY" and e.value.code == -42
    assert "clCreateProgramWithBinary" in str(e.value)
    with pytest.raises(CompilationError, match="undeclared identifier 'nope'"):  # the driver's build log
        dev.build("__kernel void broken(__global int* a) { a[0] = nope; }")
    with pytest.raises(clapi.CLError, match=r"CL_INVALID_KERNEL_NAME.*no_such_kernel"):
        clapi.create_kernel(dev.build(SRC), "no_such_kernel")


def test_numpy_and_device_array_launches_share_one_kernel() -> None:
    """The clapi numpy branch and the pyopencl device-array branch set arguments on the same cl_kernel."""
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 2, np.float32)
    with kdsl.backend("opencl"):
        for _ in range(2):
            out = np.zeros_like(x)
            K.add_kernel[(4,)](x, y, out, n, BLOCK=256)  # clapi
            np.testing.assert_array_equal(out, x + y)
            dx, dy, do = kdsl.tensor(x), kdsl.tensor(y), kdsl.empty(n, np.float32)
            K.add_kernel[(4,)](dx, dy, do, n, BLOCK=256)  # pyopencl view of the same kernel
            np.testing.assert_array_equal(do.numpy(), x + y)
            out2 = np.zeros_like(x)
            K.add_kernel[(4,)](dx, y, out2, n, BLOCK=256)  # mixed: the checked path
            np.testing.assert_array_equal(out2, x + y)
    kernels = [c.kernel for c in K.add_kernel.cache.values() if hasattr(c.kernel, "kernel_handle")]
    assert kernels
    for k in kernels:
        assert k.kernel.int_ptr == k.kernel_handle


def test_read_only_and_empty_numpy_arrays() -> None:
    n = 300
    x = np.arange(n, dtype=np.float32)
    x.flags.writeable = False
    y = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    with kdsl.backend("opencl"):
        K.add_kernel[(2,)](x, y, out, n, BLOCK=256)  # a read-only input: copied at buffer creation
        np.testing.assert_array_equal(out, x + 1)
        e = np.zeros(0, np.float32)
        K.add_kernel[(1,)](e, e, e.copy(), 0, BLOCK=256)  # empty arrays: nothing accessed


def test_builds_print_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    """The source is generated, so the device compiler's warnings mean nothing to a user: PoCL's
    clang printed "N warnings generated." to stderr for the tensor-descriptor block copies
    (`&&` with a constant operand). Built with ``-w``, and the block copies no longer warn anyway."""
    src = SRC.replace("*= s;", "*= (get_global_id(0) == 0 && 1) ? s : s;")  # a warning without -w
    dev = get_device()
    clapi.program_from_source(dev.ctx_handle, dev.handle, src, OPTS)
    out, err = capfd.readouterr()
    assert "warning" not in err and "warning" not in out
