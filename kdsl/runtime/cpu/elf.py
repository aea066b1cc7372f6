"""The undefined symbols of an ELF64 object file (what the JIT linker must find elsewhere).

Why: MCJIT resolves a symbol it cannot find to address 0, so a kernel that calls a
compiler-runtime helper the process lacks (``__truncdfhf2`` for ``fptrunc double to half``
without AVX512-FP16) crashes when it runs instead of failing to build. The compiler lists the
object's undefined symbols and refuses one the process cannot supply, with its name.
Only the ELF64 little-endian objects of Linux x86-64/aarch64 hosts are read; other formats give
no list (the check is skipped).
"""

from __future__ import annotations

import struct

_SHT_SYMTAB = 2
_SHN_UNDEF = 0


def undefined_symbols(obj: bytes) -> list[str] | None:
    """Names of the undefined, named symbols of ``obj``; None when it is not an ELF64 LE object."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names: list[str] = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != _SHT_SYMTAB or entsize == 0:
            continue
        strtab_off = sections[link][4]
        for at in range(offset, offset + size, entsize):
            st_name, _st_info, _st_other, st_shndx = struct.unpack_from("<IBBH", obj, at)
            if st_shndx == _SHN_UNDEF and st_name:
                end = obj.index(b"\0", strtab_off + st_name)
                names.append(obj[strtab_off + st_name:end].decode())
    return names
