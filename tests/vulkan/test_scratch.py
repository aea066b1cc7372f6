"""Kernels past the device's 32 KiB of work-group memory keep their largest ``__local`` buffers in
a scratch buffer (kdsl/runtime/vulkan/scratch.py): slices per work-group that never overlap between
work-groups running together -- several dispatches in turn when the grid has more work-groups than
the launch has slices -- a buffer reused across launches and grown (also while asynchronous
launches still use the old one)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend, scratch
from kdsl.runtime.vulkan.scratch import slice_pieces

N = 128  # a 128x128 f32 tile: its transposition exchanges 64 KiB through work-group memory


@kdsl.kernel
def trans3d_kernel(X, Z, N: kl.constexpr):  # type: ignore[no-untyped-def]
    """Program (i, j, k) transposes block (i * gy + j) * gz + k."""
    block = (kl.program_id(0) * kl.num_programs(1) + kl.program_id(1)) * kl.num_programs(2) + kl.program_id(2)
    offs = block * N * N + kl.arange(0, N)[:, None] * N + kl.arange(0, N)[None, :]
    kl.store(Z + offs, kl.trans(kl.load(X + offs)) + block)


@pytest.fixture(autouse=True)
def _vulkan() -> Any:
    with kdsl.backend("vulkan"):
        yield
        kdsl.synchronize()


def _run(grid: tuple[int, int, int]) -> None:
    blocks = grid[0] * grid[1] * grid[2]
    x = np.random.default_rng(blocks).integers(-9999, 9999, (blocks, N, N)).astype(np.float32)
    z = np.zeros_like(x)
    trans3d_kernel[grid](x, z, N)
    assert np.array_equal(z, np.swapaxes(x, 1, 2) + np.arange(blocks, dtype=np.float32)[:, None, None])


def _per_group() -> int:
    x = np.zeros((N, N), np.float32)
    mod = kdsl.compile_to_ir(trans3d_kernel, x, x, N, optimize=True)
    entry = str(mod.body.ops[0].attributes["sym_name"])
    stages = VulkanBackend().compile_stages(mod, entry, LaunchOptions())
    func = stages.wi_module.body.ops[0]
    assert int(func.attributes["local_bytes"]) <= VulkanBackend().target().max_shared_memory
    assert stages.spirv.scratch_bytes == int(func.attributes["scratch_bytes"]) >= N * N * 4
    assert stages.spirv.programs_per_group == 1
    with tempfile.TemporaryDirectory() as tmp:
        spv = Path(tmp) / "k.spv"
        spv.write_bytes(stages.spirv.binary)
        dis = subprocess.run(["spirv-dis", str(spv)], capture_output=True, text=True, check=True).stdout
    assert "OpMemberDecorate %scratch0 0 Coherent" in dis or "0 Coherent" in dis, dis[:2000]
    return stages.spirv.scratch_bytes


def test_compiled_kernel_declares_its_scratch() -> None:
    _per_group()


@pytest.mark.parametrize(
    "grid, slices, kind",
    [((5, 1, 1), 2, "parts of rows"), ((1, 5, 2), 2, "whole rows"), ((2, 2, 3), 4, "whole planes"),
     ((2, 3, 2), 64, "one dispatch")],
)
def test_more_groups_than_slices_run_in_turn(
    grid: tuple[int, int, int], slices: int, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scratch, "SCRATCH_BUDGET", slices * _per_group())
    recorded: list[int] = []

    def counting(cmd: Any, pieces: Any, barrier: Any) -> None:
        recorded.append(len(pieces))
        scratch.record_pieces_unpatched(cmd, pieces, barrier)

    monkeypatch.setattr(scratch, "record_pieces_unpatched", scratch.record_pieces, raising=False)
    monkeypatch.setattr(scratch, "record_pieces", counting)
    _run(grid)
    blocks = grid[0] * grid[1] * grid[2]
    if blocks <= slices:
        assert recorded == []  # one ordinary dispatch
    else:
        assert recorded and recorded[0] >= -(-blocks // slices), (kind, recorded)


def _fresh_runtime_scratch() -> Any:
    """The device's runtime, its scratch buffer dropped (earlier tests grew it)."""
    kdsl.synchronize()
    rt = VulkanBackend().device().rt
    old = rt.scratch.detach()
    if old is not None:
        rt.allocator.free(old)
    return rt


def test_buffer_is_reused_and_grows() -> None:
    rt = _fresh_runtime_scratch()
    per_group = _per_group()
    _run((1, 1, 1))
    first = rt.scratch.current
    assert first is not None and first.size >= per_group
    _run((1, 1, 1))
    assert rt.scratch.current is first  # reused
    _run((3, 2, 1))  # six groups: a larger buffer
    grown = rt.scratch.current
    assert grown is not None and grown.size >= 6 * per_group and grown is not first
    _run((2, 1, 1))
    assert rt.scratch.current is grown


def test_growth_while_asynchronous_launches_use_the_old_buffer() -> None:
    rt = _fresh_runtime_scratch()
    outs = []
    for blocks in (1, 2, 5, 3):  # device arrays only: every launch is asynchronous
        x = np.random.default_rng(blocks).integers(-9999, 9999, (blocks, N, N)).astype(np.float32)
        dz = kdsl.empty((blocks, N, N), np.float32)
        trans3d_kernel[(blocks, 1, 1)](kdsl.tensor(x), dz, N)
        outs.append((x, dz))
    kdsl.synchronize()
    for x, dz in outs:
        ref = np.swapaxes(x, 1, 2) + np.arange(len(x), dtype=np.float32)[:, None, None]
        assert np.array_equal(dz.numpy(), ref)
    assert rt.scratch.current is not None and rt.scratch.current.size >= 5 * _per_group()


@pytest.mark.parametrize(
    "grid, slices, limit",
    [((7, 1, 1), 3, (65535,) * 3), ((7, 1, 1), 3, (2, 65535, 65535)), ((3, 5, 2), 7, (65535,) * 3),
     ((3, 5, 2), 40, (65535,) * 3), ((2, 3, 4), 13, (65535, 65535, 1)), ((4, 9, 1), 20, (65535, 2, 65535)),
     ((1, 1, 1), 1, (65535,) * 3)],
)
def test_slice_pieces_are_consecutive_and_cover_the_grid(
    grid: tuple[int, int, int], slices: int, limit: tuple[int, int, int]
) -> None:
    gx, gy, _ = grid
    seen: list[int] = []
    for x0, y0, z0, w, h, d in slice_pieces(grid, limit, slices):
        assert 1 <= w <= limit[0] and 1 <= h <= limit[1] and 1 <= d <= limit[2]
        ids = sorted(x + gx * (y + gy * z) for z in range(z0, z0 + d) for y in range(y0, y0 + h)
                     for x in range(x0, x0 + w))  # fmt: skip
        assert ids == list(range(ids[0], ids[0] + len(ids))) and len(ids) <= slices  # distinct slices
        seen += ids
    assert sorted(seen) == list(range(grid[0] * grid[1] * grid[2]))
