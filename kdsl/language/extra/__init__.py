"""``kl.extra``: Triton's ``triton.language.extra`` -- the ``libdevice`` math library.

``from kdsl.language.extra import libdevice`` then ``libdevice.asin(x)`` inside a kernel, as
Triton's tutorial 07 writes it with ``triton.language.extra``; ``kl.extra.cuda.libdevice`` is the
same module under the path of Triton's CUDA backend.
"""

from __future__ import annotations

from kdsl.language.extra import cuda, libdevice

__all__ = ["cuda", "libdevice"]
