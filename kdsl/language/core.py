"""The objects kernel code manipulates: ``constexpr``, ``tensor``, dtypes, ``builtin``.

This module is deliberately thin (as Triton's ``language/core.py``): a
``tensor`` is only an IR value plus the :class:`~kdsl.frontend.semantic.Semantic`
that created it, and every operator on it delegates to that semantic object,
which owns all typing, promotion and broadcasting rules. Keeping the rules in
one place means the operator ``a + b`` and the builtin ``kl.where`` can never
disagree about how types combine.
"""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from kdsl.ir import types as _t
from kdsl.ir.core import Value
from kdsl.ir.types import PointerType, ScalarType, Type

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

T = TypeVar("T")

# ---------------------------------------------------------------------------
# dtypes: the IR's scalar types *are* the language's dtypes.
# ---------------------------------------------------------------------------
dtype = ScalarType
int1 = _t.i1
int8 = _t.i8
int16 = _t.i16
int32 = _t.i32
int64 = _t.i64
uint8 = _t.u8
uint16 = _t.u16
uint32 = _t.u32
uint64 = _t.u64
float16 = _t.f16
bfloat16 = _t.bf16
float32 = _t.f32
float64 = _t.f64
float8e5 = _t.fp8e5
float8e4nv = _t.fp8e4nv
float8e4b15 = _t.fp8e4b15
float8e4b8 = _t.fp8e4b8
float8e5b16 = _t.fp8e5b16


class _PointerTypeMeta(type):
    """``kl.pointer_type(elem)`` builds the IR ``PointerType``; ``isinstance(t, kl.pointer_type)``
    recognises every pointer type, as Triton's class does (``isinstance(x.dtype, tl.pointer_type)``
    is how Triton code asks whether an argument is a pointer)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, PointerType)

    def __call__(cls, element_ty: ScalarType | PointerType, address_space: int = 1) -> PointerType:
        return PointerType(element_ty, address_space)


class pointer_type(metaclass=_PointerTypeMeta):
    """The type of a pointer to global memory holding ``element_ty`` values (Triton's
    ``tl.pointer_type(element_ty, address_space=1)``); calling it returns kdsl's ``PointerType``."""


class PropagateNan(enum.Enum):
    """NaN behaviour of ``minimum``/``maximum``/``clamp``: ``NONE`` ignores a NaN
    operand (``fmin``/``fmax``), ``ALL`` returns NaN if any operand is NaN."""

    NONE = 0
    ALL = 0xFFFF


# ---------------------------------------------------------------------------
# builtins
# ---------------------------------------------------------------------------
BUILTIN_ATTR = "__kdsl_builtin__"

# Default of every builtin's ``_semantic`` parameter; typed ``Any`` so builtin
# bodies can use the parameter as a ``Semantic`` (the decorator guarantees it).
NO_SEMANTIC: Any = None


def builtin(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark ``fn`` as a language builtin.

    The AST visitor calls builtins as ``fn(*args, _semantic=sem, **kwargs)``
    instead of inlining them as user functions. Calling one outside a kernel
    (no ``_semantic``) is a usage error, reported plainly.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        if kwargs.get("_semantic") is None:
            raise TypeError(f"kl.{fn.__name__} can only be called inside a @kdsl.kernel function")
        return fn(*args, **kwargs)

    setattr(wrapper, BUILTIN_ATTR, True)
    return wrapper


def is_builtin(fn: object) -> bool:
    """True for functions decorated with :func:`builtin`."""
    return bool(getattr(fn, BUILTIN_ATTR, False))


# ---------------------------------------------------------------------------
# constexpr
# ---------------------------------------------------------------------------
def _cx_binop(op: Callable[[Any, Any], Any], reflected: bool = False) -> Callable[[constexpr, Any], Any]:
    def method(self: constexpr, other: Any) -> Any:
        if isinstance(other, tensor):
            return NotImplemented
        o = other.value if isinstance(other, constexpr) else other
        return constexpr(op(o, self.value) if reflected else op(self.value, o))

    return method


def _cx_unop(op: Callable[[Any], Any]) -> Callable[[constexpr], constexpr]:
    def method(self: constexpr) -> constexpr:
        return constexpr(op(self.value))

    return method


class constexpr:
    """A compile-time constant (``.value``); also the annotation ``x: kl.constexpr``.

    Arithmetic and comparisons between constexprs (or with Python values) fold
    to constexprs with Python semantics, as in Triton; with a ``tensor`` operand
    they defer to the tensor, which emits IR.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value: Any = value.value if isinstance(value, constexpr) else value

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    @property
    def type(self) -> Any:
        """Triton's ``constexpr(v).type``: ``kl.constexpr_type(v)``."""
        from kdsl.language.types import constexpr_type

        return constexpr_type(self.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __index__(self) -> int:
        return operator.index(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.value(*args, **kwargs)

    def __getitem__(self, index: Any) -> Any:
        return constexpr(self.value[_unwrap(index)])

    def __len__(self) -> int:
        return len(self.value)

    __add__ = _cx_binop(operator.add)
    __radd__ = _cx_binop(operator.add, True)
    __sub__ = _cx_binop(operator.sub)
    __rsub__ = _cx_binop(operator.sub, True)
    __mul__ = _cx_binop(operator.mul)
    __rmul__ = _cx_binop(operator.mul, True)
    __truediv__ = _cx_binop(operator.truediv)
    __rtruediv__ = _cx_binop(operator.truediv, True)
    __floordiv__ = _cx_binop(operator.floordiv)
    __rfloordiv__ = _cx_binop(operator.floordiv, True)
    __mod__ = _cx_binop(operator.mod)
    __rmod__ = _cx_binop(operator.mod, True)
    __pow__ = _cx_binop(operator.pow)
    __rpow__ = _cx_binop(operator.pow, True)
    __and__ = _cx_binop(operator.and_)
    __rand__ = _cx_binop(operator.and_, True)
    __or__ = _cx_binop(operator.or_)
    __ror__ = _cx_binop(operator.or_, True)
    __xor__ = _cx_binop(operator.xor)
    __rxor__ = _cx_binop(operator.xor, True)
    __lshift__ = _cx_binop(operator.lshift)
    __rlshift__ = _cx_binop(operator.lshift, True)
    __rshift__ = _cx_binop(operator.rshift)
    __rrshift__ = _cx_binop(operator.rshift, True)
    __eq__ = _cx_binop(operator.eq)  # type: ignore[assignment, unused-ignore]
    __ne__ = _cx_binop(operator.ne)  # type: ignore[assignment, unused-ignore]
    __lt__ = _cx_binop(operator.lt)
    __le__ = _cx_binop(operator.le)
    __gt__ = _cx_binop(operator.gt)
    __ge__ = _cx_binop(operator.ge)
    __neg__ = _cx_unop(operator.neg)
    __pos__ = _cx_unop(operator.pos)
    __invert__ = _cx_unop(operator.invert)
    __abs__ = _cx_unop(abs)

    def logical_and(self, other: Any) -> constexpr:
        return constexpr(self.value and _unwrap(other))

    def logical_or(self, other: Any) -> constexpr:
        return constexpr(self.value or _unwrap(other))


def _unwrap(x: Any) -> Any:
    """The Python value inside a ``constexpr`` (anything else unchanged)."""
    return x.value if isinstance(x, constexpr) else x


unwrap_constexpr = _unwrap


# ---------------------------------------------------------------------------
# tensor
# ---------------------------------------------------------------------------
def _binop(name: str, reflected: bool = False) -> Callable[[tensor, Any], Any]:
    if reflected:

        def rmethod(self: tensor, other: Any) -> Any:
            return self._sem.binary(name, other, self)

        return rmethod

    def method(self: tensor, other: Any) -> Any:
        return self._sem.binary(name, self, other)

    return method


def _unop(name: str) -> Callable[[tensor], Any]:
    def method(self: tensor) -> Any:
        return self._sem.unary(name, self)

    return method


class tensor:
    """A runtime value inside a kernel: a scalar or a whole tile.

    ``handle`` is the IR value, ``type`` its IR type, ``dtype`` the element
    type and ``shape`` the tile shape (``()`` for scalars). Operators and
    methods delegate to the :class:`Semantic` that produced the value.
    """

    __slots__ = ("_sem", "handle")

    def __init__(self, handle: Value, semantic: Semantic) -> None:
        self.handle = handle
        self._sem = semantic

    # --- introspection -------------------------------------------------------
    @property
    def type(self) -> Type:
        return self.handle.type

    @property
    def dtype(self) -> ScalarType | PointerType:
        return self.handle.type.scalar

    @property
    def shape(self) -> tuple[int, ...]:
        return self.handle.type.shape

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"kl.tensor<{self.type}>"

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise self._sem.error(
            "the truth value of a runtime tensor is not known at compile time; "
            "use it as an `if`/`while` condition directly, or use kl.where"
        )

    def __index__(self) -> int:
        raise self._sem.error("a runtime tensor cannot be used where a compile-time integer is required")

    def __iter__(self) -> Any:
        raise self._sem.error("cannot iterate over a tensor")

    def __len__(self) -> int:
        raise self._sem.error("len() of a tensor is not supported; use x.shape")

    # --- operators -----------------------------------------------------------
    __add__ = _binop("add")
    __radd__ = _binop("add", True)
    __sub__ = _binop("sub")
    __rsub__ = _binop("sub", True)
    __mul__ = _binop("mul")
    __rmul__ = _binop("mul", True)
    __truediv__ = _binop("truediv")
    __rtruediv__ = _binop("truediv", True)
    __floordiv__ = _binop("floordiv")
    __rfloordiv__ = _binop("floordiv", True)
    __mod__ = _binop("mod")
    __rmod__ = _binop("mod", True)
    __pow__ = _binop("pow")
    __rpow__ = _binop("pow", True)
    __and__ = _binop("and_")
    __rand__ = _binop("and_", True)
    __or__ = _binop("or_")
    __ror__ = _binop("or_", True)
    __xor__ = _binop("xor")
    __rxor__ = _binop("xor", True)
    __lshift__ = _binop("lshift")
    __rlshift__ = _binop("lshift", True)
    __rshift__ = _binop("rshift")
    __rrshift__ = _binop("rshift", True)
    __eq__ = _binop("eq")  # type: ignore[assignment, unused-ignore]
    __ne__ = _binop("ne")  # type: ignore[assignment, unused-ignore]
    __lt__ = _binop("lt")
    __le__ = _binop("le")
    __gt__ = _binop("gt")
    __ge__ = _binop("ge")
    __neg__ = _unop("neg")
    __pos__ = _unop("pos")
    __invert__ = _unop("invert")

    def __not__(self) -> Any:
        return self._sem.unary("not_", self)

    def logical_and(self, other: Any) -> Any:
        return self._sem.binary("logical_and", self, other)

    def logical_or(self, other: Any) -> Any:
        return self._sem.binary("logical_or", self, other)

    def __getitem__(self, index: Any) -> tensor:
        return self._sem.getitem(self, index)

    # --- methods (Triton's tensor member functions) ---------------------------
    def to(self, dtype: Any, bitcast: Any = False, fp_downcast_rounding: Any = None) -> tensor:
        """Cast to ``dtype`` (value conversion, or bit reinterpretation if ``bitcast``)."""
        return self._sem.cast(self, _unwrap(dtype), bitcast=bool(_unwrap(bitcast)),
                              fp_downcast_rounding=_unwrap(fp_downcast_rounding))

    def reshape(self, *shape: Any, can_reorder: Any = False) -> tensor:
        return self._sem.reshape(self, _shape_args(shape))

    def view(self, *shape: Any) -> tensor:
        return self._sem.reshape(self, _shape_args(shape))

    def ravel(self) -> tensor:
        return self._sem.reshape(self, (self.numel,))

    def trans(self, *dims: Any) -> tensor:
        return self._sem.trans(self, _shape_args(dims))

    @property
    def T(self) -> tensor:
        """Transpose of the last two dims (``kl.trans`` without dims)."""
        return self._sem.trans(self, ())

    def permute(self, *dims: Any) -> tensor:
        return self._sem.permute(self, _shape_args(dims))

    def broadcast_to(self, *shape: Any) -> tensor:
        return self._sem.broadcast_to(self, _shape_args(shape))

    def expand_dims(self, axis: Any) -> tensor:
        return self._sem.expand_dims(self, _unwrap(axis))

    def split(self) -> tuple[tensor, tensor]:
        return self._sem.split(self)

    def sum(self, axis: Any = None, keep_dims: Any = False, dtype: Any = None) -> tensor:
        return self._sem.reduce_sum(self, _unwrap(axis), bool(_unwrap(keep_dims)), _unwrap(dtype))

    def max(self, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
            keep_dims: Any = False) -> Any:
        return self._sem.reduce_minmax(self, "max", _unwrap(axis), bool(_unwrap(return_indices)),
                                       bool(_unwrap(keep_dims)))

    def min(self, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
            keep_dims: Any = False) -> Any:
        return self._sem.reduce_minmax(self, "min", _unwrap(axis), bool(_unwrap(return_indices)),
                                       bool(_unwrap(keep_dims)))

    def argmax(self, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
        return self._sem.reduce_arg(self, "max", _unwrap(axis), bool(_unwrap(keep_dims)))

    def argmin(self, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
        return self._sem.reduce_arg(self, "min", _unwrap(axis), bool(_unwrap(keep_dims)))

    def xor_sum(self, axis: Any = None, keep_dims: Any = False) -> tensor:
        return self._sem.reduce_xor(self, _unwrap(axis), bool(_unwrap(keep_dims)))

    def reduce_or(self, axis: Any, keep_dims: Any = False) -> tensor:
        return self._sem.reduce_or(self, _unwrap(axis), bool(_unwrap(keep_dims)))

    def reduce(self, axis: Any, combine_fn: Any, keep_dims: Any = False) -> Any:
        return self._sem.reduce(self, _unwrap(axis), _unwrap(combine_fn), bool(_unwrap(keep_dims)))

    def cumsum(self, axis: Any = 0, reverse: Any = False) -> tensor:
        return self._sem.scan_builtin(self, "sum", _unwrap(axis), bool(_unwrap(reverse)))

    def cumprod(self, axis: Any = 0, reverse: Any = False) -> tensor:
        return self._sem.scan_builtin(self, "prod", _unwrap(axis), bool(_unwrap(reverse)))

    def associative_scan(self, axis: Any, combine_fn: Any, reverse: Any = False) -> Any:
        return self._sem.associative_scan(self, _unwrap(axis), _unwrap(combine_fn), bool(_unwrap(reverse)))


# Functions of ``kl`` that Triton also makes tensor members (``x.cdiv(4)``, ``x.sigmoid()``), beyond
# the methods written out on :class:`tensor` above.
MEMBER_FUNCTIONS = ("cast", "cdiv", "sigmoid", "softmax", "fdiv", "div_rn", "umulhi", "fma", "join", "interleave",
                    "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg",
                    "atomic_xor", "gather", "histogram", "sort", "topk", "flip", "store", "rand", "randint",
                    "randint4x", "randn")


def _math_method(name: str) -> Callable[[tensor], tensor]:
    def method(self: tensor) -> tensor:
        return self._sem.math_unary(name, self)

    method.__name__ = name
    method.__doc__ = f"``kl.{name}(self)``."
    return method


# Triton exposes the unary math functions as tensor members too (``x.exp()``).
for _name in ("exp", "exp2", "log", "log2", "sqrt", "sqrt_rn", "rsqrt", "sin", "cos", "tanh", "erf", "floor",
              "ceil"):
    setattr(tensor, _name, _math_method(_name))


def _member(name: str) -> Callable[..., Any]:
    """``x.name(*args)`` as ``kl.name(x, *args)``: Triton makes these functions tensor members."""

    def method(self: tensor, *args: Any, **kwargs: Any) -> Any:
        import kdsl.language as kl

        return getattr(kl, name)(self, *args, _semantic=self._sem, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``kl.{name}(self, ...)``."
    return method


for _name in MEMBER_FUNCTIONS:
    setattr(tensor, _name, _member(_name))


def _tensor_abs(self: tensor) -> tensor:
    return self._sem.abs(self)


tensor.abs = _tensor_abs  # type: ignore[attr-defined]
tensor.__abs__ = _tensor_abs  # type: ignore[attr-defined]


def _shape_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Accept both ``f(2, 3)`` and ``f((2, 3))`` / ``f([2, 3])`` spellings."""
    args = tuple(_unwrap(a) for a in args)
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(_unwrap(a) for a in args[0])
    return args


# ---------------------------------------------------------------------------
# loop iterators recognised by the AST visitor
# ---------------------------------------------------------------------------
class static_range:
    """``for i in kl.static_range(...)``: a loop fully unrolled at compile time.

    Arguments must be compile-time integers; the visitor binds ``i`` to a
    ``constexpr`` in each unrolled copy.
    """

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None) -> None:
        if arg2 is None:
            self.start, self.end = constexpr(0), constexpr(arg1)
        else:
            self.start, self.end = constexpr(arg1), constexpr(arg2)
        self.step = constexpr(1 if step is None else step)


class range:
    """``for i in kl.range(...)``: a runtime loop (``scf.for``).

    ``num_stages``, ``loop_unroll_factor`` and the other tuning hints are
    accepted for Triton compatibility and ignored (they never change results).
    ``disable_licm=True`` keeps loop-invariant code inside the loop (the ``licm``
    pass skips it), as Triton does to avoid long live ranges.
    """

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None, num_stages: Any = None,
                 loop_unroll_factor: Any = None, disallow_acc_multi_buffer: Any = False,
                 flatten: Any = False, warp_specialize: Any = False, disable_licm: Any = False) -> None:
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = constexpr(1) if step is None else step
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor
        self.disable_licm = bool(_unwrap(disable_licm))


class condition:
    """``while kl.condition(c, disable_licm=True):``: a while-loop condition with loop options.

    ``disable_licm=True`` keeps loop-invariant code inside the loop (the ``licm`` pass skips it;
    Triton: to avoid long live ranges). Only a ``while`` test may be a ``kl.condition``.
    """

    def __init__(self, arg1: Any, disable_licm: Any = False) -> None:
        self.condition = arg1
        self.disable_licm = bool(_unwrap(disable_licm))
