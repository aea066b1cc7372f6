"""A SPIR-V module under construction: sections, ids, types, constants, binary.

The specification fixes a *logical layout* (section 2.4): capabilities,
extensions, extended-instruction imports, the memory model, entry points,
execution modes, debug names, annotations, then types/constants/global
variables, then functions. :class:`Module` keeps one word list per section and
concatenates them in that order, so callers may add a capability or a type at
any moment (e.g. when the emitter first meets an ``i64``) without breaking the
layout. Types and constants are de-duplicated by structural key: asking twice
for ``OpTypeInt 32 1`` gives the same id, which SPIR-V requires for
non-aggregate types.

Numbers come from :mod:`kdsl.codegen.spirv.grammar_table` (generated from the
Khronos grammar), never typed here. Function bodies are built by
:class:`kdsl.codegen.spirv.function.FunctionBuilder`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kdsl.codegen.spirv import grammar_table as g

SECTIONS = (
    "capabilities",
    "extensions",
    "ext_imports",
    "memory_model",
    "entry_points",
    "execution_modes",
    "debug",
    "annotations",
    "globals",
    "functions",
)

GENERATOR_ID = 0  # "unregistered" in the Khronos vendor table; kdsl has no registered id


@dataclass(frozen=True)
class TypeInfo:
    """What the typed helpers need to know about a type id."""

    kind: str  # void bool int float ptr struct array vector func
    bits: int = 0
    signed: bool = False
    storage: str = ""  # pointers: storage class
    pointee: int = 0  # pointers: pointee type id; arrays/vectors: element id
    count: int = 0  # vectors/arrays: length


def string_words(text: str) -> list[int]:
    """A literal string: UTF-8, NUL-terminated, zero-padded to whole words."""
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def instruction(opname: str, operands: Sequence[int]) -> list[int]:
    """Encode one instruction: word count in the high half-word, opcode in the low."""
    op = g.OPCODES[opname]
    return [((len(operands) + 1) << 16) | op, *operands]


class Module:
    """Sections, id allocation and the de-duplicated type/constant tables."""

    def __init__(self, version: tuple[int, int] = (1, 5)) -> None:
        self.version = version
        self.sections: dict[str, list[int]] = {s: [] for s in SECTIONS}
        self.bound = 1
        self.types: dict[tuple[object, ...], int] = {}
        self.info: dict[int, TypeInfo] = {}
        self.consts: dict[tuple[object, ...], int] = {}
        self.capabilities: set[str] = set()
        self.extensions: set[str] = set()
        self.imports: dict[str, int] = {}
        self.interface: list[int] = []  # global variables listed in OpEntryPoint (SPIR-V >= 1.4: all of them)

    # --- ids and raw emission -------------------------------------------------------
    def new_id(self) -> int:
        self.bound += 1
        return self.bound - 1

    def emit(self, section: str, opname: str, *operands: int) -> None:
        self.sections[section].extend(instruction(opname, operands))

    def capability(self, name: str) -> None:
        if name not in self.capabilities:
            self.capabilities.add(name)
            self.emit("capabilities", "OpCapability", g.CAPABILITY[name])

    def extension(self, name: str) -> None:
        if name not in self.extensions:
            self.extensions.add(name)
            self.emit("extensions", "OpExtension", *string_words(name))

    def ext_import(self, name: str = "GLSL.std.450") -> int:
        if name not in self.imports:
            rid = self.new_id()
            self.imports[name] = rid
            self.emit("ext_imports", "OpExtInstImport", rid, *string_words(name))
        return self.imports[name]

    def memory_model(self, addressing: str, model: str) -> None:
        self.sections["memory_model"] = instruction(
            "OpMemoryModel", [g.ADDRESSING_MODEL[addressing], g.MEMORY_MODEL[model]]
        )

    def entry_point(self, model: str, func: int, name: str, interface: Iterable[int]) -> None:
        self.emit("entry_points", "OpEntryPoint", g.EXECUTION_MODEL[model], func, *string_words(name), *interface)

    def execution_mode(self, func: int, mode: str, *args: int) -> None:
        self.emit("execution_modes", "OpExecutionMode", func, g.EXECUTION_MODE[mode], *args)

    def name(self, target: int, text: str) -> None:
        self.emit("debug", "OpName", target, *string_words(text))

    def member_name(self, target: int, member: int, text: str) -> None:
        self.emit("debug", "OpMemberName", target, member, *string_words(text))

    def decorate(self, target: int, decoration: str, *args: int) -> None:
        self.emit("annotations", "OpDecorate", target, g.DECORATION[decoration], *args)

    def member_decorate(self, target: int, member: int, decoration: str, *args: int) -> None:
        self.emit("annotations", "OpMemberDecorate", target, member, g.DECORATION[decoration], *args)

    # --- types -----------------------------------------------------------------------------
    def _type(self, key: tuple[object, ...], info: TypeInfo, opname: str, *operands: int) -> int:
        tid = self.types.get(key)
        if tid is None:
            tid = self.new_id()
            self.types[key] = tid
            self.info[tid] = info
            self.emit("globals", opname, tid, *operands)
        return tid

    def t_void(self) -> int:
        return self._type(("void",), TypeInfo("void"), "OpTypeVoid")

    def t_bool(self) -> int:
        return self._type(("bool",), TypeInfo("bool", 1), "OpTypeBool")

    def t_int(self, bits: int, signed: bool) -> int:
        return self._type(("int", bits, signed), TypeInfo("int", bits, signed), "OpTypeInt", bits, int(signed))

    def t_float(self, bits: int) -> int:
        return self._type(("float", bits), TypeInfo("float", bits), "OpTypeFloat", bits)

    def t_vector(self, elem: int, n: int) -> int:
        return self._type(("vector", elem, n), TypeInfo("vector", pointee=elem, count=n), "OpTypeVector", elem, n)

    def t_array(self, elem: int, n: int, stride: int = 0) -> int:
        """``OpTypeArray`` of ``n`` elements; ``stride`` > 0 adds an ``ArrayStride`` decoration
        (explicitly laid out arrays get their own id, as decorations are per id)."""
        length = self.const(self.t_int(32, False), n)
        key = ("array", elem, n, stride)
        if key in self.types:
            return self.types[key]
        tid = self._type(key, TypeInfo("array", pointee=elem, count=n), "OpTypeArray", elem, length)
        if stride:
            self.decorate(tid, "ArrayStride", stride)
        return tid

    def t_struct(self, members: Sequence[int], tag: str = "") -> int:
        """A struct type; ``tag`` separates structs that carry different decorations."""
        return self._type(("struct", tuple(members), tag), TypeInfo("struct", count=len(members)), "OpTypeStruct",
                          *members)

    def t_ptr(self, storage: str, pointee: int) -> int:
        return self._type(("ptr", storage, pointee), TypeInfo("ptr", storage=storage, pointee=pointee),
                          "OpTypePointer", g.STORAGE_CLASS[storage], pointee)

    def t_func(self, ret: int, params: Sequence[int] = ()) -> int:
        return self._type(("func", ret, tuple(params)), TypeInfo("func"), "OpTypeFunction", ret, *params)

    # --- constants ----------------------------------------------------------------------------
    def const(self, type_id: int, value: bool | int | float) -> int:
        """A scalar constant of ``type_id`` (bool, int or float), de-duplicated."""
        ti = self.info[type_id]
        key: tuple[object, ...]
        if ti.kind == "bool":
            key = ("bool", bool(value))
            if key not in self.consts:
                cid = self.new_id()
                self.consts[key] = cid
                self.emit("globals", "OpConstantTrue" if value else "OpConstantFalse", type_id, cid)
            return self.consts[key]
        words = _literal_words(ti, value)
        key = ("num", type_id, tuple(words))
        if key not in self.consts:
            cid = self.new_id()
            self.consts[key] = cid
            self.emit("globals", "OpConstant", type_id, cid, *words)
        return self.consts[key]

    def const_composite(self, type_id: int, parts: Sequence[int]) -> int:
        key = ("composite", type_id, tuple(parts))
        if key not in self.consts:
            cid = self.new_id()
            self.consts[key] = cid
            self.emit("globals", "OpConstantComposite", type_id, cid, *parts)
        return self.consts[key]

    def global_variable(self, ptr_type: int, storage: str, name: str = "") -> int:
        vid = self.new_id()
        self.emit("globals", "OpVariable", ptr_type, vid, g.STORAGE_CLASS[storage])
        if name:
            self.name(vid, name)
        self.interface.append(vid)
        return vid

    # --- output ---------------------------------------------------------------------------------
    def words(self) -> list[int]:
        major, minor = self.version
        header = [g.MAGIC, (major << 16) | (minor << 8), GENERATOR_ID, self.bound, 0]
        out = header
        for s in SECTIONS:
            out = out + self.sections[s]
        return out

    def to_bytes(self) -> bytes:
        w = self.words()
        return struct.pack(f"<{len(w)}I", *w)


def _literal_words(ti: TypeInfo, value: bool | int | float) -> list[int]:
    """Words of a numeric literal: low word first; narrow signed ints sign-extended."""
    if ti.kind == "int":
        v = int(value)
        if ti.bits == 64:
            v &= (1 << 64) - 1
            return [v & 0xFFFFFFFF, v >> 32]
        if ti.bits < 32 and ti.signed:
            v = ((v + (1 << (ti.bits - 1))) % (1 << ti.bits)) - (1 << (ti.bits - 1))  # wrap into range
            return [v & 0xFFFFFFFF]
        return [v & ((1 << ti.bits) - 1)]
    if ti.kind == "float":
        f = float(value)
        if ti.bits == 16:
            return [int(np.array(f, np.float16).view(np.uint16))]
        if ti.bits == 32:
            with np.errstate(over="ignore"):
                return [int(np.array(f, np.float32).view(np.uint32))]
        bits = int(np.array(f, np.float64).view(np.uint64))
        return [bits & 0xFFFFFFFF, bits >> 32]
    raise ValueError(f"no literal for type kind {ti.kind}")
