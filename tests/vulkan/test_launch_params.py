"""Parameter blocks in push constants or (lavapipe) a dynamic uniform buffer; no host memory per launch.

lavapipe leaks host memory on every dispatch after ``vkCmdPushConstants``, so
on llvmpipe kdsl reads parameters from a uniform buffer instead
(:mod:`kdsl.runtime.vulkan.params`). Both bindings must give the same results,
with small and with large (> 128 byte) parameter blocks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend
from kdsl.runtime.vulkan.device import get_device

from . import vk_kernels as K
from .vk_plugin import validate


@kdsl.kernel
def sum16_kernel(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15,  # type: ignore[no-untyped-def]
                 out, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    acc = kl.load(a0 + offs, mask=m)
    for p in kl.static_range(1, 16):
        acc += kl.load((a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15)[p - 1] + offs, mask=m)
    kl.store(out + offs, acc, mask=m)


def _run(kernel: object, backend: VulkanBackend, grid: int, *args: object, **meta: object) -> object:
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    name = kernel.fn.__name__  # type: ignore[attr-defined]
    k = backend.compile(module, name, LaunchOptions(num_threads=32))
    validate(k.spirv.binary, k.spirv.target_env)  # type: ignore[attr-defined]
    k.launch((grid, 1, 1), list(args))  # type: ignore[attr-defined]
    return k


def test_llvmpipe_reads_parameters_from_a_uniform_buffer() -> None:
    dev = get_device()
    expected = "uniform" if "llvmpipe" in dev.info.name.lower() else "push"
    assert dev.target.params_binding == expected


@pytest.mark.parametrize("binding", ["push", "uniform"])
def test_both_parameter_bindings(binding: str) -> None:
    be = VulkanBackend({"params_binding": binding})
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, np.float32)
    k = _run(K.add_kernel, be, 3, x, x, out, 300, BLOCK=128)
    np.testing.assert_array_equal(out, 2 * x)
    assert k.spirv.params_binding == binding and not k.spirv.params.in_buffer  # type: ignore[attr-defined]
    arrays = [np.full(100, i, np.float32) for i in range(16)]
    out = np.zeros(100, np.float32)
    k = _run(sum16_kernel, be, 1, *arrays, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out, np.full(100, sum(range(16)), np.float32))
    # 17 pointers do not fit in 128 bytes of push constants (then the block goes to a buffer)
    assert k.spirv.params.in_buffer == (binding == "push")  # type: ignore[attr-defined]


# Runs in a fresh interpreter: the whole process's RSS is the only measure that
# sees the driver's C allocations, and inside the test session any other thread
# (pytest plugins, earlier tests' pools, the GC) would count against the bound.
_MEMORY_PROBE = """
import gc, os, sys
import numpy as np
import kdsl
sys.path.insert(0, {here!r})
import vk_kernels as K
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.vulkan import VulkanBackend

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

x = np.arange(4096, dtype=np.float32)
out = np.zeros(4096, np.float32)
module = kdsl.compile_to_ir(K.add_kernel, x, x, out, 4096, optimize=True, BLOCK=1024)
k = VulkanBackend().compile(module, "add_kernel", LaunchOptions())
for _ in range(300):
    k.launch((4, 1, 1), [x, x, out, 4096])
gc.collect()
before = rss()
for _ in range(20000):
    k.launch((4, 1, 1), [x, x, out, 4096])
gc.collect()
grown = rss() - before
assert (out == 2 * x).all()  # after the measurement: numpy's first compare pages in code
print(grown)
"""


def test_launches_do_not_grow_host_memory(tmp_path: Path) -> None:
    # with push constants lavapipe keeps ~35-50 B per launch (~1 MB here); page granularity allows some slack
    code = _MEMORY_PROBE.format(here=str(Path(__file__).parent))
    env = {**os.environ, "KDSL_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) < 96 * 1024
