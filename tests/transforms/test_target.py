"""Target descriptions built from each backend's device information."""

from __future__ import annotations

import pytest

import kdsl
from kdsl.target import Target, host_cpu_target, target_for


def _present(name: str) -> None:
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name} not available")


def _sane(t: Target) -> None:
    assert t.kind in ("cpu", "gpu")
    assert t.compute_units >= 1
    assert t.simd_bytes in (16, 32, 64, 128)
    assert t.simd_lanes("f32") == t.simd_bytes // 4
    assert t.simd_lanes("f64") == t.simd_bytes // 8
    assert t.vector_width("f32") >= 1
    assert t.max_work_group_size >= 1
    assert t.peak_gflops > 0
    assert t.promote_to_local == (t.is_gpu and t.local_memory_real and t.local_memory_bytes > 0)
    hash(t)  # frozen: usable as a cache key


def test_cpu_target_from_llvmlite() -> None:
    import llvmlite.binding as llvm

    t = target_for("cpu")
    _sane(t)
    assert t.kind == "cpu" and t.backend == "cpu"
    assert t.name == llvm.get_host_cpu_name()
    feats = dict(t.extra)["features"]
    if "avx512f" in feats:
        assert t.simd_bytes == 64 and t.vector_width("f32") == 16
    elif "avx2" in feats:
        assert t.simd_bytes == 32
    assert not t.promote_to_local and t.max_work_group_size == 1


def test_opencl_target_matches_pyopencl() -> None:
    _present("opencl")
    import pyopencl as cl

    from kdsl.runtime.opencl.device import get_device

    dev = get_device().dev
    t = target_for("opencl")
    _sane(t)
    assert t.compute_units == dev.max_compute_units
    assert t.max_work_group_size == dev.max_work_group_size
    assert t.local_memory_bytes == dev.local_mem_size
    assert t.vector_width("f32") == dev.preferred_vector_width_float
    assert t.local_memory_real == (dev.local_mem_type == cl.device_local_mem_type.LOCAL)
    assert t.fp64 == ("cl_khr_fp64" in dev.extensions)
    if dev.type & cl.device_type.CPU:
        # PoCL: a CPU device whose __local memory lives in global memory -> never promote
        assert t.is_cpu and not t.promote_to_local


def test_vulkan_target_matches_device() -> None:
    _present("vulkan")
    from kdsl.runtime.vulkan.device import get_device

    d = get_device()
    t = target_for("vulkan")
    _sane(t)
    assert t.max_work_group_size == d.info.max_group_size
    assert t.local_memory_bytes == d.info.max_shared
    assert t.subgroup_size >= 1
    assert t.fp16 == d.target.shader_float16
    if "llvmpipe" in d.info.name:
        assert t.is_cpu and t.subgroup_size == 8


def test_interpreter_and_default() -> None:
    t = target_for("interpreter")
    _sane(t)
    assert t.backend == "interpreter"
    with kdsl.backend("interpreter"):
        assert target_for() == t


def test_unknown_backend() -> None:
    with pytest.raises(ValueError, match="no target description"):
        target_for("tpu")


def test_with_and_lanes() -> None:
    t = host_cpu_target().with_(simd_bytes=32, preferred_vector=(("f32", 8),))
    assert t.simd_lanes("f16") == 16 and t.vector_width("f32") == 8 and t.vector_width("i8") == 32
