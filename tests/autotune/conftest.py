"""Autotuner tests: interpreter backend, private cache dir, small flush buffer, short benches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _tuning_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import kdsl

    monkeypatch.setenv("KDSL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KDSL_BENCH_FLUSH_BYTES", str(1 << 16))
    with kdsl.backend("interpreter"):
        yield
