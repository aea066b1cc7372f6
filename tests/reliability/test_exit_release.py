"""All device objects are released at exit (issue 8/8), checked by the drivers' own object trackers.

``tools/exitcheck.py`` runs kdsl workloads in fresh processes: on Vulkan under the Khronos
validation layer (it reports any child object still alive when kdsl's ``atexit`` handler destroys
the device), on OpenCL with PoCL's object log (``POCL_DEBUG``: every context, queue, kernel and
buffer created, retained, released and freed). The control scenario leaks one buffer on purpose:
it must be reported, or the check proves nothing. A backend is skipped (with the reason) without
its device, or without the validation layer (Debian ``vulkan-validationlayers``, installed by
``scripts/setup.sh``), or when the OpenCL driver is not PoCL (the log is PoCL's).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "exitcheck.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kdsl_exitcheck", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve the module by name
    spec.loader.exec_module(mod)
    return mod


def _skip_unless_ready(backend: str, mod: ModuleType) -> None:
    if backend == "vulkan":
        from kdsl.runtime.vulkan.device import probe

        ok, reason = probe()
        if not ok:
            pytest.skip(f"no Vulkan device: {reason}")
        if not mod.layer_installed():
            pytest.skip("the Khronos validation layer is not installed (apt-get install vulkan-validationlayers)")
        return
    from kdsl.runtime.opencl.device import all_devices, get_device

    if not all_devices():
        pytest.skip("no OpenCL device: install Debian pocl-opencl-icd")
    if "pocl" not in get_device().platform_version.lower():
        pytest.skip(f"the OpenCL object log is PoCL's; this driver is {get_device().platform_version}")


@pytest.fixture(scope="module")
def exitcheck() -> ModuleType:
    return _tool()


@pytest.mark.parametrize("backend", ["vulkan", "opencl"])
@pytest.mark.parametrize("scenario", ["numpy-args", "device-arrays", "print-assert"])
def test_nothing_left_at_exit(exitcheck: ModuleType, backend: str, scenario: str) -> None:
    _skip_unless_ready(backend, exitcheck)
    r = exitcheck.run(scenario, backend)
    assert r.returncode == 0, r.output[-3000:]
    assert r.not_destroyed == [], r.output[-3000:]
    assert r.errors == 0, r.output[-3000:]


@pytest.mark.parametrize("backend", ["vulkan", "opencl"])
def test_the_tracker_reports_a_leak(exitcheck: ModuleType, backend: str) -> None:
    _skip_unless_ready(backend, exitcheck)
    r = exitcheck.run(exitcheck.CONTROL, backend)
    assert r.returncode == 0, r.output[-3000:]
    want = ["VkBuffer"] if backend == "vulkan" else ["Memory Object"]
    assert [k for k in r.not_destroyed if k in want] == want, r.output[-3000:]
    if backend == "vulkan":
        assert r.not_destroyed == want, r.output[-3000:]


def test_pocl_log_parser(exitcheck: ModuleType) -> None:
    """A release printed after the free (PoCL's worker thread) does not bring the object back;
    a new creation at a reused address does."""
    log = "\n".join([
        "| MEMORY |  Created Buffer 9 (0x10), SIZE 4",
        "| REFCOUNTS |  Release Memory Object 9 (0x10), Refcount: 0",
        "| REFCOUNTS |  Free Memory Object 9 (0x10), Flags: 9",
        "| REFCOUNTS |  Release Memory Object 1402 (0x10), Refcount: 1",
        "| GENERAL |  Created Kernel add (0x20)",
        "| REFCOUNTS |  Release Program 5 (0x30), Refcount: 1, Kernel #: 1",
        "| MEMORY |  Created Buffer 12 (0x10), SIZE 8",
    ])  # fmt: skip
    assert exitcheck.pocl_alive(log) == ["Kernel", "Memory Object", "Program"]
