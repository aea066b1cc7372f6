"""The vulkan backend against numpy and the interpreter: memory, dtypes, integer
edge cases, reductions, scans, dot, atomics, control flow, print/assert,
missing-feature errors, grids beyond maxComputeWorkGroupCount, teardown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError, DeviceAssertionError
from kdsl.interpreter import InterpreterBackend
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend

from . import vk_kernels as K

ROOT = Path(__file__).resolve().parents[2]




def _name(kernel: object) -> str:
    return kernel.fn.__name__  # type: ignore[attr-defined]


def launch(kernel: object, grid: tuple[int, ...], *args: object, nt: int = 64, backend: object = None,
           **meta: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    be = backend or VulkanBackend()
    k = be.compile(module, _name(kernel), LaunchOptions(num_threads=nt))
    k.launch(tuple(grid) + (1,) * (3 - len(grid)), list(args))
    return k


@pytest.mark.parametrize("nt", [1, 8, 64])
@pytest.mark.parametrize("n", [3, 100, 1000])
def test_vector_add_masks(nt: int, n: int) -> None:
    rng = np.random.default_rng(n)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    out = np.full(n + 7, -1.0, np.float32)
    launch(K.add_kernel, (kdsl.cdiv(n, 128),), x, y, out, n, BLOCK=128, nt=nt)
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == -1).all()  # masked-off lanes never store (out is bigger than n)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.float16, np.float32, np.float64])
def test_dtypes_round_trip_add(dtype: type) -> None:
    x = (np.arange(64) % 50).astype(dtype)
    out = np.zeros(64, dtype)
    launch(K.add_kernel, (1,), x, x, out, 64, BLOCK=64)
    np.testing.assert_array_equal(out, (x + x).astype(dtype))


@pytest.mark.parametrize("op", ["div", "mod", "shl", "shr", "mul", "add"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32])
def test_integer_edge_cases_match_interpreter(op: str, dtype: type) -> None:
    info = np.iinfo(dtype)
    vals = np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 7, 3, info.min + 1] * 2, dtype)
    other = np.array([-1 if info.min < 0 else 1, 0, 0, 64, 3, -3 if info.min < 0 else 3, info.bits, 1, 2, 5, 1, 1, 0,
                      info.bits - 1, 100, 7], dtype)
    want = np.zeros(16, dtype)
    got = np.zeros(16, dtype)
    launch(K.binop_kernel, (1,), vals, other, want, backend=InterpreterBackend(), BLOCK=16, OP=op)
    launch(K.binop_kernel, (1,), vals, other, got, BLOCK=16, OP=op)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("src", "dst"), [(np.float32, kl.int32), (np.float32, kl.uint8), (np.float64, kl.int64),
                                          (np.float32, kl.float16), (np.float32, kl.bfloat16), (np.int64, kl.float32)])
def test_casts_saturate_like_the_interpreter(src: type, dst: object) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 2.5, -2.5, 255.5, 65504.0, -0.0, 3e38, 1.0, 7.9, -7.9,
                  2**31, -(2**31)], np.float64)
    if np.issubdtype(src, np.integer):
        x = np.array([0, 1, -1, 2**62, -(2**62), 2**24 + 1, 12345, 7] * 2, np.int64)
    x = x.astype(src)
    dnp = np.uint16 if dst is kl.bfloat16 else np.dtype(dst.np_dtype)  # type: ignore[attr-defined]
    want, got = np.zeros(16, dnp), np.zeros(16, dnp)
    launch(K.cast_kernel, (1,), x, want, backend=InterpreterBackend(), BLOCK=16, DST=dst)
    launch(K.cast_kernel, (1,), x, got, BLOCK=16, DST=dst)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_softmax_rows() -> None:
    x = np.random.default_rng(0).standard_normal((37, 100)).astype(np.float32)
    out = np.zeros_like(x)
    launch(K.softmax_kernel, (37,), out, x, 100, 100, 100, BLOCK=128)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("nt", [1, 0])  # 0: automatic (64 makes lavapipe's LLVM compile take minutes)
def test_matmul_dot(nt: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((70, 50)).astype(np.float32)
    b = rng.standard_normal((50, 40)).astype(np.float32)
    c = np.zeros((70, 40), np.float32)
    launch(K.matmul_kernel, (3, 2), a, b, c, 70, 40, 50, BM=32, BN=32, BK=16, nt=nt)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_scan_and_reduction() -> None:
    x = np.arange(1, 65, dtype=np.int32)
    out, total = np.zeros(64, np.int32), np.zeros(1, np.int32)
    launch(K.scan_sum_kernel, (1,), x, out, total, BLOCK=64)
    np.testing.assert_array_equal(out, np.cumsum(x))
    assert total[0] == x.sum()


def test_atomics_float_add_and_max() -> None:
    x = np.random.default_rng(2).standard_normal(1000).astype(np.float32)
    s, m = np.zeros(1, np.float32), np.full(1, -np.inf, np.float32)
    launch(K.atomic_kernel, (8,), x, s, m, 1000, BLOCK=128)
    np.testing.assert_allclose(s[0], x.sum(dtype=np.float64), rtol=1e-5)
    assert m[0] == x.max()


def test_while_loop_data_dependent() -> None:
    out = np.zeros(1, np.int32)
    launch(K.while_kernel, (1,), np.array([27], np.int32), out, nt=1)
    assert out[0] == 111  # Collatz steps of 27


def test_grid_beyond_max_group_count() -> None:
    n = 70000 * 16
    x = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    launch(K.add_kernel, (70000,), x, x, out, n, BLOCK=16, nt=16)  # > 65535 groups: several vkCmdDispatchBase
    assert (out == 2).all()


def test_device_print_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    launch(K.print_kernel, (1,), np.array([11, -22, 33, 44], np.int32), BLOCK=4, nt=2)
    lines = sorted(capsys.readouterr().out.splitlines())
    assert lines == sorted(f"pid (0, 0, 0) idx ({i}) v={v}" for i, v in enumerate([11, -22, 33, 44]))


def test_device_assert_raises_with_location() -> None:
    launch(K.assert_kernel, (1,), np.array([1, 2, 3, 4], np.int32), BLOCK=4)
    with pytest.raises(DeviceAssertionError) as info:
        launch(K.assert_kernel, (1,), np.array([1, 200, 3, 4], np.int32), BLOCK=4)
    assert "x must stay below 100" in str(info.value)
    assert info.value.loc is not None and info.value.loc.file.endswith("vk_kernels.py")


def test_missing_fp64_is_a_compilation_error() -> None:
    x = np.ones(16, np.float64)
    with pytest.raises(CompilationError, match="shaderFloat64"):
        launch(K.add_kernel, (1,), x, x, x, 16, BLOCK=16, backend=VulkanBackend({"shader_float64": False}))


def test_missing_int8_is_a_compilation_error() -> None:
    x = np.ones(16, np.int8)
    with pytest.raises(CompilationError, match="shaderInt8"):
        launch(K.add_kernel, (1,), x, x, x, 16, BLOCK=16, backend=VulkanBackend({"shader_int8": False}))


def test_no_float_atomic_add_uses_a_cas_loop() -> None:
    x = np.ones(256, np.float32)
    s, m = np.zeros(1, np.float32), np.zeros(1, np.float32)
    launch(K.atomic_kernel, (2,), x, s, m, 256, BLOCK=128, backend=VulkanBackend({"float32_atomic_add": False}))
    assert s[0] == 256


def test_large_parameter_block_falls_back_to_a_buffer() -> None:
    from kdsl.codegen.spirv.abi import param_layout
    from kdsl.ir.types import PointerType, f32

    layout = param_layout([PointerType(f32)] * 20, 128)
    assert layout.in_buffer and layout.size > 128


def test_memory_is_returned_after_launches() -> None:
    from kdsl.runtime.vulkan.runtime import get_runtime

    rt = get_runtime()
    before = rt.allocator.in_use()
    x = np.ones(5000, np.float32)
    launch(K.add_kernel, (40,), x, x, x.copy(), 5000, BLOCK=128)
    assert rt.allocator.in_use() == before


def test_clean_teardown_and_pipeline_cache(tmp_path: Path) -> None:
    here = str(Path(__file__).parent)
    code = (
        f"import sys, numpy as np, kdsl; sys.path.insert(0, {here!r})\n"
        "import vk_kernels as K\n"
        "from kdsl.runtime.vulkan import VulkanBackend\n"
        "from kdsl.runtime.backend import LaunchOptions\n"
        "x = np.ones(64, np.float32); o = np.zeros(64, np.float32)\n"
        "m = kdsl.compile_to_ir(K.add_kernel, x, x, o, 64, BLOCK=64, optimize=True)\n"
        "VulkanBackend().compile(m, 'add_kernel', LaunchOptions(num_threads=64)).launch((1,1,1), [x, x, o, 64])\n"
        "assert (o == 2).all()\n"
        "from kdsl.runtime.vulkan.device import shutdown; shutdown(); shutdown()\n"
        "print('ok')\n"
    )
    env = {"KDSL_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    cache_dir = tmp_path / "cache" / "vulkan"
    blobs = list(cache_dir.glob("pipelines-*.bin"))
    assert blobs and blobs[0].stat().st_size > 0
    assert (cache_dir.stat().st_mode & 0o777) == 0o700
