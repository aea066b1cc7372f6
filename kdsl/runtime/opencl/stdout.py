"""Forward a kernel's ``printf`` output to Python's ``sys.stdout``.

OpenCL ``printf`` writes to the process's C ``stdout`` (file descriptor 1),
which bypasses ``sys.stdout`` -- and so pytest's ``capsys``, notebooks and
any redirection done in Python. For launches of kernels that print, the fd is
redirected to a temporary file until the queue has finished, then the text is
written to ``sys.stdout``, in order with Python's own output.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any


def _fflush() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def capture_stdout(active: bool, device: Any) -> Iterator[None]:
    if not active:
        yield
        return
    sys.stdout.flush()
    _fflush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            yield
            device.synchronize()
            _fflush()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
