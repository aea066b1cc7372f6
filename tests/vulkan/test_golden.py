"""Golden ``spirv-dis`` text of the tutorial kernels (vector add, softmax, matmul).

Emitted for the default :class:`~kdsl.codegen.spirv.Target` (not the local
device), so the text is the same on every machine. Regenerate after an
intended change with ``KDSL_UPDATE_GOLDEN=1 pytest tests/vulkan/test_golden.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kdsl
from kdsl.codegen.spirv import Target, emit_spirv
from kdsl.lowering import Layout, lower_to_wi

from . import vk_kernels as K

GOLDEN = Path(__file__).parent / "golden"
x = np.zeros(16, np.float32)
CASES = {
    "vector_add": (K.add_kernel, (x, x, x, 100), {"BLOCK": 256}),
    "softmax": (K.softmax_kernel, (x, x, 100, 100, 100), {"BLOCK": 128}),
    "matmul": (K.matmul_kernel, (x, x, x, 64, 64, 64), {"BM": 32, "BN": 32, "BK": 16}),
}


@pytest.mark.skipif(shutil.which("spirv-dis") is None, reason="install Debian spirv-tools")
@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_disassembly(name: str, tmp_path: Path) -> None:
    kernel, args, meta = CASES[name]
    module = kdsl.compile_to_ir(kernel, *args, optimize=True, **meta)
    wmod = lower_to_wi(module, kernel.fn.__name__, Layout(64))  # type: ignore[attr-defined]
    spv = emit_spirv(wmod, Target())
    path = tmp_path / "k.spv"
    path.write_bytes(spv.binary)
    val = subprocess.run(["spirv-val", "--target-env", spv.target_env, str(path)], capture_output=True, text=True)
    assert val.returncode == 0, val.stderr
    text = subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout
    golden = GOLDEN / f"{name}.spvasm"
    if os.environ.get("KDSL_UPDATE_GOLDEN") == "1" or not golden.exists():
        golden.write_text(text)
    assert text == golden.read_text()
