"""Loop-cut checks and uniform-buffer parameters (lavapipe's target) pass spirv-val; no device needed.

The emitter adds an exit check to every loop when ``Target.max_loop_iterations``
is set (:mod:`kdsl.codegen.spirv.loopcap`) and reads parameters from a uniform
buffer when ``params_binding == "uniform"``; the default target (every other
driver) gets neither.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.spirv import Target, emit_spirv
from kdsl.lowering import Layout, lower_to_wi

needs_tools = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="install Debian spirv-tools")
LAVAPIPE = Target(max_loop_iterations=65535, params_binding="uniform")


@kdsl.kernel
def loops_kernel(out, lim, n, s, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    acc = kl.zeros([BLOCK], dtype=kl.float32)
    for i in range(0, n, s):  # runtime step: the two-sided condition
        for j in range(3):
            acc = acc + i * j
    k = 0
    while k < kl.load(lim) + n:  # replayed after the loop
        acc = acc * 0.5
        k += 1
    kl.store(out + kl.arange(0, BLOCK), acc)


@kdsl.kernel
def effect_while_kernel(out, ctr, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    cnt = kl.zeros([BLOCK], dtype=kl.int32)
    while kl.atomic_add(ctr, 1) < n:  # not replayed: branched on through an opaque integer
        cnt = cnt + 1
    kl.store(out + kl.arange(0, BLOCK), cnt)


def _wi(kernel: object, *args: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, BLOCK=64)
    return lower_to_wi(module, kernel.fn.__name__, Layout(num_threads=16))  # type: ignore[attr-defined]


def _validate(binary: bytes, env: str, tmp_path: Path) -> None:
    path = tmp_path / "k.spv"
    path.write_bytes(binary)
    r = subprocess.run(["spirv-val", "--target-env", env, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout


CASES = [
    (loops_kernel, (np.zeros(64, np.float32), np.zeros(1, np.int32), 5, 2)),
    (effect_while_kernel, (np.zeros(64, np.int32), np.zeros(1, np.int32), 5)),
]


@needs_tools
@pytest.mark.parametrize(("kernel", "args"), CASES, ids=["loops", "effect_while"])
def test_checked_modules_validate(kernel: object, args: tuple[object, ...], tmp_path: Path) -> None:
    wmod = _wi(kernel, *args)
    checked = emit_spirv(wmod, LAVAPIPE)  # type: ignore[arg-type]
    _validate(checked.binary, checked.target_env, tmp_path)
    assert checked.loops and checked.loop_limit == 65535 and checked.params_binding == "uniform"
    assert all(line > 0 for _, line, _ in checked.loops)  # each check points at a source line
    plain = emit_spirv(wmod, Target())  # type: ignore[arg-type]
    _validate(plain.binary, plain.target_env, tmp_path)
    assert plain.loops == () and len(plain.binary) < len(checked.binary)


@needs_tools
def test_large_parameter_block_in_the_uniform_buffer(tmp_path: Path) -> None:
    @kdsl.kernel
    def many(a, b, c, d, e, f, g, h, i, j, k, l, m, o, p, q, r, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]  # noqa: E741
        x = kl.arange(0, BLOCK)
        kl.store(r + x, kl.load(a + x) + kl.load(q + x))

    arrays = [np.zeros(64, np.float32)] * 17
    wmod = _wi(many, *arrays)
    for target, in_buffer in ((Target(), True), (LAVAPIPE, False)):
        k = emit_spirv(wmod, target)  # type: ignore[arg-type]
        _validate(k.binary, k.target_env, tmp_path)
        assert k.params.in_buffer is in_buffer  # 160 bytes: too many for 128 B of push constants


def test_grid_stride_loops_estimate_launch_passes() -> None:
    """A top-level grid-stride loop over a parameter bound: each iteration past the first adds the
    loop's passes; the estimate per launch follows the grid and the argument."""
    from kdsl.codegen.spirv.unroll import grid_stride_loops, loop_passes

    @kdsl.kernel
    def rows(x, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
        for r in kl.range(kl.program_id(0), n, kl.num_programs(0)):
            c = kl.arange(0, BLOCK)
            kl.store(x + r * BLOCK + c, kl.load(x + r * BLOCK + c) + 1.0)

    module = kdsl.compile_to_ir(rows, np.zeros(64, np.float32), 4, optimize=True, BLOCK=16)
    func = lower_to_wi(module, "rows", Layout.from_options(1, ())).body.ops[0]
    (loop,) = grid_stride_loops(func, set())
    assert loop.param == 1 and loop.start == 0 and loop.axis == 0 and loop.passes > 16
    assert loop.extra_passes((4, 1, 1), [None, 4]) == 0  # one row per program
    assert loop.extra_passes((2, 1, 1), [None, np.int64(7)]) == 3 * loop.passes  # ceil(7 / 2) = 4 rows
    assert loop_passes(func, set()) >= loop.passes
