"""Vulkan tests: registered backend with spirv-val on every module; skipped without a device."""

from __future__ import annotations

import pytest

from kdsl.runtime.vulkan.device import probe

from . import vk_plugin  # noqa: F401  (registers "vulkan", validates emitted SPIR-V)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ok, reason = probe()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no Vulkan device: {reason}")
    for item in items:
        if "tests/vulkan" in str(item.fspath):
            item.add_marker(skip)
