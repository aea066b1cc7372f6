"""Every runtime test gets its own empty compile cache and fresh counters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from kdsl.runtime.cache import STATS

    root = tmp_path / "kdsl-cache"
    monkeypatch.setenv("KDSL_CACHE_DIR", str(root))
    monkeypatch.delenv("KDSL_ALWAYS_COMPILE", raising=False)
    STATS.reset()
    yield root
