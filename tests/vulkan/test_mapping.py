"""The Vulkan mapping for lavapipe: one invocation per program, 8 programs per work-group,
constant loops unrolled (docs/VULKAN.md, *Performance against OpenCL*).

Checks that the packed work-groups run every program exactly once with the right
``program_id``/``num_programs`` (grids that are not a multiple of 8, 2-D grids), that the
automatic choice takes the one-invocation mapping where the loop-cap estimate allows and the
group mapping otherwise, and that the results match numpy either way.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.spirv import Target, emit_spirv
from kdsl.codegen.spirv.unroll import loop_passes, unrolled_loops
from kdsl.lowering import Layout, lower_to_wi
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend

from . import vk_kernels as K


@kdsl.kernel
def ids_kernel(out, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    row = kl.program_id(1)
    base = (row * kl.num_programs(0) + pid) * BLOCK
    i = kl.arange(0, BLOCK)
    kl.store(out + base + i, pid * 1000 + row * 100 + kl.num_programs(0) + i * 0)


@kdsl.kernel
def row_softmax(out, x, n_rows, BLOCK: kl.constexpr):
    for r in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        v = kl.load(x + r * BLOCK + kl.arange(0, BLOCK))
        e = kl.exp(v - kl.max(v, axis=0))
        kl.store(out + r * BLOCK + kl.arange(0, BLOCK), e / kl.sum(e, axis=0))


def _compile(kernel: object, args: tuple[object, ...], nt: int = 0, **meta: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    return VulkanBackend().compile(module, kernel.fn.__name__, LaunchOptions(num_threads=nt))  # type: ignore[attr-defined]


def _lavapipe() -> bool:
    return VulkanBackend().target().programs_per_group > 1


@pytest.mark.parametrize("grid", [(1, 1), (5, 1), (8, 1), (13, 3), (17, 2)])
def test_packed_programs_run_once_each(grid: tuple[int, int]) -> None:
    gx, gy = grid
    out = np.full(gx * gy * 4 + 8, -1, np.int32)
    k = _compile(ids_kernel, (out,), nt=1, BLOCK=4)
    k.launch((gx, gy, 1), [out])  # type: ignore[attr-defined]
    want = np.array([p * 1000 + r * 100 + gx for r in range(gy) for p in range(gx) for _ in range(4)], np.int32)
    np.testing.assert_array_equal(out[: gx * gy * 4], want)
    assert (out[gx * gy * 4 :] == -1).all()  # the overhanging invocations of the last group store nothing
    if _lavapipe():
        assert k.spirv.programs_per_group == 8  # type: ignore[attr-defined]


def test_automatic_mapping_rows_use_one_invocation() -> None:
    rows, cols = 19, 256
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    k = _compile(row_softmax, (out, x, rows), BLOCK=cols)
    k.launch((rows, 1, 1), [out, x, rows])  # type: ignore[attr-defined]
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)
    if _lavapipe():
        assert k.stages.layout.num_threads == 1  # type: ignore[attr-defined]
        assert k.spirv.programs_per_group == 8  # type: ignore[attr-defined]


@pytest.mark.parametrize("blocks,one", [((16, 16, 16), False), ((64, 64, 32), False)])
def test_automatic_mapping_dot(blocks: tuple[int, int, int], one: bool) -> None:
    """Dot blocks whose loop passes at one invocation per program would approach lavapipe's cap
    (65,535 per invocation) take the group mapping. With the unroll budget of 16 trips
    (LAVAPIPE_UNROLL_TRIPS: a 256-trip budget made first dispatches compile for minutes) even a
    16x16x16 dot over K = 128 does; the result is right either way."""
    m = 128
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((m, m)).astype(np.float32) for _ in range(2))
    c = np.zeros((m, m), np.float32)
    bm, bn, bk = blocks
    k = _compile(K.matmul_kernel, (a, b, c, m, m, m), BM=bm, BN=bn, BK=bk)
    k.launch((m // bm, m // bn, 1), [a, b, c, m, m, m])  # type: ignore[attr-defined]
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    if _lavapipe():
        assert (k.stages.layout.num_threads == 1) == one  # type: ignore[attr-defined]


def test_unroll_marks_and_pass_estimate() -> None:
    """Device-free: which loops get the Unroll control, and the pass estimate the backend reads."""
    x = np.zeros(16, np.float32)
    module = kdsl.compile_to_ir(K.matmul_kernel, x, x, x, 64, 64, 64, optimize=True, BM=16, BN=16, BK=16)
    wmod = lower_to_wi(module, "matmul_kernel", Layout(1))
    func = wmod.body.ops[0]
    fors = [op for op in func.walk() if op.NAME == "scf.for"]
    marked = unrolled_loops(func, 256)
    assert marked and len(marked) < len(fors)  # the element loops, not the K loop (unknown trips)
    assert loop_passes(func, marked) < loop_passes(func, set()) // 100
    assert unrolled_loops(func, 0) == set()
    plain = emit_spirv(wmod, Target()).binary
    hinted = emit_spirv(wmod, Target(unroll_trips=256)).binary
    assert plain != hinted and len(plain) == len(hinted)  # only OpLoopMerge's control word differs
