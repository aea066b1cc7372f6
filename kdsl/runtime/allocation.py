"""``kdsl.set_allocator``: Triton's hook for the global scratch memory a launch may need.

In Triton (``triton/runtime/_allocation.py``) a kernel that needs global workspace calls, at
launch, the function given to ``triton.set_allocator(alloc_fn)`` as ``alloc_fn(size, alignment,
stream)`` and passes the returned buffer's ``data_ptr()`` to the kernel; without one the launch
raises. Device-side tensor descriptors are the common case: on NVIDIA,
``tl.make_tensor_descriptor`` writes a 128-byte TMA descriptor into that workspace, so tutorials
08 and 09 (and 06 when it makes its descriptors in the kernel) call ``set_allocator`` first.

kdsl needs no such workspace: a tensor descriptor is a value (base, shape, strides) held like any
scalar, never written to memory, and no other kdsl feature allocates global scratch at launch.
So no launch calls the allocator. ``set_allocator`` checks and records it, per context as
Triton's ``ContextVar`` does, so those scripts run unchanged and a mistaken argument is still
reported where it is made; ``get_allocator`` returns it (None when unset). A kdsl feature that
one day needs launch-time scratch would call ``get_allocator()(size, alignment, None)`` and raise
Triton's error when it is None.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

Allocator = Callable[[int, int, "int | None"], Any]
"""``alloc_fn(size, alignment, stream) -> buffer`` (an object with ``data_ptr()``)."""

_allocator: ContextVar[Allocator | None] = ContextVar("kdsl_allocator", default=None)


def set_allocator(allocator: Allocator | None) -> None:
    """Record ``allocator`` (``alloc_fn(size, alignment, stream)``) for launches that need global
    workspace: Triton's ``triton.set_allocator``. No kdsl launch needs any (see the module doc),
    so it is recorded, not called. ``None`` removes it."""
    if allocator is not None and not callable(allocator):
        raise TypeError(f"kdsl.set_allocator expects a function alloc_fn(size, alignment, stream), "
                        f"got {type(allocator).__name__}")
    _allocator.set(allocator)


def get_allocator() -> Allocator | None:
    """The allocator recorded by :func:`set_allocator` in this context, or None."""
    return _allocator.get()


__all__ = ["Allocator", "get_allocator", "set_allocator"]
