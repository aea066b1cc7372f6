"""``python -m kdsl opt FILE.mlir -p PIPELINE``: run passes over textual IR (like ``mlir-opt``).

Reads IR text from a file (or ``-`` for stdin), runs the pipeline, and prints
the result. Every expected failure -- unreadable file, parse or verifier
error, unknown pass or bad option, a pass rejecting the IR -- prints one
clear message (with ``file:line:col`` where there is one) to stderr and
exits with status 1; a traceback from here is a kdsl bug.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kdsl.errors import KdslError, format_location
from kdsl.ir.core import IRError, Location
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.transforms import PASSES, parse_pipeline


def _arg_parser() -> argparse.ArgumentParser:
    passes = ", ".join(sorted(PASSES))
    p = argparse.ArgumentParser(
        prog="python -m kdsl opt",
        description="Run a pass pipeline over kdsl tile IR text and print the result.",
        epilog=f"passes: {passes}. Example: -p 'inline,canonicalize,cse,dce'",
    )
    p.add_argument("file", help="IR text file, or '-' for stdin")
    p.add_argument("-p", "--pipeline", default="", help="comma-separated passes, options as name{key=value}")
    p.add_argument("-o", "--output", default="-", help="where to write the result (default: stdout)")
    p.add_argument("--dump-after-each", action="store_true", help="print the IR after every pass to stderr")
    p.add_argument("--dump-dir", default=None, help="write the IR after every pass into DIR/NN-pass.mlir")
    p.add_argument("--locations", action="store_true", help="print loc(...) after every op")
    p.add_argument("--no-verify", action="store_true", help="do not verify the IR after each pass")
    return p


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def run(args: argparse.Namespace) -> str:
    """Parse, transform and print; raises :class:`KdslError` / ``IRError`` / ``OSError`` on failure."""
    dump: bool | str | None = args.dump_dir if args.dump_dir else (True if args.dump_after_each else None)
    pm = parse_pipeline(args.pipeline, verify=not args.no_verify, dump=dump)
    text, filename = _read(args.file)
    module = parse_module(text, filename, verify=not args.no_verify)
    pm.run(module)
    return print_op(module, locations=args.locations)


def _report(e: Exception) -> str:
    """The error text: ``file:line:col: error: ...`` with the source line when located."""
    loc = getattr(e, "loc", None)
    message = getattr(e, "message", None) or str(e)
    if isinstance(loc, Location) and loc.known:
        return str(e) if isinstance(e, KdslError) else format_location(loc, message)
    return f"kdsl opt: error: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    args = _arg_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        out = run(args)
    except (KdslError, IRError) as e:
        print(_report(e), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"kdsl opt: error: cannot read {args.file!r}: {e.strerror or e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(out + "\n")
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(out + "\n")
    except OSError as e:
        print(f"kdsl opt: error: cannot write {args.output!r}: {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
