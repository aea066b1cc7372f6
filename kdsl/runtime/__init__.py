"""Runtime: the JIT kernel object, backend registry and launch path."""

from kdsl.runtime import driver  # ``kdsl.runtime.driver.active`` as ``triton.runtime.driver.active``

__all__ = ["driver"]
