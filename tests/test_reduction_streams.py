"""Long row reductions read both halves of each row at once (`split_reduction_streams`):
the kernels still match eager, on rows that split, rows too short to, and rows whose last
chunk is masked, in f32, bf16 and int32, under more than one config."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply

# A row's elements are summed in another order than eager's: 4096 randn values differ by
# rounding (the order changes with the split, as with any vectorization).
SUM_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
CONFIGS = [
    helion.Config(block_sizes=[1]),
    helion.Config(block_sizes=[1], reduction_loops=[2048]),
    helion.Config(block_sizes=[2]),
]


@helion.kernel(static_shapes=True)
def row_sum_and_max(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rows, _ = x.size()
    total = torch.empty([rows], dtype=x.dtype, device=x.device)
    peak = torch.empty([rows], dtype=x.dtype, device=x.device)
    for tile in hl.tile(rows):
        row = x[tile, :]
        total[tile] = row.sum(-1)
        peak[tile] = torch.amax(row, -1)
    return total, peak


@helion.kernel(static_shapes=True)
def weighted_squares(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    rows, _ = x.size()
    out = torch.empty([rows], dtype=torch.float32, device=x.device)
    for tile in hl.tile(rows):
        row = x[tile, :].to(torch.float32)
        out[tile] = (row * row * weight[None, :].to(torch.float32)).sum(-1)
    return out


def _split(bound: object, config: helion.Config) -> bool:
    """Whether the kernel's reduction loops read rows in halves, as the JIT compiles it."""
    upto = LLVM.index("helion-split-reduction-streams")
    module = apply(parse_module(generate_mlir(bound, config=config)), LLVM[: upto + 1])
    return "vector.shuffle" in str(module)


@pytest.mark.parametrize(
    ("shape", "splits"),
    # 4100 columns: the sum reads 4096-wide chunks copied (padded) into a buffer of the
    # program's, from the caches; the max its first 4096 lanes, then 4 masked: neither splits.
    [((37, 4096), True), ((5, 8192), True), ((37, 4100), False), ((37, 1024), False)],
)
def test_long_rows_are_read_in_halves(shape: tuple[int, int], splits: bool) -> None:
    """One row per program (Helion's default): rows of at least 2 pages read from the
    kernel's argument split."""
    bound = row_sum_and_max.bind((torch.randn(*shape),))
    assert _split(bound, CONFIGS[0]) == splits


@pytest.mark.parametrize("config", CONFIGS, ids=["one-row", "chunked", "two-rows"])
@pytest.mark.parametrize("shape", [(37, 4096), (5, 8192), (37, 4100), (37, 1024)])
def test_sum_and_max_of_rows_match_eager(shape: tuple[int, int], config: helion.Config) -> None:
    x = torch.randn(*shape)
    total, peak = compile_kernel(row_sum_and_max.bind((x,)), config=config)(x)
    torch.testing.assert_close(total, x.sum(-1), **SUM_TOLERANCE)
    torch.testing.assert_close(peak, x.amax(-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("config", CONFIGS[:2], ids=["one-row", "chunked"])
def test_weighted_squares_of_rows_match_eager(dtype: torch.dtype, config: helion.Config) -> None:
    """Two reads a step (the row and the weights), both split the same way."""
    x, weight = torch.randn(9, 8192, dtype=dtype), torch.rand(8192, dtype=dtype)
    bound = weighted_squares.bind((x, weight))
    expected = (x.float() * x.float() * weight.float()).sum(-1)
    out = compile_kernel(bound, config=config)(x, weight)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-2)


def test_integer_row_sums_are_exact() -> None:
    x = torch.randint(-1000, 1000, (11, 4096), dtype=torch.int32)
    bound = row_sum_and_max.bind((x,))
    config = helion.Config(block_sizes=[1])
    assert _split(bound, config)
    total, peak = compile_kernel(bound, config=config)(x)
    torch.testing.assert_close(total, x.sum(-1, dtype=torch.int32))
    torch.testing.assert_close(peak, x.amax(-1))
