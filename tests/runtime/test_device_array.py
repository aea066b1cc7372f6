"""Device arrays: creation, round trips, numpy-like description, launches."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kdsl
from kdsl.errors import LaunchError
from kdsl.runtime.device_array import HOST_DEVICE, DeviceArray

from . import rt_kernels as K

DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float16]


@pytest.fixture(params=["interpreter", "opencl"])
def dev_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    name: str = request.param
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable")
    with kdsl.backend(name):
        yield name


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_dtypes(dev_backend: str, dtype: type) -> None:
    a = (np.arange(37) % 100).astype(dtype)
    d = kdsl.tensor(a)
    assert isinstance(d, DeviceArray)
    assert d.backend == dev_backend
    assert d.shape == a.shape and d.dtype == a.dtype and d.strides == a.strides and d.nbytes == a.nbytes
    back = d.numpy()
    assert back.dtype == a.dtype and np.array_equal(back, a)
    back[0] = 99  # .numpy() is a copy
    assert d.numpy()[0] == a[0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=3))
def test_round_trip_shapes(shape: list[int]) -> None:
    with kdsl.backend("interpreter"):
        a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        d = kdsl.tensor(a)
        assert d.shape == tuple(shape) and d.ndim == len(shape)
        assert d.strides == np.empty(shape, np.float32).strides or a.size == 0
        assert np.array_equal(d.numpy(), a)
        assert np.array_equal(np.asarray(d), a)


def test_empty_zeros_like(dev_backend: str) -> None:
    z = kdsl.zeros((3, 4), np.int32)
    assert z.shape == (3, 4) and z.dtype == np.int32 and z.strides == (16, 4)
    assert np.array_equal(z.numpy(), np.zeros((3, 4), np.int32))
    e = kdsl.empty(5, kdsl.language.float64)
    assert e.shape == (5,) and e.dtype == np.float64
    zl = kdsl.zeros_like(np.ones((2, 2), np.float16))
    assert zl.dtype == np.float16 and np.array_equal(zl.numpy(), np.zeros((2, 2), np.float16))
    el = kdsl.empty_like(z)
    assert el.shape == z.shape and el.backend == z.backend
    z.copy_from(np.arange(12).reshape(3, 4))
    assert np.array_equal(z.numpy(), np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError, match="shape"):
        z.copy_from(np.zeros(3))


def test_copy_of_device_array_and_dtype_conversion() -> None:
    d = kdsl.tensor(np.arange(4), backend="interpreter", dtype=np.float32)
    assert d.dtype == np.float32
    d2 = kdsl.tensor(d)
    assert np.array_equal(d2.numpy(), [0, 1, 2, 3]) and d2.buffer is not d.buffer


def test_unsupported_dtype() -> None:
    with pytest.raises(TypeError, match="cannot hold"):
        kdsl.empty(3, np.complex64, backend="interpreter")


def test_host_buffers_are_aligned() -> None:
    for n in (1, 3, 17, 1000):
        buf = HOST_DEVICE.allocate(n)
        assert buf.ctypes.data % 64 == 0 and buf.nbytes >= n


def test_launch_on_device_arrays(dev_backend: str) -> None:
    n = 1000
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, np.float32)
    dx, dy, do = kdsl.tensor(x), kdsl.tensor(y), kdsl.empty(n, np.float32)
    for _ in range(3):  # asynchronous launches, one synchronize
        K.add[(kdsl.cdiv(n, 128),)](dx, dy, do, n, BLOCK=128)
    kdsl.synchronize()
    assert np.array_equal(do.numpy(), x + y)


def test_mixing_numpy_and_device_arrays(dev_backend: str) -> None:
    n = 300
    x = np.arange(n, dtype=np.int32)
    y = np.full(n, 7, np.int32)
    out_np = np.zeros(n, np.int32)
    dx = kdsl.tensor(x)
    K.add[(3,)](dx, y, out_np, n, BLOCK=128)  # numpy output is written back
    assert np.array_equal(out_np, x + y)
    dout = kdsl.zeros(n, np.int32)
    K.add[(3,)](x, dx, dout, n, BLOCK=128)
    assert np.array_equal(dout.numpy(), 2 * x)


def test_wrong_backend_array_names_the_parameter() -> None:
    with kdsl.backend("interpreter"):
        alien = DeviceArray(HOST_DEVICE.allocate(64), (16,), np.dtype(np.float32), "elsewhere", HOST_DEVICE)
        x = np.zeros(16, np.float32)
        with pytest.raises(LaunchError) as info:
            K.add[(1,)](x, alien, x, 16, BLOCK=16)
        assert info.value.param == "y_ptr" and "elsewhere" in str(info.value)


def test_device_array_as_constexpr_is_an_error() -> None:
    with kdsl.backend("interpreter"):
        d = kdsl.zeros(16, np.float32)
        x = np.zeros(16, np.float32)
        with pytest.raises(LaunchError) as info:
            K.add[(1,)](x, x, x, 16, BLOCK=d)
        assert info.value.param == "BLOCK"


def test_repr_len_and_no_host_interfaces() -> None:
    d = kdsl.zeros((4, 2), np.float32, backend="interpreter")
    assert len(d) == 4 and "interpreter" in repr(d) and d.size == 8 and d.itemsize == 4
    assert not hasattr(d, "__array_interface__") and not hasattr(d, "__dlpack__")
