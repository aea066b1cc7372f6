"""Vulkan compute runtime (see ``docs/VULKAN.md``).

Importing this package imports the ``vulkan`` Python package (cffi) but does
not touch the driver; the device is created on first compile/launch.
"""

from kdsl.runtime.vulkan.backend import DEFAULT_NUM_THREADS, CompiledStages, VulkanBackend

__all__ = ["DEFAULT_NUM_THREADS", "CompiledStages", "VulkanBackend"]
