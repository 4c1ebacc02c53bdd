"""Random Helion kernels as source files: the program generator of `make fuzz-programs`.

A program is a grammar instance of the language as users write it: a grid of 1-3-D tiles
(over sizes, or from an int `begin` to an int `end`), loads of tiles, rows and gathered
rows, elementwise ATen ops over them with shared intermediates, `torch.where` masks, `if` on
a scalar argument, `hl.static_range`, a helper function, reductions (sum, amax, argmax,
mean, var), scans, inner tile loops carrying several `hl.zeros` accumulators, `hl.dot`,
atomics and several outputs, in f32, bf16, f16 or int32, on shapes that do not divide the
block sizes. Each program is a `Program`: a few fixed forms (`KINDS`) whose body is a list
of `Stmt`s, so the reducer can drop statements and shrink sizes (`reduce_program`).

Programs are deterministic per (seed, index) and are written to real files (Helion reads
kernel source with `inspect`); `Example`s made from them run through `fuzz.py`'s workers,
with Helion's reference mode as the oracle.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
import random
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .examples.registry import Example

PREFIX = "program:"
FLOAT_DTYPES = ("float32", "bfloat16", "float16")
SIZES = (1, 3, 5, 7, 13, 17, 19, 31, 33, 37, 65, 67, 100, 129)
UNARY = ("torch.sigmoid({})", "torch.tanh({})", "torch.relu({})", "torch.abs({})", "(-{})", "({} * 0.5)",
         "torch.sin({})", "helper({})")
BINARY = ("({} + {})", "({} - {})", "({} * {})", "torch.maximum({}, {})", "torch.minimum({}, {})",
          "torch.where({} > 0, {}, {})")
REDUCTIONS = ("sum", "amax", "mean", "var", "argmax")


@dataclass
class Stmt:
    """One statement of the body: the variable it defines (if any) and the ones it reads."""

    text: str
    defines: str | None = None
    uses: frozenset[str] = frozenset()
    indent: int = 0  # extra levels inside the body (a static_range or if block)


@dataclass
class Program:
    """A generated kernel: its form, inputs (name -> dims), int/float scalars, outputs and
    body. `render` writes it as a module with a `main` that checks it against reference
    mode, so a reduced repro runs on its own."""

    kind: str
    seed: int
    dtype: str
    inputs: dict[str, list[str]]  # tensor name -> its dim names
    sizes: dict[str, int]  # dim name -> size
    outputs: dict[str, tuple[list[str], str]]  # name -> (dims, dtype expression)
    body: list[Stmt]
    scalars: dict[str, Any] = field(default_factory=dict)
    index_inputs: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (dim, dim it indexes)
    config: dict[str, Any] | None = None  # the config a repro runs (None: drawn as the fuzzer does)

    @property
    def name(self) -> str:
        return f"prog_{self.kind}_{self.seed & 0xFFFFFFFF:08x}"

    def render(self) -> str:
        return _render(self)


# ---------------------------------------------------------------- generation


def generate(seed: int, index: int) -> Program:
    """Program `index` of a run with `seed`: the same text for the same pair."""
    rng = random.Random(f"{seed}:program:{index}")
    kind = rng.choice(KINDS_ORDER)
    program = KINDS[kind](rng)
    return dataclasses.replace(program, seed=int(hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:8], 16))


def _dtype(rng: random.Random, ints: bool = False) -> str:
    choices = FLOAT_DTYPES + (("int32",) if ints else ())
    return rng.choices(choices, (5, 2, 2, 2)[: len(choices)])[0]


def _expr(rng: random.Random, leaves: Sequence[str], depth: int, ints: bool = False) -> str:
    """An elementwise expression over `leaves` (f32 values, or int32 ones when `ints`)."""
    if depth == 0 or rng.random() < 0.3:
        leaf = rng.choice(leaves)
        return leaf if ints or rng.random() < 0.8 else f"({leaf} * {rng.choice((0.5, 2.0, -1.5))})"
    if ints:
        op = rng.choice(("({} + {})", "({} - {})", "({} * {})", "torch.maximum({}, {})"))
        return op.format(_expr(rng, leaves, depth - 1, ints), _expr(rng, leaves, depth - 1, ints))
    if rng.random() < 0.4:
        return rng.choice(UNARY).format(_expr(rng, leaves, depth - 1))
    op = rng.choice(BINARY)
    return op.format(*(_expr(rng, leaves, depth - 1) for _ in range(op.count("{}"))))


def _names_in(text: str, names: Sequence[str]) -> frozenset[str]:
    return frozenset(n for n in names if re.search(rf"\b{n}\b", text))


def _loads(prog_inputs: dict[str, list[str]], index: str, dtype: str, ints: bool) -> list[Stmt]:
    """One load per input, widened to f32 for half dtypes (as kernels accumulate)."""
    stmts = []
    for i, name in enumerate(prog_inputs):
        widen = "" if ints or dtype == "float32" else ".to(torch.float32)"
        stmts.append(Stmt(f"v{i} = {name}[{index}]{widen}", f"v{i}", frozenset({name})))
    return stmts


def _temps(rng: random.Random, body: list[Stmt], leaves: list[str], count: int, ints: bool) -> list[str]:
    """Shared intermediates t0, t1, ... each over the loads and earlier temps."""
    for i in range(count):
        text = _expr(rng, leaves, 2, ints)
        body.append(Stmt(f"t{i} = {text}", f"t{i}", _names_in(text, leaves)))
        leaves = [*leaves, f"t{i}"]
    return leaves


def _elementwise(rng: random.Random, rank: int | None = None) -> Program:
    """A 1-3-D grid of tiles, shared temps, several outputs, maybe an `if` on a scalar
    argument and a `static_range` accumulation."""
    rank = rank or rng.choice((1, 2, 2, 3))
    dtype = _dtype(rng, ints=True)
    ints = dtype == "int32"
    dims = [f"d{i}" for i in range(rank)]
    sizes = {d: rng.choice(SIZES) for d in dims}
    inputs = {f"x{i}": dims for i in range(rng.choice((1, 2, 3)))}
    body = _loads(inputs, ", ".join(f"tile_{d}" for d in dims), dtype, ints)
    leaves = _temps(rng, body, [s.defines for s in body], rng.randint(1, 3), ints)
    scalars: dict[str, Any] = {}
    if not ints and rng.random() < 0.3:
        scalars["flag"] = rng.choice((-1.0, 1.0))
        body.append(Stmt("if flag > 0:", None, frozenset({"flag"})))
        body.append(Stmt(f"t0 = {_expr(rng, leaves, 1)}", "t0", frozenset(leaves), indent=1))
    if not ints and rng.random() < 0.3:
        body.append(Stmt("for step in hl.static_range(2):", None, frozenset()))
        body.append(Stmt(f"t0 = t0 * 0.5 + {rng.choice(leaves)}", "t0", frozenset(leaves), indent=1))
    outputs = {}
    out_dtype = "torch.int32" if ints else "x0.dtype"
    for i in range(rng.choice((1, 2, 3))):
        value = _expr(rng, leaves, 1, ints)
        cast = "" if ints or dtype == "float32" else ".to(x0.dtype)"
        body.append(Stmt(f"out{i}[{', '.join(f'tile_{d}' for d in dims)}] = ({value}){cast}", None,
                         _names_in(value, leaves) | {f"out{i}"}))
        outputs[f"out{i}"] = (dims, out_dtype)
    return Program("elementwise", 0, dtype, inputs, sizes, outputs, body, scalars)


def _ranged(rng: random.Random) -> Program:
    """A 1-D grid from an int `lo` to an int `hi` (`hl.tile(lo, hi)`)."""
    prog = _elementwise(rng, rank=1)
    n = rng.choice((37, 65, 100))
    lo = rng.randrange(0, n // 2)
    hi = rng.randrange(lo + 1, n + 1)
    body = [dataclasses.replace(s, text=s.text.replace("tile_d0", "tile")) for s in prog.body]
    return dataclasses.replace(prog, kind="ranged", sizes={"d0": n}, body=body, scalars={**prog.scalars, "lo": lo, "hi": hi})


def _rows(rng: random.Random) -> Program:
    """Row reductions of an elementwise expression over a full row, a scan, or a
    keepdim reduction broadcast back (softmax-like)."""
    dtype = _dtype(rng)
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES)}
    body = _loads(inputs, "tile_m, :", dtype, False)
    leaves = _temps(rng, body, [s.defines for s in body], rng.randint(1, 2), False)
    outputs: dict[str, tuple[list[str], str]] = {}
    cast = "" if dtype == "float32" else ".to(x0.dtype)"
    for i in range(rng.choice((1, 2))):
        red = rng.choice((*REDUCTIONS, "cumsum", "softmax"))
        value = rng.choice(leaves)
        if red == "cumsum":
            body.append(Stmt(f"out{i}[tile_m, :] = torch.cumsum({value}, dim=1){cast}", None, frozenset({value, f"out{i}"})))
            outputs[f"out{i}"] = (["m", "n"], "x0.dtype")
        elif red == "softmax":
            text = f"torch.exp({value} - torch.amax({value}, dim=1, keepdim=True))"
            body.append(Stmt(f"e{i} = {text}", f"e{i}", frozenset({value})))
            body.append(Stmt(f"out{i}[tile_m, :] = (e{i} / torch.sum(e{i}, dim=1, keepdim=True)){cast}", None,
                             frozenset({f"e{i}", f"out{i}"})))
            outputs[f"out{i}"] = (["m", "n"], "x0.dtype")
        elif red == "argmax":
            body.append(Stmt(f"out{i}[tile_m] = torch.argmax({value}, dim=1)", None, frozenset({value, f"out{i}"})))
            outputs[f"out{i}"] = (["m"], "torch.int64")
        else:
            call = f"torch.var({value}, dim=1, correction=0)" if red == "var" else f"torch.{red}({value}, dim=1)"
            body.append(Stmt(f"out{i}[tile_m] = {call}{cast}", None, frozenset({value, f"out{i}"})))
            outputs[f"out{i}"] = (["m"], "x0.dtype")
    return Program("rows", 0, dtype, inputs, sizes, outputs, body)


def _accumulators(rng: random.Random) -> Program:
    """An inner tile loop carrying several accumulators that share intermediates."""
    dtype = _dtype(rng)
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES[3:])}
    loads = _loads(inputs, "tile_m, tile_n", dtype, False)
    inner = [dataclasses.replace(s, indent=1) for s in loads]
    leaves = _temps(rng, inner, [s.defines for s in loads], rng.randint(1, 2), False)
    inner = [dataclasses.replace(s, indent=1) for s in inner]
    count = rng.choice((1, 2, 3))
    body = [Stmt(f"acc{i} = hl.zeros([tile_m], dtype=torch.float32)", f"acc{i}") for i in range(count)]
    body.append(Stmt("for tile_n in hl.tile(n):", None, frozenset()))
    body += inner
    for i in range(count):
        value = _expr(rng, leaves, 1)
        body.append(Stmt(f"acc{i} = acc{i} + torch.sum({value}, dim=1)", f"acc{i}", _names_in(value, leaves) | {f"acc{i}"},
                         indent=1))
    outputs = {}
    for i in range(count):
        cast = "" if dtype == "float32" else ".to(x0.dtype)"
        body.append(Stmt(f"out{i}[tile_m] = acc{i}{cast}", None, frozenset({f"acc{i}", f"out{i}"})))
        outputs[f"out{i}"] = (["m"], "x0.dtype")
    return Program("accumulators", 0, dtype, inputs, sizes, outputs, body)


def _matmul(rng: random.Random) -> Program:
    """hl.dot over K tiles into an f32 accumulator, then an elementwise epilogue."""
    dtype = rng.choice(("float32", "bfloat16"))
    inputs = {"x0": ["m", "k"], "x1": ["k", "n"]}
    sizes = {"m": rng.choice(SIZES[2:]), "k": rng.choice(SIZES[3:]), "n": rng.choice(SIZES[2:])}
    epilogue = rng.choice(("acc", "torch.relu(acc)", "acc * 0.5 + 1.0", "torch.sigmoid(acc)"))
    cast = "" if dtype == "float32" else ".to(x0.dtype)"
    body = [Stmt("acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)", "acc"),
            Stmt("for tile_k in hl.tile(k):", None),
            Stmt("acc = hl.dot(x0[tile_m, tile_k], x1[tile_k, tile_n], acc=acc)", "acc", frozenset({"acc", "x0", "x1"}), 1),
            Stmt(f"out0[tile_m, tile_n] = ({epilogue}){cast}", None, frozenset({"acc", "out0"}))]
    return Program("matmul", 0, dtype, inputs, sizes, {"out0": (["m", "n"], "x0.dtype")}, body)


def _gather_atomic(rng: random.Random) -> Program:
    """Rows gathered through an int index tensor, and sums added atomically into bins."""
    dtype = _dtype(rng)
    sizes = {"m": rng.choice(SIZES[2:]), "n": rng.choice(SIZES), "r": rng.choice(SIZES[1:]), "b": rng.choice((1, 3, 7))}
    inputs = {"x0": ["r", "n"]}
    widen = "" if dtype == "float32" else ".to(torch.float32)"
    body = [Stmt("rows = x0[idx[tile_m], :]" + widen, "rows", frozenset({"x0", "idx"})),
            Stmt(f"t0 = {_expr(rng, ['rows'], 1)}", "t0", frozenset({"rows"}))]
    cast = "" if dtype == "float32" else ".to(x0.dtype)"
    body.append(Stmt(f"out0[tile_m, :] = t0{cast}", None, frozenset({"t0", "out0"})))
    body.append(Stmt("hl.atomic_add(out1, [bins[tile_m]], torch.sum(t0, dim=1))", None, frozenset({"t0", "out1", "bins"})))
    outputs = {"out0": (["m", "n"], "x0.dtype"), "out1": (["b"], "torch.float32")}
    return Program("gather_atomic", 0, dtype, inputs, sizes, outputs, body, index_inputs={"idx": ("m", "r"), "bins": ("m", "b")})


KINDS: dict[str, Callable[[random.Random], Program]] = {
    "elementwise": _elementwise, "ranged": _ranged, "rows": _rows, "accumulators": _accumulators,
    "matmul": _matmul, "gather_atomic": _gather_atomic,
}
KINDS_ORDER = ("elementwise", "elementwise", "ranged", "rows", "rows", "accumulators", "accumulators", "matmul",
               "gather_atomic")


# ---------------------------------------------------------------- rendering


def _render(p: Program) -> str:
    scalars = "".join(f", {name}: {type(value).__name__}" for name, value in p.scalars.items())
    params = ", ".join([*(f"{n}: torch.Tensor" for n in p.inputs), *(f"{n}: torch.Tensor" for n in p.index_inputs)])
    first = next(iter(p.inputs))
    lines = ["import torch", "import helion", "import helion.language as hl", "", "",
             "def helper(v):", "    return v * torch.sigmoid(v)", "", "",
             "@helion.kernel(static_shapes=True, autotune_effort=\"none\")",
             f"def {p.name}({params}{scalars}):"]
    dims = {d for ds in p.inputs.values() for d in ds} | {d for ds, _ in p.outputs.values() for d in ds}
    for d in sorted(dims):
        lines.append(f"    {d} = {_dim_expr(p, d)}")
    for name, (ds, dt) in p.outputs.items():
        lines.append(f"    {name} = torch.zeros([{', '.join(ds)}], dtype={dt}, device={first}.device)")
    lines += [f"    {header}" for header in _loop_headers(p)]
    depth = len(_loop_headers(p))
    for stmt in p.body:
        lines.append("    " * (depth + 1 + stmt.indent) + stmt.text)
    lines.append(f"    return {', '.join(p.outputs)}{',' if len(p.outputs) == 1 else ''}")
    lines += ["", "", *_main_lines(p)]
    return "\n".join(lines) + "\n"


def _dim_expr(p: Program, dim: str) -> str:
    for name, ds in p.inputs.items():
        if dim in ds:
            return f"{name}.size({ds.index(dim)})"
    for name, (d, _) in p.index_inputs.items():
        if d == dim:
            return f"{name}.size(0)"
    return str(p.sizes[dim])  # a dim only outputs have (atomic bins)


def _loop_headers(p: Program) -> list[str]:
    if p.kind == "ranged":
        return ["for tile in hl.tile(lo, hi):"]
    if p.kind == "elementwise":
        ds = next(iter(p.inputs.values()))
        return [f"for {', '.join(f'tile_{d}' for d in ds)} in hl.tile([{', '.join(ds)}]):"]
    if p.kind == "matmul":
        return ["for tile_m, tile_n in hl.tile([m, n]):"]
    return ["for tile_m in hl.tile(m):"]


def _main_lines(p: Program) -> list[str]:
    """ARGS() makes the inputs (as the fuzzer does); CONFIG is the config it ran."""
    return ["def ARGS():", "    g = torch.Generator().manual_seed(0)", f"    return ({', '.join(_arg_exprs(p))},)", "",
            "", f"CONFIG = {p.config!r}", "", "",
            "if __name__ == \"__main__\":",
            "    import sys",
            "    from helion_fx_mlir.programs import check_module",
            "    sys.exit(check_module(sys.modules[__name__]))"]


def _arg_exprs(p: Program) -> list[str]:
    exprs = []
    for ds in p.inputs.values():
        shape = [p.sizes[d] for d in ds]
        if p.dtype == "int32":
            exprs.append(f"torch.randint(-50, 50, {shape}, generator=g, dtype=torch.int32)")
        else:
            exprs.append(f"torch.randn({shape}, generator=g).to(torch.{p.dtype})")
    for dim, indexed in p.index_inputs.values():
        exprs.append(f"torch.randint(0, {p.sizes[indexed]}, ({p.sizes[dim]},), generator=g)")
    return exprs + [repr(v) for v in p.scalars.values()]


# ---------------------------------------------------------------- inputs, files, examples


PROGRAM_DIR = Path(os.environ.get("HELION_FX_MLIR_PROGRAMS", Path(tempfile.gettempdir()) / "helion-fx-mlir-programs"))


def write(p: Program, directory: Path = PROGRAM_DIR) -> Path:
    """The program's source in a file of its own (Helion reads kernels with inspect)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = p.render()
    path = directory / f"{p.name}_{hashlib.sha256(text.encode()).hexdigest()[:10]}.py"
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def load_module(path: Path) -> Any:
    name = f"helion_fx_mlir_program_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Helion looks kernels' globals up through their module
    spec.loader.exec_module(module)
    return module


def as_example(p: Program) -> Example:
    """The program as a sample kernel; the fuzzer's oracle is reference mode, not `reference`."""
    module = load_module(write(p))
    return Example(p.name, getattr(module, p.name), lambda _dtype: module.ARGS(), lambda *a: None,
                   (getattr(torch, p.dtype),))


def example_for(name: str) -> Example:
    """`program:SEED:INDEX` as an Example (cached per process)."""
    if name not in _EXAMPLES:
        _, seed, index = name.split(":")
        _EXAMPLES[name] = as_example(generate(int(seed), int(index)))
    return _EXAMPLES[name]


_EXAMPLES: dict[str, Example] = {}


def check_module(module: Any) -> int:
    """A repro file's main: its kernel on the fast pipeline and bounds-checked, against
    Helion's reference mode; prints each result, exits 1 on a difference or an error."""
    from . import fuzz

    kernel = next(v for k, v in vars(module).items() if k.startswith("prog_"))
    fuzz.register_out_dtype_matmuls()
    torch.set_num_threads(1)
    outcome = fuzz.check_kernel(kernel, module.ARGS(), module.CONFIG)
    print(f"{outcome.status} {outcome.detail}")
    return 0 if outcome.status in ("ok", "skipped") else 1


# ---------------------------------------------------------------- reduction


def signature(status: str, detail: str) -> str:
    """What must stay the same while reducing: the outcome and, for errors, the exception's
    type and first words (a reduction into a NameError is another bug)."""
    if status != "error":
        return status
    return status + ":" + re.sub(r"[\d.]+", "#", detail.split(":", 2)[-1])[:60]


def run_file(path: Path, timeout: float) -> tuple[str, str]:
    """(status, detail) of a repro file run in a child: its printed outcome, or a crash."""
    import subprocess

    try:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if done.returncode < 0:
        return "crash", f"signal {-done.returncode}"
    last = (done.stdout.strip().splitlines() or [""])[-1]
    status, _, detail = last.partition(" ")
    return (status, detail) if status in ("ok", "skipped", "mismatch", "error", "unsupported") else ("error", last)


def reduce_program(p: Program, still_fails: Callable[[Program], bool]) -> Program:
    """Delta debugging: drop body statements one at a time while the failure stays (from
    the end, repeated until nothing can go), then shrink each size to the smallest that
    keeps it."""
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(p.body))):
            candidate = dataclasses.replace(p, body=p.body[:i] + p.body[i + 1:])
            if still_fails(candidate):
                p, changed = candidate, True
    for dim, size in sorted(p.sizes.items()):
        for smaller in (s for s in SIZES if s < size):
            candidate = dataclasses.replace(p, sizes={**p.sizes, dim: smaller})
            if still_fails(candidate):
                p = candidate
                break
    return p


def reduced_repro(outcome: Any, timeout: float) -> str:
    """A failing program reduced to a minimal repro: its path and source, runnable alone."""
    _, seed, index = outcome.case.example.split(":")
    program = dataclasses.replace(generate(int(seed), int(index)), config=outcome.case.config)
    wanted = signature(outcome.status, outcome.detail)
    directory = PROGRAM_DIR / "reduced"

    def still_fails(candidate: Program) -> bool:
        return signature(*run_file(write(candidate, directory), timeout)) == wanted

    if not still_fails(program):
        return f"# {outcome.case.example}: did not fail again alone ({outcome.status})"
    smallest = reduce_program(program, still_fails)
    path = write(smallest, directory)
    return f"# reduced repro of {outcome.case.example} ({outcome.status}): python {path}\n{smallest.render()}"
