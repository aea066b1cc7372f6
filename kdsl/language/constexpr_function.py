"""``@kdsl.constexpr_function`` and ``@kdsl.must_use_result`` (Triton's ``triton.constexpr_function``,
3.4+, and ``triton.must_use_result``).

A constexpr function is plain Python run by the compiler: inside a kernel its arguments are
compile-time values (constexprs unwrapped to Python values) and its result is a compile-time
constant, so ``if is_big(BLOCK):`` compiles only the branch taken. Outside kernels it is the
function itself. kdsl already runs undecorated Python functions at compile time; the decorator
adds Triton's contract: a runtime argument is a compile error naming the function, and the
function can be used as a method (``self.helper(...)`` on an aggregate).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, overload

from kdsl.language.core import BUILTIN_ATTR, constexpr, tensor, unwrap_constexpr

F = TypeVar("F", bound=Callable[..., Any])

MUST_USE_ATTR = "__kdsl_must_use_result__"


def _plain(x: Any) -> Any:
    """Constexprs unwrapped, through tuples and lists (Triton's ``_unwrap_if_constexpr``)."""
    if isinstance(x, tuple):
        return tuple(_plain(e) for e in x)
    if isinstance(x, list):
        return [_plain(e) for e in x]
    return unwrap_constexpr(x)


def _has_tensor(x: Any) -> bool:
    if isinstance(x, (tuple, list)):
        return any(_has_tensor(e) for e in x)
    return isinstance(x, tensor)


class ConstexprFunction:
    """A Python function callable inside kernels on compile-time arguments (see the module doc)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)
        setattr(self, BUILTIN_ATTR, True)  # the visitor passes ``_semantic=``: we know we are compiled

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args: Any, _semantic: Any = None, **kwargs: Any) -> Any:
        if _semantic is not None:
            for i, a in enumerate([*args, *kwargs.values()]):
                if _has_tensor(a):
                    name = getattr(self.fn, "__name__", "function")
                    raise _semantic.error(
                        f"constexpr_function '{name}' takes compile-time arguments; argument {i} is a runtime "
                        "tensor (use a @kdsl.kernel function for runtime values)")
        result = self.fn(*[_plain(a) for a in args], **{k: _plain(v) for k, v in kwargs.items()})
        if _semantic is None or isinstance(result, (tensor, constexpr)):
            return result
        return constexpr(result) if result is None or isinstance(result, (bool, int, float, str)) else result

    def __repr__(self) -> str:
        return f"ConstexprFunction({getattr(self.fn, '__qualname__', self.fn)!r})"


def constexpr_function(fn: Callable[..., Any]) -> ConstexprFunction:
    """Make ``fn`` callable inside kernels at compile time (Triton 3.4's ``triton.constexpr_function``)."""
    return ConstexprFunction(fn)


@overload
def must_use_result(x: str, s: Any = True) -> Callable[[F], F]: ...


@overload
def must_use_result(x: F, s: Any = True) -> F: ...


def must_use_result(x: Any, s: Any = True) -> Any:
    """Mark a function whose result a kernel must use: a call of it as a statement (result
    dropped) is a compile error. ``@must_use_result("why")`` adds ``why`` to the message."""
    if isinstance(x, str):
        return lambda fn: must_use_result(fn, x)
    setattr(x, MUST_USE_ATTR, s)
    return x


__all__ = ["ConstexprFunction", "constexpr_function", "must_use_result"]
