"""Benchmark table: lowered kernels against eager PyTorch, in one process, same threads,
each held to the machine's limit (`roofline.py`).

Each row times one sample kernel at a size, under one config: compile (generate, lower,
JIT; uncached), then ours and eager in alternating rounds, so that a busy neighbour slows
both alike. Throughput is GFLOP/s for contractions and GB/s (bytes read and written) for
the rest. The fraction of the limit is the least time the machine needs over the time
taken: a contraction's flops at the FMA peak of its dtype, else the time moving its tensors
takes; measured in every round beside ours and eager, each round's time held to that
round's limit, the median of those fractions printed (a shared host's bandwidth varies
between rounds: a round's runs and probes see the same machine). A run of the row that
beats the probes (a kernel that moves its bytes as fast as a copy) is the limit in their
place, and the table names it: a fraction is never above 1.0. With `autotune`, each kernel is
also searched by Helion's autotuner through the `mlir` backend, and its tuned config timed
in the same rounds. The geometric means of eager/ours (and eager/tuned) close the table.
"""

from __future__ import annotations

import functools
import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import helion
import torch

from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.frontend.host_program import build_host_function
from helion_fx_mlir.frontend.lowering_context import resolve_config
from helion_fx_mlir.runtime import kernel_cache
from helion_fx_mlir.runtime.autotune import calls_within, mlir_copy, timed_ms
from helion_fx_mlir.runtime.jit import jit
from helion_fx_mlir.tools import roofline

Args = tuple[Any, ...]


@dataclass(frozen=True)
class BenchCase:
    """One row: a sample kernel, its large inputs, a config, and the work one call does."""

    name: str
    example: str
    large: Callable[[], Args]
    flops: Callable[[Args], float] | None = None  # None: memory-bound, measured in bytes moved
    config: helion.Config | None = None
    dtype: torch.dtype = torch.float32
    # What a user would call instead, when it is not the sample's reference (which may
    # compute in f32 to check a low-precision kernel).
    eager: Callable[..., Any] | None = None

    def args(self, size: str) -> Args:
        torch.manual_seed(0)
        return self.large() if size == "large" else EXAMPLES[self.example].args(self.dtype)


def _randn(*shape: int, dtype: torch.dtype = torch.float32) -> Callable[[], torch.Tensor]:
    return lambda: torch.randn(*shape, dtype=dtype)


def _inputs(*makers: Callable[[], Any]) -> Callable[[], Args]:
    return lambda: tuple(make() for make in makers)


def _matmul_flops(args: Args) -> float:
    a, b = args[0], args[1]
    return 2.0 * math.prod(a.shape) * b.shape[-1]


def _attention_flops(args: Args) -> float:
    q, k = args[0], args[1]
    return 4.0 * math.prod(q.shape) * k.shape[-2]


def _cross_entropy_inputs() -> Args:
    return torch.randn(4096, 1024), torch.randint(0, 1024, (4096,))


SQUARE = 4096
ROWS, COLS = 4096, 1024
BLOCKS_64 = helion.Config(block_sizes=[64, 64, 64])

SUITE = (
    BenchCase("add", "add", _inputs(_randn(SQUARE, SQUARE), _randn(SQUARE, SQUARE))),
    BenchCase("bias_add", "bias_add_3d", _inputs(_randn(1, SQUARE, SQUARE), _randn(SQUARE))),
    BenchCase("swiglu", "swiglu", _inputs(_randn(SQUARE, SQUARE), _randn(SQUARE, SQUARE))),
    BenchCase("softmax", "softmax", _inputs(_randn(ROWS, COLS))),
    BenchCase("layer_norm", "layer_norm", _inputs(_randn(ROWS, COLS), _randn(COLS), _randn(COLS))),
    # Rows the default block (the next power of two) does not divide: padded tiles.
    BenchCase("softmax_1000", "softmax", _inputs(_randn(ROWS, 1000))),
    BenchCase("layer_norm_768", "layer_norm", _inputs(_randn(ROWS, 768), _randn(768), _randn(768))),
    BenchCase("rms_norm", "rms_norm", _inputs(_randn(ROWS, COLS), _randn(COLS))),
    BenchCase("cross_entropy", "cross_entropy", _cross_entropy_inputs),
    BenchCase("sum_rows", "sum_rows", _inputs(_randn(SQUARE, SQUARE))),
    BenchCase("col_sum", "col_sum", _inputs(_randn(SQUARE, SQUARE))),
    BenchCase(
        "matmul_64",
        "matmul",
        _inputs(_randn(1024, 1024), _randn(1024, 1024)),
        _matmul_flops,
        BLOCKS_64,
    ),
    BenchCase("matmul", "matmul", _inputs(_randn(1024, 1024), _randn(1024, 1024)), _matmul_flops),
    BenchCase(
        "matmul_bf16_64",
        "matmul",
        _inputs(_randn(1024, 1024, dtype=torch.bfloat16), _randn(1024, 1024, dtype=torch.bfloat16)),
        _matmul_flops,
        BLOCKS_64,
        torch.bfloat16,
        torch.mm,  # torch's own bf16 matmul (the reference goes through f32)
    ),
    BenchCase("bmm", "bmm", _inputs(_randn(8, 512, 512), _randn(8, 512, 512)), _matmul_flops),
    BenchCase(
        "attention",
        "attention",
        _inputs(*(_randn(1, 8, 1024, 64) for _ in range(3))),
        _attention_flops,
    ),
)
CASES = {case.name: case for case in SUITE}


def _per_call_ms(fn: Callable[[], Any], budget_s: float) -> float:
    """Mean time of one call over a batch of calls lasting about budget_s."""
    return timed_ms(fn, calls_within(timed_ms(fn, 1), budget_s * 1e3))


@dataclass(frozen=True)
class Compiled:
    """One config of a case, JIT'd: its host function, and the seconds it took to get it
    (compile, or autotune search and compile)."""

    config: helion.Config
    host: Callable[..., Any]
    seconds: float


@dataclass(frozen=True)
class Timed:
    """A compiled config's median time per call over the rounds."""

    compiled: Compiled
    ms: float


@dataclass(frozen=True)
class Round:
    """One round's times, ms per call: each config of ours (the default, then the tuned),
    eager, and the least time the probes measured for the case's work."""

    ours: tuple[float, ...]
    eager: float
    probe: float


@dataclass(frozen=True)
class Row:
    """One case, measured: what the table prints and the rounds its limit fractions are
    computed from."""

    kernel: str
    default: Timed
    eager_ms: float
    throughput: str
    flops: float | None  # contractions: held to the FMA peak of `dtype`
    dtype: torch.dtype
    rounds: tuple[Round, ...]
    tuned: Timed | None = None

    def probe_ms(self, limits: roofline.Limits, at: Round) -> float:
        """What the probes measured in a round, and for contractions the peak measured
        before and after the cases too."""
        if self.flops is None:
            return at.probe
        return min(at.probe, self.flops / limits.peak_gflops(self.dtype) / 1e6)

    def limit_ms(self, limits: roofline.Limits, at: Round) -> float:
        """The least time the machine needed for the case's work in a round: the probes'
        limit, or a run of the row itself where one was faster (it did that work then)."""
        return min(self.probe_ms(limits, at), at.eager, *at.ours)

    def fraction(self, limits: roofline.Limits, times: Callable[[Round], float]) -> float:
        """The median over the rounds of each round's limit over its time: a round's times
        and probes run within a second of each other, so they share what the machine
        gave then (a shared host's memory bandwidth came and went by 2x between rounds)."""
        return statistics.median(self.limit_ms(limits, at) / times(at) for at in self.rounds)

    def set_by_runs(self, limits: roofline.Limits) -> bool:
        """A run of the row beat the probes in some round: a probe falls short there."""
        return any(self.limit_ms(limits, at) < self.probe_ms(limits, at) for at in self.rounds)


def _compile(bound: Any, config: helion.Config | None, spent_s: float = 0.0) -> Compiled:
    """Generate, lower and JIT one config, timed: with the disk cache of compiled kernels
    off, which would otherwise hand back a kernel compiled by an earlier run (or, for a
    tuned config, by the search)."""
    start = time.perf_counter()
    config = resolve_config(bound, config)
    with mock.patch.dict(os.environ, {kernel_cache.DISABLE_ENV: "0"}):
        engine = jit(bound, config)
    seconds = spent_s + time.perf_counter() - start
    host = build_host_function(bound.host_function, engine.launch, config, engine.block_sizes)
    return Compiled(config, host, seconds)


def autotuned(case: BenchCase, args: Args, effort: str) -> Compiled:
    """Helion's own search through the `mlir` backend, then the config it found compiled."""
    kernel = mlir_copy(EXAMPLES[case.example].kernel, effort)
    bound = kernel.bind(args)
    start = time.perf_counter()
    config = bound.autotune(args, force=True)
    return _compile(bound, config, time.perf_counter() - start)


def _tensors(values: Any) -> list[torch.Tensor]:
    values = values if isinstance(values, tuple) else (values,)
    return [v for v in values if isinstance(v, torch.Tensor)]


def _limit_probe(case: BenchCase, args: Args, reference: Any) -> Callable[[], float]:
    """What measures, in one round, the least time the machine needs for the case's work:
    its flops at the FMA peak of its dtype, else moving its tensors."""
    if case.flops is None:
        return roofline.Movement.of(_tensors(args), _tensors(reference)).best_ms
    flops = case.flops(args)
    return lambda: flops / roofline.peak_gflops(case.dtype) / 1e6


def bench_case(case: BenchCase, args: Args, rounds: int, tuned: Compiled | None = None) -> Row:
    """Compile once (uncached), check each config against eager, then alternate rounds of
    ours (and the tuned config), eager and the machine doing the same work at its limit.
    Without a config of its own, a case runs the `mlir` backend's default config: what
    `HELION_BACKEND=mlir` runs without a search."""
    example = EXAMPLES[case.example]
    default = _compile(mlir_copy(example.kernel, "none").bind(args), case.config)
    reference = example.reference(*args)
    eager_fn = case.eager or example.reference
    compiled = [default] if tuned is None else [default, tuned]
    for each in compiled:
        torch.testing.assert_close(
            each.host(*args), reference, rtol=2e-2, atol=2e-2, equal_nan=True
        )
    least_ms = _limit_probe(case, args, reference)
    measured = []
    for _ in range(rounds):
        ours = tuple(_per_call_ms(functools.partial(each.host, *args), 0.05) for each in compiled)
        eager = _per_call_ms(functools.partial(eager_fn, *args), 0.05)
        measured.append(Round(ours, eager, least_ms()))
    timed = [
        Timed(each, statistics.median(r.ours[i] for r in measured))
        for i, each in enumerate(compiled)
    ]
    return Row(
        kernel=case.name,
        default=timed[0],
        eager_ms=statistics.median(r.eager for r in measured),
        throughput=_throughput(case, args, reference, timed[0].ms),
        flops=case.flops(args) if case.flops is not None else None,
        dtype=case.dtype,
        rounds=tuple(measured),
        tuned=timed[1] if tuned is not None else None,
    )


def _throughput(case: BenchCase, args: Args, result: Any, ms: float) -> str:
    """GFLOP/s for contractions; else GB/s of the inputs read and the outputs written."""
    if case.flops is not None:
        return f"{case.flops(args) / ms / 1e6:.1f} GFLOP/s"
    moved = sum(t.numel() * t.element_size() for t in (*_tensors(args), *_tensors(result)))
    return f"{moved / ms / 1e6:.1f} GB/s"


def _fraction(value: float) -> str:
    return f"{value:.3f}"


def table_rows(rows: list[Row], limits: roofline.Limits) -> list[dict[str, Any]]:
    """The table's cells per row, the geometric mean(s) of eager over ours last."""
    cells = []
    for row in rows:
        fraction = functools.partial(row.fraction, limits)
        cell: dict[str, Any] = {
            "kernel": row.kernel,
            "compile s": row.default.compiled.seconds,
            "ours ms": row.default.ms,
            "eager ms": row.eager_ms,
            "eager/ours": row.eager_ms / row.default.ms,
            "throughput": row.throughput,
            "ours/limit": _fraction(fraction(lambda at: at.ours[0])),
            "eager/limit": _fraction(fraction(lambda at: at.eager)),
        }
        if row.tuned is not None:
            cell |= {
                "tune s": row.tuned.compiled.seconds,
                "tuned ms": row.tuned.ms,
                "eager/tuned": row.eager_ms / row.tuned.ms,
                "tuned/limit": _fraction(fraction(lambda at: at.ours[1])),
            }
        cells.append(cell)
    mean: dict[str, Any] = dict.fromkeys(cells[0], "") | {"kernel": "geometric mean"}
    mean["eager/ours"] = geometric_mean([r.eager_ms / r.default.ms for r in rows])
    if "eager/tuned" in mean:
        mean["eager/tuned"] = geometric_mean([r.eager_ms / r.tuned.ms for r in rows if r.tuned])
    return [*cells, mean]


def limits_set_by_runs(rows: list[Row], limits: roofline.Limits) -> list[str]:
    """The kernels whose limit is a run of their own, faster than the probes measured
    the machine: where a probe falls short of what the machine can do."""
    return [row.kernel for row in rows if row.set_by_runs(limits)]


def format_table(rows: list[dict[str, Any]]) -> str:
    headers = list(rows[0])
    cells = [[f"{v:.3g}" if isinstance(v, float) else str(v) for v in row.values()] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(c) for c in cells)])


def geometric_mean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


LIMIT_NOTE = (
    "x/limit: the least time the machine needs over x's time; contractions: flops at the "
    "FMA peak of their dtype; the rest: the longer of (a) reading the inputs (our read kernel "
    "or torch.sum, the faster) and writing fresh outputs (torch.empty().fill_), and (b) "
    "copying the bytes read into the bytes written, into a fresh tensor (our copy kernel or "
    "clone, the faster), the rest of either at its rate in (a); each at its own size; or a "
    "run of the row itself (ours, tuned, eager) where one was faster; per round, the "
    "median over the rounds"
)


def render(rows: list[Row], limits: roofline.Limits, title: str) -> str:
    """The limits, the title, the table, the rows whose runs beat the probes, and the
    configs the columns ran (the default one the backend's, not always Helion's)."""
    lines = [limits.header(), title, LIMIT_NOTE, format_table(table_rows(rows, limits))]
    beaten = limits_set_by_runs(rows, limits)
    if beaten:
        lines.append(f"limit set by a run faster than the probes: {', '.join(beaten)}")
    lines += ["default configs:", *(f"  {r.kernel}: {r.default.compiled.config}" for r in rows)]
    tuned = [f"  {r.kernel}: {r.tuned.compiled.config}" for r in rows if r.tuned is not None]
    if tuned:
        lines += ["tuned configs:", *tuned]
    return "\n".join(lines)


def _args_key(case: BenchCase, args: Args) -> tuple[Any, ...]:
    """Cases of one kernel on equal inputs (matmul, matmul_64) share one search."""
    return (case.example, *((t.dtype, tuple(t.shape)) for t in _tensors(args)))


def main(
    names: list[str] | None = None,
    rounds: int = 5,
    threads: int | None = None,
    size: str = "large",
    autotune: str | None = None,
) -> str:
    """Bench the named cases (default: the whole suite) on `threads` threads for both
    sides; with `autotune` ("quick" or "full") a tuned column too. The machine's limits are
    measured before and after, the higher of each kept."""
    if threads is not None:
        torch.set_num_threads(threads)
    threads = torch.get_num_threads()
    measure = functools.partial(
        roofline.measure, **({} if size == "large" else roofline.QUICK_MEASURE)
    )
    limits = measure()
    searched: dict[tuple[Any, ...], Compiled] = {}
    rows = []
    for name in names or CASES:
        case = CASES[name]
        args = case.args(size)
        tuned = None
        if autotune is not None:
            key = _args_key(case, args)
            if key not in searched:
                searched[key] = autotuned(case, args, autotune)
            tuned = searched[key]
        rows.append(bench_case(case, args, rounds, tuned))
    limits = limits.best(measure())
    title = f"{size} sizes, f32 unless named, {threads} thread(s), median of {rounds} rounds"
    table = render(rows, limits, title)
    print(table)
    return table
