"""What a compiled specialisation of a function depends on.

Each parameter of a compiled function is either a compile-time constant
(``constexpr`` parameters, ints equal to 1, ``None`` and other non-numeric
objects, and every compile-time argument of a call between kernels) or a
runtime value of some IR type, plus -- for kernel entry points -- a known
power-of-two divisor (16 when the integer value or the pointer address is a
multiple of 16), which later passes use to prove alignment, and for pointers
whether the array is *large* (:mod:`kdsl.runtime.streaming`: bigger than the
caches keep, so CPU targets may stream the kernel's stores to it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kdsl.ir.types import PointerType, ScalarType, TileType, Type


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a specialisation: a constant, or a runtime value of ``type``."""

    name: str
    is_const: bool
    value: Any = None
    type: Type | None = None
    divisibility: int = 1
    tree: Any = None  # a structured value (tuple/aggregate, see frontend.values): its tree ...
    leaf_types: tuple[Type, ...] = ()  # ... and the types of its runtime leaves
    leaf_divisibility: tuple[int, ...] = ()  # per leaf, for kernel entry points (default 1)
    read_only: bool = False  # a pointer derived from a caller's ``kl.const`` parameter (frontend/readonly.py)
    large: bool = False  # a pointer to an array of at least runtime.streaming.LARGE_BYTES bytes

    @staticmethod
    def const(name: str, value: Any) -> ParamSpec:
        return ParamSpec(name, True, value=value)

    @staticmethod
    def runtime(name: str, type: Type, divisibility: int = 1, read_only: bool = False,
                large: bool = False) -> ParamSpec:
        return ParamSpec(name, False, type=type, divisibility=divisibility, read_only=read_only, large=large)

    @staticmethod
    def structured(name: str, tree: Any, leaf_types: tuple[Type, ...],
                   leaf_divisibility: tuple[int, ...] = ()) -> ParamSpec:
        """A tuple or aggregate mixing runtime leaves and compile-time parts."""
        return ParamSpec(name, False, tree=tree, leaf_types=leaf_types, leaf_divisibility=leaf_divisibility)

    @property
    def arg_divisibility(self) -> tuple[int, ...]:
        """The known divisor of each IR argument (see :attr:`arg_types`)."""
        if self.tree is not None:
            return self.leaf_divisibility or (1,) * len(self.leaf_types)
        return () if self.is_const else (self.divisibility,)

    @property
    def arg_types(self) -> tuple[Type, ...]:
        """The IR argument types this parameter becomes (none for a constant)."""
        if self.is_const:
            return ()
        if self.tree is not None:
            return self.leaf_types
        assert self.type is not None
        return (self.type,)

    def key(self) -> tuple[Any, ...]:
        """Hashable identity (constants by type+repr so 1 and True differ)."""
        if self.is_const:
            return ("c", type(self.value).__name__, _hashable(self.value))
        if self.tree is not None:
            return ("s", _hashable(self.tree), self.leaf_types, self.leaf_divisibility)
        flags = ("const",) * self.read_only + ("large",) * self.large
        return ("v", self.type, self.divisibility, *flags)


def _hashable(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return repr(v)
    if isinstance(v, tuple):
        return tuple((type(e).__name__, _hashable(e)) for e in v)
    return v


def int_type(v: int) -> ScalarType:
    """Triton's rule for Python ints: i32 if it fits, else i64, else u64."""
    if -(2**31) <= v < 2**31:
        return ScalarType("i32")
    if -(2**63) <= v < 2**63:
        return ScalarType("i64")
    if 0 <= v < 2**64:
        return ScalarType("u64")
    raise OverflowError(f"integer {v} does not fit in 64 bits")


# --- name mangling -----------------------------------------------------------


def mangle_type(t: Type) -> str:
    if isinstance(t, PointerType):
        return "p" + (mangle_type(t.pointee) if isinstance(t.pointee, PointerType) else t.pointee.name)
    if isinstance(t, TileType):
        return "t" + "x".join(map(str, t.dims)) + mangle_type(t.element)
    return t.text()


def mangle_value(v: Any) -> str:
    from kdsl.frontend.values import unwrap

    v = unwrap(v)
    if isinstance(v, Type):
        return v.text()
    if isinstance(v, tuple):
        return "T" + "_".join(mangle_value(e) for e in v) + "T"
    if callable(v) and hasattr(v, "__name__"):
        return str(v.__name__)
    text = repr(v).replace("-", "m").replace(".", "d")
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def mangle(name: str, specs: list[ParamSpec]) -> str:
    """``helper__f32_i32__BLOCK_128``: runtime types, then constants by name."""
    types_part = "_".join(mangle_type(t) for s in specs for t in s.arg_types)
    consts = "_".join(f"{s.name}_{mangle_value(s.value)}" for s in specs if s.is_const)
    out = name
    if types_part or consts:
        out += "__" + types_part
    if consts:
        out += "__" + consts
    return out
