"""Claimed launches on CPU devices (kdsl/codegen/opencl/claim.py): every program runs exactly once.

A claiming kernel (launch option ``lower.claim``) runs one work-group per compute unit, each
taking runs of program ids from a counter until none is left; the counters must be back at zero after every launch (the next launch
starts from them) and after a fault. These tests count the runs of every program id through every
launch path (device arrays, numpy arrays, the checked path), with claims and without.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.opencl import DeviceCaps
from kdsl.codegen.opencl.claim import claimable
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.opencl import clapi, get_device, render_stages
from kdsl.runtime.opencl.backend import kernel_info

GRIDS = [(1, 1, 1), (2, 1, 1), (3, 1, 1), (64, 1, 1), (7, 5, 3), (1000, 3, 1), (5, 1, 7), (4097, 1, 1)]


@kdsl.kernel
def count_runs(out, n0, n1):
    # the linear program id, from program_id and num_programs as the kernel sees them
    pid = kl.program_id(0) + kl.program_id(1) * kl.num_programs(0) + kl.program_id(2) * n0 * n1
    kl.atomic_add(out + pid, 1)


@kdsl.kernel
def count_runs_checked(out, n0, n1):
    # a device assert sends every launch down the checked path (OpenCLKernel.launch_checked)
    pid = kl.program_id(0) + kl.program_id(1) * kl.num_programs(0) + kl.program_id(2) * n0 * n1
    kl.atomic_add(out + pid, 1)
    kl.device_assert(kl.num_programs(0) == n0, "num_programs(0) is the launch grid")


@kdsl.kernel
def record_grid(out):
    pid = kl.program_id(0) + kl.program_id(1) * kl.num_programs(0)
    kl.store(out + 2 * pid, kl.num_programs(0))
    kl.store(out + 2 * pid + 1, kl.num_programs(1))


@kdsl.kernel
def chain(flags, out, spins):
    # program p waits for program p - 1 (a stream-K style fix-up order); bounded, so a broken
    # forward-progress guarantee shows as a wrong count instead of a hang
    pid = kl.program_id(0)
    seen = pid == 0
    i = 0
    while (not seen) & (i < spins):
        seen = kl.atomic_add(flags + pid - 1, 0) != 0
        i += 1
    kl.store(out + pid, seen.to(kl.int32))
    kl.atomic_xchg(flags + pid, 1)


def sched_counters() -> np.ndarray:
    dev = get_device()
    got = np.zeros(2, np.uint64)
    dev.synchronize()
    clapi.read_buffer(dev.queue_handle, dev.sched_handle, got.nbytes, got.ctypes.data)
    return got


@pytest.fixture(params=[{"lower.claim": 1}, {"lower.claim": 4}, {}, {"lower.claim": 2, "num_threads": 16}],
                ids=["claim1", "claim4", "plain", "claim-ignored-16-threads"])
def opts(request: pytest.FixtureRequest) -> dict[str, int]:
    """Launch options: claiming kernels (two claim divisors), plain kernels, and a claim request a
    kernel of 16 work-items per program cannot honour (barriers): it runs plain."""
    if "lower.claim" in request.param and not get_device().claims:
        pytest.skip("this OpenCL device does not claim program ids (not a multi-core CPU device)")
    return dict(request.param)


@pytest.mark.parametrize("grid", GRIDS, ids=str)
def test_every_program_runs_once_on_device_arrays(opts: dict[str, int], grid: tuple[int, int, int]) -> None:
    total = grid[0] * grid[1] * grid[2]
    with kdsl.backend("opencl"):
        runs = kdsl.zeros(total, np.int32)
        for _ in range(3):
            count_runs[grid](runs, grid[0], grid[1], **opts)
        count_runs_checked[grid](runs, grid[0], grid[1], **opts)
        np.testing.assert_array_equal(runs.numpy(), np.full(total, 4, np.int32))
    np.testing.assert_array_equal(sched_counters(), [0, 0])


@pytest.mark.parametrize("grid", [(64, 1, 1), (7, 5, 3)], ids=str)
def test_every_program_runs_once_on_numpy_arrays(opts: dict[str, int], grid: tuple[int, int, int]) -> None:
    total = grid[0] * grid[1] * grid[2]
    runs = np.zeros(total, np.int32)
    with kdsl.backend("opencl"):
        count_runs[grid](runs, grid[0], grid[1], **opts)
        count_runs_checked[grid](runs, grid[0], grid[1], **opts)
    np.testing.assert_array_equal(runs, np.full(total, 2, np.int32))
    np.testing.assert_array_equal(sched_counters(), [0, 0])


def test_num_programs_is_the_launch_grid(opts: dict[str, int]) -> None:
    with kdsl.backend("opencl"):
        out = kdsl.zeros(2 * 9 * 4, np.int32)
        record_grid[(9, 4)](out, **opts)
        np.testing.assert_array_equal(out.numpy().reshape(-1, 2), np.tile([9, 4], (36, 1)))


def test_a_program_waiting_for_the_previous_one_finishes() -> None:
    n = 200
    with kdsl.backend("opencl"):
        flags, out = kdsl.zeros(n, np.int32), kdsl.zeros(n, np.int32)
        chain[(n,)](flags, out, 1 << 22, **{"lower.claim": 2})
        np.testing.assert_array_equal(out.numpy(), np.ones(n, np.int32))


def test_recover_zeroes_counters_a_broken_launch_left() -> None:
    dev = get_device()
    if not dev.claims:
        pytest.skip("this OpenCL device does not claim program ids")
    with kdsl.backend("opencl"):
        runs = kdsl.zeros(64, np.int32)
        count_runs[(64,)](runs, 64, 1, **{"lower.claim": 2})
        stale = np.array([40, 1], np.uint64)  # what a launch stopped half-way would leave
        clapi.write_buffer(dev.queue_handle, dev.sched_handle, stale.nbytes, stale.ctypes.data)
        dev.recover()
        count_runs[(64,)](runs, 64, 1, **{"lower.claim": 2})
        np.testing.assert_array_equal(runs.numpy(), np.full(64, 2, np.int32))


def test_geometry() -> None:
    dev = get_device()
    if not dev.claims:
        pytest.skip("this OpenCL device does not claim program ids")
    units = dev.compute_units
    assert dev.claim_geometry((1, 1, 1), 2) == ((1, 1, 1), 2 * units)  # no more groups than programs
    assert dev.claim_geometry((1000, 3, 1), 2) == ((units, 1, 1), 2 * units)
    assert dev.claim_geometry((1 << 31, 65535, 2), 1) == ((units, 1, 1), units)  # 64-bit counters


def test_only_asked_single_work_item_programs_claim() -> None:
    """Claims are a launch option (``lower.claim``); work-groups of several work-items synchronise
    with barriers, which a loop around the body would break, so they never claim."""
    args, meta = [np.zeros(1, np.int32), 4, 4], {}
    specs = count_runs.specialization(args, meta)
    module, entry = count_runs.compile_module(specs, optimize=True, debug=False)
    caps = DeviceCaps(fp64=True, int64_atomics=True, claim_programs=True)
    claim = (("lower.claim", 2),)
    one = render_stages(module, entry, LaunchOptions(num_threads=1, extra=claim), caps)
    assert one.rendered.claims and "kd_sched" in one.rendered.source and kernel_info(one).claim == 2
    plain = render_stages(module, entry, LaunchOptions(num_threads=1), caps)
    assert not plain.rendered.claims and kernel_info(plain).claim == 0
    many = render_stages(module, entry, LaunchOptions(num_threads=16, extra=claim), caps)
    assert not many.rendered.claims and "kd_sched" not in many.rendered.source
    assert not claimable(many.wi_module.body.ops[0])
    off = render_stages(module, entry, LaunchOptions(num_threads=1, extra=claim), DeviceCaps())
    assert not off.rendered.claims  # a device that cannot (a GPU, KDSL_OPENCL_CLAIM=0)
