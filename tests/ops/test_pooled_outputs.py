"""Large numpy outputs of ``kdsl.ops`` come from the host caching allocator (ops/_common.py ``empty``).

A fresh 64 MiB output costs a page fault per 4 KiB; a dropped output's block is reused by the
next call instead. The contract: live outputs never share memory, views keep theirs alive, small
outputs stay plain numpy arrays, and results are unchanged.
"""

from __future__ import annotations

import gc

import numpy as np

from kdsl import ops
from kdsl.ops._common import POOLED_OUTPUT_BYTES, empty
from kdsl.runtime.hostpool import HOST_POOL


def _addr(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def test_a_dropped_output_is_reused_and_live_ones_are_distinct(backend: str) -> None:
    x = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)  # 2 MiB
    ref = ops.softmax_ref(x)
    first = ops.softmax(x)
    np.testing.assert_allclose(first, ref, rtol=1e-5, atol=1e-7)
    second = ops.softmax(x)  # first still alive: different memory
    assert _addr(first) != _addr(second)
    np.testing.assert_array_equal(first, second)
    where = _addr(first)
    del first
    gc.collect()
    third = ops.softmax(x)
    assert _addr(third) == where  # the dropped block came back, pages already mapped
    np.testing.assert_allclose(third, ref, rtol=1e-5, atol=1e-7)


def test_a_view_keeps_the_output_alive() -> None:
    y = empty((1024, 1024), np.float32, np.empty(1))
    y[...] = 7.0
    row = y[3]
    where = _addr(y)
    del y
    gc.collect()
    other = empty((1024, 1024), np.float32, np.empty(1))
    assert _addr(other) != where  # the block is still referenced through ``row``
    assert (row == 7.0).all()


def test_small_outputs_and_a_disabled_pool_give_plain_arrays() -> None:
    small = empty((16, 16), np.float32, np.empty(1))
    assert small.base is None and small.flags.owndata
    assert empty((POOLED_OUTPUT_BYTES // 4,), np.float32, np.empty(1)).base is not None
    saved = HOST_POOL.limit
    HOST_POOL.set_limit(0)
    try:
        assert empty((POOLED_OUTPUT_BYTES,), np.float32, np.empty(1)).base is None
    finally:
        HOST_POOL.set_limit(saved)
