"""Fixtures for the OpenCL backend tests: skip without a device, run kernels on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest


def _device_or_skip() -> None:
    try:
        from kdsl.runtime.opencl.device import all_devices
    except ImportError as e:  # pyopencl missing
        pytest.skip(f"pyopencl unavailable ({e}); install pyopencl and Debian pocl-opencl-icd")
    if not all_devices():
        pytest.skip("no OpenCL device: install Debian pocl-opencl-icd (apt-get install pocl-opencl-icd)")


@pytest.fixture(scope="session", autouse=True)
def opencl_backend() -> None:
    """Make the ``opencl`` backend usable by name even before the registry wires it in."""
    _device_or_skip()
    from kdsl.runtime import backends as registry
    from kdsl.runtime.opencl import OpenCLBackend

    if not registry.availability("opencl")[0]:
        registry.register_backend("opencl", OpenCLBackend)


Runner = Callable[..., list[np.ndarray]]


@pytest.fixture
def both() -> Runner:
    """``both(kernel, grid, *args, num_threads=nt, **meta)``: run on the interpreter and on
    OpenCL with copies of the array arguments; assert the arrays agree; return OpenCL's."""
    import kdsl

    def run(kernel: Any, grid: Any, *args: Any, num_threads: int = 1, exact: bool = True, atol: float = 1e-6,
            **meta: Any) -> list[np.ndarray]:
        results = []
        for name in ("interpreter", "opencl"):
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            opts = {"num_threads": num_threads} if name == "opencl" else {}
            with kdsl.backend(name):
                kernel[grid](*copies, **meta, **opts)
            results.append([c for c in copies if isinstance(c, np.ndarray)])
        for want, got in zip(*results):
            if exact:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=2e-5, atol=atol)  # float sums: order differs
        return results[1]

    return run
