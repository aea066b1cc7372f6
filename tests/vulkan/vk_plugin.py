"""pytest plugin: register the ``vulkan`` backend and spirv-val every module it emits.

``vulkan`` is registered in :mod:`kdsl.runtime.backends`; this plugin
re-registers it with a factory that validates output, so while the tests run
every SPIR-V module the backend emits while the plugin is active is checked
with ``spirv-val`` for the device's target environment (a failure raises).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from kdsl.runtime import backends


def validate(binary: bytes, env: str) -> None:
    if shutil.which("spirv-val") is None:
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.spv"
        path.write_bytes(binary)
        r = subprocess.run(["spirv-val", "--target-env", env, str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"spirv-val rejected an emitted module:\n{r.stderr}{r.stdout}")


def _install_validation() -> None:
    from kdsl.runtime.vulkan import backend as vb

    if getattr(vb.emit_spirv, "_validated", False):
        return
    original = vb.emit_spirv

    def checked(module: Any, target: Any = None) -> Any:
        k = original(module, target)
        validate(k.binary, k.target_env)
        return k

    checked._validated = True  # type: ignore[attr-defined]
    vb.emit_spirv = checked  # type: ignore[assignment]


def _factory() -> Any:
    from kdsl.runtime.vulkan import VulkanBackend

    _install_validation()
    return VulkanBackend()


backends.register_backend("vulkan", _factory)
