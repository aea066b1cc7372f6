"""What the optimiser knows about the machine a kernel will run on.

The same tile IR wants a different mapping on a CPU-class device (register
blocking, explicit vectors, no ``__local`` staging: PoCL emulates local
memory in ordinary memory) than on a GPU (local-memory tiles, many
work-items). Passes and the cost model therefore read a :class:`Target`
instead of asking a runtime directly; :func:`target_for` builds one from each
backend's public device information (and, where a runtime does not expose a
fact, from the driver API itself, read-only).

Peak throughput and bandwidth are *estimates* used only to rank
configurations (roofline); they are never used for correctness.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

_ELEM_BYTES = {"i8": 1, "u8": 1, "i16": 2, "u16": 2, "f16": 2, "bf16": 2, "i32": 4, "u32": 4, "f32": 4,
               "i64": 8, "u64": 8, "f64": 8}


@dataclass(frozen=True)
class Target:
    """A device as the optimiser sees it (immutable, hashable: usable as a cache key).

    ``simd_bytes`` is the width of one vector register (64 for AVX-512);
    ``preferred_vector`` maps an element type name to the vector width (in
    lanes) the device prefers for it. ``local_memory_real`` is False when
    ``__local``/shared memory is emulated in global memory (no speed benefit:
    do not promote). ``subgroup_size`` is 0 when the device has no
    sub-groups. ``max_work_group_size`` is 1 for backends without work-groups
    (the interpreter, the LLVM cpu backend runs one program per thread).
    """

    name: str
    backend: str
    kind: str  # "cpu" or "gpu"
    compute_units: int
    simd_bytes: int
    preferred_vector: tuple[tuple[str, int], ...]
    local_memory_bytes: int
    local_memory_real: bool
    max_work_group_size: int
    subgroup_size: int
    fp64: bool
    fp16: bool
    registers: int = 32  # vector registers per core / thread the code generator can use
    clock_ghz: float = 3.0
    fma_units: int = 2  # vector FMA pipes per compute unit
    bandwidth_gbs: float = 30.0
    cache_bytes: int = 1 << 20  # last-level cache (or L2) per compute unit, for working sets
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def is_gpu(self) -> bool:
        return self.kind == "gpu"

    def simd_lanes(self, dtype: str) -> int:
        """Lanes of ``dtype`` (a type name such as ``"f32"``) in one vector register."""
        return max(1, self.simd_bytes // _ELEM_BYTES.get(dtype, 4))

    def vector_width(self, dtype: str) -> int:
        """The preferred vector width in lanes for ``dtype`` (falls back to the SIMD width)."""
        for name, width in self.preferred_vector:
            if name == dtype and width > 0:
                return width
        return self.simd_lanes(dtype)

    @property
    def peak_gflops(self) -> float:
        """Estimated fp32 FMA peak: units x clock x lanes x 2 flops x FMA pipes."""
        return self.compute_units * self.clock_ghz * self.simd_lanes("f32") * 2 * self.fma_units

    @property
    def register_bytes(self) -> int:
        """Bytes of vector registers one program / work-item can keep live."""
        return self.registers * self.simd_bytes

    @property
    def promote_to_local(self) -> bool:
        """Whether staging reused tiles in local/shared memory can pay off."""
        return self.is_gpu and self.local_memory_real and self.local_memory_bytes > 0

    def with_(self, **changes: Any) -> Target:
        """A copy with some fields changed (tests, what-if cost estimates)."""
        return replace(self, **changes)


# --------------------------------------------------------------------------- host CPU
@functools.cache
def _cpuinfo() -> str:
    """``/proc/cpuinfo`` (empty where there is none), read once per process."""
    try:
        with open("/proc/cpuinfo") as f:
            return f.read()
    except OSError:
        return ""


@functools.cache
def host_llc_bytes() -> int:
    """Size of the largest CPU cache Linux lists for CPU 0 (the last-level cache), or 32 MiB where
    sysfs does not say (containers, other OSes). Read once per process."""
    best = 0
    try:
        entries = list(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"))
    except OSError:
        entries = []
    for entry in entries:
        try:
            best = max(best, _parse_size((entry / "size").read_text().strip()))
        except (OSError, ValueError):
            continue
    return best or 32 << 20


def _parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def _host_clock_ghz() -> float:
    """The host's nominal clock from /proc/cpuinfo (3.0 GHz if unknown)."""
    m = re.search(r"cpu MHz\s*:\s*([0-9.]+)", _cpuinfo())
    return float(m.group(1)) / 1000.0 if m and float(m.group(1)) > 500 else 3.0


@functools.cache
def host_cpu_flags() -> frozenset[str]:
    """The host CPU's feature flags as Linux lists them (``/proc/cpuinfo``: ``avx512_vnni``,
    ``avx512bw``...); empty where unknown. Read without llvmlite, so the OpenCL runtime can ask
    what the cores under a CPU device execute without loading LLVM."""
    m = re.search(r"^flags\s*:(.*)$", _cpuinfo(), re.MULTILINE)
    return frozenset(m.group(1).split()) if m else frozenset()


def _cpu_simd_bytes(features: dict[str, bool]) -> int:
    if features.get("avx512f"):
        return 64
    if features.get("avx") or features.get("avx2"):
        return 32
    if features.get("sse2") or features.get("neon") or features.get("sve"):
        return 16
    return 16


def _prefs(simd_bytes: int, fp64: bool = True, fp16: bool = False) -> tuple[tuple[str, int], ...]:
    out = [(name, simd_bytes // size) for name, size in _ELEM_BYTES.items()]
    return tuple((n, w) for n, w in out if (n != "f64" or fp64) and (n not in ("f16", "bf16") or fp16))


@functools.cache
def host_cpu_target(backend: str = "cpu") -> Target:
    """The host CPU as seen by llvmlite (the ``cpu`` backend's code generator)."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    features = {k: bool(v) for k, v in llvm.get_host_cpu_features().items()}
    simd = _cpu_simd_bytes(features)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Target(
        name=llvm.get_host_cpu_name(),
        backend=backend,
        kind="cpu",
        compute_units=max(1, cores),
        simd_bytes=simd,
        preferred_vector=_prefs(simd, fp16=bool(features.get("avx512fp16"))),
        local_memory_bytes=0,
        local_memory_real=False,
        max_work_group_size=1,
        subgroup_size=0,
        fp64=True,
        fp16=bool(features.get("avx512fp16") or features.get("f16c")),
        registers=32 if simd == 64 else 16,
        clock_ghz=_host_clock_ghz(),
        fma_units=2 if features.get("fma") or simd == 64 else 1,
        extra=(("features", tuple(sorted(k for k, v in features.items() if v))),),
    )


# --------------------------------------------------------------------------- OpenCL
def opencl_target() -> Target:
    """The OpenCL backend's device (``kdsl.runtime.opencl.device.get_device``)."""
    import pyopencl as cl

    from kdsl.runtime.opencl.device import get_device

    dev = get_device().dev
    is_cpu = bool(dev.type & cl.device_type.CPU)
    ext = str(dev.extensions)
    widths = {
        "i8": int(dev.preferred_vector_width_char), "u8": int(dev.preferred_vector_width_char),
        "i16": int(dev.preferred_vector_width_short), "u16": int(dev.preferred_vector_width_short),
        "i32": int(dev.preferred_vector_width_int), "u32": int(dev.preferred_vector_width_int),
        "i64": int(dev.preferred_vector_width_long), "u64": int(dev.preferred_vector_width_long),
        "f32": int(dev.preferred_vector_width_float), "f64": int(dev.preferred_vector_width_double),
        "f16": int(getattr(dev, "preferred_vector_width_half", 0) or 0),
    }
    simd = max(4 * widths["f32"], 16)
    sub = _opencl_subgroup_size(dev)
    local_real = int(dev.local_mem_type) == int(cl.device_local_mem_type.LOCAL)
    return Target(
        name=str(dev.name).strip(),
        backend="opencl",
        kind="cpu" if is_cpu else "gpu",
        compute_units=int(dev.max_compute_units),
        simd_bytes=simd,
        preferred_vector=tuple((k, v) for k, v in widths.items() if v > 0),
        local_memory_bytes=int(dev.local_mem_size),
        local_memory_real=local_real,
        max_work_group_size=int(dev.max_work_group_size),
        subgroup_size=sub,
        fp64="cl_khr_fp64" in ext,
        fp16="cl_khr_fp16" in ext,
        registers=32 if is_cpu and simd >= 64 else 16 if is_cpu else 64,
        clock_ghz=(float(dev.max_clock_frequency) / 1000.0) or 1.0,
        fma_units=2 if is_cpu else 1,
        bandwidth_gbs=30.0 if is_cpu else 200.0,
        cache_bytes=max(int(getattr(dev, "global_mem_cache_size", 0) or 0) // max(1, int(dev.max_compute_units)), 1 << 16),
    )


def _opencl_subgroup_size(dev: Any) -> int:
    """Sub-group size when the device reports sub-groups (cl_khr_subgroups / OpenCL 2.1+), else 0."""
    import pyopencl as cl

    try:
        n = int(dev.get_info(cl.device_info.MAX_NUM_SUB_GROUPS))
    except (cl.Error, AttributeError, ValueError):
        return 0
    if n <= 0:
        return 0
    return max(1, int(dev.max_work_group_size) // n)


# --------------------------------------------------------------------------- Vulkan
def vulkan_target() -> Target:
    """The Vulkan backend's physical device (limits from ``kdsl.runtime.vulkan.device``,
    device type and sub-group size queried here from the same physical device)."""
    import vulkan as vk

    from kdsl.runtime.vulkan.device import get_device

    d = get_device()
    props = vk.vkGetPhysicalDeviceProperties(d.physical)
    sub = vk.ffi.new("VkPhysicalDeviceSubgroupProperties*")
    sub.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
    p2 = vk.ffi.new("VkPhysicalDeviceProperties2*")
    p2.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
    p2.pNext = sub
    vk.vkGetPhysicalDeviceProperties2(d.physical, p2)
    is_cpu = int(props.deviceType) == int(vk.VK_PHYSICAL_DEVICE_TYPE_CPU)
    name = d.info.name
    m = re.search(r"(\d+) bits", name)  # lavapipe: "llvmpipe (LLVM 15.0.6, 256 bits)"
    simd = int(m.group(1)) // 8 if m else 16
    t = d.target
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return Target(
        name=name,
        backend="vulkan",
        kind="cpu" if is_cpu else "gpu",
        compute_units=max(1, cores) if is_cpu else 16,
        simd_bytes=simd,
        preferred_vector=_prefs(simd, fp64=t.shader_float64, fp16=t.shader_float16),
        local_memory_bytes=int(d.info.max_shared),
        local_memory_real=not is_cpu,
        max_work_group_size=int(d.info.max_group_size),
        subgroup_size=int(sub.subgroupSize),
        fp64=bool(t.shader_float64),
        fp16=bool(t.shader_float16),
        registers=16 if is_cpu else 64,
        fma_units=1,
        bandwidth_gbs=10.0 if is_cpu else 200.0,
        # loop passes one invocation may make (lavapipe: 65535, 0 = no cap; docs/VULKAN.md)
        extra=(("max_loop_iterations", t.max_loop_iterations),),
    )


def interpreter_target() -> Target:
    """The numpy interpreter: a CPU target without work-groups (costs are only relative)."""
    base = host_cpu_target("interpreter")
    return base.with_(backend="interpreter", name="numpy-interpreter")


_BUILDERS = {"cpu": host_cpu_target, "opencl": opencl_target, "vulkan": vulkan_target, "interpreter": interpreter_target}


def target_for(backend_name: str | None = None) -> Target:
    """The :class:`Target` of backend ``backend_name`` (default: the current backend).

    Raises :class:`kdsl.errors.BackendUnavailableError` if that backend's
    device cannot be opened, ``ValueError`` for an unknown name.
    """
    if backend_name is None:
        from kdsl.runtime.backends import current_backend_name

        backend_name = current_backend_name()
    build = _BUILDERS.get(backend_name)
    if build is None:
        raise ValueError(f"no target description for backend {backend_name!r} (known: {', '.join(_BUILDERS)})")
    return _cached(backend_name, build)


@functools.cache
def _cached(name: str, build: Any) -> Target:
    t: Target = build()
    return t


__all__ = ["Target", "host_cpu_target", "target_for"]
