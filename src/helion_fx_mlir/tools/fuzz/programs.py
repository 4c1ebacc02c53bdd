"""Random Helion kernels as source files: the program generator of `make fuzz-programs`.

A program is a grammar instance of the language as users write it: a grid of 1-3-D tiles
(over sizes, or from an int `begin` to an int `end`), loads of tiles, rows and gathered
rows, elementwise ATen ops over them with shared intermediates, `torch.where` masks, `if` on
a scalar argument, `hl.static_range`, a helper function, reductions (sum, amax, amin,
argmax, argmin, mean, var, `hl.reduce`; over rows and over 3-D slabs), scans (`cumsum`, `hl.cumsum`,
`hl.cumprod`, `hl.associative_scan`), inner tile loops carrying several
`hl.zeros` accumulators (bounded by sizes, ints or the outer tile's `begin`/`end`, with
registered block sizes), `hl.grid` rows, loads and stores of slices and ints, jagged
segments (data-dependent `hl.tile(start, end)`, gathers at `tile.index + start`,
`hl.jagged_tile`), grouped (MoE) matmuls over segments, flash attention's online softmax
(causal or not), two loops where the second reads the first's reduction, outer products of
1-D tiles and transposed stores, closures passed as arguments, `hl.dot`, atomics (add, max, min) and
several outputs, in
f32, bf16, f16 or int32, on shapes that do not divide the block sizes. Bounds that depend
on the block size (`hl.tile(tile_m.begin, n)`) are left out: reference mode runs every
loop as one tile, so it cannot judge them. Each program is a `Program`: a few fixed forms
(`KINDS`) whose body is a list of `Stmt`s, so the reducer can drop statements and shrink
sizes (`reduce_program`).

Programs are deterministic per (seed, index) and are written to real files (Helion reads
kernel source with `inspect`); `Example`s made from them run through `differential.py`'s workers,
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

from helion_fx_mlir.examples.registry import Example

PREFIX = "program:"
FLOAT_DTYPES = ("float32", "bfloat16", "float16")
SIZES = (1, 3, 5, 7, 13, 17, 19, 31, 33, 37, 65, 67, 100, 129)
FLOOR = "torch.floor({} * 4.0)"
UNARY = (
    "torch.sigmoid({})",
    "torch.tanh({})",
    "torch.relu({})",
    "torch.abs({})",
    "(-{})",
    "({} * 0.5)",
    "torch.sin({})",
    "helper({})",
    "torch.exp(-torch.abs({}))",
    "torch.sqrt(torch.abs({}))",
    "torch.log1p(torch.abs({}))",
    "torch.clamp({}, -1.0, 1.0)",
    "torch.rsqrt({0} * {0} + 1.0)",
    "torch.erf({})",
    FLOOR,
)
BINARY = (
    "({} + {})",
    "({} - {})",
    "({} * {})",
    "torch.maximum({}, {})",
    "torch.minimum({}, {})",
    "torch.where({} > 0, {}, {})",
    "({} / (torch.abs({}) + 1.0))",
)
REDUCTIONS = ("sum", "amax", "amin", "mean", "var", "argmax", "argmin")
SCANS = {
    "cumsum": "torch.cumsum({}, dim=1)",
    "hl_cumsum": "hl.cumsum({}, dim=1)",
    "cumprod": "hl.cumprod(torch.sigmoid({}) + 0.5, dim=1)",
    "scan_max": "hl.associative_scan(combine_max, {}, dim=1)",
}


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
    index_inputs: dict[str, tuple[str, str]] = field(
        default_factory=dict
    )  # name -> (dim, dim it indexes)
    config: dict[str, Any] | None = None  # the config a repro runs (None: drawn as the fuzzer does)
    threads: int = 1  # torch threads a repro runs on (its grids split and group by them)
    headers: tuple[str, ...] = ()  # the outer loop headers, when the kind's default does not fit
    prelude: tuple[str, ...] = ()  # host lines before the loops (registered block sizes)
    tensor_args: dict[str, str] = field(
        default_factory=dict
    )  # name -> ARGS expression, {dim} -> its size
    callables: dict[str, str] = field(
        default_factory=dict
    )  # name -> the lambda ARGS passes (closures)
    dim_exprs: dict[str, str] = field(
        default_factory=dict
    )  # dim -> its host expression, where not a size
    # statement -> its spelling in an oracle kernel reference mode can run (ORACLE in the
    # module): `hl.jagged_tile` has no reference mode, its masked `hl.tile` twin has
    twin: dict[str, str] = field(default_factory=dict)

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
    return dataclasses.replace(
        program, seed=int(hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()[:8], 16)
    )


def _dtype(rng: random.Random, ints: bool = False) -> str:
    choices = FLOAT_DTYPES + (("int32",) if ints else ())
    return rng.choices(choices, (5, 2, 2, 2)[: len(choices)])[0]


def _expr(rng: random.Random, leaves: Sequence[str], depth: int, ints: bool = False) -> str:
    """An elementwise expression over `leaves` (f32 values, or int32 ones when `ints`),
    `leaves[0]` a loaded value. floor takes that value alone: it turns an ulp of its
    operand into 1.0, and only a load is exact on both sides (a transcendental's result
    is within its ulp budget, a sum's depends on its order)."""
    if depth == 0 or rng.random() < 0.3:
        leaf = rng.choice(leaves)
        return leaf if ints or rng.random() < 0.8 else f"({leaf} * {rng.choice((0.5, 2.0, -1.5))})"
    if ints:
        op = rng.choice(
            (
                "({} + {})",
                "({} - {})",
                "({} * {})",
                "torch.maximum({}, {})",
                "({} // 3 + {})",
                "({} % 5 - {})",
                "(({} & 7) + {})",
                "torch.where({} > 0, {}, {})",
            )
        )
        return op.format(*(_expr(rng, leaves, depth - 1, ints) for _ in range(op.count("{}"))))
    if rng.random() < 0.4:
        op = rng.choice(UNARY)
        return op.format(leaves[0] if op == FLOOR else _expr(rng, leaves, depth - 1))
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


def _defined(stmts: list[Stmt]) -> list[str]:
    """The variables the statements define, in order."""
    return [s.defines for s in stmts if s.defines is not None]


def _temps(
    rng: random.Random, body: list[Stmt], leaves: list[str], count: int, ints: bool
) -> list[str]:
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
    leaves = _temps(rng, body, _defined(body), rng.randint(1, 3), ints)
    scalars: dict[str, Any] = {}
    if not ints and rng.random() < 0.3:
        scalars["flag"] = rng.choice((-1.0, 1.0))
        body.append(Stmt("if flag > 0:", None, frozenset({"flag"})))
        body.append(Stmt(f"t0 = {_expr(rng, leaves, 1)}", "t0", frozenset(leaves), indent=1))
    if not ints and rng.random() < 0.3:
        body.append(Stmt("for step in hl.static_range(2):", None, frozenset()))
        body.append(
            Stmt(f"t0 = t0 * 0.5 + {rng.choice(leaves)}", "t0", frozenset(leaves), indent=1)
        )
    outputs = {}
    out_dtype = "torch.int32" if ints else "x0.dtype"
    for i in range(rng.choice((1, 2, 3))):
        value = _expr(rng, leaves, 1, ints)
        cast = "" if ints or dtype == "float32" else ".to(x0.dtype)"
        body.append(
            Stmt(
                f"out{i}[{', '.join(f'tile_{d}' for d in dims)}] = ({value}){cast}",
                None,
                _names_in(value, leaves) | {f"out{i}"},
            )
        )
        outputs[f"out{i}"] = (dims, out_dtype)
    return Program("elementwise", 0, dtype, inputs, sizes, outputs, body, scalars)


def _ranged(rng: random.Random) -> Program:
    """A 1-D grid from an int `lo` to an int `hi` (`hl.tile(lo, hi)`)."""
    prog = _elementwise(rng, rank=1)
    n = rng.choice((37, 65, 100))
    lo = rng.randrange(0, n // 2)
    hi = rng.randrange(lo + 1, n + 1)
    body = [dataclasses.replace(s, text=s.text.replace("tile_d0", "tile")) for s in prog.body]
    return dataclasses.replace(
        prog,
        kind="ranged",
        sizes={"d0": n},
        body=body,
        scalars={**prog.scalars, "lo": lo, "hi": hi},
    )


def _rows(rng: random.Random) -> Program:
    """Row reductions of an elementwise expression over a full row, a scan, or a
    keepdim reduction broadcast back (softmax-like)."""
    dtype = _dtype(rng)
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES)}
    body = _loads(inputs, "tile_m, :", dtype, False)
    leaves = _temps(rng, body, _defined(body), rng.randint(1, 2), False)
    outputs: dict[str, tuple[list[str], str]] = {}
    cast = "" if dtype == "float32" else ".to(x0.dtype)"
    for i in range(rng.choice((1, 2))):
        red = rng.choice((*REDUCTIONS, *SCANS, "softmax", "reduce"))
        value = rng.choice(leaves)
        if red in SCANS:
            scan = SCANS[red].format(value)
            body.append(
                Stmt(f"out{i}[tile_m, :] = {scan}{cast}", None, frozenset({value, f"out{i}"}))
            )
            outputs[f"out{i}"] = (["m", "n"], "x0.dtype")
        elif red == "reduce":
            body.append(
                Stmt(
                    f"out{i}[tile_m] = hl.reduce(combine_max, {value}, dim=1, "
                    f'other=float("-inf")){cast}',
                    None,
                    frozenset({value, f"out{i}"}),
                )
            )
            outputs[f"out{i}"] = (["m"], "x0.dtype")
        elif red == "softmax":
            text = f"torch.exp({value} - torch.amax({value}, dim=1, keepdim=True))"
            body.append(Stmt(f"e{i} = {text}", f"e{i}", frozenset({value})))
            body.append(
                Stmt(
                    f"out{i}[tile_m, :] = (e{i} / torch.sum(e{i}, dim=1, keepdim=True)){cast}",
                    None,
                    frozenset({f"e{i}", f"out{i}"}),
                )
            )
            outputs[f"out{i}"] = (["m", "n"], "x0.dtype")
        elif red in ("argmax", "argmin"):
            body.append(
                Stmt(
                    f"out{i}[tile_m] = torch.{red}({value}, dim=1)",
                    None,
                    frozenset({value, f"out{i}"}),
                )
            )
            outputs[f"out{i}"] = (["m"], "torch.int64")
        else:
            call = (
                f"torch.var({value}, dim=1, correction=0)"
                if red == "var"
                else f"torch.{red}({value}, dim=1)"
            )
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
    leaves = _temps(rng, inner, _defined(loads), rng.randint(1, 2), False)
    inner = [dataclasses.replace(s, indent=1) for s in inner]
    count = rng.choice((1, 2, 3))
    body = [
        Stmt(f"acc{i} = hl.zeros([tile_m], dtype=torch.float32)", f"acc{i}") for i in range(count)
    ]
    body.append(Stmt("for tile_n in hl.tile(n):", None, frozenset()))
    body += inner
    for i in range(count):
        value = _expr(rng, leaves, 1)
        body.append(
            Stmt(
                f"acc{i} = acc{i} + torch.sum({value}, dim=1)",
                f"acc{i}",
                _names_in(value, leaves) | {f"acc{i}"},
                indent=1,
            )
        )
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
    body = [
        Stmt("acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)", "acc"),
        Stmt("for tile_k in hl.tile(k):", None),
        Stmt(
            "acc = hl.dot(x0[tile_m, tile_k], x1[tile_k, tile_n], acc=acc)",
            "acc",
            frozenset({"acc", "x0", "x1"}),
            1,
        ),
        Stmt(f"out0[tile_m, tile_n] = ({epilogue}){cast}", None, frozenset({"acc", "out0"})),
    ]
    return Program("matmul", 0, dtype, inputs, sizes, {"out0": (["m", "n"], "x0.dtype")}, body)


def _gather_atomic(rng: random.Random) -> Program:
    """Rows gathered through an int index tensor, and sums added atomically into bins."""
    dtype = _dtype(rng)
    sizes = {
        "m": rng.choice(SIZES[2:]),
        "n": rng.choice(SIZES),
        "r": rng.choice(SIZES[1:]),
        "b": rng.choice((1, 3, 7)),
    }
    inputs = {"x0": ["r", "n"]}
    widen = "" if dtype == "float32" else ".to(torch.float32)"
    body = [
        Stmt("rows = x0[idx[tile_m], :]" + widen, "rows", frozenset({"x0", "idx"})),
        Stmt(f"t0 = {_expr(rng, ['rows'], 1)}", "t0", frozenset({"rows"})),
    ]
    cast = "" if dtype == "float32" else ".to(x0.dtype)"
    body.append(Stmt(f"out0[tile_m, :] = t0{cast}", None, frozenset({"t0", "out0"})))
    body.append(
        Stmt(
            "hl.atomic_add(out1, [bins[tile_m]], torch.sum(t0, dim=1))",
            None,
            frozenset({"t0", "out1", "bins"}),
        )
    )
    outputs = {"out0": (["m", "n"], "x0.dtype"), "out1": (["b"], "torch.float32")}
    tensor_args = {}
    if (
        rng.random() < 0.5
    ):  # at distinct places: reference mode's max and min keep the last of equal indices
        atomic = rng.choice(("atomic_max", "atomic_min"))
        body.append(
            Stmt(
                f"hl.{atomic}(out2, [perm[tile_m]], torch.amax(t0, dim=1))",
                None,
                frozenset({"t0", "out2", "perm"}),
            )
        )
        outputs["out2"] = (["m"], "torch.float32")
        tensor_args["perm"] = "torch.randperm({m}, generator=g)"
    return Program(
        "gather_atomic",
        0,
        dtype,
        inputs,
        sizes,
        outputs,
        body,
        index_inputs={"idx": ("m", "r"), "bins": ("m", "b")},
        tensor_args=tensor_args,
    )


def _widen(dtype: str) -> str:
    return "" if dtype == "float32" else ".to(torch.float32)"


def _narrow(dtype: str) -> str:
    return "" if dtype == "float32" else ".to(x0.dtype)"


def _nested(rng: random.Random) -> Program:
    """An inner tile loop over the outer tile's own rows (`hl.tile(tile_m.begin,
    tile_m.end)`), or over columns bounded by ints, with registered block sizes."""
    dtype = _dtype(rng)
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES[3:])}
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    prelude = ("bm = hl.register_block_size(m)",) if rng.random() < 0.5 else ()
    outer = "for tile_m in hl.tile(m, block_size=bm):" if prelude else "for tile_m in hl.tile(m):"
    if rng.random() < 0.5:
        return _sub_tiles(rng, dtype, sizes, inputs, prelude, outer)
    scalars: dict[str, Any] = {}
    if rng.random() < 0.5:
        lo = rng.randrange(0, sizes["n"])
        scalars = {"lo": lo, "hi": rng.randrange(lo, sizes["n"] + 1)}
        bounds = "lo, hi"
    else:
        bounds = "n"
    inner_block = ""
    if rng.random() < 0.5:
        prelude = (*prelude, "bn = hl.register_block_size(n)")
        inner_block = ", block_size=bn"
    loads = [
        dataclasses.replace(s, indent=1) for s in _loads(inputs, "tile_m, tile_n", dtype, False)
    ]
    inner = list(loads)
    leaves = _temps(rng, inner, _defined(loads), rng.randint(1, 2), False)
    inner = [dataclasses.replace(s, indent=1) for s in inner]
    count = rng.choice((1, 2))
    body = [
        Stmt(f"acc{i} = hl.zeros([tile_m], dtype=torch.float32)", f"acc{i}") for i in range(count)
    ]
    body.append(Stmt(f"for tile_n in hl.tile({bounds}{inner_block}):", None, frozenset(scalars)))
    body += inner
    outputs = {}
    for i in range(count):
        value = _expr(rng, leaves, 1)
        reduce = rng.choice(("sum", "amax")) if i else "sum"
        combine = (
            f"acc{i} + torch.sum({value}, dim=1)"
            if reduce == "sum"
            else f"torch.maximum(acc{i}, torch.amax({value}, dim=1))"
        )
        body.append(
            Stmt(f"acc{i} = {combine}", f"acc{i}", _names_in(value, leaves) | {f"acc{i}"}, indent=1)
        )
    for i in range(count):
        body.append(
            Stmt(
                f"out{i}[tile_m] = acc{i}{_narrow(dtype)}", None, frozenset({f"acc{i}", f"out{i}"})
            )
        )
        outputs[f"out{i}"] = (["m"], "x0.dtype")
    return Program(
        "nested", 0, dtype, inputs, sizes, outputs, body, scalars, headers=(outer,), prelude=prelude
    )


def _sub_tiles(
    rng: random.Random,
    dtype: str,
    sizes: dict[str, int],
    inputs: dict[str, list[str]],
    prelude: tuple[str, ...],
    outer: str,
) -> Program:
    """Rows of the outer tile in sub-tiles: `hl.tile(tile_m.begin, tile_m.end)`."""
    loads = [dataclasses.replace(s, indent=1) for s in _loads(inputs, "tile_i, :", dtype, False)]
    inner = list(loads)
    leaves = _temps(rng, inner, _defined(loads), rng.randint(1, 2), False)
    inner = [dataclasses.replace(s, indent=1) for s in inner]
    body = [Stmt("for tile_i in hl.tile(tile_m.begin, tile_m.end):", None), *inner]
    value = _expr(rng, leaves, 1)
    body.append(
        Stmt(
            f"out0[tile_i, :] = ({value}){_narrow(dtype)}",
            None,
            _names_in(value, leaves) | {"out0"},
            1,
        )
    )
    body.append(
        Stmt(
            f"out1[tile_i] = torch.sum({rng.choice(leaves)}, dim=1){_narrow(dtype)}",
            None,
            frozenset(leaves) | {"out1"},
            1,
        )
    )
    outputs = {"out0": (["m", "n"], "x0.dtype"), "out1": (["m"], "x0.dtype")}
    return Program(
        "nested", 0, dtype, inputs, sizes, outputs, body, headers=(outer,), prelude=prelude
    )


def _grid_rows(rng: random.Random) -> Program:
    """`hl.grid` over rows (from 0, or from an int begin) with an int index in loads and
    stores: column tiles of each row, or the whole row reduced to a 0-d store."""
    dtype = _dtype(rng, ints=True)
    ints = dtype == "int32"
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES)}
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    scalars: dict[str, Any] = {}
    header = "for i in hl.grid(m):"
    if rng.random() < 0.4:
        scalars["lo"] = rng.randrange(0, sizes["m"])
        header = "for i in hl.grid(lo, m):"
    loads = [dataclasses.replace(s, indent=1) for s in _loads(inputs, "i, tile_n", dtype, ints)]
    inner = list(loads)
    leaves = _temps(rng, inner, _defined(loads), rng.randint(1, 2), ints)
    inner = [dataclasses.replace(s, indent=1) for s in inner]
    value = _expr(rng, leaves, 1, ints)
    cast = "" if ints else _narrow(dtype)
    out_dtype = "torch.int32" if ints else "x0.dtype"
    body = [
        Stmt("for tile_n in hl.tile(n):", None),
        *inner,
        Stmt(f"out0[i, tile_n] = ({value}){cast}", None, _names_in(value, leaves) | {"out0"}, 1),
    ]
    outputs = {"out0": (["m", "n"], out_dtype)}
    if not ints and rng.random() < 0.6:
        body.append(Stmt(f"row = x0[i, :]{_widen(dtype)}", "row", frozenset({"x0"})))
        red = rng.choice(("sum", "amax", "mean"))
        body.append(
            Stmt(
                f"out1[i] = torch.{red}({rng.choice(UNARY).format('row')}){cast}",
                None,
                frozenset({"row", "out1"}),
            )
        )
        outputs["out1"] = (["m"], out_dtype)
    return Program("grid_rows", 0, dtype, inputs, sizes, outputs, body, scalars, headers=(header,))


def _slices(rng: random.Random) -> Program:
    """Loads and stores of a static slice of columns and of one int column, next to tiles."""
    dtype = _dtype(rng)
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES[3:])}
    n = sizes["n"]
    inputs = {f"x{i}": ["m", "n"] for i in range(rng.choice((1, 2)))}
    col = rng.choice((0, 1, n - 1, -1))
    lo = rng.randrange(0, n - 1)
    hi = rng.randrange(lo + 1, n + 1)
    widen = _widen(dtype)
    body = [
        Stmt(f"c = x0[tile_m, {col}]{widen}", "c", frozenset({"x0"})),
        Stmt(f"s = x{len(inputs) - 1}[tile_m, {lo}:{hi}]{widen}", "s", frozenset(inputs)),
    ]
    value = _expr(rng, ["s", "c[:, None]"], 2)
    body.append(Stmt(f"t0 = {value}", "t0", frozenset({"s", "c"})))
    body.append(
        Stmt(f"out0[tile_m, {lo}:{hi}] = t0{_narrow(dtype)}", None, frozenset({"t0", "out0"}))
    )
    body.append(
        Stmt(
            f"out0[tile_m, {col}] = ({_expr(rng, ['c'], 1)}){_narrow(dtype)}",
            None,
            frozenset({"c", "out0"}),
        )
    )
    body.append(
        Stmt(
            f"out1[tile_m] = torch.{rng.choice(('sum', 'amax', 'mean'))}(t0, dim=1)"
            f"{_narrow(dtype)}",
            None,
            frozenset({"t0", "out1"}),
        )
    )
    outputs = {"out0": (["m", "n"], "x0.dtype"), "out1": (["m"], "x0.dtype")}
    return Program(
        "slices", 0, dtype, inputs, sizes, outputs, body, headers=("for tile_m in hl.tile(m):",)
    )


OFFSETS = (
    "torch.cat([torch.zeros(1, dtype=torch.int64), "
    "torch.sort(torch.randint(0, {t} + 1, ({b} - 1,), generator=g)).values, "
    "torch.full((1,), {t})])"
)
LENGTHS = "torch.randint(0, {k} + 1, ({b},), generator=g)"


def _jagged(rng: random.Random) -> Program:
    """Segments of a packed tensor between data-dependent offsets: `hl.tile(start, end)`
    or a gather at `tile.index + start` per segment, or `hl.jagged_tile` over lengths."""
    if rng.random() < 0.3:
        return _jagged_tile(rng)
    dtype = _dtype(rng)
    sizes = {"t": rng.choice(SIZES[3:]), "d": rng.choice(SIZES), "b": rng.choice((1, 2, 3, 7))}
    widen = _widen(dtype)
    if rng.random() < 0.5:
        loop = "for tile_k in hl.tile(start, end):"
        load = f"v = x0[tile_k, :]{widen}"
    else:
        loop = "for tile_k in hl.tile(end - start):"
        load = f"v = x0[tile_k.index + start, :]{widen}"
    expr = _expr(rng, ["v"], 2)
    body = [
        Stmt("start = offsets[seg]", "start", frozenset({"offsets"})),
        Stmt("end = offsets[seg + 1]", "end", frozenset({"offsets"})),
        Stmt("acc0 = hl.zeros([d], dtype=torch.float32)", "acc0"),
        Stmt(loop, None, frozenset({"start", "end"})),
        Stmt(load, "v", frozenset({"x0", "start"}), 1),
        Stmt(f"acc0 = acc0 + torch.sum({expr}, dim=0)", "acc0", frozenset({"v", "acc0"}), 1),
        Stmt(f"out0[seg, :] = acc0{_narrow(dtype)}", None, frozenset({"acc0", "out0"})),
    ]
    return Program(
        "jagged",
        0,
        dtype,
        {"x0": ["t", "d"]},
        sizes,
        {"out0": (["b", "d"], "x0.dtype")},
        body,
        headers=("for seg in hl.grid(b):",),
        tensor_args={"offsets": OFFSETS},
        dim_exprs={"b": "offsets.size(0) - 1"},
    )


def _jagged_tile(rng: random.Random) -> Program:
    """`hl.jagged_tile(lengths)`: each row of a padded [b, k] tensor up to its length."""
    dtype = _dtype(rng)
    sizes = {"b": rng.choice(SIZES), "k": rng.choice(SIZES[3:])}
    expr = _expr(rng, ["v"], 2)
    loop, load, update = (
        "for tile_k in hl.jagged_tile(lengths):",
        f"v = x0[tile_b, tile_k]{_widen(dtype)}",
        f"acc0 = acc0 + torch.sum({expr}, dim=1)",
    )
    mask = "tile_k.index[None, :] < lengths[:, None]"
    twin = {
        loop: "for tile_k in hl.tile(k):",
        load: f"v = hl.load(x0, [tile_b, tile_k], extra_mask={mask}){_widen(dtype)}",
        update: f"acc0 = acc0 + torch.sum(torch.where({mask}, {expr}, 0.0), dim=1)",
    }
    body = [
        Stmt("lengths = lens[tile_b]", "lengths", frozenset({"lens"})),
        Stmt("acc0 = hl.zeros([tile_b], dtype=torch.float32)", "acc0"),
        Stmt(loop, None, frozenset({"lengths"})),
        Stmt(load, "v", frozenset({"x0"}), 1),
        Stmt(update, "acc0", frozenset({"v", "acc0"}), 1),
        Stmt(f"out0[tile_b] = acc0{_narrow(dtype)}", None, frozenset({"acc0", "out0"})),
    ]
    return Program(
        "jagged",
        0,
        dtype,
        {"x0": ["b", "k"]},
        sizes,
        {"out0": (["b"], "x0.dtype")},
        body,
        headers=("for tile_b in hl.tile(b):",),
        tensor_args={"lens": LENGTHS},
        twin=twin,
    )


def _slabs(rng: random.Random) -> Program:
    """Reductions of 3-D slabs: `x[tile_a, :, :]` over one or both inner dims, or
    `x[tile_a, :, tile_c]` over the middle one."""
    dtype = _dtype(rng)
    sizes = {"a": rng.choice(SIZES), "b": rng.choice(SIZES[:10]), "c": rng.choice(SIZES[:10])}
    inputs = {f"x{i}": ["a", "b", "c"] for i in range(rng.choice((1, 2)))}
    red = rng.choice(("sum", "amax", "mean"))
    if rng.random() < 0.5:
        header, index = "for tile_a, tile_c in hl.tile([a, c]):", "tile_a, :, tile_c"
        target, dims, out_dims = "out0[tile_a, tile_c]", "dim=1", ["a", "c"]
    else:
        header, index = "for tile_a in hl.tile(a):", "tile_a, :, :"
        dim = rng.choice((1, 2))
        target, dims, out_dims = ("out0[tile_a, :]", f"dim={dim}", ["a", "c" if dim == 1 else "b"])
    body = _loads(inputs, index, dtype, False)
    leaves = _temps(rng, body, _defined(body), rng.randint(1, 2), False)
    value = rng.choice(leaves)
    body.append(
        Stmt(
            f"{target} = torch.{red}({value}, {dims}){_narrow(dtype)}",
            None,
            frozenset({value, "out0"}),
        )
    )
    outputs = {"out0": (out_dims, "x0.dtype")}
    if header.endswith("hl.tile(a):") and rng.random() < 0.5:  # Helion reduces one dim at a time
        body.append(
            Stmt(
                f"out1[tile_a] = torch.sum(torch.sum({value}, dim=2), dim=1){_narrow(dtype)}",
                None,
                frozenset({value, "out1"}),
            )
        )
        outputs["out1"] = (["a"], "x0.dtype")
    return Program("slabs", 0, dtype, inputs, sizes, outputs, body, headers=(header,))


def _segment_matmul(rng: random.Random) -> Program:
    """Rows of each segment (data-dependent `hl.tile(start, end)`, or gathered at
    `tile.index + start`) times that segment's own weight: a grouped (MoE) matmul."""
    dtype = rng.choice(("float32", "bfloat16"))
    sizes = {
        "t": rng.choice(SIZES[3:]),
        "k": rng.choice(SIZES[2:]),
        "n": rng.choice(SIZES[2:]),
        "b": rng.choice((1, 2, 3, 5)),
    }
    if rng.random() < 0.5:
        loop, rows, target = "for tile_t in hl.tile(start, end):", "tile_t", "out0[tile_t, tile_n]"
    else:
        loop, rows, target = (
            "for tile_t in hl.tile(end - start):",
            "tile_t.index + start",
            "out0[tile_t.index + start, tile_n]",
        )
    epilogue = rng.choice(("acc", "torch.relu(acc)", "acc * 0.5"))
    body = [
        Stmt("start = offsets[seg]", "start", frozenset({"offsets"})),
        Stmt("end = offsets[seg + 1]", "end", frozenset({"offsets"})),
        Stmt(loop, None, frozenset({"start", "end"})),
        Stmt("for tile_n in hl.tile(n):", None, frozenset(), 1),
        Stmt("acc = hl.zeros([tile_t, tile_n], dtype=torch.float32)", "acc", frozenset(), 2),
        Stmt("for tile_k in hl.tile(k):", None, frozenset(), 2),
        Stmt(
            f"acc = hl.dot(x0[{rows}, tile_k], x1[seg, tile_k, tile_n], acc=acc)",
            "acc",
            frozenset({"acc", "x0", "x1", "start"}),
            3,
        ),
        Stmt(
            f"{target} = ({epilogue}){_narrow(dtype)}", None, frozenset({"acc", "out0", "start"}), 2
        ),
    ]
    return Program(
        "segment_matmul",
        0,
        dtype,
        {"x0": ["t", "k"], "x1": ["b", "k", "n"]},
        sizes,
        {"out0": (["t", "n"], "x0.dtype")},
        body,
        headers=("for seg in hl.grid(b):",),
        tensor_args={"offsets": OFFSETS},
        dim_exprs={"b": "offsets.size(0) - 1"},
    )


def _attention(rng: random.Random) -> Program:
    """Online softmax over key tiles with running max, sum and accumulator (flash
    attention's loop), optionally causal through a `torch.where` on tile indices."""
    dtype = rng.choice(("float32", "bfloat16", "float16"))
    sizes = {
        "m": rng.choice(SIZES[2:]),
        "n": rng.choice(SIZES[2:]),
        "d": rng.choice((4, 8, 16)),
    }  # Helion pads a `:` of other sizes
    scores = "hl.dot(q, k[tile_n, :].T, out_dtype=torch.float32) * 0.5"
    body = [
        Stmt('m_i = hl.full([tile_m], float("-inf"), dtype=torch.float32)', "m_i"),
        Stmt("l_i = hl.zeros([tile_m], dtype=torch.float32)", "l_i"),
        Stmt("acc = hl.zeros([tile_m, d], dtype=torch.float32)", "acc"),
        Stmt("q = x0[tile_m, :]", "q", frozenset({"x0"})),
        Stmt("for tile_n in hl.tile(n):", None),
        Stmt(f"s = {scores}", "s", frozenset({"q", "k"}), 1),
    ]
    if rng.random() < 0.5:
        body.append(
            Stmt(
                's = torch.where(tile_n.index[None, :] <= tile_m.index[:, None], s, float("-inf"))',
                "s",
                frozenset({"s"}),
                1,
            )
        )
        sizes["n"] = sizes["m"]
    body += [
        Stmt(
            "m_new = torch.maximum(m_i, torch.amax(s, dim=1))", "m_new", frozenset({"m_i", "s"}), 1
        ),
        Stmt("p = torch.exp(s - m_new[:, None])", "p", frozenset({"s", "m_new"}), 1),
        Stmt("alpha = torch.exp(m_i - m_new)", "alpha", frozenset({"m_i", "m_new"}), 1),
        Stmt("l_i = l_i * alpha + torch.sum(p, dim=1)", "l_i", frozenset({"l_i", "alpha", "p"}), 1),
        Stmt(
            "acc = acc * alpha[:, None] "
            "+ hl.dot(p.to(v.dtype), v[tile_n, :], out_dtype=torch.float32)",
            "acc",
            frozenset({"acc", "alpha", "p", "v"}),
            1,
        ),
        Stmt("m_i = m_new", "m_i", frozenset({"m_new"}), 1),
        Stmt(
            f"out0[tile_m, :] = (acc / l_i[:, None]){_narrow(dtype)}",
            None,
            frozenset({"acc", "l_i", "out0"}),
        ),
    ]
    return Program(
        "attention",
        0,
        dtype,
        {"x0": ["m", "d"], "k": ["n", "d"], "v": ["n", "d"]},
        sizes,
        {"out0": (["m", "d"], "x0.dtype")},
        body,
        headers=("for tile_m in hl.tile(m):",),
    )


def _two_pass(rng: random.Random) -> Program:
    """Two inner loops over the same columns: the first reduces (sum or max), the second
    reads the result and stores every tile (normalization's shape)."""
    dtype = _dtype(rng)
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES[3:])}
    widen = _widen(dtype)
    first = _expr(rng, ["v"], 2)
    if rng.random() < 0.5:
        init, update, stat = (
            "hl.zeros([tile_m], dtype=torch.float32)",
            f"acc + torch.sum({first}, dim=1)",
            "acc / n",
        )
    else:
        init = 'hl.full([tile_m], float("-inf"), dtype=torch.float32)'
        update, stat = f"torch.maximum(acc, torch.amax({first}, dim=1))", "acc"
    second = _expr(rng, ["v", "stat[:, None]"], 2)
    body = [
        Stmt(f"acc = {init}", "acc"),
        Stmt("for tile_n in hl.tile(n):", None),
        Stmt(f"v = x0[tile_m, tile_n]{widen}", "v", frozenset({"x0"}), 1),
        Stmt(f"acc = {update}", "acc", frozenset({"acc", "v"}), 1),
        Stmt(f"stat = {stat}", "stat", frozenset({"acc"})),
        Stmt("for tile_n in hl.tile(n):", None),
        Stmt(f"v = x0[tile_m, tile_n]{widen}", "v", frozenset({"x0"}), 1),
        Stmt(
            f"out0[tile_m, tile_n] = ({second}){_narrow(dtype)}",
            None,
            frozenset({"v", "stat", "out0"}),
            1,
        ),
    ]
    return Program(
        "two_pass",
        0,
        dtype,
        {"x0": ["m", "n"]},
        sizes,
        {"out0": (["m", "n"], "x0.dtype")},
        body,
        headers=("for tile_m in hl.tile(m):",),
    )


def _outer(rng: random.Random) -> Program:
    """1-D tiles broadcast against each other (`a[:, None] * b[None, :]`), a transposed
    store (`t.T`), and keepdim reductions broadcast back."""
    dtype = _dtype(rng)
    sizes = {"m": rng.choice(SIZES), "n": rng.choice(SIZES)}
    widen = _widen(dtype)
    value = _expr(rng, ["a[:, None]", "b[None, :]"], 2)
    body = [
        Stmt(f"a = x0[tile_m]{widen}", "a", frozenset({"x0"})),
        Stmt(f"b = x1[tile_n]{widen}", "b", frozenset({"x1"})),
        Stmt(f"t = {value} + a[:, None] * b[None, :]", "t", frozenset({"a", "b"})),
        Stmt(f"out0[tile_m, tile_n] = t{_narrow(dtype)}", None, frozenset({"t", "out0"})),
        Stmt(f"out1[tile_n, tile_m] = (t.T * 2.0){_narrow(dtype)}", None, frozenset({"t", "out1"})),
    ]
    return Program(
        "outer",
        0,
        dtype,
        {"x0": ["m"], "x1": ["n"]},
        sizes,
        {"out0": (["m", "n"], "x0.dtype"), "out1": (["n", "m"], "x0.dtype")},
        body,
        headers=("for tile_m, tile_n in hl.tile([m, n]):",),
    )


CLOSURES = (
    "lambda v: torch.tanh(v) * 2.0",
    "lambda v: v * v + 1.0",
    "lambda v: torch.where(v > 0, v, v * 0.1)",
    "lambda v: torch.sigmoid(v - 0.5)",
)


def _closure(rng: random.Random) -> Program:
    """An elementwise grid or a row reduction that applies a function passed as an argument."""
    prog = _elementwise(rng, rank=rng.choice((1, 2))) if rng.random() < 0.5 else _rows(rng)
    if prog.dtype == "int32":
        return _closure(rng)
    fn = rng.choice(CLOSURES)
    body = list(prog.body)
    at = next(i for i, s in enumerate(body) if s.defines and s.defines.startswith("t"))
    t = body[at].defines or ""
    body.insert(at + 1, Stmt(f"{t} = fn({t})", t, frozenset({t, "fn"}), body[at].indent))
    return dataclasses.replace(
        prog, kind="closure", body=body, callables={"fn": fn}, headers=tuple(_loop_headers(prog))
    )


KINDS: dict[str, Callable[[random.Random], Program]] = {
    "elementwise": _elementwise,
    "ranged": _ranged,
    "rows": _rows,
    "accumulators": _accumulators,
    "matmul": _matmul,
    "gather_atomic": _gather_atomic,
    "nested": _nested,
    "grid_rows": _grid_rows,
    "slices": _slices,
    "jagged": _jagged,
    "slabs": _slabs,
    "closure": _closure,
    "segment_matmul": _segment_matmul,
    "attention": _attention,
    "two_pass": _two_pass,
    "outer": _outer,
}
KINDS_ORDER = (
    "elementwise",
    "elementwise",
    "ranged",
    "rows",
    "rows",
    "accumulators",
    "accumulators",
    "matmul",
    "gather_atomic",
    "nested",
    "nested",
    "grid_rows",
    "slices",
    "jagged",
    "jagged",
    "slabs",
    "closure",
    "segment_matmul",
    "attention",
    "two_pass",
    "outer",
)


# ---------------------------------------------------------------- rendering


def _render(p: Program) -> str:
    lines = [
        "import torch",
        "import helion",
        "import helion.language as hl",
        "",
        "",
        "def helper(v):",
        "    return v * torch.sigmoid(v)",
        "",
        "",
        "def combine_max(a, b):",
        "    return torch.maximum(a, b)",
        "",
        "",
        *_kernel_lines(p, p.name, {}),
    ]
    if p.twin:
        lines += [
            "",
            "",
            *_kernel_lines(p, f"{p.name}_oracle", p.twin),
            "",
            "",
            f"ORACLE = {p.name}_oracle",
        ]
    lines += ["", "", *_main_lines(p)]
    return "\n".join(lines) + "\n"


def _kernel_lines(p: Program, name: str, twin: dict[str, str]) -> list[str]:
    """The kernel's definition; `twin` replaces statements (the oracle's spelling)."""
    scalars = "".join(f", {n}: {type(value).__name__}" for n, value in p.scalars.items())
    tensors = [*p.inputs, *p.index_inputs, *p.tensor_args]
    params = ", ".join([*(f"{n}: torch.Tensor" for n in tensors), *p.callables])
    first = next(iter(p.inputs))
    lines = [
        '@helion.kernel(static_shapes=True, autotune_effort="none")',
        f"def {name}({params}{scalars}):",
    ]
    dims = {d for ds in p.inputs.values() for d in ds} | {
        d for ds, _ in p.outputs.values() for d in ds
    }
    for d in sorted(dims):
        lines.append(f"    {d} = {_dim_expr(p, d)}")
    for out, (ds, dt) in p.outputs.items():
        lines.append(
            f"    {out} = torch.zeros([{', '.join(ds)}], dtype={dt}, device={first}.device)"
        )
    lines += [f"    {line}" for line in p.prelude]
    lines += [f"    {header}" for header in _loop_headers(p)]
    depth = len(_loop_headers(p))
    for stmt in p.body:
        lines.append("    " * (depth + 1 + stmt.indent) + twin.get(stmt.text, stmt.text))
    lines.append(f"    return {', '.join(p.outputs)}{',' if len(p.outputs) == 1 else ''}")
    return lines


def _dim_expr(p: Program, dim: str) -> str:
    if dim in p.dim_exprs:
        return p.dim_exprs[dim]
    for name, ds in p.inputs.items():
        if dim in ds:
            return f"{name}.size({ds.index(dim)})"
    for name, (d, _) in p.index_inputs.items():
        if d == dim:
            return f"{name}.size(0)"
    return str(p.sizes[dim])  # a dim only outputs have (atomic bins)


def _loop_headers(p: Program) -> list[str]:
    if p.headers:
        return list(p.headers)
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
    return [
        "def ARGS():",
        "    g = torch.Generator().manual_seed(0)",
        f"    return ({', '.join(_arg_exprs(p))},)",
        "",
        "",
        f"CONFIG = {p.config!r}",
        f"THREADS = {p.threads}",
        "",
        "",
        'if __name__ == "__main__":',
        "    import sys",
        "    from helion_fx_mlir.tools.fuzz.programs import check_module",
        "    sys.exit(check_module(sys.modules[__name__]))",
    ]


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
    exprs += [template.format(**p.sizes) for template in p.tensor_args.values()]
    return exprs + list(p.callables.values()) + [repr(v) for v in p.scalars.values()]


# ---------------------------------------------------------------- inputs, files, examples


PROGRAM_DIR = Path(
    os.environ.get(
        "HELION_FX_MLIR_PROGRAMS", Path(tempfile.gettempdir()) / "helion-fx-mlir-programs"
    )
)


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
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Helion looks kernels' globals up through their module
    spec.loader.exec_module(module)
    return module


def as_example(p: Program) -> Example:
    """The program as a sample kernel; the fuzzer's oracle is reference mode, not `reference`."""
    module = load_module(write(p))
    return Example(
        p.name,
        getattr(module, p.name),
        lambda _dtype: module.ARGS(),
        lambda *a: None,
        (getattr(torch, p.dtype),),
        oracle=getattr(module, "ORACLE", None),
    )


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
    from helion_fx_mlir.tools.fuzz import differential

    kernel = next(
        v for k, v in vars(module).items() if k.startswith("prog_") and not k.endswith("_oracle")
    )
    torch.set_num_threads(module.THREADS)
    outcome = differential.check_kernel(
        kernel, module.ARGS(), module.CONFIG, getattr(module, "ORACLE", None)
    )
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
        done = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if done.returncode < 0:
        return "crash", f"signal {-done.returncode}"
    last = (done.stdout.strip().splitlines() or [""])[-1]
    status, _, detail = last.partition(" ")
    return (
        (status, detail)
        if status in ("ok", "skipped", "mismatch", "error", "unsupported")
        else ("error", last)
    )


def reduce_program(p: Program, still_fails: Callable[[Program], bool]) -> Program:
    """Delta debugging: drop body statements one at a time while the failure stays (from
    the end, repeated until nothing can go), then shrink each size to the smallest that
    keeps it."""
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(p.body))):
            candidate = dataclasses.replace(p, body=p.body[:i] + p.body[i + 1 :])
            if still_fails(candidate):
                p, changed = candidate, True
    for dim, size in sorted(p.sizes.items()):
        for smaller in (s for s in SIZES if s < size):
            candidate = dataclasses.replace(p, sizes={**p.sizes, dim: smaller})
            if still_fails(candidate):
                p = candidate
                break
    return p


def reduced_repro(outcome: Any, timeout: float, threads: int = 1) -> str:
    """A failing program reduced to a minimal repro (on the threads it failed on): its path
    and source, runnable alone."""
    _, seed, index = outcome.case.example.split(":")
    program = dataclasses.replace(
        generate(int(seed), int(index)), config=outcome.case.config, threads=threads
    )
    wanted = signature(outcome.status, outcome.detail)
    directory = PROGRAM_DIR / "reduced"

    def still_fails(candidate: Program) -> bool:
        return signature(*run_file(write(candidate, directory), timeout)) == wanted

    if not still_fails(program):
        return f"# {outcome.case.example}: did not fail again alone ({outcome.status})"
    smallest = reduce_program(program, still_fails)
    path = write(smallest, directory)
    head = f"# reduced repro of {outcome.case.example} ({outcome.status}): python {path}"
    return f"{head}\n{smallest.render()}"
