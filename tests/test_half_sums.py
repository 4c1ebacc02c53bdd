"""Sums, means and variances of f16/bf16 tiles are computed in f32 and rounded once, as
eager's are, whether the row is reduced at once or in a rolled loop of chunks
(`WIDENED_SUMS` and `IRVisitor.unrounded_sum` in `visitor.py`, the f32 accumulator of
`control_flow._accumulator_meta`, `_own_reduction` in `rules/tensors.py`). torch-mlir
added in the dtype: a bf16 row of 8192 x 0.1 summed to 512 at once and 804 in chunks,
where eager gives 820; means and variances came out an ulp off in a third of the rows, and
a rolled mean of f16 did not lower at all.

The rows hold values on a coarse binary grid, so every f32 sum is exact in any order: the
results are then bit for bit eager's (or the f64 value rounded) on any CPU, whatever order
its vector width sums in."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel

HALVES = [torch.float16, torch.bfloat16]
CONFIGS = [
    helion.Config(block_sizes=[4]),
    helion.Config(block_sizes=[8], reduction_loops=[64]),
]
CONFIG_IDS = ["whole_row", "rolled"]


@helion.kernel(static_shapes=True)
def row_sums(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    total = torch.empty([m], dtype=x.dtype, device=x.device)
    squares = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile in hl.tile(m):
        row = x[tile, :]
        total[tile] = row.sum(-1)
        squares[tile] = (row * row).sum(-1)
    return total, squares


@helion.kernel(static_shapes=True)
def row_moments(x: torch.Tensor) -> list[torch.Tensor]:
    m, _ = x.size()
    outs = [torch.empty([m], dtype=x.dtype, device=x.device) for _ in range(3)]
    for tile in hl.tile(m):
        row = x[tile, :]
        outs[0][tile] = row.mean(-1)
        outs[1][tile] = torch.var(row, -1)
        outs[2][tile] = torch.std(row, -1)
    return outs


@helion.kernel(static_shapes=True)
def row_var_mean(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """var_mean has no rolled form: Helion reduces the row at once under any config."""
    m, _ = x.size()
    var = torch.empty([m], dtype=x.dtype, device=x.device)
    mean = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile in hl.tile(m):
        var[tile], mean[tile] = torch.var_mean(x[tile, :], -1)
    return var, mean


def grid_rows(rows: int, n: int, dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """Multiples of 1/16 in [-4, 4): sums of values and squares of 8000 are exact in f32."""
    ints = torch.randint(-64, 64, (rows, n), generator=torch.Generator().manual_seed(seed))
    return (ints / 16).to(dtype)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_half_row_sums_accumulate_in_f32_as_eager(
    dtype: torch.dtype, config: helion.Config
) -> None:
    x = grid_rows(37, 8000, dtype)
    x[:3] = torch.tensor(0.1, dtype=dtype)
    got = compile_kernel(row_sums.bind((x,)), config=config)(x)
    for out, expected in zip(got, (x.sum(-1), (x * x).sum(-1)), strict=True):
        assert torch.equal(out, expected), (out - expected).abs().max()


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("n", [256, 300])
def test_half_means_and_variances_round_once_as_eager(
    dtype: torch.dtype, config: helion.Config, n: int
) -> None:
    """Each row is symmetric about an integer, so its mean and its squared deviations are
    exact in f32 too, and the variance is the f64 one rounded (eager's Welford in f32 may
    differ from it in the last bit of f32, never here of the half)."""
    half = grid_rows(37, n // 2, torch.float32)
    centre = torch.arange(37, dtype=torch.float32)[:, None] - 18
    x = torch.cat([centre + half, centre - half], dim=1).to(dtype)
    got = compile_kernel(row_moments.bind((x,)), config=config)(x)
    got += compile_kernel(row_var_mean.bind((x,)), config=config)(x)
    wide = x.double()
    var = torch.var(wide, -1).to(dtype)
    want = [x.mean(-1), var, torch.std(wide, -1).to(dtype), var, x.mean(-1)]
    for k, (out, expected) in enumerate(zip(got, want, strict=True)):
        assert torch.equal(out, expected), (k, (out.float() - expected.float()).abs().max())


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_a_rolled_half_mean_of_random_rows_as_eager(dtype: torch.dtype) -> None:
    """Means that are no integers: the f32 sum divided, then rounded once."""
    x = grid_rows(37, 300, dtype, seed=1) + 3
    got = compile_kernel(row_moments.bind((x,)), config=CONFIGS[1])(x)
    assert torch.equal(got[0], x.mean(-1))


@helion.kernel(static_shapes=True)
def row_scans(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    sums, products, tails = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    for tile in hl.tile(m):
        row = x[tile, :]
        sums[tile, :] = torch.cumsum(row, -1)
        products[tile, :] = torch.cumprod(row * 0.03125 + 1, -1)
        tails[tile, :] = hl.cumsum(row, -1, reverse=True)
    return sums, products, tails


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("config", [*CONFIGS[:1], helion.Config(block_sizes=[16])], ids=str)
def test_half_cumulative_sums_and_products_accumulate_in_f32_as_eager(
    dtype: torch.dtype, config: helion.Config
) -> None:
    """Carried in the dtype, a bf16 cumsum of 300 values drifted by 10 from eager's. Eager
    scans in f32 in order, one element after the other, as the lowering does: bit for bit."""
    x = grid_rows(37, 300, dtype)
    got = compile_kernel(row_scans.bind((x,)), config=config)(x)
    want = (
        torch.cumsum(x, -1),
        torch.cumprod(x * 0.03125 + 1, -1),
        torch.cumsum(x.flip(-1), -1).flip(-1),
    )
    for k, (out, expected) in enumerate(zip(got, want, strict=True)):
        assert torch.equal(out, expected), (k, (out.float() - expected.float()).abs().max())
