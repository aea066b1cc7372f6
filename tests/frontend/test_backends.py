"""Backend registry and selection."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import kdsl
from kdsl.errors import BackendUnavailableError
from kdsl.runtime import backends

from . import fe_kernels as K


def test_interpreter_is_available() -> None:
    assert "interpreter" in kdsl.available_backends()


@pytest.mark.parametrize("name", ["interpreter", "opencl", "vulkan", "cpu"])
def test_availability_is_consistent_and_explains_itself(name: str) -> None:
    ok, reason = backends.availability(name)
    assert (name in kdsl.available_backends()) == ok
    if not ok:
        assert reason, "an unavailable backend must say what to install"


def test_cpu_backend_needs_no_driver() -> None:
    assert "cpu" in kdsl.available_backends()


def test_unknown_backend_lists_known_names() -> None:
    with pytest.raises(backends.UnknownBackendError) as info:
        kdsl.set_backend("cuda")
    assert "interpreter" in str(info.value) and "opencl" in str(info.value)
    with pytest.raises(backends.UnknownBackendError), kdsl.backend("nope"):
        pass


class _MissingBackend:
    """A registered backend whose driver is absent."""

    name = "missing"

    def availability(self) -> tuple[bool, str]:
        return False, "install the imaginary driver"

    def compile(self, module: object, entry: str, options: object) -> object:
        raise AssertionError("never called for an unavailable backend")


def test_context_manager_and_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends._FACTORIES, "missing", _MissingBackend)
    monkeypatch.setattr(backends, "_AVAILABILITY", {})
    monkeypatch.setattr(backends, "_INSTANCES", {})
    before = kdsl.current_backend_name()
    with kdsl.backend("missing"):
        assert kdsl.current_backend_name() == "missing"
        x = np.zeros(16, np.float32)
        with pytest.raises(BackendUnavailableError, match="imaginary driver"):
            K.vector_add[(1,)](x, x, x, 16, BLOCK=16)
        with kdsl.backend("interpreter"):
            assert kdsl.current_backend_name() == "interpreter"
        assert kdsl.current_backend_name() == "missing"
    assert kdsl.current_backend_name() == before


def test_set_backend_and_reset() -> None:
    kdsl.set_backend("interpreter")
    try:
        assert kdsl.current_backend_name() == "interpreter"
    finally:
        kdsl.set_backend(None)


def test_env_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KDSL_BACKEND", "vulkan")
    assert kdsl.current_backend_name() == "vulkan"
    monkeypatch.setenv("KDSL_BACKEND", "bogus")
    with pytest.raises(backends.UnknownBackendError):
        kdsl.current_backend_name()
    with kdsl.backend("interpreter"):  # explicit choice wins over the environment
        assert kdsl.current_backend_name() == "interpreter"


def test_choice_is_per_thread_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KDSL_BACKEND", raising=False)
    default = kdsl.current_backend_name()
    other = next(n for n in kdsl.available_backends() if n != default)
    seen: list[str] = []
    with kdsl.backend(other):
        assert kdsl.current_backend_name() == other
        t = threading.Thread(target=lambda: seen.append(kdsl.current_backend_name()))
        t.start()
        t.join()
    assert seen == [default]


def test_default_is_first_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KDSL_BACKEND", raising=False)
    assert kdsl.current_backend_name() == kdsl.available_backends()[0]
