"""Types of the kdsl IR.

Three kinds cover every level we have today:

* ``ScalarType`` -- a machine scalar. Unlike MLIR's signless integers we keep
  signedness in the type (``i32`` vs ``u32``): Triton semantics (division,
  comparison, shifts, casts) depend on it and keeping it here lets one generic
  op (``arith.div``) carry the right meaning to every backend.
* ``PointerType`` -- a pointer to global memory holding scalars of one type.
* ``TileType`` -- a statically shaped, row-major block of scalars or pointers.
* ``VectorType`` -- ``vector<16xf32>``: lanes of one register, only in the
  work-item IR after vectorisation (``kdsl.lowering.vectorize``).

Types are immutable, hashable values compared structurally, so passes can use
them as dict keys and the printer/parser round-trip them exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_SCALAR_NAMES = (
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "bf16",
    "f32",
    "f64",
)

# The fp8 family (Triton's names). They exist in the tile IR only: the ``fp8-to-bytes`` pass
# turns every fp8 value into its byte (``u8``) before a backend or the interpreter sees it, and the
# semantic layer computes on fp8 by decoding to f32 (``kdsl.frontend.semantic_fp8``).
FP8_NAMES = ("fp8e5", "fp8e4nv", "fp8e4b15", "fp8e4b8", "fp8e5b16")

_NUMPY_NAMES = {
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
}


class Type:
    """Base of all IR types. Subclasses are frozen dataclasses."""

    def text(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    # Convenience predicates shared by all kinds of type.
    @property
    def scalar(self) -> ScalarType | PointerType:
        """The element type: itself for scalars/pointers, the element of a tile."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        """Tile shape; ``()`` for scalars and pointers."""
        return ()

    def is_tile(self) -> bool:
        return False

    def is_ptr(self) -> bool:
        return isinstance(self.scalar, PointerType)

    def is_block(self) -> bool:
        """Triton's name for a tile type."""
        return self.is_tile()

    def is_void(self) -> bool:
        return False

    def with_shape(self, shape: tuple[int, ...]) -> Type:
        """Same element type with a new shape; ``()`` gives the bare scalar."""
        elem = self.scalar
        return TileType(tuple(shape), elem) if shape else elem

    def with_element(self, elem: ScalarType | PointerType) -> Type:
        """Same shape with a new element type."""
        return TileType(self.shape, elem) if self.shape else elem


class Predicate:
    """A truth value that is also callable: ``t.is_int()`` (Triton's spelling) and ``if t.is_int:``
    (kdsl's property spelling before it was renamed ``is_integer``) both give the right answer,
    so older code reading the property is not silently always true."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __call__(self) -> bool:
        return self.value

    def __bool__(self) -> bool:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class ScalarType(Type):
    """A machine scalar: ``i1``, ``i8..i64``, ``u8..u64``, ``f16``, ``bf16``, ``f32``, ``f64``."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in _SCALAR_NAMES and self.name not in FP8_NAMES:
            raise ValueError(f"unknown scalar type {self.name!r}")

    def text(self) -> str:
        return self.name

    def __repr__(self) -> str:
        """Triton's ``repr(tl.float16) == "triton.language.float16"``: the name that evaluates
        back to the type (test_core.py's ``test_dtype_codegen``)."""
        return f"kdsl.language.{_LANGUAGE_NAMES.get(self.name, self.name)}"

    @property
    def scalar(self) -> ScalarType:
        return self

    @property
    def is_integer(self) -> bool:
        return self.name[0] in "iu"

    @property
    def is_boolean(self) -> bool:
        return self.name == "i1"

    @property
    def is_float(self) -> bool:
        return self.name[0] in "fb"

    @property
    def is_signed(self) -> bool:
        """True for signed integers (``i1`` counts as unsigned, like Triton)."""
        return self.name[0] == "i" and self.name != "i1"

    @property
    def is_unsigned(self) -> bool:
        return self.name[0] == "u" or self.name == "i1"

    @property
    def bitwidth(self) -> int:
        if self.name in FP8_NAMES:
            return 8
        return 1 if self.name == "i1" else int(re.sub(r"\D", "", self.name))

    @property
    def itemsize(self) -> int:
        """Bytes per element in memory (``i1`` is stored as one byte)."""
        return max(1, self.bitwidth // 8)

    # --- Triton ``tl.dtype`` compatibility (kernels query dtypes at compile time) ---
    @property
    def primitive_bitwidth(self) -> int:
        return self.bitwidth

    @property
    def int_bitwidth(self) -> int:
        return self.bitwidth

    def is_floating(self) -> bool:
        return self.is_float

    def is_int_signed(self) -> bool:
        return self.is_signed

    def is_int_unsigned(self) -> bool:
        return self.is_unsigned

    def is_fp16(self) -> bool:
        return self.name == "f16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "f32"

    def is_fp64(self) -> bool:
        return self.name == "f64"

    @property
    def is_int(self) -> Predicate:
        """Triton's ``dtype.is_int()``: every integer type, ``int1`` included (as Triton lists it)."""
        return Predicate(self.is_integer)

    @property
    def is_bool(self) -> Predicate:
        """Triton's ``dtype.is_bool()``: ``int1``."""
        return Predicate(self.name == "i1")

    def is_int1(self) -> bool:
        return self.name == "i1"

    def is_int8(self) -> bool:
        return self.name == "i8"

    def is_int16(self) -> bool:
        return self.name == "i16"

    def is_int32(self) -> bool:
        return self.name == "i32"

    def is_int64(self) -> bool:
        return self.name == "i64"

    def is_uint8(self) -> bool:
        return self.name == "u8"

    def is_uint16(self) -> bool:
        return self.name == "u16"

    def is_uint32(self) -> bool:
        return self.name == "u32"

    def is_uint64(self) -> bool:
        return self.name == "u64"

    def is_standard_floating(self) -> bool:
        return self.name in ("f16", "bf16", "f32", "f64")

    def is_fp8(self) -> bool:
        return self.name in FP8_NAMES

    def is_fp8e5(self) -> bool:
        return self.name == "fp8e5"

    def is_fp8e4nv(self) -> bool:
        return self.name == "fp8e4nv"

    def is_fp8e4b15(self) -> bool:
        return self.name == "fp8e4b15"

    def is_fp8e4b8(self) -> bool:
        return self.name == "fp8e4b8"

    def is_fp8e5b16(self) -> bool:
        return self.name == "fp8e5b16"

    def get_int_max_value(self) -> int:
        if not self.is_integer:
            raise TypeError(f"{self} is not an integer type")
        return (1 << self.bitwidth) - 1 if self.is_unsigned else (1 << (self.bitwidth - 1)) - 1

    def get_int_min_value(self) -> int:
        if not self.is_integer:
            raise TypeError(f"{self} is not an integer type")
        return 0 if self.is_unsigned else -(1 << (self.bitwidth - 1))

    @property
    def fp_mantissa_width(self) -> int:
        if self.name not in FLOAT_FORMATS:
            raise TypeError(f"{self} is not a floating-point type")
        return FLOAT_FORMATS[self.name].mbits

    @property
    def np_dtype(self) -> np.dtype[np.generic]:
        if self.name not in _NUMPY_NAMES:
            raise TypeError(f"{self.name} has no numpy dtype")
        return np.dtype(_NUMPY_NAMES[self.name])


@dataclass(frozen=True)
class FloatFormat:
    """The bit layout of a binary floating-point type: what the fp8 codecs need.

    ``special`` says what the top codes mean: ``"ieee"`` (top exponent: infinities and NaNs),
    ``"fn"`` (no infinities; only ``S.1..1.1..1`` is NaN: E4M3FN), ``"fnuz"`` (no infinities, no
    negative zero; ``0x80`` is the one NaN: AMD's E4M3FNUZ/E5M2FNUZ), ``"finite"`` (every code is
    a number).
    """

    ebits: int
    mbits: int
    bias: int
    special: str

    @property
    def width(self) -> int:
        return 1 + self.ebits + self.mbits

    @property
    def max_code(self) -> int:
        """The magnitude bits of the largest finite value."""
        top = (1 << self.ebits) - 1
        if self.special == "ieee":
            return ((top - 1) << self.mbits) | ((1 << self.mbits) - 1)
        if self.special == "fn":
            return (top << self.mbits) | ((1 << self.mbits) - 2)
        return (1 << (self.ebits + self.mbits)) - 1

    @property
    def inf_code(self) -> int | None:
        return ((1 << self.ebits) - 1) << self.mbits if self.special == "ieee" else None


FLOAT_FORMATS: dict[str, FloatFormat] = {
    "f16": FloatFormat(5, 10, 15, "ieee"),
    "bf16": FloatFormat(8, 7, 127, "ieee"),
    "f32": FloatFormat(8, 23, 127, "ieee"),
    "f64": FloatFormat(11, 52, 1023, "ieee"),
    "fp8e5": FloatFormat(5, 2, 15, "ieee"),  # OCP E5M2
    "fp8e4nv": FloatFormat(4, 3, 7, "fn"),  # OCP E4M3FN (NVIDIA's e4m3)
    "fp8e4b15": FloatFormat(4, 3, 15, "finite"),  # Triton's legacy e4m3 with bias 15
    "fp8e4b8": FloatFormat(4, 3, 8, "fnuz"),  # E4M3FNUZ (AMD)
    "fp8e5b16": FloatFormat(5, 2, 16, "fnuz"),  # E5M2FNUZ (AMD)
}


@dataclass(frozen=True)
class PointerType(Type):
    """Pointer to global memory (address space 1) holding ``pointee`` scalars, or pointers
    (Triton's ``pointer_type(pointer_type(...))``: 64-bit addresses in memory)."""

    pointee: ScalarType | PointerType
    address_space: int = 1

    @property
    def scalar_pointee(self) -> ScalarType:
        """The pointee, where only a scalar one can occur (atomics, vector and block accesses:
        the frontend refuses those through pointers to pointers)."""
        if not isinstance(self.pointee, ScalarType):
            raise TypeError(f"{self.text()} points to pointers, not scalars")
        return self.pointee

    @property
    def element_ty(self) -> ScalarType | PointerType:
        """Triton's name for the pointee type."""
        return self.pointee

    def text(self) -> str:
        if self.address_space == 1:
            return f"ptr<{self.pointee.text()}>"
        return f"ptr<{self.pointee.text()}, {self.address_space}>"

    @property
    def scalar(self) -> PointerType:
        return self

    @property
    def itemsize(self) -> int:
        return 8


@dataclass(frozen=True)
class TileType(Type):
    """A statically shaped block of ``element`` values (rank >= 1)."""

    dims: tuple[int, ...]
    element: ScalarType | PointerType

    def __post_init__(self) -> None:
        if not self.dims:
            raise ValueError("a tile has rank >= 1; use the element type for scalars")

    def text(self) -> str:
        return "tile<" + "x".join(str(d) for d in self.dims) + "x" + self.element.text() + ">"

    @property
    def scalar(self) -> ScalarType | PointerType:
        return self.element

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims

    @property
    def numel(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def is_tile(self) -> bool:
        return True

    # --- Triton ``tl.block_type`` compatibility (kernels inspect ``x.type``) ---
    @property
    def element_ty(self) -> ScalarType | PointerType:
        return self.element

    def get_block_shapes(self) -> tuple[int, ...]:
        return self.dims

    @property
    def nbytes(self) -> int:
        return self.numel * self.element.itemsize

    def with_element_ty(self, element: ScalarType | PointerType) -> TileType:
        return TileType(self.dims, element)


MEMORY_SPACES = ("private", "local", "scratch")


@dataclass(frozen=True)
class MemRefType(Type):
    """A fixed-size array of ``element`` values in ``private``, ``local`` or ``scratch`` memory.

    Only the work-item IR uses it (``wi.alloc``): a tile distributed over the
    work-items of a work-group lives in one private array per work-item, or
    whole in one ``__local`` buffer shared by the group. A ``scratch`` array is
    a ``__local`` buffer that did not fit the device's work-group memory: it is
    shared by the group exactly like one, but lives in the group's slice of a
    global scratch buffer (``kdsl/lowering/scratch.py``). Text:
    ``memref<16xf32, private>``.
    """

    size: int
    element: ScalarType | PointerType
    space: str = "private"

    def __post_init__(self) -> None:
        if self.space not in MEMORY_SPACES:
            raise ValueError(f"unknown memory space {self.space!r}")

    def text(self) -> str:
        return f"memref<{self.size}x{self.element.text()}, {self.space}>"

    @property
    def scalar(self) -> ScalarType | PointerType:
        return self.element

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array (i1 takes a byte, pointers eight)."""
        return self.size * self.element.itemsize


@dataclass(frozen=True)
class VectorType(Type):
    """``vector<NxT>``: ``lanes`` scalars of ``element`` held in one register.

    Only the work-item IR uses it, after :mod:`kdsl.lowering.vectorize`: an
    element loop that runs ``lanes`` slots per iteration computes with
    vectors. ``arith``/``math`` ops act lane by lane (the scalar op's
    semantics per lane); ``vector<Nxi1>`` is a lane mask. ``shape`` is
    ``(lanes,)`` so the elementwise ops' shape checks apply unchanged.
    """

    lanes: int
    element: ScalarType

    def __post_init__(self) -> None:
        if self.lanes < 2:
            raise ValueError(f"a vector has >= 2 lanes, got {self.lanes}")
        if not isinstance(self.element, ScalarType):
            raise ValueError(f"vector of non-scalar {self.element}")

    def text(self) -> str:
        return f"vector<{self.lanes}x{self.element.text()}>"

    @property
    def scalar(self) -> ScalarType:
        return self.element

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.lanes,)

    def with_shape(self, shape: tuple[int, ...]) -> Type:
        return VectorType(shape[0], self.element) if shape else self.element

    def with_element(self, elem: ScalarType | PointerType) -> Type:
        assert isinstance(elem, ScalarType)
        return VectorType(self.lanes, elem)


# Singletons for the scalar types, so code can write ``types.f32``.
_LANGUAGE_NAMES = {"i1": "int1", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                   **{f"i{b}": f"int{b}" for b in (8, 16, 32, 64)}, **{f"u{b}": f"uint{b}" for b in (8, 16, 32, 64)},
                   **{n: "float" + n[2:] for n in ("fp8e5", "fp8e4nv", "fp8e4b15", "fp8e4b8", "fp8e5b16")}}
i1 = ScalarType("i1")
i8 = ScalarType("i8")
i16 = ScalarType("i16")
i32 = ScalarType("i32")
i64 = ScalarType("i64")
u8 = ScalarType("u8")
u16 = ScalarType("u16")
u32 = ScalarType("u32")
u64 = ScalarType("u64")
f16 = ScalarType("f16")
bf16 = ScalarType("bf16")
f32 = ScalarType("f32")
f64 = ScalarType("f64")
fp8e5 = ScalarType("fp8e5")
fp8e4nv = ScalarType("fp8e4nv")
fp8e4b15 = ScalarType("fp8e4b15")
fp8e4b8 = ScalarType("fp8e4b8")
fp8e5b16 = ScalarType("fp8e5b16")
FP8_TYPES: tuple[ScalarType, ...] = (fp8e5, fp8e4nv, fp8e4b15, fp8e4b8, fp8e5b16)

SCALAR_TYPES: tuple[ScalarType, ...] = tuple(ScalarType(n) for n in _SCALAR_NAMES)


# element types numpy lacks, by the dtype name ml_dtypes (numpy) and torch give them
HOST_DTYPE_NAMES = {"float8_e5m2": "fp8e5", "float8_e4m3fn": "fp8e4nv", "float8_e4m3fnuz": "fp8e4b8",
                    "float8_e5m2fnuz": "fp8e5b16", "bfloat16": "bf16"}


def scalar_from_numpy(dtype: np.dtype[np.generic]) -> ScalarType:
    """The scalar type holding numpy ``dtype`` (raises ``TypeError`` if none); ml_dtypes' fp8
    and bfloat16 dtypes map to kdsl's."""
    special = HOST_DTYPE_NAMES.get(getattr(dtype, "name", ""))
    if special is not None:
        return ScalarType(special)
    for name, np_name in _NUMPY_NAMES.items():
        if np.dtype(np_name) == dtype:
            return ScalarType(name)
    raise TypeError(f"numpy dtype {dtype} has no kdsl scalar type")


class TypeParseError(ValueError):
    """Raised by :func:`parse_type` on malformed type text."""


def parse_type(text: str) -> Type:
    """Parse the text form produced by ``Type.text()``."""
    t, rest = _parse_type_prefix(text.strip())
    if rest.strip():
        raise TypeParseError(f"trailing text after type: {rest!r}")
    return t


def _parse_type_prefix(text: str) -> tuple[Type, str]:
    """Parse one type at the start of ``text``; return it and the rest."""
    if text.startswith("ptr<"):
        inner, rest = _split_angle(text[3:])
        m = re.match(r"(.*),\s*(\d+)$", inner)  # an address space follows the last comma
        elem_text, space = (m.group(1), int(m.group(2))) if m else (inner, 1)
        pointee = parse_type(elem_text)
        if not isinstance(pointee, (ScalarType, PointerType)):
            raise TypeParseError(f"pointer to non-scalar {elem_text!r}")
        return PointerType(pointee, space), rest
    if text.startswith("memref<"):
        inner, rest = _split_angle(text[6:])
        m = re.match(r"(\d+)x(.*),\s*([a-z]+)$", inner)
        if not m or m.group(3) not in MEMORY_SPACES:
            raise TypeParseError(f"malformed memref type {text!r}")
        melem = parse_type(m.group(2))
        if not isinstance(melem, (ScalarType, PointerType)):
            raise TypeParseError(f"memref of non-scalar {m.group(2)!r}")
        return MemRefType(int(m.group(1)), melem, m.group(3)), rest
    if text.startswith("vector<"):
        inner, rest = _split_angle(text[6:])
        m = re.match(r"(\d+)x(.*)$", inner)
        velem = parse_type(m.group(2)) if m else None
        if not m or not isinstance(velem, ScalarType):
            raise TypeParseError(f"malformed vector type {text!r}")
        return VectorType(int(m.group(1)), velem), rest
    if text.startswith("tile<"):
        inner, rest = _split_angle(text[4:])
        m = re.match(r"((?:\d+x)+)(.*)$", inner)
        if not m:
            raise TypeParseError(f"malformed tile type {text!r}")
        dims = tuple(int(d) for d in m.group(1).split("x") if d)
        elem = parse_type(m.group(2))
        if not isinstance(elem, (ScalarType, PointerType)):
            raise TypeParseError(f"tile of non-scalar {m.group(2)!r}")
        return TileType(dims, elem), rest
    m = re.match(r"fp8[a-z0-9]+|[a-z]+[0-9]+", text)
    if not m or (m.group(0) not in _SCALAR_NAMES and m.group(0) not in FP8_NAMES):
        raise TypeParseError(f"unknown type {text[:20]!r}")
    return ScalarType(m.group(0)), text[m.end() :]


def _split_angle(text: str) -> tuple[str, str]:
    """Given text starting with '<', return (inside, after-the-matching-'>')."""
    if not text.startswith("<"):
        raise TypeParseError(f"expected '<' in {text[:20]!r}")
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return text[1:i], text[i + 1 :]
    raise TypeParseError(f"unbalanced '<' in {text[:20]!r}")
