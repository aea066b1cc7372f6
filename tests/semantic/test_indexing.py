"""Indexing: program_id / num_programs over 1-, 2- and 3-D grids, and callable grids.

Triton facts (triton-lang.org/main/python-api/generated/triton.language.program_id.html,
...num_programs.html): ``program_id(axis)`` is the index of the running program
along grid axis 0, 1 or 2 and ``num_programs(axis)`` the grid size along it; a
launch grid is a tuple of 1-3 ints or a callable receiving the meta-parameters.
All comparisons are exact.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl


@kdsl.kernel
def ids_kernel(out_ptr):
    pid0 = kl.program_id(0)
    pid1 = kl.program_id(axis=1)
    pid2 = kl.program_id(2)
    n0 = kl.num_programs(0)
    n1 = kl.num_programs(1)
    n2 = kl.num_programs(axis=2)
    linear = (pid2 * n1 + pid1) * n0 + pid0
    base = out_ptr + linear * 6
    kl.store(base + 0, pid0)
    kl.store(base + 1, pid1)
    kl.store(base + 2, pid2)
    kl.store(base + 3, n0)
    kl.store(base + 4, n1)
    kl.store(base + 5, n2)


def _expected(grid: tuple[int, ...]) -> np.ndarray:
    g0, g1, g2 = (*grid, 1, 1)[:3]
    exp = np.zeros((g2, g1, g0, 6), dtype=np.int32)
    for z in range(g2):
        for y in range(g1):
            for x in range(g0):
                exp[z, y, x] = (x, y, z, g0, g1, g2)
    return exp.reshape(-1)


@pytest.mark.parametrize("grid", [(5,), (3, 4), (2, 3, 4), (1, 1, 3)])
def test_program_id_and_num_programs(backend: str, grid: tuple[int, ...]) -> None:
    n = int(np.prod(grid))
    out = np.full(n * 6, -1, dtype=np.int32)
    ids_kernel[grid](out)
    np.testing.assert_array_equal(out, _expected(grid))


@kdsl.kernel
def copy_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    pid = kl.program_id(0)
    offs = pid * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("block", [16, 64])
def test_grid_callable_of_meta(backend: str, block: int) -> None:
    n = 200
    x = np.arange(n, dtype=np.float32) * 0.5
    out = np.zeros(n, dtype=np.float32)
    seen: list[int] = []

    def grid(meta: dict) -> tuple[int]:
        seen.append(meta["BLOCK"])
        return (kdsl.cdiv(n, meta["BLOCK"]),)

    copy_kernel[grid](x, out, n, BLOCK=block)
    assert seen and seen[-1] == block
    np.testing.assert_array_equal(out, x)


def test_cdiv_host() -> None:
    assert kdsl.cdiv(200, 16) == 13
    assert kdsl.cdiv(192, 16) == 12
    assert kdsl.cdiv(1, 16) == 1


@kdsl.kernel
def pid_2d_tile_kernel(out_ptr, stride, BM: kl.constexpr, BN: kl.constexpr):
    pm = kl.program_id(0)
    pn = kl.program_id(1)
    rows = pm * BM + kl.arange(0, BM)
    cols = pn * BN + kl.arange(0, BN)
    val = rows[:, None] * 1000 + cols[None, :]
    kl.store(out_ptr + rows[:, None] * stride + cols[None, :], val)


def test_2d_grid_tiles_cover_matrix(backend: str) -> None:
    m, n = 32, 48
    out = np.full((m, n), -1, dtype=np.int32)
    pid_2d_tile_kernel[(m // 16, n // 16)](out, n, BM=16, BN=16)
    r, c = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    np.testing.assert_array_equal(out, r * 1000 + c)
