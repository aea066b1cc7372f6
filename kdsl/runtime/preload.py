"""Map the OpenCL driver's libraries in a background thread while the program starts.

Why: a new process whose kernels are all in the disk cache spends most of its time to the
first result loading PoCL: ``dlopen`` of libpocl maps and relocates libLLVM and
libclang-cpp (~30-60 ms; ``bench/bench_compile.py --breakdown``, stage ``driver``), and
nothing in kdsl can shorten that. It can overlap, though: ``import kdsl`` starts a thread
that ``dlopen``\\ s every registered ICD library (the files in ``OCL_ICD_VENDORS`` or
``/etc/OpenCL/vendors``) while Python goes on importing kdsl and the user's modules,
defining kernels and building inputs. When the first launch asks the ICD loader for its
platforms, the loader's own ``dlopen`` of the same name finds the library mapped, and only
PoCL's initialisation (~10-20 ms) is left on the critical path.

Only the mapping, never the driver's initialisation: an initialised PoCL does not survive
``fork()`` (its worker threads are not copied; a child that launches hangs), and programs
fork after ``import kdsl`` (multiprocessing's default on Linux, the autotuner). A mapped
library is plain memory to a child. The call goes through libc's ``dlopen`` with ctypes,
which releases the GIL (``ctypes.CDLL`` holds it for the whole load). The thread is always
waited for: before ``fork()`` (a child of a process inside ``dlopen`` would inherit the
loader's lock held) and at exit.

It starts when OpenCL would run the kernels (``KDSL_BACKEND`` unset or ``opencl``) and
pyopencl is installed. ``KDSL_PRELOAD=0`` turns it off (a program that picks another
backend through the API would map ~100 MB of libraries it never uses).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
from importlib.util import find_spec

ENV_VAR = "KDSL_PRELOAD"
VENDORS_DIR = "/etc/OpenCL/vendors"
_RTLD_NOW, _RTLD_LOCAL = 2, 0  # <dlfcn.h>; LOCAL: the driver's LLVM stays out of the global namespace
_THREAD: list[threading.Thread] = []  # the one preload thread of this process (at most)
_HANDLES: list[int] = []  # keep the libraries mapped (never dlclosed)


def wanted() -> bool:
    """Whether a preload can help this process: opencl is the backend launches would use."""
    if os.environ.get(ENV_VAR, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if os.environ.get("KDSL_BACKEND", "").strip().lower() not in ("", "opencl"):
        return False
    try:
        return find_spec("pyopencl") is not None
    except (ImportError, ValueError):
        return False


def vendor_libraries() -> list[str]:
    """The library names the ICD loader will ``dlopen`` (one per ``.icd`` file, as ocl-icd reads them)."""
    where = os.environ.get("OCL_ICD_VENDORS", "") or VENDORS_DIR
    try:
        files = [where] if os.path.isfile(where) else [os.path.join(where, n) for n in sorted(os.listdir(where))]
    except OSError:
        return []
    names = []
    for path in files:
        if not path.endswith(".icd"):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                name = f.readline().strip()
        except OSError:
            continue
        if name:
            names.append(name)
    return names


def _map(names: list[str]) -> None:
    try:
        libc = ctypes.CDLL(None)
        dlopen = libc.dlopen
    except (OSError, AttributeError):
        return
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    for name in names:
        handle = dlopen(name.encode(), _RTLD_NOW | _RTLD_LOCAL)  # a missing library: NULL, ignored
        if handle:
            _HANDLES.append(handle)


def join() -> None:
    """Wait for the preload (a no-op when none runs or it has finished)."""
    for t in _THREAD:
        if t.is_alive() and t is not threading.current_thread():
            t.join()


def start() -> bool:
    """Start the preload once per process when :func:`wanted`; True when a thread started."""
    if _THREAD or not wanted():
        return False
    names = vendor_libraries()
    if not names:
        return False
    t = threading.Thread(target=_map, args=(names,), name="kdsl-opencl-preload", daemon=True)
    _THREAD.append(t)
    os.register_at_fork(before=join)
    atexit.register(join)
    t.start()
    return True
