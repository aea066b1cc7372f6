"""Memory access (load/store), atomics and compiler hints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, builtin, tensor

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


@builtin
def load(pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
         cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False,
         _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Load through a pointer or tile of pointers.

    ``mask`` and ``other`` are broadcast to the pointer's shape; lanes whose
    mask is false do not access memory and yield ``other`` (converted to the
    pointee type). Cache/eviction hints and ``volatile`` never change results.
    """
    return _semantic.load(pointer, mask, other, boundary_check, padding_option, cache_modifier,
                          eviction_policy, volatile)


@builtin
def store(pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
          eviction_policy: Any = "", _semantic: Semantic = NO_SEMANTIC) -> None:
    """Store ``value`` (broadcast to the pointer shape, converted to the pointee type) where ``mask`` holds."""
    _semantic.store(pointer, value, mask, boundary_check, cache_modifier, eviction_policy)


def _atomic(kind: str) -> Any:
    def fn(pointer: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None,
           _semantic: Semantic = NO_SEMANTIC) -> tensor:
        return _semantic.atomic_rmw(kind, pointer, val, mask, sem, scope)

    fn.__name__ = fn.__qualname__ = f"atomic_{kind}"
    fn.__doc__ = (f"Atomically apply ``{kind}`` with ``val`` at each pointer where ``mask`` holds and return the "
                  "previous values. ``sem``: relaxed/acquire/release/acq_rel (default acq_rel); "
                  "``scope``: cta/gpu/sys (default gpu).")
    return builtin(fn)


atomic_add = _atomic("add")
atomic_max = _atomic("max")
atomic_min = _atomic("min")
atomic_xchg = _atomic("xchg")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")


@builtin
def atomic_cas(pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None,
               _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Atomically ``old = *p; if old == cmp: *p = val`` per lane; returns ``old``."""
    return _semantic.atomic_cas(pointer, cmp, val, sem, scope)


@builtin
def multiple_of(input: Any, values: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Promise that each element of ``input`` is a multiple of ``values`` (per dimension)."""
    return _semantic.hint(input, "multiple_of", values)


@builtin
def max_contiguous(input: Any, values: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Promise that the first ``values`` elements (per dimension) are contiguous."""
    return _semantic.hint(input, "max_contiguous", values)


@builtin
def max_constancy(input: Any, values: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Accepted for Triton compatibility; a no-op (returns ``input``)."""
    return _semantic.to_tensor(input)


@builtin
def assume(cond: Any, _semantic: Semantic = NO_SEMANTIC) -> None:
    """Promise that ``cond`` (a boolean scalar or tile) holds; kernels whose promise is false are
    undefined, as in Triton. kdsl checks the argument and derives nothing from it: its
    specialisation facts come from the launch arguments and ``multiple_of``/``max_contiguous``."""
    _semantic.assume(cond)
