"""The registry of backends and the choice of the current one.

Backends register lazily by name through factories, so importing kdsl never
imports a device driver. The current backend is, in order: the innermost
``with kdsl.backend(name):`` / the last ``kdsl.set_backend(name)`` in this
context (a ``ContextVar``, so threads and async tasks do not interfere), then
the ``KDSL_BACKEND`` environment variable, then the first available backend
in :data:`DEFAULT_ORDER`.

Every backend reports its own availability with a reason naming what to
install (``opencl``: a PoCL/GPU ICD, ``vulkan``: lavapipe or a GPU driver);
``cpu`` and ``interpreter`` need no driver.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from typing import Any

from kdsl.errors import BackendUnavailableError, KdslError
from kdsl.runtime.backend import Backend

# Preference order when nothing is chosen explicitly (first available wins).
# Measured on the reference machine (docs/BACKENDS.md): the LLVM cpu backend
# beats OpenCL-on-PoCL on launch overhead and softmax and matches it on
# bandwidth-bound kernels, and needs no driver; device backends come next.
DEFAULT_ORDER: tuple[str, ...] = ("cpu", "opencl", "vulkan", "interpreter")

ENV_VAR = "KDSL_BACKEND"


class UnknownBackendError(KdslError, ValueError):
    """A backend name that is not registered."""


def _interpreter() -> Backend:
    from kdsl.interpreter import InterpreterBackend

    backend: Backend = InterpreterBackend()
    return backend


def _opencl() -> Backend:
    from kdsl.runtime.opencl import OpenCLBackend

    backend: Backend = OpenCLBackend()
    return backend


def _vulkan() -> Backend:
    from kdsl.runtime.vulkan import VulkanBackend

    backend: Backend = VulkanBackend()
    return backend


def _cpu() -> Backend:
    from kdsl.runtime.cpu import CPUBackend

    backend: Backend = CPUBackend()
    return backend


_FACTORIES: dict[str, Callable[[], Backend]] = {
    "interpreter": _interpreter,
    "opencl": _opencl,
    "vulkan": _vulkan,
    "cpu": _cpu,
}
_INSTANCES: dict[str, Backend] = {}  # cache of constructed backends
_AVAILABILITY: dict[str, tuple[bool, str]] = {}  # cache: drivers do not come and go within a process
_DEFAULT_NAME: dict[str, str] = {}  # cache: "" -> first available backend

# ``os.environ`` lookups cost ~1 us (key encoding); the launch path reads the
# underlying dict (which ``os.environ[...] = ...`` and monkeypatch keep in sync).
_ENV_DATA: dict[Any, Any] | None = getattr(os.environ, "_data", None)
_ENV_KEY: Any = os.environ.encodekey(ENV_VAR) if hasattr(os.environ, "encodekey") else ENV_VAR

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("kdsl_backend", default=None)


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Register (or replace) the factory for ``name``."""
    _FACTORIES[name] = factory
    _INSTANCES.pop(name, None)
    _AVAILABILITY.pop(name, None)
    _DEFAULT_NAME.clear()


def known_backends() -> list[str]:
    return sorted(_FACTORIES)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or name not in _FACTORIES:
        raise UnknownBackendError(f"unknown backend {name!r}; known backends: {', '.join(known_backends())}")
    return name


def get_backend(name: str) -> Backend:
    """The backend object for ``name`` (constructed once)."""
    _check_name(name)
    inst = _INSTANCES.get(name)
    if inst is None:
        inst = _FACTORIES[name]()
        _INSTANCES[name] = inst
    return inst


def instantiated_backends() -> list[str]:
    """Names of the backends constructed so far in this process."""
    return list(_INSTANCES)


def availability(name: str) -> tuple[bool, str]:
    """(available?, reason) for ``name``, asked once per process and remembered."""
    known = _AVAILABILITY.get(name)
    if known is not None:
        return known
    try:
        result = get_backend(name).availability()
    except KdslError:
        raise
    except Exception as exc:  # a broken driver must not crash discovery
        result = (False, f"{type(exc).__name__}: {exc}")
    _AVAILABILITY[name] = result
    return result


def available_backends() -> list[str]:
    """Names of the backends usable on this machine, in preference order."""
    order = [n for n in DEFAULT_ORDER if n in _FACTORIES] + [n for n in known_backends() if n not in DEFAULT_ORDER]
    return [n for n in order if availability(n)[0]]


def set_backend(name: str | None) -> None:
    """Choose the backend for launches in this context (None: back to the default)."""
    _current.set(None if name is None else _check_name(name))


@contextlib.contextmanager
def backend(name: str) -> Iterator[str]:
    """``with kdsl.backend("interpreter"): ...`` -- use ``name`` inside the block."""
    token = _current.set(_check_name(name))
    try:
        yield name
    finally:
        _current.reset(token)


def current_backend_name() -> str:
    """The name launches use now (see the module docstring for the order)."""
    chosen = _current.get()
    if chosen is not None:
        return chosen
    env = _env_backend()
    if env:
        return _check_name(env)
    default = _DEFAULT_NAME.get("")
    if default is None:
        names = available_backends()
        if not names:
            raise BackendUnavailableError("no kdsl backend is available")
        default = _DEFAULT_NAME[""] = names[0]
    return default


def _env_backend() -> str:
    if _ENV_DATA is not None:
        raw = _ENV_DATA.get(_ENV_KEY)
        if raw is None:
            return ""
        return (raw.decode() if isinstance(raw, bytes) else str(raw)).strip()
    return os.environ.get(ENV_VAR, "").strip()


def resolve_backend(name: str | None = None) -> Backend:
    """The backend to compile for, raising BackendUnavailableError with the reason if absent."""
    name = current_backend_name() if name is None else _check_name(name)
    ok, reason = availability(name)
    if not ok:
        raise BackendUnavailableError(f"backend '{name}' is unavailable: {reason}")
    return get_backend(name)


__all__: list[Any] = [
    "DEFAULT_ORDER",
    "UnknownBackendError",
    "available_backends",
    "backend",
    "current_backend_name",
    "get_backend",
    "register_backend",
    "resolve_backend",
    "set_backend",
]
