"""Vulkan tests: registered backend with spirv-val on every module; skipped without a device."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import vk_plugin  # noqa: F401  (registers "vulkan", validates emitted SPIR-V)

from kdsl.runtime.vulkan.device import probe


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ok, reason = probe()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no Vulkan device: {reason}")
    for item in items:
        if "tests/vulkan" in str(item.fspath):
            item.add_marker(skip)
