"""Random *valid* kdsl kernels for differential testing.

``generate(seed)`` returns a :class:`Program`: the Python source of one
``@kdsl.kernel`` function, its inputs and the outputs to compare. The same
seed always gives the same program (``random.Random(seed)``), so a failing
seed is a complete reproduction; ``programs()`` wraps it as a hypothesis
strategy.

What a program contains (each piece chosen at random):

* loads of up to three arrays of any numpy-supported kdsl dtype (masked, the
  last block runs past ``n``), runtime int/float scalars and literals;
* elementwise chains mixing dtypes (Triton's implicit promotion decides the
  types): ``+ - * / // % & | ^ << >>``, comparisons, ``where``, unary math,
  ``maximum``/``minimum``, casts between every dtype;
* reductions (``sum``, ``max``, ``min``, ``argmax``, ``argmin``), ``cumsum``,
  a small ``dot`` (float or int8 -> int32), a ``for`` loop carrying a value,
  an ``if`` on a runtime scalar, integer atomics whose final value does not
  depend on the order (``add``, ``max``, ``min``, ``or``, ``xor``, ``and``),
  Philox ``rand``/``randint``.

Why the generator tracks "exact" values: backends legitimately differ in the
last bits of float arithmetic (FMA contraction, transcendental accuracy,
summation order). Such values are compared with a tolerance, and are never fed
into anything discontinuous (comparisons, ``floor``, float->int casts,
``argmax``) that would turn a last-bit difference into a different answer.
Loaded values, int->float conversions and Philox floats are bit-exact on every
backend and may go anywhere.

Undefined behaviour: the IR leaves integer division by zero, ``INT_MIN / -1``,
shift amounts outside ``[0, bits)`` and out-of-range float->int casts
undefined (``kdsl/ir/dialects/arith.py``; the interpreter defines them for
itself). By default the generator guards them (so every mismatch is a bug);
``ub=True`` emits them unguarded, and a mismatch is then only a portability
note.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES = ("float16", "float32", "float64")
ATOMIC_OPS = ("add", "max", "min", "or", "xor", "and")
_ATOMIC_INIT = {"add": 0, "max": -(2**31), "min": 2**31 - 1, "or": 0, "xor": 0, "and": -1}
NOUT = 4  # rows of each elementwise output array
NRED = 6  # reduction slots per program


@dataclass
class Var:
    name: str
    kind: str  # "i" int, "f" float, "b" bool
    exact: bool  # bit-identical on every backend (see the module docstring)
    tile: bool = True


@dataclass
class Program:
    """One generated kernel with its launch: everything a backend run needs."""

    seed: int
    source: str
    kernel_name: str
    inputs: dict[str, np.ndarray]  # argument name -> array (copied per run)
    outputs: list[str]  # argument names whose final contents are compared
    scalars: dict[str, Any]  # runtime scalar arguments
    meta: dict[str, Any]  # constexpr arguments
    arg_order: list[str]
    grid: tuple[int, ...]
    rtol: float  # float tolerance derived from the ops used
    scales: dict[str, str] = field(default_factory=dict)  # output -> output holding its error scale
    features: set[str] = field(default_factory=set)

    def args(self) -> list[Any]:
        """Fresh launch arguments (arrays copied, so every run starts from the same state)."""
        out: list[Any] = []
        for name in self.arg_order:
            if name in self.inputs:
                out.append(self.inputs[name].copy())
            else:
                out.append(self.scalars[name])
        return out


def _int_values(rng: random.Random, dtype: str, size: int) -> np.ndarray:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    pool = [lo, hi, 0, 1, -1 if lo < 0 else 2, hi // 2, lo + 1 if lo < 0 else 3]
    vals = []
    for _ in range(size):
        r = rng.random()
        if r < 0.15:
            vals.append(rng.choice(pool))
        elif r < 0.6:
            vals.append(rng.randint(max(lo, -20), min(hi, 20)))
        else:
            vals.append(rng.randint(lo, hi))
    return np.array(vals, dtype=dtype)


def _float_values(rng: random.Random, dtype: str, size: int, specials: bool) -> np.ndarray:
    vals = []
    for _ in range(size):
        r = rng.random()
        if specials and r < 0.03:
            vals.append(rng.choice([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e30, -1e30]))
        elif r < 0.2:
            vals.append(float(rng.randint(-8, 8)))
        else:
            vals.append(rng.uniform(-4.0, 4.0))
    with np.errstate(over="ignore"):
        return np.array(vals, dtype=np.float64).astype(dtype)


class _Gen:
    """Builds one kernel body line by line, tracking each variable's kind."""

    def __init__(self, rng: random.Random, ub: bool) -> None:
        self.rng = rng
        self.ub = ub
        self.lines: list[str] = []
        self.vars: list[Var] = []
        self.n = 0
        self.features: set[str] = set()
        self.out_rows = {"i": 0, "f": 0}
        self.red_slots = {"i": 0, "f": 0}
        self.atomics: list[str] = []
        self.has_f16 = False
        self.inexact_ops = 0

    # --- helpers ------------------------------------------------------------------
    def fresh(self) -> str:
        self.n += 1
        return f"t{self.n}"

    def emit(self, line: str, indent: int = 1) -> None:
        self.lines.append("    " * indent + line)

    def define(self, expr: str, kind: str, exact: bool, tile: bool = True, indent: int = 1) -> Var:
        v = Var(self.fresh(), kind, exact, tile)
        self.emit(f"{v.name} = {expr}", indent)
        self.vars.append(v)
        if not exact:
            self.inexact_ops += 1
        return v

    def pick(self, kinds: str, exact: bool = False, tile: bool | None = None) -> Var | None:
        """A variable of one of ``kinds`` (only bit-exact ones if ``exact``), or None."""
        cands = [v for v in self.vars if v.kind in kinds and (v.exact or not exact)]
        if tile is not None:
            cands = [v for v in cands if v.tile == tile]
        if not cands:
            return None
        # favour recent values: longer dependency chains
        return cands[-1] if self.rng.random() < 0.4 else self.rng.choice(cands)

    def int_literal(self) -> str:
        """A literal valid with every int dtype (Triton rejects e.g. ``u8 + -1`` and ``i8 + 1000``),
        or a full tile for the extremes."""
        if self.rng.random() < 0.75:
            return str(self.rng.choice([0, 1, 2, 3, 5, 7, 100, 127]))
        value, dt = self.rng.choice(
            [
                (-1, "int32"),
                (-3, "int8"),
                (255, "uint8"),
                (1000, "int16"),
                (65535, "uint16"),
                (2147483647, "int32"),
                (-2147483648, "int32"),
                (2**63 - 1, "int64"),
            ]
        )
        return f"kl.full(({self.block_expr},), {value}, kl.{dt})"

    def float_literal(self) -> str:
        return repr(self.rng.choice([0.5, 1.5, -2.0, 3.25, 0.1, 1e-3, 10.0]))

    def int_dtype(self) -> str:
        return "kl." + self.rng.choice(INT_DTYPES)

    def float_dtype(self) -> str:
        d = self.rng.choice(("float16", "float32", "float32", "float64"))
        if d == "float16":
            self.has_f16 = True
        return "kl." + d

    # --- statements -----------------------------------------------------------------
    def int_binop(self) -> None:
        a = self.pick("i")
        if a is None:
            return
        b = self.pick("i") if self.rng.random() < 0.7 else None
        rhs = b.name if b is not None else self.int_literal()
        tile = a.tile or (b is not None and b.tile)
        op = self.rng.choice(["+", "-", "*", "&", "|", "^", "//", "%", "<<", ">>"])
        if op in ("//", "%"):
            self.features.add("intdiv")
            dt = self.int_dtype()
            x = f"{a.name}.to({dt})"
            if b is not None or rhs.startswith("kl."):
                y = f"({rhs}).to({dt})"
            else:
                y = f"kl.full(({self.block_expr},), {rhs}, {dt})"
            if not self.ub:
                bad = f"({y} == 0)" if "uint" in dt else f"(({y} == 0) | ({y} == -1))"
                y = f"kl.where({bad}, 7, {y}).to({dt})"
            self.define(f"{x} {op} {y}", "i", True, tile)
            return
        if op in ("<<", ">>"):
            self.features.add("shift")
            amount = f"({rhs} & 7)" if not self.ub else rhs
            self.define(f"{a.name} {op} {amount}", "i", True, tile)
            return
        self.define(f"{a.name} {op} {rhs}", "i", True, tile)

    def float_binop(self) -> None:
        a = self.pick("f") or self.pick("i")
        if a is None:
            return
        b = self.pick("fi") if self.rng.random() < 0.7 else None
        rhs = b.name if b is not None else self.float_literal()
        op = self.rng.choice(["+", "-", "*", "/"])
        self.define(f"{a.name} {op} {rhs}", "f", False, a.tile or (b is not None and b.tile))

    def compare(self) -> None:
        a = self.pick("fi", exact=True)
        if a is None:
            return
        b = self.pick("fi", exact=True) if self.rng.random() < 0.6 else None
        rhs = b.name if b is not None else (self.int_literal() if a.kind == "i" else self.float_literal())
        op = self.rng.choice(["<", "<=", ">", ">=", "==", "!="])
        self.define(f"{a.name} {op} {rhs}", "b", True, a.tile and (b is None or b.tile))

    def bool_logic(self) -> None:
        a, b = self.pick("b"), self.pick("b")
        if a is None or b is None:
            return
        op = self.rng.choice(["&", "|", "^"])
        self.define(f"{a.name} {op} {b.name}", "b", True, a.tile or b.tile)

    def where(self) -> None:
        c = self.pick("b")
        a, b = self.pick("fi"), self.pick("fi")
        if a is None or b is None:
            return
        cond = c.name if c is not None and self.rng.random() < 0.8 else "mask"
        kind = "f" if "f" in (a.kind + b.kind) else "i"
        self.features.add("where")
        tile = a.tile or b.tile or cond == "mask" or (c is not None and c.tile)
        self.define(f"kl.where({cond}, {a.name}, {b.name})", kind, a.exact and b.exact, tile)

    def unary(self) -> None:
        f = self.pick("f")
        if f is not None and self.rng.random() < 0.6:
            clamp = f"kl.minimum(kl.maximum({f.name}, -8.0), 8.0)"
            choices = [
                (f"kl.exp({clamp})", False),
                (f"kl.log(kl.abs({f.name}) + 1.0)", False),
                (f"kl.sqrt(kl.abs({f.name}))", False),
                (f"kl.sin({clamp})", False),
                (f"kl.cos({clamp})", False),
                (f"kl.sigmoid({clamp})", False),
                (f"kl.abs({f.name})", f.exact),
                (f"-{f.name}", f.exact),
            ]
            if f.exact:
                choices += [(f"kl.floor({f.name})", True), (f"kl.ceil({f.name})", True)]
            if self.rng.random() < 0.3:  # kdsl.language.extra.libdevice: compositions of kl ops
                self.features.add("libdevice")
                unit = f"kl.minimum(kl.maximum({f.name}, -1.0), 1.0)"
                choices = [(f"libdevice.asin({unit})", False), (f"libdevice.atan({f.name})", False),
                           (f"libdevice.expm1({clamp})", False), (f"libdevice.log1p(kl.abs({f.name}))", False),
                           (f"libdevice.cbrt({f.name})", False), (f"libdevice.trunc({f.name})", f.exact),
                           (f"libdevice.rint({f.name})", f.exact), (f"libdevice.round({f.name})", f.exact)]  # fmt: skip
            g = self.pick("f")
            if g is not None:
                choices.append((f"kl.maximum({f.name}, {g.name})", f.exact and g.exact))
                choices.append((f"kl.minimum({f.name}, {g.name})", f.exact and g.exact))
            expr, exact = self.rng.choice(choices)
            self.features.add("math")
            self.define(expr, "f", exact, f.tile or (g is not None and g.name in expr and g.tile))
            return
        a = self.pick("i")
        if a is None:
            return
        b = self.pick("i")
        int_choices = [f"-{a.name}", f"~{a.name}", f"kl.abs({a.name})"]
        if b is not None:
            int_choices += [f"kl.maximum({a.name}, {b.name})", f"kl.minimum({a.name}, {b.name})"]
        expr = self.rng.choice(int_choices)
        self.define(expr, "i", True, a.tile or (b is not None and b.name in expr and b.tile))

    def cast(self) -> None:
        v = self.pick("fib")
        if v is None:
            return
        self.features.add("cast")
        if v.kind in "ib":
            if self.rng.random() < 0.6:
                self.define(f"{v.name}.to({self.int_dtype()})", "i", True, v.tile)
            else:
                self.define(f"{v.name}.to({self.float_dtype()})", "f", True, v.tile)
            return
        if v.exact and self.rng.random() < 0.2:  # an fp8 round trip: integer codecs, the same bits everywhere
            self.features.add("fp8")
            fp8 = self.rng.choice(["kl.float8e5", "kl.float8e4nv", "kl.float8e4b8"])
            self.define(f"{v.name}.to({fp8}).to(kl.float32)", "f", True, v.tile)
            return
        if self.rng.random() < 0.5 or not v.exact:
            self.define(f"{v.name}.to({self.float_dtype()})", "f", v.exact, v.tile)
            return
        dt = self.int_dtype()
        src = v.name if self.ub else f"kl.minimum(kl.maximum({v.name}, -100.0), 100.0)"
        if not self.ub and dt.startswith("kl.uint"):
            src = f"kl.minimum(kl.maximum({v.name}, 0.0), 200.0)"
        self.define(f"{src}.to({dt})", "i", True, v.tile)

    def philox(self) -> None:
        self.features.add("philox")
        if self.rng.random() < 0.5:
            self.define("kl.rand(s_i, offs)", "f", True)
        else:
            self.define("kl.randint(s_i, offs)", "i", True)

    def cumsum(self) -> None:
        v = self.pick("fi", tile=True)
        if v is None:
            return
        self.features.add("scan")
        self.define(f"kl.cumsum({v.name}, 0)", v.kind, v.kind == "i")

    def permute(self) -> None:
        """``kl.sort`` / ``kl.flip`` / ``kl.gather``: data movement, so exact iff the input is (sorting
        is 1-Lipschitz in the max norm, so an inexact input keeps its tolerance)."""
        v = self.pick("fi", tile=True)
        if v is None:
            return
        self.features.add("permute")
        which = self.rng.choice(["sort", "flip", "gather"])
        if which == "sort":
            self.define(f"kl.sort({v.name}, descending={self.rng.random() < 0.5})", v.kind, v.exact)
        elif which == "flip":
            self.define(f"kl.flip({v.name}, 0)", v.kind, v.exact)
        else:
            w = self.pick("i", exact=True, tile=True)
            if w is None or not v.exact:
                return
            # indices outside [0, BLOCK) (negative remainders included) read 0
            self.define(f"kl.gather({v.name}, {w.name}.to(kl.int32) % (BLOCK + 3), 0)", v.kind, True)

    def loop(self) -> None:
        v = self.pick("fi", tile=True)
        w = self.pick("fi", tile=True)
        if v is None or w is None:
            return
        self.features.add("loop")
        kind = "f" if "f" in (v.kind + w.kind) else "i"
        dt = "kl.float32" if kind == "f" else self.rng.choice(["kl.int32", "kl.int64", "kl.uint32"])
        acc = self.define(f"{v.name}.to({dt})", kind, kind == "i" and v.exact)
        acc.exact = kind == "i"
        op = self.rng.choice(["+", "*", "^"] if kind == "i" else ["+", "*"])
        rng_expr = "range(0, s_iter)" if self.rng.random() < 0.6 else f"kl.static_range({self.rng.randint(1, 3)})"
        self.emit(f"for it in {rng_expr}:")
        if kind == "f":
            self.emit(f"{acc.name} = ({acc.name} * 0.5 {op} {w.name} + it).to({dt})", 2)
        else:
            self.emit(f"{acc.name} = ({acc.name} {op} {w.name} + it).to({dt})", 2)
        self.inexact_ops += 3 if kind == "f" else 0

    def branch(self) -> None:
        a, b = self.pick("fi", tile=True), self.pick("fi", tile=True)
        if a is None or b is None:
            return
        self.features.add("if")
        kind = "f" if "f" in (a.kind + b.kind) else "i"
        dt = "kl.float32" if kind == "f" else self.int_dtype()
        name = self.fresh()
        cond = self.rng.choice(["s_i > 3", "s_i % 2 == 0", "s_f < 0.5", "pid == 0"])
        self.emit(f"if {cond}:")
        self.emit(f"{name} = ({a.name} + {b.name}).to({dt})", 2)
        self.emit("else:")
        self.emit(f"{name} = ({a.name} - {b.name}).to({dt})", 2)
        self.vars.append(Var(name, kind, kind == "i"))

    # --- sinks ---------------------------------------------------------------------
    block_expr = "BLOCK"

    def store_elementwise(self, v: Var) -> None:
        kind = "f" if v.kind == "f" else "i"
        row = self.out_rows[kind]
        if row >= NOUT:
            return
        self.out_rows[kind] += 1
        dst, dt = ("out_f", "kl.float64") if kind == "f" else ("out_i", "kl.int64")
        # odd rows stream (a choice that draws nothing from the generator: seeds keep their programs
        # otherwise), so that streaming-store loops (kdsl/lowering/align_stores.py) are exercised
        hint = ', eviction_policy="evict_first"' if row % 2 else ""
        self.emit(f"kl.store({dst} + {row} * NPAD + offs, {v.name}.to({dt}), mask=mask{hint})")

    def reduction(self) -> None:
        v = self.pick("fi", tile=True)
        if v is None:
            return
        self.features.add("reduce")
        ops = ["sum"] if not v.exact else ["sum", "max", "min", "argmax", "argmin"]
        op = self.rng.choice(ops)
        kind = "i" if op.startswith("arg") or v.kind == "i" else "f"
        slot = self.red_slots[kind]
        if slot >= NRED:
            return
        self.red_slots[kind] += 1
        dst, dt = ("red_f", "kl.float64") if kind == "f" else ("red_i", "kl.int64")
        if op == "sum" and v.kind == "f":
            self.inexact_ops += 4
        # NaN reaches argmax/argmin unchanged: kdsl defines the answer (the first NaN, as numpy) and
        # its combine is a total order, so every backend's reduction tree must agree on it
        src = v.name
        self.emit(f"kl.store({dst} + pid * {NRED} + {slot}, kl.{op}({src}, axis=0).to({dt}))")
        if kind == "f":
            # the summation error is bounded by the sum of the terms' magnitudes, not by the result
            # (1e30 - 1e30 + x): store it as the comparison scale of this slot
            self.emit(f"kl.store(red_fmag + pid * {NRED} + {slot}, kl.sum(kl.abs({src}.to(kl.float64)), axis=0))")

    def atomic(self) -> None:
        v = self.pick("i", tile=True)
        if v is None or len(self.atomics) >= len(ATOMIC_OPS):
            return
        op = self.rng.choice([o for o in ATOMIC_OPS if o not in self.atomics])
        row = ATOMIC_OPS.index(op)
        self.atomics.append(op)
        self.features.add("atomic")
        self.emit(f"kl.atomic_{op}(atom + {row} * 8 + (offs % 8), {v.name}.to(kl.int32), mask=mask)")

    def dot(self) -> None:
        self.features.add("dot")
        self.emit("rd = kl.arange(0, 16)")
        self.emit("didx = pid * 256 + rd[:, None] * 16 + rd[None, :]")
        self.emit("dm = didx < n")
        self.emit("da = kl.load(x0 + didx, mask=dm, other=0)")
        self.emit("db = kl.load(x1 + didx, mask=dm, other=0)")
        if self.rng.random() < 0.5:
            self.emit("dr = kl.dot(da.to(kl.int8), db.to(kl.int8)).to(kl.float64)")
        else:
            acc = ", kl.full((16, 16), 1.0, kl.float32)" if self.rng.random() < 0.5 else ""
            self.emit(f"dr = kl.dot(da.to(kl.float32), db.to(kl.float32){acc}).to(kl.float64)")
            self.inexact_ops += 16
        self.emit("kl.store(dot_out + didx, dr, mask=dm)")


def generate(seed: int, *, ub: bool = False, specials: bool = True) -> Program:
    """The program for ``seed`` (deterministic)."""
    rng = random.Random(seed)
    g = _Gen(rng, ub)
    block = rng.choice([16, 32, 64, 128, 256])
    grid = rng.randint(1, 3)
    npad = max(block * grid, 256 * grid)
    n = block * grid - rng.choice([0, 0, 1, 3, block // 2])
    dtypes = [rng.choice(INT_DTYPES + FLOAT_DTYPES) for _ in range(3)]
    if "float16" in dtypes:
        g.has_f16 = True
    inputs: dict[str, np.ndarray] = {}
    for i, dt in enumerate(dtypes):
        if dt in INT_DTYPES:
            inputs[f"x{i}"] = _int_values(rng, dt, npad)
        else:
            inputs[f"x{i}"] = _float_values(rng, dt, npad, specials)
    g.emit("pid = kl.program_id(0)")
    g.emit("offs = pid * BLOCK + kl.arange(0, BLOCK)")
    g.emit("mask = offs < n")
    for i, dt in enumerate(dtypes):
        if rng.random() < 0.2:  # the same masked load written with a block pointer
            g.features.add("blockptr")
            bp = f"kl.make_block_ptr(x{i}, (n,), (1,), (pid * BLOCK,), (BLOCK,), (0,))"
            g.define(f"kl.load({bp}, boundary_check=(0,), padding_option='zero')", "i" if dt in INT_DTYPES else "f",
                     True)  # fmt: skip
        else:
            g.define(f"kl.load(x{i} + offs, mask=mask, other=0)", "i" if dt in INT_DTYPES else "f", True)
    g.vars.append(Var("s_i", "i", True, tile=False))
    g.vars.append(Var("s_f", "f", True, tile=False))
    steps = [
        (g.int_binop, 6),
        (g.float_binop, 4),
        (g.compare, 3),
        (g.bool_logic, 1),
        (g.where, 3),
        (g.unary, 3),
        (g.cast, 3),
        (g.philox, 1),
        (g.cumsum, 1),
        (g.permute, 1),
        (g.loop, 1),
        (g.branch, 1),
        (g.reduction, 2),
        (g.atomic, 1),
    ]
    fns, weights = zip(*steps)
    for _ in range(rng.randint(3, 14)):
        rng.choices(fns, weights)[0]()
    if rng.random() < 0.25:
        g.dot()
    tiles = [v for v in g.vars if v.tile and v.name.startswith("t")]
    for v in rng.sample(tiles, min(len(tiles), 3)):
        g.store_elementwise(v)
    if not tiles or rng.random() < 0.3:
        g.reduction()
    params = (
        "x0, x1, x2, out_i, out_f, red_i, red_f, red_fmag, atom, dot_out, n, s_i, s_f, s_iter, "
        "BLOCK: kl.constexpr, NPAD: kl.constexpr"
    )
    name = f"gen_{seed & 0xFFFFFFFF:08x}"
    source = "\n".join(
        [
            f'"""Generated by tests/reliability/kernelgen.py (seed {seed})."""',
            "import kdsl",
            "import kdsl.language as kl",
            "from kdsl.language.extra import libdevice",
            "",
            "",
            "@kdsl.kernel",
            f"def {name}({params}):",
            *g.lines,
            "",
        ]
    )
    atom = np.zeros((len(ATOMIC_OPS), 8), np.int32)
    for row, op in enumerate(ATOMIC_OPS):
        atom[row] = _ATOMIC_INIT[op]
    inputs.update(
        out_i=np.zeros(NOUT * npad, np.int64),
        out_f=np.zeros(NOUT * npad, np.float64),
        red_i=np.zeros(NRED * grid, np.int64),
        red_f=np.zeros(NRED * grid, np.float64),
        red_fmag=np.zeros(NRED * grid, np.float64),
        atom=atom,
        dot_out=np.zeros(npad, np.float64),
    )
    scalars = {
        "n": n,
        "s_i": rng.choice([0, 2, 4, 5, 17, 12345]),
        "s_f": rng.choice([0.25, 0.75, -1.5]),
        "s_iter": rng.randint(0, 4),
    }
    rtol = (2e-2 if g.has_f16 else 1e-5) * (1 + g.inexact_ops)
    order = [
        "x0",
        "x1",
        "x2",
        "out_i",
        "out_f",
        "red_i",
        "red_f",
        "red_fmag",
        "atom",
        "dot_out",
        "n",
        "s_i",
        "s_f",
        "s_iter",
    ]
    return Program(
        seed=seed,
        source=source,
        kernel_name=name,
        inputs=inputs,
        outputs=["out_i", "out_f", "red_i", "red_f", "atom", "dot_out"],
        scales={"red_f": "red_fmag"},
        scalars=scalars,
        meta={"BLOCK": block, "NPAD": npad},
        arg_order=order,
        grid=(grid,),
        rtol=min(rtol, 0.05),
        features=g.features | ({"ub"} if ub else set()),
    )


def programs(ub: bool = False) -> Any:
    """A hypothesis strategy of programs (the seed is what shrinks and is reported)."""
    from hypothesis import strategies as st

    return st.integers(min_value=0, max_value=2**63 - 1).map(lambda s: generate(s, ub=ub))
