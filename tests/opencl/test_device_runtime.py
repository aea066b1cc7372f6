"""OpenCL device arrays: asynchronous launches, mixed numpy/device arguments, aliasing, the fast path."""

from __future__ import annotations

import threading

import numpy as np
import pyopencl as cl
import pytest

import kdsl
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.opencl import get_device
from tests.runtime import rt_kernels as RK

from . import ocl_kernels as K


def _interp(kernel: object, grid: tuple[int, ...], *args: object, **meta: object) -> list[np.ndarray]:
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with kdsl.backend("interpreter"):
        kernel[grid](*copies, **meta)  # type: ignore[index]
    return [c for c in copies if isinstance(c, np.ndarray)]


def test_device_interface() -> None:
    dev = kdsl.runtime.backends.get_backend("opencl").device()  # type: ignore[attr-defined]
    assert dev is get_device() and dev.host_memory is False
    assert dev.name in dev.key and dev.driver in dev.key and "fp64=" in dev.key
    buf = dev.allocate(100)
    assert buf.size >= 100 and dev.dev.mem_base_addr_align >= 64 * 8  # bits: 64-byte aligned bases
    src = np.arange(25, dtype=np.float32)
    dev.write(buf, src, offset=0)
    out = np.zeros(10, np.float32)
    dev.read(buf, out, offset=20)
    np.testing.assert_array_equal(out, src[5:15])


def test_async_launches_then_synchronize() -> None:
    """Launches on device arrays return before the kernels ran; kdsl.synchronize() waits."""
    n, launches = 1000, 50
    x = np.arange(n, dtype=np.float32)
    with kdsl.backend("opencl"):
        dx, acc = kdsl.tensor(x), kdsl.zeros(n, np.float32)
        K.add_kernel[(4,)](acc, dx, acc, n, BLOCK=256)  # warm: compile (aliased acc, acc: checked path)
        tmp = kdsl.zeros(n, np.float32)
        K.add_kernel[(4,)](dx, dx, tmp, n, BLOCK=256)  # warm the fast path
        dev = get_device()
        gate = cl.UserEvent(dev.ctx)
        cl.enqueue_barrier(dev.queue, wait_for=[gate])  # nothing queued after this runs until the gate opens
        done = threading.Event()

        def launch_all() -> None:
            with kdsl.backend("opencl"):  # the current backend is per thread
                for _ in range(launches):
                    K.add_kernel[(4,)](dx, dx, tmp, n, BLOCK=256)
            done.set()

        t = threading.Thread(target=launch_all)
        t.start()
        returned = done.wait(20)  # a launch that waited for the device would block on the gate
        gate.set_status(cl.command_execution_status.COMPLETE)
        t.join()
        assert returned, "launches on device arrays blocked: they must be asynchronous"
        kdsl.synchronize()
        np.testing.assert_array_equal(tmp.numpy(), 2 * x)


def test_chained_async_launches_match_interpreter() -> None:
    rng = np.random.default_rng(0)
    n = 777
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    want = a.copy()
    for _ in range(5):
        want = _interp(K.add_kernel, (4,), want, b, np.zeros(n, np.float32), n, BLOCK=256)[2]
    with kdsl.backend("opencl"):
        da, db = kdsl.tensor(a), kdsl.tensor(b)
        outs = [kdsl.empty(n, np.float32) for _ in range(5)]
        cur = da
        for o in outs:
            K.add_kernel[(4,)](cur, db, o, n, BLOCK=256)
            cur = o
        kdsl.synchronize()
        np.testing.assert_array_equal(cur.numpy(), want)


@pytest.mark.parametrize("which", ["x", "y", "out"])
def test_mixed_numpy_and_device_arrays(which: str) -> None:
    rng = np.random.default_rng(1)
    n = 300
    x, y = rng.integers(-100, 100, n).astype(np.int32), rng.integers(-100, 100, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    want = _interp(K.add_kernel, (3,), x, y, out, n, BLOCK=128)[2]
    with kdsl.backend("opencl"):
        args = {"x": x, "y": y, "out": out.copy()}
        args[which] = kdsl.tensor(args[which])
        K.add_kernel[(3,)](args["x"], args["y"], args["out"], n, BLOCK=128)
        res = args["out"]
        got = res.numpy() if isinstance(res, DeviceArray) else res
    np.testing.assert_array_equal(got, want)


def test_in_place_on_device_arrays_uses_safe_variant() -> None:
    """x, x, x on a device array: written memory reachable twice -> the aliasing-safe kernel."""
    x = np.arange(64, dtype=np.float32)
    with kdsl.backend("opencl"):
        d = kdsl.tensor(x)
        for _ in range(3):
            K.add_kernel[(1,)](d, d, d, 64, BLOCK=64)
        np.testing.assert_array_equal(d.numpy(), 8 * x)


def test_fast_path_is_generated_and_scalars_checked() -> None:
    from kdsl.errors import LaunchError

    with kdsl.backend("opencl"):
        dx, out = kdsl.tensor(np.ones(8, np.float32)), kdsl.zeros(8, np.float32)
        kern = kdsl.kernel(K.add_kernel.fn)  # fresh: exactly one launcher
        kern[(1,)](dx, dx, kdsl.empty(8, np.float32), 8, BLOCK=8)
        compiled = next(iter(kern._launchers.values())).kernel
        assert compiled.launch != compiled.launch_checked  # generated function, not the checked method
        compiled.launch((1, 1, 1), [dx, dx, out, 5])
        np.testing.assert_array_equal(out.numpy(), [2] * 5 + [0] * 3)
        with pytest.raises(LaunchError):
            compiled.launch((1, 1, 1), [dx, dx, out, 2**40])  # does not fit the i32 parameter
        with pytest.raises(LaunchError):
            compiled.launch((1, 1, 1), [dx, dx, out])
        compiled.launch((0, 1, 1), [dx, dx, out, 8])  # empty grid: nothing runs


def test_device_array_of_empty_size() -> None:
    with kdsl.backend("opencl"):
        e = kdsl.empty(0, np.float32)
        K.add_kernel[(1,)](e, e, kdsl.empty(0, np.float32), 0, BLOCK=16)
        kdsl.synchronize()
        assert e.numpy().shape == (0,)


def test_repeated_arguments_are_set_again_after_other_paths() -> None:
    """The fast path skips re-setting unchanged arguments; every other path must invalidate that."""
    x = np.arange(16, dtype=np.float32)
    kern = kdsl.kernel(K.add_kernel.fn)
    with kdsl.backend("opencl"):
        dx, dout = kdsl.tensor(x), kdsl.zeros(16, np.float32)
        kern[(1,)](dx, dx, dout, 16, BLOCK=16)
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        host = np.zeros(16, np.float32)
        kern[(1,)](x, x, host, 16, BLOCK=16)  # numpy branch: other buffers set on the kernel
        np.testing.assert_array_equal(host, 2 * x)
        dout.copy_from(np.zeros(16, np.float32))
        kern[(1,)](dx, dx, dout, 16, BLOCK=16)  # same device arrays as the first launch
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        dy = kdsl.tensor(x + 1)
        kern[(1,)](dy, dy, dy, 16, BLOCK=16)  # aliased: checked path, safe variant
        dout.copy_from(np.zeros(16, np.float32))
        kern[(1,)](dx, dx, dout, 16, BLOCK=16)
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        kern[(1,)](dx, dx, dout, 7, BLOCK=16)  # only a scalar changed
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        dout.copy_from(np.zeros(16, np.float32))
        kern[(1,)](dx, dx, dout, 7, BLOCK=16)
        np.testing.assert_array_equal(dout.numpy(), np.where(np.arange(16) < 7, 2 * x, 0))


def test_read_only_numpy_inputs() -> None:
    x = np.arange(16, dtype=np.float32)
    x.setflags(write=False)
    out = np.zeros(16, np.float32)
    with kdsl.backend("opencl"):
        K.add_kernel[(1,)](x, x, out, 16, BLOCK=16)
    np.testing.assert_array_equal(out, 2 * x)


def test_unused_pointer_passed_as_the_output_does_not_count_as_aliasing() -> None:
    """Triton code passes some tensor for a pointer it does not read (``kdsl.ops.matmul`` passes
    its output as the absent bias): that argument cannot alias, so the launch keeps the fast path
    and the no-overlap kernel; a pointer that is read still sends it to the safe variant."""
    x = np.arange(16, dtype=np.float32)
    with kdsl.backend("opencl"):
        kern = kdsl.kernel(RK.scale_bias.fn)
        dx, dout = kdsl.tensor(x), kdsl.zeros(16, np.float32)
        kern[(1,)](dx, dout, dout, 16, HAS_BIAS=False, BLOCK=16)
        compiled = next(iter(kern._launchers.values())).kernel
        assert compiled.info.unused == [1]
        kern[(1,)](dx, dout, dout, 16, HAS_BIAS=False, BLOCK=16)
        np.testing.assert_array_equal(dout.numpy(), 2 * x)
        assert compiled._last_args[0] is not None  # set by the fast path (the checked one clears it)
        assert compiled._safe is None
        host = np.zeros(16, np.float32)
        kern[(1,)](x, host, host, 16, HAS_BIAS=False, BLOCK=16)  # numpy arguments, same rule
        np.testing.assert_array_equal(host, 2 * x)
        assert compiled._safe is None
        dy = kdsl.tensor(x)
        kern[(1,)](dx, dy, dy, 16, HAS_BIAS=True, BLOCK=16)  # bias read and written: aliased
        np.testing.assert_array_equal(dy.numpy(), 3 * x)
