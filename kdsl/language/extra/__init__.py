"""``kl.extra``: Triton's ``triton.language.extra`` -- the ``libdevice`` math library.

``from kdsl.language.extra import libdevice`` then ``libdevice.asin(x)`` inside a kernel, as
Triton's tutorial 07 writes it with ``triton.language.extra``.
"""

from __future__ import annotations

from kdsl.language.extra import libdevice

__all__ = ["libdevice"]
