"""Golden IR tests: every ``golden/*.mlir`` case through its pipeline (see ``filecheck``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kdsl.errors import KdslError
from kdsl.ir.core import IRError
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.transforms import parse_pipeline

from .filecheck import Case, check_output, expected_error, load_cases

GOLDEN = Path(__file__).parent / "golden"


def _all_cases() -> list[tuple[str, Case]]:
    out: list[tuple[str, Case]] = []
    for path in sorted(GOLDEN.glob("*.mlir")):
        pipeline, cases = load_cases(path)
        out.extend((pipeline, c) for c in cases)
    return out


_CASES = _all_cases()


@pytest.mark.parametrize(("pipeline", "case"), _CASES, ids=[c.name for _, c in _CASES])
def test_golden(pipeline: str, case: Case) -> None:
    assert case.checks, f"{case.name}: case without CHECK lines"
    # Blank lines keep the case's line numbers equal to the file's in error messages.
    source = "\n" * (case.line - 1) + case.source
    err = expected_error(case)
    try:
        module = parse_module(source, case.name.split(":")[0] + ".mlir")
        parse_pipeline(pipeline).run(module)
    except (KdslError, IRError) as e:
        if err is None:
            raise
        assert err in " ".join(str(e).split()), f"{case.name}: error {str(e)!r} lacks {err!r}"
        return
    check_output(case, print_op(module))


def test_every_pass_has_golden_tests() -> None:
    from kdsl.transforms import PASSES

    runs = {p for p, _ in _CASES}
    for name in PASSES:
        assert any(name in r.split(",") for r in runs), f"no golden test runs pass {name!r}"
