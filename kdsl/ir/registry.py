"""The set of dialects known to the parser and verifier.

Adding an IR level means writing its dialect module and listing it here; the
core, printer, parser and pass manager need no change.
"""

from __future__ import annotations

from kdsl.ir.core import BUILTIN, Dialect, Operation
from kdsl.ir.dialects.arith import ARITH
from kdsl.ir.dialects.math import MATH
from kdsl.ir.dialects.scf import SCF
from kdsl.ir.dialects.tile import TILE
from kdsl.ir.dialects.wi import WI

DIALECTS: tuple[Dialect, ...] = (BUILTIN, ARITH, MATH, SCF, TILE, WI)

OPS: dict[str, type[Operation]] = {name: cls for d in DIALECTS for name, cls in d.by_name.items()}


def lookup_op(name: str) -> type[Operation] | None:
    """The op class registered under ``name`` ("dialect.op"), or None."""
    return OPS.get(name)
