"""Kernels for the cache fault tests (a real module, so subprocesses import the same source)."""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def scale(x_ptr, out_ptr, n, S: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) * S, mask=m)


@kdsl.kernel
def shift(x_ptr, out_ptr, n, S: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) + S, mask=m)


WORKER = """
import json, sys, time
import numpy as np
import kdsl
from kdsl.runtime.cache import STATS
import cache_kernels as K

start = float(sys.argv[1])
while time.time() < start:
    time.sleep(0.001)
x = np.arange(100, dtype=np.float32)
o = np.zeros(100, np.float32)
s = int(sys.argv[3]) if len(sys.argv) > 3 else 3
with kdsl.backend(sys.argv[2]):
    K.scale[(4,)](x, o, 100, S=s, BLOCK=32)
print(json.dumps({"ok": bool(np.array_equal(o, s * x)), "stats": STATS.as_dict()}))
"""


TUNER = """
import json, sys, time, warnings
import numpy as np
import kdsl
import kdsl.language as kl
import cache_kernels as K

tuned = kdsl.autotune(configs=[kdsl.autotune.Config({"BLOCK": b}) for b in (16, 32, 64, 128)], key=["n"],
                      warmup=1, rep=2)(K.scale_block)
start, backend = float(sys.argv[1]), sys.argv[2]
while time.time() < start:
    time.sleep(0.001)
x = np.arange(100, dtype=np.float32)
o = np.zeros(100, np.float32)
with kdsl.backend(backend):
    tuned[lambda meta: (kdsl.cdiv(100, meta["BLOCK"]),)](x, o, 100)
print(json.dumps({"ok": bool(np.array_equal(o, 3 * x)), "best": str(getattr(tuned, "best_config", None))}))
"""


@kdsl.kernel
def scale_block(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) * 3, mask=m)
