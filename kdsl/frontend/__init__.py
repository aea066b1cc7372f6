"""The AST frontend: Python kernel source -> tile IR (see ``compiler.generate_module``)."""

from __future__ import annotations

from kdsl.frontend.compiler import generate_module
from kdsl.frontend.specialization import ParamSpec

__all__ = ["ParamSpec", "generate_module"]
