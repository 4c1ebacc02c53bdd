"""argmax, argmin and max/min along a dim over rows of several vector chunks: each lane of
the chunks scans its own elements (helion-lane-parallel-index-reductions), so the first
index of a row's extreme must survive ties, zeros of both signs, infinities and NaNs in any
lane of any chunk, as eager gives them."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.pipelines import LLVM, apply


@helion.kernel(static_shapes=True)
def extremes_at(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Each row's argmax and argmin, and max/min along it with their indices (min kept as
    a column)."""
    m = x.size(0)
    first_max = torch.empty([m], dtype=torch.int64, device=x.device)
    first_min = torch.empty([m], dtype=torch.int64, device=x.device)
    top = torch.empty([m], dtype=x.dtype, device=x.device)
    top_at = torch.empty([m], dtype=torch.int64, device=x.device)
    low = torch.empty([m, 1], dtype=x.dtype, device=x.device)
    low_at = torch.empty([m, 1], dtype=torch.int64, device=x.device)
    for tile_m in hl.tile(m):
        row = x[tile_m, :]
        first_max[tile_m] = torch.argmax(row, dim=-1)
        first_min[tile_m] = row.argmin(dim=1)
        best = torch.max(row, dim=1)
        top[tile_m], top_at[tile_m] = best.values, best.indices
        least, where = row.min(dim=-1, keepdim=True)
        low[tile_m, :], low_at[tile_m, :] = least, where
    return first_max, first_min, top, top_at, low, low_at


def extremes_at_eager(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    best, least = x.max(dim=1), x.min(dim=1, keepdim=True)
    return x.argmax(-1), x.argmin(1), best.values, best.indices, least.values, least.indices


def _hard_rows(n: int, dtype: torch.dtype) -> torch.Tensor:
    """Random rows, then rows that test the order: all equal, both zeros, only infinities,
    NaNs in lanes and chunks apart, the extreme repeated in two lanes of different chunks."""
    torch.manual_seed(0)
    x = torch.randn(23, n) * 4
    x[0] = 0.0
    x[0, 7::5] = -0.0
    x[1] = -float("inf")
    x[2] = float("inf")
    x[2, n - 1] = -float("inf")
    x[3, n // 2 :: 3] = float("nan")
    x[4, n - 1] = float("nan")
    x[5, [3, n - 2]] = 100.0
    x[5, [17, n - 9]] = -100.0
    x[6] = 1.0
    x[7, 0] = float("nan")
    x[7, 1:] = float("inf")
    x[8, [19, 35]] = float("nan")
    if not dtype.is_floating_point:
        return (x.nan_to_num(0.0, 90.0, -90.0) * 8).to(dtype)
    return x.to(dtype)


CASES = [
    pytest.param(n, dtype, id=f"{n}-{str(dtype).removeprefix('torch.')}")
    for n, dtype in [
        (100, torch.float32),
        (1000, torch.float32),
        (4099, torch.float32),
        (300, torch.bfloat16),
        (300, torch.float16),
        (257, torch.float64),
        (300, torch.int32),
        (130, torch.int64),
    ]
]


@pytest.mark.parametrize(("n", "dtype"), CASES)
def test_first_index_of_each_rows_extreme_as_eager(n: int, dtype: torch.dtype) -> None:
    """Exactly eager's indices and values; the first config with every access checked."""
    x = _hard_rows(n, dtype)
    bound = extremes_at.bind((x,))
    expected = extremes_at_eager(x)
    for config in (helion.Config(block_sizes=[1]), helion.Config(block_sizes=[8])):
        got = compile_kernel(bound, config=config, bounds_checks=config.block_sizes == [1])(x)
        for out, want in zip(got, expected, strict=True):
            torch.testing.assert_close(out, want, equal_nan=True, rtol=0, atol=0)


def test_rows_of_several_chunks_are_scanned_lane_by_lane() -> None:
    """The index reductions over 1000 lanes (1024 with padding) become loops over 64 chunks
    of 16 lanes, whose steps the vectorizer takes: one for the largest (argmax and max.dim
    of one row are one reduction) and one for the least."""
    x = _hard_rows(1000, torch.float32)
    text = generate_mlir(extremes_at.bind((x,)), config=helion.Config(block_sizes=[1]))
    upto = LLVM.index("helion-lane-parallel-index-reductions") + 1
    module = apply(parse_module(text), LLVM[:upto])
    with mlir_context():
        loops = [str(op).split("{")[0] for op in ops_named(module, "scf.for")]
    assert len(loops) == 2, loops
    assert all("tensor<16xi32>, tensor<16xi64>" in loop for loop in loops), loops
