"""When an array argument counts as *large*: the launch fact behind automatic streaming stores.

Why: a plain store to a line that is not cached first reads the line (read-for-ownership), so a
kernel writing an output far bigger than the caches moves its output twice; a streaming
(non-temporal) store writes the line without reading it. On this machine a vector add of 4M
floats ran 1.35 ms with plain stores and 0.90 ms streaming, and Triton's tutorial softmax on
4096 x 4096 reached 0.81 of the copy bandwidth against 1.04 streaming. Below the cache size the
output may still be cached when the next kernel reads it, so streaming would only lose that.

A launch marks each array argument of at least :data:`LARGE_BYTES` bytes (numpy arrays, device
arrays, torch tensors) as large in its specialisation (``ParamSpec.large``, part of the cache
key, like divisibility); the CPU lowering streams the vector stores of kernels that only write
such an argument (:mod:`kdsl.lowering.stream_stores`).
"""

from __future__ import annotations

import os

from kdsl.target import host_llc_bytes


def _threshold() -> int:
    """The last-level cache (an output that size cannot stay cached for the next kernel, whatever
    the inputs do), at least 1 MiB; ``KDSL_LARGE_BYTES`` overrides it (bytes). Half of it would
    still win in isolation (a vector add writing 8 MB ran 1.39x faster streaming) but would make
    a consumer that reads the output next fetch it from DRAM instead of the cache."""
    env = os.environ.get("KDSL_LARGE_BYTES", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"KDSL_LARGE_BYTES must be a number of bytes, got {env!r}") from None
    return max(host_llc_bytes(), 1 << 20)


# Read once per process (an environment setting, like KDSL_CPU_THREADS); launches compare against it.
LARGE_BYTES: int = _threshold()


def is_large(nbytes: int) -> bool:
    """Does an array of ``nbytes`` bytes count as large (see the module doc)?"""
    return nbytes >= LARGE_BYTES
