"""Load host object code into this process and find ``kdsl_run``.

Each kernel gets its own MCJIT engine over an empty module to which the
object file is added (no code generation happens here: the object is what
:mod:`kdsl.runtime.cpu.compiler` produced or read from the disk cache). The
engine must stay alive as long as the function pointer is used, so
:class:`LoadedObject` keeps it.
"""

from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm

from kdsl.codegen.llvm import ENTRY
from kdsl.runtime.cpu.target import host

RunFn = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64
)

_LOCK = threading.Lock()  # MCJIT engine creation is not thread-safe


class LoadedObject:
    """An object file linked into the process; ``run`` is ``kdsl_run``."""

    def __init__(self, obj: bytes) -> None:
        h = host()
        with _LOCK:
            empty = llvm.parse_assembly("")
            empty.triple = h.triple
            self.engine = llvm.create_mcjit_compiler(empty, h.new_tm())
            objref = llvm.ObjectFileRef.from_data(obj)
            self.engine.add_object_file(objref)
            objref.detach()  # the engine owns the object now; Python must not free it too
            self.engine.finalize_object()
            addr = self.engine.get_function_address(ENTRY)
        if not addr:
            raise RuntimeError(f"cpu: '{ENTRY}' not found in the compiled object")
        self.address = addr
        self.run = RunFn(addr)
