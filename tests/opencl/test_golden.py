"""Golden OpenCL C for the tutorial kernels: regenerate and compare (``KDSL_UPDATE_GOLDEN=1`` rewrites).

The source is rendered for a fixed target (PoCL's defaults: one work-item per
program, fp64 and int64 atomics available), so the files do not depend on the
machine's device. A diff here is a change of generated code: review it, then
update the files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kdsl.codegen.opencl import DeviceCaps
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.opencl import render_stages

from . import golden_kernels as G

GOLDEN = Path(__file__).parent / "golden"
F32 = np.zeros(1024, np.float32)

CASES: dict[str, tuple[Any, list[Any], dict[str, Any]]] = {
    "vector_add": (G.add_kernel, [F32, F32, F32, 98432], {"BLOCK_SIZE": 1024}),
    "softmax": (G.softmax_kernel, [F32, F32, 781, 781, 1823, 781], {"BLOCK_SIZE": 1024}),
    "matmul": (G.matmul_kernel, [F32, F32, F32, 300, 200, 250, 250, 1, 200, 1, 200, 1],
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}),
}


def generate(name: str) -> str:
    kernel, args, meta = CASES[name]
    specs = kernel.specialization(args, meta)
    module, entry = kernel.compile_module(specs, optimize=True, debug=False)
    stages = render_stages(module, entry, LaunchOptions(num_threads=1), DeviceCaps(fp64=True, int64_atomics=True))
    source: str = stages.rendered.source
    return source


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_opencl_c(name: str) -> None:
    got = generate(name)
    path = GOLDEN / f"{name}.cl"
    if os.environ.get("KDSL_UPDATE_GOLDEN", "0") not in ("", "0"):
        path.write_text(got)
    assert path.exists(), f"{path} missing: run with KDSL_UPDATE_GOLDEN=1"
    assert got == path.read_text(), f"generated OpenCL C for {name} changed; review, then KDSL_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_source_builds(name: str) -> None:
    """The golden text is real OpenCL C: the device builds it."""
    from kdsl.runtime.opencl import get_device

    dev = get_device()
    if not dev.caps.fp64:
        pytest.skip("golden files target a device with fp64")
    dev.build((GOLDEN / f"{name}.cl").read_text())


@pytest.mark.parametrize("name", sorted(CASES))
def test_vector_memory_macros_portable(name: str) -> None:
    """Vector loads/stores are ``KD_VLD``/``KD_VST`` (``kdsl/codegen/opencl/vmem.py``): one
    under-aligned full-width access on clang compilers, ``vloadN``/``vstoreN`` elsewhere. The
    device builds the source with the non-clang branch selected too."""
    from kdsl.runtime.opencl import get_device

    source = (GOLDEN / f"{name}.cl").read_text()
    body = source[source.index("__kernel") :]
    assert "KD_VLD(" in body or "KD_VST(" in body
    assert "vload16(" not in body and "vstore16(" not in body
    dev = get_device()
    if not dev.caps.fp64:
        pytest.skip("golden files target a device with fp64")
    dev.build(source.replace("#ifdef __clang__", "#if 0"))
