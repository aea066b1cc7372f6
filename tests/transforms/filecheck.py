"""A small FileCheck for golden IR tests (the part of LLVM's lit+FileCheck we need).

A test file holds one or more cases separated by ``// -----`` lines. The
first ``// RUN: <pipeline>`` line of the file gives the pass pipeline for all
of them. Each case's IR is parsed, the pipeline runs, and the printed result
is checked against the case's directives, in order:

* ``// CHECK: text``      -- a later output line contains ``text``;
* ``// CHECK-NEXT: text`` -- the line right after the previous match contains ``text``;
* ``// CHECK-NOT: text``  -- no line between the previous and the next match contains ``text``;
* ``// CHECK-ERROR: text`` -- the pipeline (or parsing) fails with a message containing ``text``.

Whitespace runs compare equal to a single space, as in FileCheck.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_DIRECTIVE = re.compile(r"^\s*//\s*(RUN|CHECK|CHECK-NEXT|CHECK-NOT|CHECK-LABEL|CHECK-ERROR):(.*)$")


@dataclass
class Case:
    name: str
    source: str
    line: int  # first line of the case in the file (1-based)
    checks: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, text, line)


def _norm(s: str) -> str:
    return " ".join(s.split())


def load_cases(path: Path) -> tuple[str, list[Case]]:
    """The file's pipeline and its cases."""
    text = path.read_text()
    pipeline: str | None = None
    cases: list[Case] = []
    chunk: list[str] = []
    start = 1
    for lineno, line in enumerate([*text.split("\n"), "// -----"], 1):
        if line.strip() == "// -----":
            if any(x.strip() and not x.strip().startswith("//") for x in chunk) or any("CHECK" in x for x in chunk):
                case = Case(f"{path.stem}:{start}", "\n".join(chunk), start)
                for off, raw in enumerate(chunk):
                    m = _DIRECTIVE.match(raw)
                    if m and m.group(1) != "RUN":
                        kind = "CHECK" if m.group(1) == "CHECK-LABEL" else m.group(1)
                        case.checks.append((kind, _norm(m.group(2)), start + off))
                cases.append(case)
            chunk, start = [], lineno + 1
            continue
        m = _DIRECTIVE.match(line)
        if m and m.group(1) == "RUN" and pipeline is None:
            pipeline = m.group(2).strip()
        chunk.append(line)
    if pipeline is None:
        raise ValueError(f"{path}: no '// RUN: <pipeline>' line")
    return pipeline, cases


def check_output(case: Case, output: str) -> None:
    """Raise AssertionError with a readable report when ``output`` fails the case's checks."""
    lines = [_norm(x) for x in output.split("\n")]
    pos = 0  # index of the first line not yet consumed
    pending_not: list[tuple[str, int]] = []
    last = -1
    for kind, text, lineno in case.checks:
        if kind == "CHECK-ERROR":
            raise AssertionError(f"{case.name}: expected an error containing {text!r} (line {lineno}), got output:\n{output}")
        if kind == "CHECK-NOT":
            pending_not.append((text, lineno))
            continue
        if kind == "CHECK-NEXT":
            idx = last + 1
            if idx >= len(lines) or text not in lines[idx]:
                got = lines[idx] if idx < len(lines) else "<end of output>"
                raise AssertionError(
                    f"{case.name}: CHECK-NEXT at line {lineno}: expected {text!r}\n  got {got!r}\nfull output:\n{output}"
                )
        else:
            idx = next((i for i in range(pos, len(lines)) if text in lines[i]), -1)
            if idx < 0:
                raise AssertionError(f"{case.name}: CHECK at line {lineno}: {text!r} not found\nfull output:\n{output}")
        _check_nots(case, pending_not, lines[pos:idx], output)
        pending_not = []
        last, pos = idx, idx + 1
    _check_nots(case, pending_not, lines[pos:], output)


def _check_nots(case: Case, nots: list[tuple[str, int]], region: list[str], output: str) -> None:
    for text, lineno in nots:
        for line in region:
            if text in line:
                raise AssertionError(f"{case.name}: CHECK-NOT at line {lineno}: found {text!r} in {line!r}\nfull output:\n{output}")


def expected_error(case: Case) -> str | None:
    for kind, text, _ in case.checks:
        if kind == "CHECK-ERROR":
            return text
    return None
