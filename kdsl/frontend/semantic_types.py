"""Type rules of the language, as pure functions over IR scalar types.

These are Triton's implicit-conversion rules (``semantic.py``'s
``computation_type_impl`` / ``integer_promote_impl`` / ``to_tensor_type``),
kept free of IR building so they can be unit-tested and reused by every
semantic method. Errors are raised as :class:`TypeRuleError` carrying just a
message; the semantic turns them into located ``CompilationError``s.
"""

from __future__ import annotations

from kdsl.ir import types as t
from kdsl.ir.types import ScalarType

MIN_NORMAL_F32 = 2.0**-126
MAX_F32 = (2 - 2.0**-23) * 2.0**127


class TypeRuleError(Exception):
    """A type combination the language rejects (message only; no location)."""


def kind(ty: ScalarType) -> int:
    """Kind rank used for Python-scalar promotion: bool < integer < floating."""
    if ty.is_boolean:
        return 0
    if ty.is_integer:
        return 1
    return 2


def python_scalar_type(value: object) -> ScalarType:
    """The type a Python literal gets: bool -> i1; int -> i32, u32, i64 or u64
    (the first that holds it); float -> f32 unless only f64 can represent its
    magnitude (tiny non-zero or huge finite values)."""
    if isinstance(value, bool):
        return t.i1
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return t.i32
        if 2**31 <= value < 2**32:
            return t.u32
        if -(2**63) <= value < 2**63:
            return t.i64
        if 2**63 <= value < 2**64:
            return t.u64
        raise TypeRuleError(f"integer {value} does not fit in 64 bits")
    if isinstance(value, float):
        mag = abs(value)
        if mag == float("inf") or mag == 0.0 or value != value or MIN_NORMAL_F32 <= mag <= MAX_F32:
            return t.f32
        return t.f64
    raise TypeRuleError(f"cannot convert {value!r} of type {type(value).__name__} to a tensor")


def integer_promote(a: ScalarType, b: ScalarType) -> ScalarType:
    """C's usual arithmetic conversions: the wider type wins; at equal width an
    unsigned type wins over a signed one (``i1`` counts as unsigned)."""
    if a.is_unsigned == b.is_unsigned:
        return a if a.bitwidth > b.bitwidth else b
    if a.is_unsigned:
        return a if a.bitwidth >= b.bitwidth else b
    return b if b.bitwidth >= a.bitwidth else a


def computation_type(a: ScalarType, a_is_scalar: bool, b: ScalarType, b_is_scalar: bool,
                     div_or_mod: bool) -> ScalarType:
    """The type both operands of an arithmetic op are converted to.

    A Python scalar (``*_is_scalar``) of a kind not above the tensor's kind
    does not take part (``int8_tensor + 3`` stays ``int8``, ``f16 + 2.0``
    stays ``f16``), except that ``/`` and ``%`` on half types compute in f32.
    Otherwise: f64 wins, then f32; f16 with anything (incl. bf16) is f16
    (f32 for ``/``/``%``); bf16 with bf16 is bf16 (f32 for ``/``/``%``); an fp8 type with
    itself stays fp8, two different fp8 types give f16, fp8 with an integer tensor is an error;
    integers follow :func:`integer_promote`, and ``/``, ``//``, ``%`` reject
    operands of differing signedness.
    """
    if a_is_scalar != b_is_scalar:
        scalar_ty, tensor_ty = (a, b) if a_is_scalar else (b, a)
        if kind(scalar_ty) <= kind(tensor_ty):
            if div_or_mod and tensor_ty in (t.f16, t.bf16):
                return t.f32
            return tensor_ty
    if t.f64 in (a, b):
        return t.f64
    if t.f32 in (a, b):
        return t.f32
    if t.f16 in (a, b):
        return t.f32 if div_or_mod else t.f16
    if a == t.bf16 and b == t.bf16:
        return t.f32 if div_or_mod else t.bf16
    if t.bf16 in (a, b):
        return t.f32
    if a.is_fp8() and b.is_fp8():
        return a if a == b else t.f16
    if a.is_float or b.is_float:
        raise TypeRuleError(f"cannot combine {a} and {b}: cast one of them explicitly")
    if div_or_mod and a.is_unsigned != b.is_unsigned:
        raise TypeRuleError(
            f"Cannot use /, //, or % with {a} and {b} because they have different signedness; "
            "cast them to the same signedness"
        )
    return integer_promote(a, b)


def int_bounds(ty: ScalarType) -> tuple[int, int]:
    """Inclusive value range of an integer type."""
    if ty.is_boolean:
        return 0, 1
    if ty.is_signed:
        return -(1 << (ty.bitwidth - 1)), (1 << (ty.bitwidth - 1)) - 1
    return 0, (1 << ty.bitwidth) - 1


def all_ones(ty: ScalarType) -> int:
    """The all-ones bit pattern of an integer type as a value of that type."""
    return -1 if ty.is_signed else int_bounds(ty)[1]


def mantissa_width(ty: ScalarType) -> int:
    return ty.fp_mantissa_width
