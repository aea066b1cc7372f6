"""``kl.extra.cuda``: the path Triton's CUDA backend publishes libdevice under.

Kernels written for Triton's NVIDIA backend import ``triton.language.extra.cuda.libdevice`` (older
tutorials) or call ``tl.extra.cuda.libdevice.fn``; the functions are the target-independent ones
of :mod:`kdsl.language.extra.libdevice`, so this package names that same module again (also as the
submodule ``kdsl.language.extra.cuda.libdevice``, for ``import ...cuda.libdevice``).
"""

from __future__ import annotations

import sys

from kdsl.language.extra import libdevice

sys.modules[f"{__name__}.libdevice"] = libdevice

__all__ = ["libdevice"]
