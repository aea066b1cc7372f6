"""``python -m kdsl compile FILE.py::KERNEL --signature "x:*f32,n:i32" [--constexpr B=1024] [--emit tile|tile-opt]``.

Prints the tile IR of one specialisation of a kernel -- the offline
counterpart of ``kdsl.compile_to_ir`` -- so IR can be inspected and diffed
without writing a launcher. Compile errors print the diagnostic (file, line,
source line, caret) and exit with status 1.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path
from typing import Any

from kdsl.errors import KdslError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kdsl compile", description="Print the tile IR of a kernel specialisation.")
    p.add_argument("target", help="FILE.py::KERNEL")
    p.add_argument("--signature", "-s", default="", help='runtime parameter types, e.g. "x:*f32,y:*f32,n:i32"')
    p.add_argument("--constexpr", "-c", action="append", default=[], metavar="NAME=VALUE",
                   help="a constexpr parameter value (Python literal); repeatable")
    p.add_argument("--emit", choices=("tile", "tile-opt"), default="tile-opt",
                   help="tile: straight from the frontend; tile-opt: after the default pass pipeline")
    p.add_argument("--locations", action="store_true", help="print source locations")
    return p


def _load_kernel(target: str) -> Any:
    from kdsl.runtime.jit import KernelFunction

    if "::" not in target:
        raise ValueError(f"target must be FILE.py::KERNEL, got {target!r}")
    file, name = target.rsplit("::", 1)
    path = Path(file)
    if not path.is_file():
        raise ValueError(f"no such file: {file}")
    spec = importlib.util.spec_from_file_location(f"_kdsl_cli_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    kfn = getattr(module, name, None)
    if not isinstance(kfn, KernelFunction):
        raise ValueError(f"{file} has no @kdsl.kernel named {name!r}")
    return kfn


def _parse_signature(text: str, kfn: Any) -> dict[str, Any]:
    from kdsl.runtime.jit import parse_signature_type

    out: dict[str, Any] = {}
    items = [s.strip() for s in text.split(",") if s.strip()]
    positional = [n for n in kfn.arg_names if n not in kfn.constexpr_names]
    for i, item in enumerate(items):
        if ":" in item:
            name, ty = (x.strip() for x in item.split(":", 1))
        elif i < len(positional):
            name, ty = positional[i], item
        else:
            raise ValueError(f"signature entry {item!r} has no parameter name")
        if name not in kfn.arg_names:
            raise ValueError(f"signature names unknown parameter {name!r}")
        out[name] = ty if ty.startswith("*") else _literal_or_type(ty, name, kfn, parse_signature_type)
    return out


def _literal_or_type(ty: str, name: str, kfn: Any, parse: Any) -> Any:
    parse(ty, name, kfn.__name__)  # validate
    return ty


def _parse_constexprs(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--constexpr needs NAME=VALUE, got {item!r}")
        name, text = (x.strip() for x in item.split("=", 1))
        try:
            out[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[name] = _named_value(text)
    return out


def _named_value(text: str) -> Any:
    import kdsl.language as kl

    attr = text.split(".")[-1]
    value = getattr(kl, attr, None)
    if value is None:
        return text
    return value


def main(argv: list[str]) -> int:
    from kdsl import compile_to_ir
    from kdsl.ir.printer import print_op

    args = _parser().parse_args(argv)
    try:
        kfn = _load_kernel(args.target)
        values = _parse_signature(args.signature, kfn)
        values.update(_parse_constexprs(args.constexpr))
        module = compile_to_ir(kfn, optimize=args.emit == "tile-opt", **values)
    except KdslError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except (ValueError, OSError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(print_op(module, locations=args.locations))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
