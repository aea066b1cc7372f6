"""Shared pytest fixtures for the kdsl test suites.

``backend`` parametrises a test over every kdsl backend. A backend the
registry reports as unavailable is *skipped* with the registry's reason (which
names what to install), never silently passed. kdsl is imported lazily inside
the fixture so that a broken ``kdsl`` makes the tests that need it *error*
instead of disappearing, and does not take down unrelated suites' collection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

BACKENDS = ("interpreter", "opencl", "vulkan", "cpu")


@pytest.fixture(scope="session", autouse=True)
def _hermetic_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep test runs out of the user's ~/.cache/kdsl: one fresh cache per session.

    Subprocesses started by tests inherit it through the environment. A test
    that needs its own cache directory overrides the variable itself.
    """
    import os

    old = os.environ.get("KDSL_CACHE_DIR")
    os.environ["KDSL_CACHE_DIR"] = str(tmp_path_factory.mktemp("kdsl-cache"))
    yield
    if old is None:
        os.environ.pop("KDSL_CACHE_DIR", None)
    else:
        os.environ["KDSL_CACHE_DIR"] = old


def _availability(kdsl: Any, name: str) -> tuple[bool, str]:
    """(usable?, reason) for ``name``: ``kdsl.available_backends()`` decides,
    the registry's ``availability(name)`` supplies the reason (what to install)."""
    from kdsl.runtime import backends as registry

    if name in kdsl.available_backends():
        return True, ""
    if name not in registry.known_backends():
        return False, f"backend {name!r} is not registered in kdsl"
    ok, reason = registry.availability(name)
    if ok:  # listed as available by the registry but not by available_backends(): a kdsl bug
        raise AssertionError(f"kdsl.available_backends() and availability({name!r}) disagree")
    return False, reason


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test with kdsl's active backend set to each backend in turn."""
    import kdsl  # an ImportError here must fail the test, not skip it

    name: str = request.param
    ok, reason = _availability(kdsl, name)
    if not ok:
        pytest.skip(f"backend {name!r} unavailable: {reason}")
    with kdsl.backend(name):
        yield name
