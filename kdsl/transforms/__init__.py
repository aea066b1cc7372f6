"""Passes over the kdsl IR and the machinery to run them.

``parse_pipeline("inline,canonicalize,cse,dce").run(module)`` runs passes by
name; :func:`default_pipeline` is the cleanup every kernel gets. See
``pass_manager`` (running, dumps), ``base`` (writing a pass) and ``registry``
(the list of passes).
"""

from kdsl.transforms.base import Option, Pass, PassError, Tunable
from kdsl.transforms.pass_manager import PassManager, default_pipeline, parse_pipeline
from kdsl.transforms.registry import PASS_CLASSES, PASSES

__all__ = [
    "PASSES",
    "PASS_CLASSES",
    "Option",
    "Pass",
    "PassError",
    "PassManager",
    "Tunable",
    "default_pipeline",
    "parse_pipeline",
]
