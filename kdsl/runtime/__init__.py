"""Runtime: the JIT kernel object, backend registry and launch path."""

from kdsl.runtime import driver  # ``kdsl.runtime.driver.active`` as ``triton.runtime.driver.active``
from kdsl.runtime.errors import OutOfResources

__all__ = ["OutOfResources", "driver"]
