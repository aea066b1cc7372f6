"""Wrappers keep the array kind (device arrays in, device arrays out) and report launches."""

from __future__ import annotations

import numpy as np

import kdsl
from kdsl import ops


def test_device_arrays_in_device_arrays_out(backend: str) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((9, 5), dtype=np.float32), rng.standard_normal((5, 7), dtype=np.float32)
    da, db = kdsl.tensor(a), kdsl.tensor(b)
    c = ops.matmul(da, db, activation="relu")
    assert isinstance(c, kdsl.DeviceArray) and c.backend == backend
    s = ops.softmax(c)
    assert isinstance(s, kdsl.DeviceArray)
    np.testing.assert_allclose(s.numpy(), ops.softmax_ref(np.maximum(a @ b, 0)), rtol=1e-5, atol=1e-6)


def test_profile_counts_launches_by_kernel(backend: str) -> None:
    x = np.ones(100, np.float32)
    seen: list[str] = []
    with ops.profile(ops.Profiler(on_launch=seen.append)) as prof:
        ops.add(x, x)
        ops.add(x, x)
        ops.softmax(x.reshape(10, 10))
    assert prof.stats["add_kernel"].calls == 2
    assert prof.stats["softmax_kernel"].calls == 1
    assert seen == ["add_kernel", "add_kernel", "softmax_kernel"]
    assert prof.total() > 0
    ops.add(x, x)  # outside the block: not recorded
    assert prof.stats["add_kernel"].calls == 2


def test_ops_run_where_their_device_arrays_live(backend: str) -> None:
    """An op on device arrays of backend X runs on X whatever backend is current (``backend_of``):
    a kernel launch alone refuses arrays of another backend, the ops pick the backend for the user."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 2, 32, 16), dtype=np.float32) for _ in range(3))
    x = rng.standard_normal((6, 40), dtype=np.float32)
    other = "interpreter" if backend != "interpreter" else "cpu"
    if other not in kdsl.available_backends():
        return
    dx, dq, dk, dv = (kdsl.tensor(a, backend=backend) for a in (x, q, k, v))
    with kdsl.backend(other):
        s = ops.softmax(dx)
        att = ops.attention(dq, dk, dv, True)
        mm = ops.matmul(dx, kdsl.tensor(x.T.copy(), backend=backend))
    for out in (s, att, mm):
        assert isinstance(out, kdsl.DeviceArray) and out.backend == backend
    np.testing.assert_allclose(s.numpy(), ops.softmax_ref(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mm.numpy(), x @ x.T, rtol=1e-4, atol=1e-4)
