"""``kdsl.runtime.errors``: where Triton users import ``OutOfResources`` from
(``triton.runtime.errors``); the classes live in :mod:`kdsl.errors`."""

from kdsl.errors import OutOfResources

__all__ = ["OutOfResources"]
