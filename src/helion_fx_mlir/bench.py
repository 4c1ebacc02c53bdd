"""Benchmark table: generate_mlir, lower+JIT, and run time against eager PyTorch."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from .examples import EXAMPLES
from .helion_mlir import generate_mlir
from .lowering_context import resolve_config
from .host_program import build_host_function
from .runtime import jit


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def bench_example(name: str, repeat: int = 5) -> dict[str, Any]:
    """Times (ms) for one example in f32; lower+JIT is uncached on purpose."""
    example = EXAMPLES[name]
    args = example.args(torch.float32 if torch.float32 in example.dtypes else None)
    bound = example.kernel.bind(args)
    config = resolve_config(bound, None)
    cold = _median_ms(lambda: generate_mlir(bound, config=config), 1)
    warm = _median_ms(lambda: generate_mlir(bound, config=config), repeat)
    engines = []
    jit_ms = _median_ms(lambda: engines.append(jit(bound, config)), max(1, repeat // 2))
    host = build_host_function(bound.host_function, engines[-1].run, config, engines[-1].block_sizes)
    run_ms = _median_ms(lambda: host(*args), repeat)
    eager_ms = _median_ms(lambda: example.reference(*args), repeat)
    got, want = _flat(host(*args)), _flat(example.reference(*args))
    error = max((g.double() - w.double()).abs().max().item() for g, w in zip(got, want, strict=True))
    return {"kernel": name, "generate (first)": cold, "generate": warm, "lower+JIT": jit_ms,
            "run": run_ms, "eager": eager_ms, "max |err|": error}


def _flat(result: Any) -> list[torch.Tensor]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def format_table(rows: list[dict[str, Any]]) -> str:
    headers = list(rows[0])
    cells = [[f"{v:.3g}" if isinstance(v, float) else str(v) for v in row.values()] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(c) for c in cells)])


CORE = ["add", "matmul", "softmax", "softmax_two_pass", "layer_norm", "rms_norm", "sum_rows"]


def main(names: list[str] | None = None, repeat: int = 5) -> str:
    """Bench the named examples ('all' for every one; default: the core kernels)."""
    torch.set_num_threads(1)
    selected = list(EXAMPLES) if names == ["all"] else names or CORE
    rows = [bench_example(n, repeat) for n in selected]
    table = "times in ms (median of %d; f32; 1 thread)\n" % repeat + format_table(rows)
    print(table)
    return table
