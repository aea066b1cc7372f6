"""Are all Vulkan objects released at exit? Run kdsl workloads under the Khronos validation layer.

Issue 8/8 ("Long runs": all device objects released at exit). The validation layer
(Debian ``vulkan-validationlayers``, enabled per process with ``VK_INSTANCE_LAYERS``) reports
every child object still alive when ``vkDestroyDevice`` runs -- kdsl destroys the device and the
instance in an ``atexit`` handler (``kdsl/runtime/vulkan/device.py``) -- and every other API
misuse it detects. Each scenario runs in a fresh process; a *control* scenario leaks one
``VkBuffer`` on purpose, so a clean report is known to mean something.

Usage: python tools/exitcheck.py [--scenario NAME ...]
Prints one row per scenario: exit status, validation errors, objects reported not destroyed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

LAYER = "VK_LAYER_KHRONOS_validation"
MANIFESTS = ("/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d")

PRELUDE = """
import numpy as np, kdsl, kdsl.language as kl

@kdsl.kernel
def add(x, y, o, n, B: kl.constexpr):
    i = kl.program_id(0) * B + kl.arange(0, B)
    m = i < n
    kl.store(o + i, kl.load(x + i, mask=m) + kl.load(y + i, mask=m), mask=m)

@kdsl.kernel
def show(x, B: kl.constexpr):
    kl.device_print("v=", kl.load(x + kl.arange(0, B)))

@kdsl.kernel
def check(x, B: kl.constexpr):
    kl.device_assert(kl.load(x + kl.arange(0, B)) < 100, "x must stay below 100")

x = np.arange(4096, dtype=np.float32)
"""

SCENARIOS: dict[str, str] = {
    # synchronous launches with numpy arguments, aliased arguments included (the safe variant)
    "numpy-args": """
with kdsl.backend("vulkan"):
    for n in (1, 100, 4096):
        o = np.zeros(n, np.float32)
        add[(kdsl.cdiv(n, 256),)](x[:n], x[:n], o, n, B=256)
        assert (o == 2 * x[:n]).all()
    y = x.copy()
    add[(16,)](y, y, y, 4096, B=256)
    assert (y == 2 * x).all()
""",
    # device arrays, asynchronous launches, arrays collected while launches are in flight
    "device-arrays": """
import gc
with kdsl.backend("vulkan"):
    dx = kdsl.tensor(x)
    for _ in range(20):
        tmp = kdsl.empty(4096, np.float32)
        add[(16,)](dx, dx, tmp, 4096, B=256)
        del tmp
        gc.collect()
    out = kdsl.empty(4096, np.float32)
    add[(16,)](dx, dx, out, 4096, B=256)
    assert (out.numpy() == 2 * x).all()
""",
    # device_print, a failing device_assert (the error path), then a normal launch
    "print-assert": """
with kdsl.backend("vulkan"):
    show[(1,)](np.arange(4, dtype=np.int32), B=4)
    try:
        check[(1,)](np.array([1, 200, 3, 4], np.int32), B=4)
        raise SystemExit("assert did not fire")
    except kdsl.DeviceAssertionError:
        pass
    o = np.zeros(4096, np.float32)
    add[(16,)](x, x, o, 4096, B=256)
    assert (o == 2 * x).all()
""",
    # the control: one VkBuffer leaked on purpose -- the layer must report it
    "control-leak": """
import vulkan as vk
from kdsl.runtime.vulkan.device import get_device
d = get_device()
info = vk.VkBufferCreateInfo(size=256, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE)
leak = vk.vkCreateBuffer(d.device, info, None)
""",
}


@dataclass
class Report:
    scenario: str
    returncode: int
    errors: int  # validation messages of severity ERROR
    not_destroyed: list[str]  # object types the layer found alive at vkDestroyDevice/Instance
    output: str


def layer_installed() -> bool:
    return any(os.path.exists(os.path.join(d, "VkLayer_khronos_validation.json")) for d in MANIFESTS)


def run(name: str, timeout: float = 300) -> Report:
    env = dict(os.environ, VK_INSTANCE_LAYERS=LAYER, KDSL_PRELOAD="0")
    with tempfile.TemporaryDirectory() as tmp:  # kernels need a source file (kdsl reads it)
        script = Path(tmp) / f"exitcheck_{name.replace('-', '_')}.py"
        script.write_text(PRELUDE + SCENARIOS[name])
        env["KDSL_CACHE_DIR"] = str(Path(tmp) / "cache")
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    errors = len(re.findall(r"\(ERROR / ", out)) + len(re.findall(r"Validation Error:", out)) // 2
    alive = re.findall(r"(Vk\w+) 0x[0-9a-f]+\[[^\]]*\] has not been destroyed", out)
    return Report(name, proc.returncode, errors, alive, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="run only these (repeatable)")
    args = ap.parse_args(argv)
    if not layer_installed():
        print("the Khronos validation layer is not installed (Debian: apt-get install vulkan-validationlayers)")
        return 2
    print(f"{'scenario':<16} {'exit':>4} {'errors':>6}  not destroyed at exit")
    bad = 0
    for name in args.scenario or list(SCENARIOS):
        r = run(name)
        print(f"{r.scenario:<16} {r.returncode:>4} {r.errors:>6}  {', '.join(r.not_destroyed) or '-'}")
        expect_leak = name.startswith("control")
        if (r.returncode != 0) or (bool(r.not_destroyed) != expect_leak) or (r.errors and not expect_leak):
            bad += 1
            print(r.output[-2000:])
    print("ok" if not bad else f"{bad} scenario(s) not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
