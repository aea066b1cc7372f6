"""No kernel source makes the compiler raise anything but CompilationError."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kdsl

BODIES = [
    "x = kl.load(p)\n    x[0] = 1",
    "x = kl.load(p)\n    x.nope()",
    "a, b = kl.load(p)",
    "kl.store(p, kl.arange(0, 4)[10])",
    "kl.store(p, (1, 2) + kl.load(p))",
    "for i in kl.load(p):\n        pass",
    "for i in range(1.5):\n        pass",
    "for i in range(0, 4, 0):\n        pass",
    "while kl.arange(0, 4) > 0:\n        pass",
    "y = kl.load(p) if kl.arange(0, 4) > 2 else 1.0",
    "kl.store(p, kl.load(p) @ kl.load(p))",
    "x = {1, 2}",
    "x = [i for i in kl.load(p)]",
    "del p",
    "global q",
    "import os",
    "raise ValueError('x')",
    "try:\n        pass\n    except Exception:\n        pass",
    "x = yield 1",
    "x: kl.constexpr = kl.load(p)",
    "kl.store(p, int(kl.load(p)))",
    "kl.store(p, undefined())",
    "kl.store(p, len(kl.load(p)))",
    "kl.store(p, kl.load(p) + 'a')",
    "kl.store(p, f'{kl.load(p)}')",
    "kl.store(p, kl.load(p)[None, None, 'x'])",
    "kl.store(p, p(1))",
    "kl.store(p, kl.load(p, mask=1.5))",
    "kl.store(p, kl.zeros((3,), kl.float32))",
    "kl.store(p, kl.load(p).to('f32'))",
    "kl.store(p, kl.sum(kl.load(p), axis='x'))",
    "if p:\n        pass",
    "kl.store(p, 2 ** 70)",
    "kl.store(p, -(2 ** 70) // kl.load(p))",
    "return p",
    "x = lambda: 1",
    "async def f():\n        pass",
    "kl.store(p, *p)",
    "kl.store(**p)",
    "kl.static_assert(kl.load(p) > 0)",
    "kl.store(p, [1, 2][kl.load(p).to(kl.int32)])",
    "x = kl.load(p)\n    while x > 0:\n        x = 1",
    "x = kl.load(p)\n    for i in range(3):\n        x = (x, x)",
    "for i, j in range(3):\n        pass",
    "kl.store(p, kl.program_id(5))",
]


@pytest.mark.parametrize("body", BODIES)
def test_only_compilation_errors(body: str, tmp_path: Path) -> None:
    src = textwrap.dedent(
        """
        import kdsl
        import kdsl.language as kl

        @kdsl.kernel
        def k(p):
            BODY
        """
    ).replace("BODY", body)
    path = tmp_path / "robust_kernel.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("robust_kernel", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except SyntaxError:
        pytest.skip("not valid Python")
    try:
        kdsl.compile_to_ir(mod.k, np.zeros(4, np.float32), optimize=True)
    except kdsl.CompilationError as err:
        assert err.loc.file == str(path)
        assert err.loc.line >= 6
