"""After the OpenCL device is closed (``shutdown()``, run at interpreter exit) every way of running
something on it raises a clear :class:`kdsl.BackendUnavailableError` -- never a use of a released
handle -- and a process forked from the owner does not close the parent's objects."""

from __future__ import annotations

import json
from pathlib import Path

from tests.subprocess_script import run_script

SCRIPT = """
import json, os
import numpy as np
import kdsl
import kdsl.language as kl
from kdsl.runtime.opencl import device as D


@kdsl.kernel
def add(x, y, o, n, B: kl.constexpr):
    i = kl.program_id(0) * B + kl.arange(0, B)
    m = i < n
    kl.store(o + i, kl.load(x + i, mask=m) + kl.load(y + i, mask=m), mask=m)


@kdsl.kernel
def fill(o, v, B: kl.constexpr):
    kl.store(o + kl.arange(0, B), kl.full((B,), v, kl.float32))


x = np.arange(256, dtype=np.float32)
o = np.zeros_like(x)
with kdsl.backend("opencl"):
    d = kdsl.tensor(x)
    add[(1,)](x, x, o, 256, B=256)
    add[(1,)](d, d, d, 256, B=256)
    assert (d.numpy() == 2 * x).all()
    pid = os.fork()
    if pid == 0:  # the child's exit must leave the parent's objects alone
        D.shutdown()
        os._exit(0 if not D.get_device().closed else 3)
    assert os.waitpid(pid, 0)[1] == 0
    add[(1,)](x, x, o, 256, B=256)  # still usable after the child
    D.shutdown()
    D.shutdown()  # idempotent
    errors = {}
    attempts = {
        "numpy": lambda: add[(1,)](x, x, o, 256, B=256),
        "aliased": lambda: add[(1,)](o, o, o, 256, B=256),
        "device": lambda: add[(1,)](d, d, d, 256, B=256),
        "read": lambda: d.numpy(),
        "alloc": lambda: kdsl.empty(16, np.float32),
        "compile": lambda: fill[(1,)](o, 1.0, B=256),
    }
    for name, fn in attempts.items():
        try:
            fn()
            errors[name] = "ran"
        except kdsl.BackendUnavailableError as e:
            errors[name] = "closed" if "closed" in str(e) else str(e)
        except Exception as e:
            errors[name] = f"{type(e).__name__}: {e}"
print(json.dumps(errors))
"""


def test_closed_device_refuses_everything(tmp_path: Path) -> None:
    got = json.loads(run_script(tmp_path, SCRIPT, env={"KDSL_CACHE_DIR": str(tmp_path / "cache")}))
    assert got == dict.fromkeys(["numpy", "aliased", "device", "read", "alloc", "compile"], "closed")
