"""State and primitives shared by every part of the semantic layer.

The semantic is split by concern into a linear chain of classes
(base -> shapes -> arithmetic -> memory -> reductions) so each file stays
small while ``Semantic`` remains one object the visitor talks to.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from kdsl.errors import CompilationError
from kdsl.frontend.semantic_types import TypeRuleError, int_bounds, python_scalar_type
from kdsl.ir.core import Builder, Operation, Value
from kdsl.ir.dialects import arith
from kdsl.ir.types import PointerType, ScalarType, TileType, Type
from kdsl.language.aggregate import Aggregate
from kdsl.language.core import constexpr, tensor
from kdsl.language.types import VoidType, check_numel

OpT = TypeVar("OpT", bound=Operation)

CallFunction = Callable[[Any, list[Any]], Any]


def unwrap(x: Any) -> Any:
    """The Python value inside a ``constexpr`` (anything else unchanged)."""
    return x.value if isinstance(x, constexpr) else x


def is_py_scalar(x: Any) -> bool:
    """True for Python numbers (bool/int/float), bare or inside a constexpr."""
    return isinstance(unwrap(x), (bool, int, float))


class SemanticBase:
    """Builder access, error reporting, constants and value wrapping."""

    def __init__(self, builder: Builder, call_function: CallFunction | None = None) -> None:
        self.builder = builder
        self.call_function = call_function
        # Set by the frontend (KDSL_DEBUG / @kernel(debug=True)). Kept for
        # future debug-only checks; device_assert is always emitted because
        # the interpreter is the reference for catching bad kernels.
        self.debug = False
        # >0 while a composition builds an intermediate tile larger than Triton's tensor limit
        # that Triton's own op never materialises (see :meth:`large_tiles`).
        self._large_tiles = 0
        # values of ``kl.const`` pointer parameters -> parameter name (frontend/readonly.py)
        self.read_only: dict[Value, str] = {}

    # --- diagnostics -----------------------------------------------------------
    def error(self, message: str) -> CompilationError:
        """A CompilationError located at the expression being compiled."""
        return CompilationError(message, self.builder.loc)

    def warn(self, message: str) -> None:
        """A ``UserWarning`` prefixed ``file:line:col:`` of the expression being compiled (Triton
        warns where it errors for behaviour it deprecates or leaves undefined)."""
        loc = self.builder.loc
        where = f"{loc}: " if loc.known else ""
        warnings.warn(where + message, UserWarning, stacklevel=3)

    # --- emission ----------------------------------------------------------------
    def wrap(self, value: Value) -> tensor:
        return tensor(value, self)  # type: ignore[arg-type]

    def emit(self, cls: type[OpT], operands: Sequence[Value], result_types: Sequence[Type] = (),
             **attrs: Any) -> OpT:
        """Create ``cls`` at the insertion point with the current location.

        Every tile a kernel creates is checked against Triton's element limit here (Triton checks
        in ``block_type``), so the error points at the user's line whatever op made the tile."""
        if not self._large_tiles:
            for t in result_types:
                why = check_numel(t.shape) if isinstance(t, TileType) else None
                if why is not None:
                    raise self.error(why)
        return self.builder.create(cls, list(operands), list(result_types), {k: v for k, v in attrs.items()
                                                                              if v is not None})

    def emit1(self, cls: type[Operation], operands: Sequence[Value], result_type: Type, **attrs: Any) -> tensor:
        """Create a single-result op and wrap its result."""
        return self.wrap(self.emit(cls, operands, [result_type], **attrs).result)

    @contextmanager
    def large_tiles(self) -> Iterator[None]:
        """Allow intermediates above Triton's tile limit inside a composition whose Triton
        counterpart is one op (``kl.histogram``'s values-by-bins comparison)."""
        self._large_tiles += 1
        try:
            yield
        finally:
            self._large_tiles -= 1

    def constant(self, value: Any, ty: Type) -> tensor:
        """``arith.constant`` of ``ty`` (scalar or tile) holding ``value``.

        Integer values must fit the type (a CompilationError names both).
        """
        value = unwrap(value)
        elem = ty.scalar
        if not isinstance(elem, ScalarType):
            raise self.error(f"cannot make a constant of type {ty}")
        if elem.is_float:
            return self.emit1(arith.ConstantOp, [], ty, value=float(value))
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise self.error(f"cannot convert {value} to integer type {elem}")
            value = int(value)
        lo, hi = int_bounds(elem)
        v = int(value)
        if not lo <= v <= hi:
            raise self.error(f"scalar {v} is out of range for type {elem}")
        return self.emit1(arith.ConstantOp, [], ty, value=v)

    # --- conversions -------------------------------------------------------------
    def py_scalar_type(self, value: Any) -> ScalarType:
        try:
            return python_scalar_type(unwrap(value))
        except TypeRuleError as e:
            raise self.error(str(e)) from None

    def to_tensor(self, x: Any) -> tensor:
        """Tensors pass through; Python bool/int/float (or constexpr thereof)
        become constants typed as Triton types literals; anything else is an error."""
        if isinstance(x, tensor):
            return x
        v = unwrap(x)
        if isinstance(v, (bool, int, float)):
            return self.constant(v, self.py_scalar_type(v))
        raise self.error(f"cannot use {_describe(v)} as a tensor value")

    # --- compile-time argument helpers -----------------------------------------
    def const_int(self, x: Any, what: str) -> int:
        """A compile-time integer argument (``what`` names it in errors)."""
        v = unwrap(x)
        if isinstance(v, tensor):
            raise self.error(f"{what} must be a compile-time constant (kl.constexpr), got a runtime tensor")
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error(f"{what} must be a constexpr integer, got {_describe(v)}")
        return v

    def const_shape(self, shape: Any, what: str = "shape") -> tuple[int, ...]:
        """A compile-time shape: an int or a tuple/list of ints (constexprs allowed)."""
        shape = unwrap(shape)
        if isinstance(shape, (tuple, list)):
            dims = tuple(self.const_int(d, f"{what} dimension") for d in shape)
        else:
            dims = (self.const_int(shape, what),)
        for d in dims:
            if d <= 0:
                raise self.error(f"{what} dimensions must be positive, got {dims}")
        return dims

    def const_dtype(self, x: Any, what: str = "dtype") -> ScalarType | PointerType:
        v = unwrap(x)
        if isinstance(v, TileType):
            v = v.element
        if not isinstance(v, (ScalarType, PointerType)):
            raise self.error(f"{what} must be a kl dtype (e.g. kl.float32), got {_describe(v)}")
        if isinstance(v, VoidType):
            raise self.error(f"{what} cannot be kl.void: it is the type of no value")
        return v

    def norm_axis(self, axis: Any, rank: int, what: str = "axis") -> int:
        """A compile-time axis in ``[-rank, rank)`` normalised to ``[0, rank)``."""
        a = self.const_int(axis, what)
        if not -rank <= a < rank:
            raise self.error(f"{what} {a} is out of range for a tensor of rank {rank} "
                             f"(invalid axis {a}; expected {-rank} <= axis < {rank})")
        return a + rank if a < 0 else a


def _describe(v: Any) -> str:
    if isinstance(v, tensor):
        return f"a tensor of type {v.type}"
    if isinstance(v, Aggregate):  # a block pointer or descriptor names its own type
        return v.describe()
    return f"{v!r} ({type(v).__name__})"
