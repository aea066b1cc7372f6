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
