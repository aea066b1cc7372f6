"""lavapipe's loop cap: a cut loop raises ``KernelRuntimeError``, never a silent wrong result.

llvmpipe stops an invocation's loops after 65535 passes in total (all loops of
the invocation; a loop of N iterations takes N + 1 passes, the last one only
testing the condition). kdsl checks every loop exit on such a driver
(:mod:`kdsl.codegen.spirv.loopcap`). Each case runs just inside the cap
(right answer, no error) and just beyond it (error naming the kernel and the
limit), then a normal launch shows kdsl is still usable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.spirv import Target, emit_spirv
from kdsl.errors import KernelRuntimeError
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend
from kdsl.runtime.vulkan.device import LLVMPIPE_LOOP_LIMIT, get_device

from . import vk_kernels as K
from .vk_plugin import validate

CAP = LLVMPIPE_LOOP_LIMIT
B = 8


@kdsl.kernel
def one_loop(out, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    acc = kl.zeros([BLOCK], dtype=kl.int32)
    for i in range(n):
        acc = acc * 1103515245 + i
    kl.store(out + kl.arange(0, BLOCK), acc)


@kdsl.kernel
def nested_loops(out, a, b, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    cnt = kl.zeros([BLOCK], dtype=kl.int32)
    for _i in range(a):
        for _j in range(b):
            cnt = cnt + 1
    kl.store(out + kl.arange(0, BLOCK), cnt)


@kdsl.kernel
def two_loops(out, a, b, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    x = kl.zeros([BLOCK], dtype=kl.int32)
    y = kl.zeros([BLOCK], dtype=kl.int32)
    for _i in range(a):
        x = x + 1
    for _j in range(b):
        y = y + 1
    kl.store(out + kl.arange(0, BLOCK), x * 3 + y)


@kdsl.kernel
def while_loop(out, lim, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    i = 0
    cnt = kl.zeros([BLOCK], dtype=kl.int32)
    while i < kl.load(lim) + n:  # the condition reads memory: it is evaluated again after the loop
        cnt = cnt + 1
        i += 1
    kl.store(out + kl.arange(0, BLOCK), cnt)


@kdsl.kernel
def atomic_while(out, ctr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    cnt = kl.zeros([BLOCK], dtype=kl.int32)
    while kl.atomic_add(ctr, 1) < n:  # a condition with an effect cannot be evaluated twice
        cnt = cnt + 1
    kl.store(out + kl.arange(0, BLOCK), cnt)


def _lcg(n: int) -> np.ndarray:
    acc = np.zeros(B, np.int64)
    for i in range(n):
        acc = (acc * 1103515245 + i) & 0xFFFFFFFF
    return acc.astype(np.uint32).view(np.int32)


@pytest.fixture(scope="module")
def capped() -> None:
    if VulkanBackend().target().max_loop_iterations == 0:
        pytest.skip("this Vulkan driver has no loop cap")


def _compile(kernel: object, *args: object, **meta: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, BLOCK=B, **meta)
    stages = VulkanBackend().compile_stages(module, kernel.fn.__name__, LaunchOptions(num_threads=8))  # type: ignore[attr-defined]
    validate(stages.spirv.binary, stages.spirv.target_env)
    return VulkanBackend().compile(module, kernel.fn.__name__, LaunchOptions(num_threads=8))  # type: ignore[attr-defined]


def _check_limit(k: object, inside: list[object], beyond: list[object], expect: Callable[[np.ndarray], None],
                 extra: list[np.ndarray] | None = None) -> None:
    out = np.zeros(B, np.int32)
    k.launch((1, 1, 1), [out, *inside])  # type: ignore[attr-defined]
    expect(out)
    with pytest.raises(KernelRuntimeError, match=r"kernel '\w+' exceeded the Vulkan driver's loop limit") as info:
        k.launch((1, 1, 1), [out, *beyond])  # type: ignore[attr-defined]
    assert f"after {CAP} loop iterations" in str(info.value) and "another backend" in str(info.value)
    assert info.value.loc.known  # the loop's source line


def test_lavapipe_is_detected() -> None:
    dev = get_device()
    expected = CAP if "llvmpipe" in dev.info.name.lower() else 0
    assert dev.target.max_loop_iterations == expected


def test_single_loop(capped: None) -> None:
    k = _compile(one_loop, np.zeros(B, np.int32), 5)
    _check_limit(k, [CAP], [CAP + 1], lambda out: np.testing.assert_array_equal(out, _lcg(CAP)))
    out = np.zeros(B, np.int32)
    k.launch((2, 1, 1), [out, 1000])  # type: ignore[attr-defined]
    np.testing.assert_array_equal(out, _lcg(1000))  # still usable; the status word was reset


@pytest.mark.parametrize(("inside", "beyond"), [((255, 255), (256, 255)), ((217, 300), (218, 300)),
                                                ((200, 300), (300, 300))])
def test_nested_loops(capped: None, inside: tuple[int, int], beyond: tuple[int, int]) -> None:
    # passes: a * (b + 1) + a + 1; the last (outer exit test) may be cut without harm
    k = _compile(nested_loops, np.zeros(B, np.int32), 5, 5)
    _check_limit(k, list(inside), list(beyond), lambda out: np.testing.assert_array_equal(out, inside[0] * inside[1]))


def test_sequential_loops(capped: None) -> None:
    # 30000 + 1 passes for the first loop leave exactly enough for 35534 iterations of the second
    k = _compile(two_loops, np.zeros(B, np.int32), 5, 5)
    _check_limit(k, [30000, 35534], [30000, 35535],
                 lambda out: np.testing.assert_array_equal(out, 30000 * 3 + 35534))
    _check_limit(k, [1000, 2000], [40000, 40000], lambda out: np.testing.assert_array_equal(out, 1000 * 3 + 2000))


def test_while_condition_replayed(capped: None) -> None:
    lim = np.array([3], np.int32)
    k = _compile(while_loop, np.zeros(B, np.int32), lim, 5)
    _check_limit(k, [lim, CAP - 3], [lim, CAP - 2], lambda out: np.testing.assert_array_equal(out, CAP))


def test_while_condition_with_effects(capped: None) -> None:
    ctr = np.zeros(1, np.int32)
    k = _compile(atomic_while, np.zeros(B, np.int32), ctr, 5)
    out = np.zeros(B, np.int32)
    k.launch((1, 1, 1), [out, ctr, CAP - 1])  # type: ignore[attr-defined]
    assert (out == CAP - 1).all() and ctr[0] == CAP  # the final (failing) atomic ran too
    ctr[0] = 0
    # CAP iterations: only the last condition test is cut, but that test's atomic is then missing
    with pytest.raises(KernelRuntimeError, match="loop limit"):
        k.launch((1, 1, 1), [out, ctr, CAP])  # type: ignore[attr-defined]
    assert ctr[0] == CAP


def test_other_drivers_pay_nothing() -> None:
    module = kdsl.compile_to_ir(K.softmax_kernel, np.zeros((4, 64), np.float32), np.zeros((4, 64), np.float32),
                                64, 64, 64, optimize=True, BLOCK=64)
    wmod = VulkanBackend().compile_stages(module, "softmax_kernel", LaunchOptions(num_threads=8)).wi_module
    plain, checked = emit_spirv(wmod, Target()), emit_spirv(wmod, Target(max_loop_iterations=CAP))
    assert plain.loops == () and plain.loop_limit == 0
    assert len(checked.loops) > 0 and len(checked.binary) > len(plain.binary)
    validate(checked.binary, checked.target_env)


@kdsl.kernel
def persistent_rows(x, out, n_rows, n_cols, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    for row in kl.range(kl.program_id(0), n_rows, kl.num_programs(0)):
        cols = kl.arange(0, BLOCK)
        v = kl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        kl.store(out + row * n_cols + cols, v * 2.0 + kl.sum(v, axis=0), mask=cols < n_cols)


def test_grid_stride_loop_takes_the_group_mapping_past_the_cap(capped: None) -> None:
    """One invocation per program walks whole rows; a grid too small for the rows would pass the
    cap, so that launch runs the work-group mapping (built once) and gets the right answer."""
    rows, cols = 200, 1000
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    ref = x * 2 + x.sum(axis=1, keepdims=True)
    module = kdsl.compile_to_ir(persistent_rows, x, x, rows, cols, optimize=True, BLOCK=1024)
    k = VulkanBackend().compile(module, "persistent_rows", LaunchOptions())
    assert k.stages.layout.num_threads == 1 and k.stages.grid_stride  # type: ignore[attr-defined]
    for grid, spread in ((rows, False), (2, True)):
        out = np.zeros_like(x)
        k.launch((grid, 1, 1), [x, out, rows, cols])
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-3)
        assert (k._spread_kernel is not None) == spread
    assert k._spread_kernel is not None and k._spread_kernel.stages.layout.num_threads > 1  # type: ignore[attr-defined]
