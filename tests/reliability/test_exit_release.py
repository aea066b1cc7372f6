"""All Vulkan objects are released at exit (issue 8/8), checked by the Khronos validation layer.

``tools/exitcheck.py`` runs kdsl workloads in fresh processes with ``VK_INSTANCE_LAYERS``; the layer
reports any child object still alive when kdsl's ``atexit`` handler destroys the device. The
control scenario leaks one buffer on purpose: it must be reported, or the check proves nothing.
Skipped (with the reason) without a Vulkan device or without the layer (Debian
``vulkan-validationlayers``, installed by ``scripts/setup.sh``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kdsl.runtime.vulkan.device import probe

TOOL = Path(__file__).resolve().parents[2] / "tools" / "exitcheck.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kdsl_exitcheck", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve the module by name
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def exitcheck() -> ModuleType:
    ok, reason = probe()
    if not ok:
        pytest.skip(f"no Vulkan device: {reason}")
    mod = _tool()
    if not mod.layer_installed():
        pytest.skip("the Khronos validation layer is not installed (apt-get install vulkan-validationlayers)")
    return mod


@pytest.mark.parametrize("scenario", ["numpy-args", "device-arrays", "print-assert"])
def test_nothing_left_at_exit(exitcheck: ModuleType, scenario: str) -> None:
    r = exitcheck.run(scenario)
    assert r.returncode == 0, r.output[-3000:]
    assert r.not_destroyed == [], r.output[-3000:]
    assert r.errors == 0, r.output[-3000:]


def test_the_layer_reports_a_leak(exitcheck: ModuleType) -> None:
    r = exitcheck.run("control-leak")
    assert r.not_destroyed == ["VkBuffer"], r.output[-3000:]
