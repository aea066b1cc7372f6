"""llvmlite initialisation and the host target machine (one per process).

The target machine is created for the host CPU by name and feature string
(``znver5``/``+avx512f,...`` here), so the code generator may use AVX2 or
AVX-512 where the host has them; the same strings are part of the disk-cache
key, so object code is never reused on a different CPU.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from dataclasses import dataclass

import llvmlite
import llvmlite.binding as llvm


@dataclass(frozen=True)
class Host:
    """The host target: what object code is compiled for."""

    triple: str
    cpu: str
    features: str
    data_layout: str
    tm: llvm.TargetMachine

    def new_tm(self) -> llvm.TargetMachine:
        """A fresh target machine (an MCJIT engine takes ownership of the one it gets)."""
        return _make_tm(self.triple, self.cpu, self.features)

    @property
    def vector_bytes(self) -> int:
        """Width of the widest vector registers the code generator may use."""
        feats = set(self.features.split(","))
        if "+avx512f" in feats:
            return 64
        if "+avx" in feats or "+avx2" in feats:
            return 32
        return 16

    @property
    def int8_dot(self) -> bool:
        """AVX-512 VNNI (``vpdpbusd``): int8 dots add four byte products per lane at once."""
        feats = set(self.features.split(","))
        return {"+avx512vnni", "+avx512bw", "+avx512f"} <= feats

    @property
    def fingerprint(self) -> str:
        """Everything the generated machine code depends on besides the IR."""
        return f"llvmlite {llvmlite.__version__}|{self.triple}|{self.cpu}|{self.features}"


@functools.cache
def host() -> Host:
    """Initialise LLVM (once) and build the host target machine at O3."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    _register_libc()
    triple = llvm.get_process_triple()
    cpu = llvm.get_host_cpu_name()
    features = _features(llvm.get_host_cpu_features().flatten())
    tm = _make_tm(triple, cpu, features)
    return Host(triple, cpu, features, str(tm.target_data), tm)


def _features(host_features: str) -> str:
    """The host's features, with LLVM's own loop vectoriser held to 256-bit vectors on AVX-512.

    Why: llvmlite's LLVM is built with assertions, and its loop vectoriser aborts the *process*
    ("VPlan cost model and legacy cost model disagreed") on ordinary masked element loops when it
    may pick 512-bit factors -- the default on AMD Zen 4/5, whose tuning does not prefer 256 bits
    as Intel's does. ``prefer-256-bit`` only steers that auto-vectoriser: the vectors kdsl emits
    itself (``vector<16xf32>``, the ``wi.mma`` micro-kernel) stay 512 bits wide, as on Intel hosts."""
    feats = host_features.split(",") if host_features else []
    if "+avx512f" in feats and "+prefer-256-bit" not in feats:
        feats = [f for f in feats if f != "-prefer-256-bit"] + ["+prefer-256-bit"]
    return ",".join(feats)


def _make_tm(triple: str, cpu: str, features: str) -> llvm.TargetMachine:
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic", codemodel="jitdefault", jit=True)


# C functions generated code may call (libm for scalar math, libc for printf).
_LIBC_SYMBOLS = ("printf", "fflush")
_LIBM_SYMBOLS = tuple(
    n + suffix
    for n in ("fmod", "erf", "tanh", "sin", "cos", "exp", "exp2", "log", "log2", "pow", "sqrt", "floor", "ceil")
    for suffix in ("", "f")
)


def _register_libc() -> None:
    """Tell the JIT linker where libc/libm functions live in this process."""
    libc = ctypes.CDLL(None)
    libm_name = ctypes.util.find_library("m")
    libm = ctypes.CDLL(libm_name) if libm_name else libc
    for lib, names in ((libc, _LIBC_SYMBOLS), (libm, _LIBM_SYMBOLS)):
        for name in names:
            try:
                addr = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
            except AttributeError:
                continue
            if addr:
                llvm.add_symbol(name, addr)
