"""``python -m kdsl <command> [args]``: dispatch to the tools in ``kdsl.cli``.

Subcommands are imported only when chosen: ``compile`` pulls in the frontend,
``opt`` the pass pipeline, ``demo`` numpy and every kernel of the demo. A
:class:`~kdsl.errors.KdslError` escaping a subcommand is a user error: it is
printed without a traceback and the exit status is 1. Usage errors exit with 2.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version

from kdsl.errors import KdslError

# command -> (module exposing main(argv) -> int, one-line description)
COMMANDS: dict[str, tuple[str, str]] = {
    "compile": ("kdsl.cli.compile", "compile a Python kernel and print its IR at a chosen stage"),
    "opt": ("kdsl.cli.opt", "run a pass pipeline over textual tile IR (like mlir-opt)"),
    "demo": ("kdsl.cli.demo", "run the tutorial kernels, check them against numpy, print a table"),
    "cache": ("kdsl.cli.cache", "list, inspect or clear the on-disk compile cache"),
    "tune": ("kdsl.cli.tune", "autotune kernels offline over a list of shapes; --show lists stored results"),
}


def version() -> str:
    """The installed distribution's version (pyproject.toml is the single source)."""
    try:
        return dist_version("kdsl")
    except PackageNotFoundError:
        return "0+unknown (not installed)"


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: python -m kdsl <command> [args...]", "       python -m kdsl --version", "", "commands:"]
    lines += [f"  {name:<{width}}  {desc}" for name, (_, desc) in COMMANDS.items()]
    lines += ["", "Run 'python -m kdsl <command> --help' for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(usage(), file=sys.stderr)
        return 2
    command, rest = args[0], args[1:]
    if command in ("-h", "--help", "help"):
        print(usage())
        return 0
    if command in ("-V", "--version"):
        print(f"kdsl {version()}")
        return 0
    if command not in COMMANDS:
        print(f"kdsl: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    try:
        code = module.main(rest)
    except KdslError as exc:
        # A user-caused failure (bad kernel, bad arguments, missing backend):
        # its message already says where and why; a traceback would bury it.
        print(f"kdsl {command}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
