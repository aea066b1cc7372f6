"""Compile-time and device-side debugging: static_assert/static_print, device_print/device_assert."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, builtin, tensor, unwrap_constexpr

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


@builtin
def static_assert(cond: Any, msg: Any = "", _semantic: Semantic = NO_SEMANTIC) -> None:
    """Fail compilation (at this call) unless the compile-time ``cond`` holds."""
    if isinstance(cond, tensor):
        raise _semantic.error("static_assert needs a compile-time condition, got a runtime tensor; "
                              "use kl.device_assert for runtime checks")
    if not unwrap_constexpr(cond):
        m = unwrap_constexpr(msg)
        raise _semantic.error("static_assert failed" + (f": {m}" if m else ""))


@builtin
def static_print(*values: Any, sep: str = " ", end: str = "\n", _semantic: Semantic = NO_SEMANTIC) -> None:
    """Print compile-time values (tensors show their type) while compiling."""
    shown = [repr(v) if isinstance(v, tensor) else str(unwrap_constexpr(v)) for v in values]
    print(*shown, sep=sep, end=end)


@builtin
def device_print(prefix: Any, *args: Any, hex: Any = False, _semantic: Semantic = NO_SEMANTIC) -> None:
    """Print ``prefix`` and the values of ``args`` from every program at run time."""
    _semantic.device_print(prefix, args, hex)


@builtin
def device_assert(cond: Any, msg: Any = "", mask: Any = None, _semantic: Semantic = NO_SEMANTIC) -> None:
    """Fail the launch with ``msg`` if any element of ``cond`` is false at run time."""
    if unwrap_constexpr(mask) is not None:
        cond = _semantic.binary("logical_or", cond, _semantic.unary("not_", _semantic.to_tensor(mask)))
    _semantic.device_assert(cond, msg)


@builtin
def debug_barrier(_semantic: Semantic = NO_SEMANTIC) -> None:
    """Accepted for Triton compatibility: programs share no local memory in kdsl, so a no-op."""

