"""Every pass by name, built once from :data:`PASS_CLASSES`.

Adding a pass means writing its module and listing its class here; the
pipeline parser, the ``opt`` CLI and the autotuner find it through
:data:`PASSES`.
"""

from __future__ import annotations

from types import MappingProxyType

from kdsl.transforms.base import Pass
from kdsl.transforms.canonicalize import Canonicalize
from kdsl.transforms.cse import CSE
from kdsl.transforms.dce import DCE
from kdsl.transforms.fp8_bytes import Fp8ToBytes
from kdsl.transforms.fuse import Fuse
from kdsl.transforms.inline import Inline
from kdsl.transforms.licm import LICM
from kdsl.transforms.loop_split import LoopSplit
from kdsl.transforms.masks import MaskElim
from kdsl.transforms.ptr_offsets import PtrOffsets
from kdsl.transforms.unroll import Unroll
from kdsl.transforms.wrap_version import WrapVersion

PASS_CLASSES: tuple[type[Pass], ...] = (Inline, Fp8ToBytes, Canonicalize, CSE, DCE, MaskElim, LICM, Unroll, LoopSplit, Fuse, PtrOffsets,
                                      WrapVersion)

PASSES = MappingProxyType({cls.name: cls for cls in PASS_CLASSES})
