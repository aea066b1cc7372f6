"""Vulkan: overlapping numpy arguments share one device copy (bug 9 in docs/RELIABILITY.md).

The cross-backend cases are in ``tests/reliability/test_aliased_args.py``; here the
runtime's own guarantees: the result is right even if the written-set analysis
over-approximates, overlapping arrays get one allocation each group, aliased
written memory switches to the aliasing-safe variant, and the grouping itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl.runtime.vulkan import hostargs
from kdsl.runtime.vulkan.kernel import VulkanKernel

from ..reliability import aliasing_kernels as K
from ..reliability.test_aliased_args import CASES, _run


@pytest.fixture(autouse=True)
def _vulkan() -> Any:
    with kdsl.backend("vulkan"):
        yield


@pytest.mark.parametrize("name", ["carried-unused-alias", "ragged-unused-alias", "where-same", "repeat-same"])
def test_right_even_when_every_pointer_counts_as_written(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The runtime must not depend on a precise written set: mark every pointer written."""
    init = VulkanKernel.__init__
    built: list[str] = []

    def conservative(self: VulkanKernel, rt: Any, spirv: Any, written: Any, safe: Any = None, **kw: Any) -> None:
        init(self, rt, spirv, set(range(len(spirv.arg_types))), safe, **kw)
        built.append(self.name)

    expected = _run(CASES[name], "interpreter")
    monkeypatch.setattr(VulkanKernel, "__init__", conservative)
    monkeypatch.setenv("KDSL_ALWAYS_COMPILE", "1")  # not from the disk cache another test filled
    for k in (K.repeat_inc_kernel, K.carried_ptr_kernel, K.ragged_ptr_kernel, K.where_ptr_kernel):
        monkeypatch.setattr(k, "cache", {})  # compile again (through the patched constructor)
        monkeypatch.setattr(k, "_launchers", {})  # and forget the warm-launch fast path
    np.testing.assert_array_equal(_run(CASES[name], "vulkan"), expected)
    assert built


def test_overlapping_written_views_use_the_safe_variant() -> None:
    a = np.arange(64, dtype=np.float32)
    K.shift_kernel[(1,)](a[:-1], a[1:], 63, BLOCK=64)
    np.testing.assert_array_equal(a, np.concatenate([[0], np.arange(63) + 1]).astype(np.float32))
    b = np.arange(64, dtype=np.float32)
    c = np.zeros(64, np.float32)
    K.shift_kernel[(1,)](b, c, 64, BLOCK=64)  # no overlap: the plain variant
    np.testing.assert_array_equal(c, b + 1)


def _args(*arrays: np.ndarray, written: tuple[bool, ...] = ()) -> list[hostargs.HostArg]:
    flags = written or (False,) * len(arrays)
    return [hostargs.HostArg(8 * i, hostargs.host_view(a, f"p{i}"), w) for i, (a, w) in enumerate(zip(arrays, flags))]


def test_grouping_of_host_arguments() -> None:
    a = np.zeros(100, np.float32)
    other = np.zeros(10, np.float32)
    groups = hostargs.group_host_args(_args(a[1:], other, a[:-1], a, written=(True, False, False, False)))
    assert len(groups) == 2
    big = next(g for g in groups if len(g.members) == 3)
    assert big.aliased and big.view.nbytes == a.nbytes
    assert sorted(off for _, off in big.members) == [0, 0, 4]
    assert (big.pad + 0) % 4 == 0 and big.pad == a.ctypes.data % hostargs.ALIGN
    single = next(g for g in groups if len(g.members) == 1)
    assert not single.aliased and single.view.base is not None
    # strided views whose spans interleave form one group; separate arrays do not
    s = np.zeros(20, np.float32)
    assert len(hostargs.group_host_args(_args(s[0::2], s[1::2]))) == 1
    assert len(hostargs.group_host_args(_args(np.zeros(4), np.zeros(4)))) == 2
    # read-only aliases are not "aliased" (nothing to order)
    assert not any(g.aliased for g in hostargs.group_host_args(_args(a, a)))


def test_group_padding_keeps_members_aligned() -> None:
    raw = np.zeros(64, np.uint8)
    base = raw.ctypes.data
    lo = base + 2  # a float32 view at an odd (2-byte) offset and an int16 view overlapping it
    assert hostargs._pad(lo, [(0, 4), (2, 2)]) % 4 == 0
    assert (hostargs._pad(lo, [(0, 4), (4, 4)])) % 4 == 0
    assert hostargs._pad(lo, [(0, 4), (2, 4)]) == lo % hostargs.ALIGN  # impossible: host placement


def test_misaligned_overlapping_views() -> None:
    raw = np.zeros(4 * 65 + 2, np.uint8)
    f = raw[2:2 + 4 * 64].view(np.float32)  # float32 at byte offset 2
    f[:] = np.arange(64)
    K.shift_kernel[(1,)](f[:-1], f[1:], 63, BLOCK=64)
    np.testing.assert_array_equal(f, np.concatenate([[0], np.arange(63) + 1]).astype(np.float32))
