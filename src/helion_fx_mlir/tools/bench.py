"""Benchmark table: lowered kernels against eager PyTorch, in one process, same threads.

Each row times one sample kernel at a size, under one config: compile (generate, lower,
JIT; uncached), then ours and eager in alternating rounds, so that a busy neighbour slows
both alike. Throughput is GFLOP/s for contractions and GB/s (bytes read and written) for
the rest; the geometric mean of eager/ours closes the table.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import helion
import torch

from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.frontend.host_program import build_host_function
from helion_fx_mlir.frontend.lower import generate_mlir
from helion_fx_mlir.frontend.lowering_context import resolve_config
from helion_fx_mlir.runtime.jit import jit

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
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    calls = max(1, min(1000, int(budget_s / max(first, 1e-6))))
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) * 1e3 / calls


def bench_case(case: BenchCase, size: str, rounds: int) -> dict[str, Any]:
    """Compile once (uncached), check the result, then alternate rounds of ours and eager."""
    example = EXAMPLES[case.example]
    args = case.args(size)
    start = time.perf_counter()
    bound = example.kernel.bind(args)
    config = resolve_config(bound, case.config)
    generate_mlir(bound, config=config)
    engine = jit(bound, config)
    compile_s = time.perf_counter() - start
    host = build_host_function(bound.host_function, engine.launch, config, engine.block_sizes)
    result = host(*args)
    torch.testing.assert_close(
        result, example.reference(*args), rtol=2e-2, atol=2e-2, equal_nan=True
    )
    ours, eager = [], []
    for _ in range(rounds):
        ours.append(_per_call_ms(lambda: host(*args), 0.05))
        eager.append(_per_call_ms(lambda: example.reference(*args), 0.05))
    ours_ms, eager_ms = statistics.median(ours), statistics.median(eager)
    return {
        "kernel": case.name,
        "compile s": compile_s,
        "ours ms": ours_ms,
        "eager ms": eager_ms,
        "eager/ours": eager_ms / ours_ms,
        "throughput": _throughput(case, args, result, ours_ms),
    }


def _throughput(case: BenchCase, args: Args, result: Any, ms: float) -> str:
    """GFLOP/s for contractions; else GB/s of the inputs read and the outputs written."""
    if case.flops is not None:
        return f"{case.flops(args) / ms / 1e6:.1f} GFLOP/s"
    tensors = [
        t
        for t in (*args, *(result if isinstance(result, tuple) else (result,)))
        if isinstance(t, torch.Tensor)
    ]
    return f"{sum(t.numel() * t.element_size() for t in tensors) / ms / 1e6:.1f} GB/s"


def format_table(rows: list[dict[str, Any]]) -> str:
    headers = list(rows[0])
    cells = [[f"{v:.3g}" if isinstance(v, float) else str(v) for v in row.values()] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(c) for c in cells)])


def geometric_mean(rows: list[dict[str, Any]]) -> float:
    return math.exp(statistics.fmean(math.log(r["eager/ours"]) for r in rows))


def main(
    names: list[str] | None = None, rounds: int = 5, threads: int | None = None, size: str = "large"
) -> str:
    """Bench the named cases (default: the whole suite) on `threads` threads for both sides."""
    if threads is not None:
        torch.set_num_threads(threads)
    threads = torch.get_num_threads()
    rows = [bench_case(CASES[name], size, rounds) for name in names or CASES]
    gmean = geometric_mean(rows)
    rows.append(
        {
            "kernel": "geometric mean",
            "compile s": "",
            "ours ms": "",
            "eager ms": "",
            "eager/ours": gmean,
            "throughput": "",
        }
    )
    table = (
        f"{size} sizes, f32 unless named, {threads} thread(s), median of {rounds} rounds\n"
        + format_table(rows)
    )
    print(table)
    return table
