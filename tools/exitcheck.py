"""Are all device objects released at exit? Run kdsl workloads under the drivers' own object trackers.

Issue 8/8 ("Long runs": all device objects released at exit). Each scenario runs in a fresh
process; a *control* scenario leaks one buffer on purpose, so a clean report is known to mean
something.

* ``vulkan``: the Khronos validation layer (Debian ``vulkan-validationlayers``, enabled per
  process with ``VK_INSTANCE_LAYERS``) reports every child object still alive when
  ``vkDestroyDevice`` runs -- kdsl destroys the device and the instance in an ``atexit`` handler
  (``kdsl/runtime/vulkan/device.py``) -- and every other API misuse it detects.
* ``opencl``: PoCL's object log (``POCL_DEBUG=general,refcounts,memory``) names every context, queue,
  kernel and buffer it creates and every retain, release and free; an object that is created or
  retained/released but never freed by the time the process ends is left alive. kdsl releases its
  objects in an ``atexit`` handler (``kdsl/runtime/opencl/device.py``). PoCL logs no creation
  of programs, so a program shows up once it is released (kdsl's path) and a program never
  released at all would go unseen -- the kernels that reference it would not.

Usage: python tools/exitcheck.py [--backend vulkan|opencl] [--scenario NAME ...]
Prints one row per scenario: exit status, errors, objects reported not destroyed.
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
with kdsl.backend(BACKEND):
    for n in (1, 100, 4096):
        o = np.zeros(n, np.float32)
        add[(kdsl.cdiv(n, 256),)](x[:n], x[:n], o, n, B=256)
        assert (o == 2 * x[:n]).all()
    y = x.copy()
    add[(16,)](y, y, y, 4096, B=256)
    assert (y == 2 * x).all()
""",
    # device arrays, asynchronous launches, arrays collected while launches are in flight; two of
    # them still alive (module globals) when the interpreter exits
    "device-arrays": """
import gc
with kdsl.backend(BACKEND):
    dx = kdsl.tensor(x)
    for _ in range(20):
        tmp = kdsl.empty(4096, np.float32)
        add[(16,)](dx, dx, tmp, 4096, B=256)
        del tmp
        gc.collect()
    out = kdsl.empty(4096, np.float32)
    add[(16,)](dx, dx, out, 4096, B=256)
    add[(16,)](out, out, out, 4096, B=256)
    assert (out.numpy() == 4 * x).all()
""",
    # device_print, a failing device_assert (the error path), then a normal launch
    "print-assert": """
with kdsl.backend(BACKEND):
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
}
CONTROLS: dict[str, str] = {  # one buffer leaked on purpose: the tracker must report it
    "vulkan": """
import vulkan as vk
from kdsl.runtime.vulkan.device import get_device
d = get_device()
info = vk.VkBufferCreateInfo(size=256, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE)
leak = vk.vkCreateBuffer(d.device, info, None)
""",
    "opencl": """
from kdsl.runtime.opencl import clapi
from kdsl.runtime.opencl.device import get_device
with kdsl.backend("opencl"):
    o = np.zeros(4096, np.float32)
    add[(16,)](x, x, o, 4096, B=256)
leak = clapi.create_buffer(get_device().ctx_handle, clapi.MEM_READ_WRITE, 256, None)
""",
}
BACKENDS = ("vulkan", "opencl")
CONTROL = "control-leak"


@dataclass
class Report:
    scenario: str
    returncode: int
    errors: int  # vulkan: validation messages of severity ERROR; opencl: error lines of PoCL's log
    not_destroyed: list[str]  # object types found alive at exit (vulkan: at vkDestroyDevice/Instance)
    output: str


def layer_installed() -> bool:
    return any(os.path.exists(os.path.join(d, "VkLayer_khronos_validation.json")) for d in MANIFESTS)


def _vulkan_report(out: str) -> tuple[int, list[str]]:
    errors = len(re.findall(r"\(ERROR / ", out)) + len(re.findall(r"Validation Error:", out)) // 2
    return errors, re.findall(r"(Vk\w+) 0x[0-9a-f]+\[[^\]]*\] has not been destroyed", out)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_POCL_OBJECT = re.compile(
    r"\|\s*(?:GENERAL|REFCOUNTS|MEMORY)\s*\|\s+(Created|Retain|Release|Free)\s+"
    r"(Context|Command Queue|Kernel|Program|Memory Object|Buffer|Event|Sampler)\s+(\S+)\s+\((0x[0-9a-f]+)\)"
)


def pocl_alive(out: str) -> list[str]:
    """Object types PoCL's log ``out`` (colour codes removed) shows created or retained/released but
    never freed (one entry each).

    Objects are told apart by address and kind. A ``Created`` line starts a new life at an address
    the allocator hands out again; a retain/release printed after the ``Free`` does not (PoCL's
    worker thread may print its release of a command's buffer after the host thread freed it).
    """
    alive: dict[tuple[str, str], str] = {}
    freed: set[tuple[str, str]] = set()
    for line in out.splitlines():
        m = _POCL_OBJECT.search(line)
        if m is None:
            continue
        what, kind, _, addr = m.groups()
        key = ("Memory Object" if kind == "Buffer" else kind, addr)
        if what == "Free":
            alive.pop(key, None)
            freed.add(key)
        elif what == "Created" or key not in freed:
            freed.discard(key)
            alive[key] = key[0]
    return sorted(alive.values())


def _opencl_report(out: str) -> tuple[int, list[str]]:
    plain = _ANSI.sub("", out)  # PoCL colours its log on a terminal
    return len(re.findall(r"\|\s*ERROR\s*\|", plain)), pocl_alive(plain)


def run(name: str, backend: str = "vulkan", timeout: float = 300) -> Report:
    env = dict(os.environ, KDSL_PRELOAD="0")
    if backend == "vulkan":
        env["VK_INSTANCE_LAYERS"] = LAYER
    else:
        env["POCL_DEBUG"] = "general,refcounts,memory"
    body = CONTROLS[backend] if name == CONTROL else SCENARIOS[name]
    with tempfile.TemporaryDirectory() as tmp:  # kernels need a source file (kdsl reads it)
        script = Path(tmp) / f"exitcheck_{name.replace('-', '_')}.py"
        script.write_text(PRELUDE + f"BACKEND = {backend!r}\n" + body)
        env["KDSL_CACHE_DIR"] = str(Path(tmp) / "cache")
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    errors, alive = (_vulkan_report if backend == "vulkan" else _opencl_report)(out)
    return Report(name, proc.returncode, errors, alive, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=BACKENDS, action="append", help="only this backend (repeatable)")
    ap.add_argument("--scenario", action="append", choices=[*sorted(SCENARIOS), CONTROL], help="only these (repeatable)")
    args = ap.parse_args(argv)
    bad = 0
    for backend in args.backend or BACKENDS:
        if backend == "vulkan" and not layer_installed():
            print("vulkan: the Khronos validation layer is not installed (Debian: apt-get install vulkan-validationlayers)")
            bad += 1
            continue
        print(f"{backend:<8} {'scenario':<16} {'exit':>4} {'errors':>6}  not destroyed at exit")
        for name in args.scenario or [*SCENARIOS, CONTROL]:
            r = run(name, backend)
            print(f"{backend:<8} {r.scenario:<16} {r.returncode:>4} {r.errors:>6}  {', '.join(r.not_destroyed) or '-'}")
            expect_leak = name == CONTROL
            if (r.returncode != 0) or (bool(r.not_destroyed) != expect_leak) or (r.errors and not expect_leak):
                bad += 1
                print(r.output[-2000:])
    print("ok" if not bad else f"{bad} scenario(s) not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
