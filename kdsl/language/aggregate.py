"""``Aggregate``: a compile-time structure whose fields include runtime values.

Control flow and calls between kernels only move IR values. A block pointer
or tensor descriptor is a small record of such values (base pointer, shape,
strides, offsets) plus compile-time facts (block shape, order). Instead of
teaching every region boundary about each record, a record subclasses
:class:`Aggregate` and says how to split itself into those two parts and how
to rebuild itself; :mod:`kdsl.frontend.values` then flattens it like a tuple.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


class Aggregate:
    """Base class of kernel values made of runtime leaves and a static part.

    * :meth:`aggregate_static` -- a hashable value that must be equal wherever
      two instances meet (both branches of an ``if``, a loop's entry and
      back-edge, a kernel specialisation key);
    * :meth:`aggregate_fields` -- the fields that may hold runtime values, as
      a tuple whose elements are tensors, Python numbers (kept compile-time) or
      nested tuples/aggregates;
    * :meth:`aggregate_rebuild` -- a new instance from a static part and fields
      of the same structure.
    """

    def aggregate_static(self) -> Hashable:
        raise NotImplementedError

    def aggregate_fields(self) -> tuple[Any, ...]:
        raise NotImplementedError

    @classmethod
    def aggregate_rebuild(cls, static: Any, fields: tuple[Any, ...]) -> Aggregate:
        raise NotImplementedError

    def describe(self) -> str:
        """A short type-like description for error messages."""
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()
