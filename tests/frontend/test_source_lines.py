"""``load_source`` finds a definition by indentation (fast) and agrees with ``inspect`` exactly."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

import pytest

import kdsl
import kdsl.language as kl
from kdsl.frontend import locations
from kdsl.frontend.locations import load_source


@kdsl.kernel
def decorated(x_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    # a comment at the body's indentation
# a comment at column 0 inside the body
    kl.store(x_ptr + offs, offs, mask=offs < n)
# a trailing comment


def long_header(
    a: int,
    b: int = 2,
) -> int:
    return a + b


def column0_string() -> str:
    s = """
not code: a line at column 0 inside a string
"""
    return s


def one_liner(x: int) -> int: return x


def continued() -> int:
    return (1 +
2)


def outer() -> Callable[[int], int]:
    def inner(y: int) -> int:
        if y:
            return y
        return -y

    return inner


class Holder:
    @staticmethod
    def method(v: int) -> int:
        return v * 2


def reference(fn: Any) -> tuple[int, int, str]:
    lines, first = inspect.getsourcelines(fn)
    raw = "".join(lines)
    src = textwrap.dedent(raw)
    tree = ast.parse(src).body[0]
    return first, locations._removed_indent(raw, src), ast.dump(tree, include_attributes=True)


@pytest.mark.parametrize("fn", [decorated.fn, long_header, column0_string, one_liner, continued, outer(), outer,
                                Holder.method], ids=lambda f: f.__qualname__)
def test_same_definition_as_inspect(fn: Any) -> None:
    info = load_source(fn)
    assert (info.first_line, info.indent, ast.dump(info.tree, include_attributes=True)) == reference(fn)
    assert info.text.lstrip().startswith(("@", "def "))


@pytest.mark.parametrize("fn", [decorated.fn, long_header, outer(), Holder.method], ids=lambda f: f.__qualname__)
def test_common_shapes_take_the_fast_path(fn: Any) -> None:
    assert locations._definition_lines(fn) is not None


def test_fallbacks_still_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the fast path refusing, ``inspect`` gives the same answer."""
    monkeypatch.setattr(locations, "_definition_lines", lambda fn: None)
    info = load_source(decorated.fn)
    assert (info.first_line, info.indent, ast.dump(info.tree, include_attributes=True)) == reference(decorated.fn)


def test_kernel_digest_is_stable() -> None:
    """The disk key hashes the definition's text: a new KernelFunction over the same function agrees.

    (An edited kernel changing the key: tests/runtime/test_cache.py.)"""
    from kdsl.runtime.cache import kernel_dependencies

    digest, _ = kernel_dependencies(decorated)
    again = kdsl.kernel(decorated.fn)
    assert kernel_dependencies(again)[0] == digest
