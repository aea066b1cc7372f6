"""User-facing exceptions.

Every failure a user can cause is one of these, carrying where it happened:
compile errors name the file, line and column of the kernel source (with the
line and a caret), launch errors name the argument, runtime errors name the
kernel's source line. Anything else escaping kdsl is a kdsl bug.
"""

from __future__ import annotations

import linecache

from kdsl.ir.core import Location


class KdslError(Exception):
    """Base class of every error kdsl raises on purpose."""


def format_location(loc: Location, message: str, kind: str = "error") -> str:
    """``file:line:col: kind: message`` followed by the source line and a caret."""
    if not loc.known:
        return f"{kind}: {message}"
    head = f"{loc.file}:{loc.line}:{loc.col}: {kind}: {message}"
    line = linecache.getline(loc.file, loc.line).rstrip("\n")
    if not line:
        return head
    caret = " " * max(loc.col - 1, 0) + "^"
    return f"{head}\n    {line}\n    {caret}"


class CompilationError(KdslError):
    """The kernel source cannot be compiled; points at the user's code."""

    def __init__(self, message: str, loc: Location | None = None) -> None:
        self.message = message
        self.loc = loc or Location()
        super().__init__(format_location(self.loc, message))


class OutOfResources(CompilationError):
    """The kernel needs more of a device resource (work-group memory, private memory) than the
    device has: Triton's ``triton.runtime.errors.OutOfResources``, with its ``required``, ``limit``
    and ``name`` fields, so code that catches it to skip a configuration works unchanged."""

    def __init__(self, required: int, limit: int, name: str, detail: str = "", loc: Location | None = None) -> None:
        self.required, self.limit, self.name = required, limit, name
        message = f"out of resource: {name}, Required: {required}, Hardware limit: {limit}"
        super().__init__(f"{message}. {detail}" if detail else message, loc)


class LaunchError(KdslError, TypeError):
    """A launch was given bad arguments, grid or meta-parameters; names the parameter."""

    def __init__(self, message: str, param: str | None = None, kernel: str | None = None) -> None:
        self.param = param
        self.kernel = kernel
        where = f"{kernel}: " if kernel else ""
        what = f"argument '{param}': " if param else ""
        super().__init__(f"{where}{what}{message}")


class LaunchOptionError(LaunchError, AssertionError):
    """A launch option Triton asserts on (``num_warps`` not a power of 2); also an
    ``AssertionError``, which is what Triton raises for it."""


class LaunchOverflowError(LaunchError, OverflowError):
    """An integer launch argument does not fit in 64 bits; also an ``OverflowError``, which is
    what Triton raises for it."""


class ConfigError(LaunchError, ValueError):
    """An autotuner launch whose arguments clash with its configs (a tuned meta-parameter passed
    by hand) or whose pruning left no config: Triton raises ``ValueError`` here."""


class DirectCallError(LaunchError, RuntimeError):
    """A kernel called like a Python function outside any kernel: Triton raises ``RuntimeError``
    ("Cannot call @triton.jit'd outside of the scope of a kernel")."""


class KernelRuntimeError(KdslError, RuntimeError):
    """A kernel failed while running (out-of-bounds access, device assert, driver fault)."""

    def __init__(self, message: str, loc: Location | None = None) -> None:
        self.message = message
        self.loc = loc or Location()
        super().__init__(format_location(self.loc, message))


class OutOfBoundsError(KernelRuntimeError, IndexError):
    """An unmasked load/store touched memory outside the array behind the pointer."""


class DeviceAssertionError(KernelRuntimeError, AssertionError):
    """``kl.device_assert`` failed."""


class BackendUnavailableError(KdslError, RuntimeError):
    """The requested backend's driver or device is missing; says what to install."""
