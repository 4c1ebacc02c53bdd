"""`hl.reduce` with a combine of its own, over rows of several 16-lane chunks: 16 partial
results side by side (the row's last partial chunk combined into the first lanes), then
the lanes folded. Helion asks the combine to be associative and commutative, so the
results are the sequential fold's: exactly for an argmin with ties, within rounding for
sums."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel


def first_least(
    value_a: torch.Tensor, index_a: torch.Tensor, value_b: torch.Tensor, index_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The smaller value; between equal ones, the smaller index."""
    take_b = (value_b < value_a) | ((value_b == value_a) & (index_b < index_a))
    return torch.where(take_b, value_b, value_a), torch.where(take_b, index_b, index_a)


def largest_magnitude(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.maximum(a.abs(), b.abs())


def sum_and_squares(
    sum_a: torch.Tensor, sq_a: torch.Tensor, sum_b: torch.Tensor, sq_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    return sum_a + sum_b, sq_a + sq_b


@helion.kernel(static_shapes=True)
def row_reduces(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Per row: the first least value and its column, the largest magnitude, and the sum
    and sum of squares."""
    m, n = x.size()
    least = torch.empty([m], dtype=x.dtype, device=x.device)
    at = torch.empty([m], dtype=torch.int64, device=x.device)
    peak = torch.empty([m], dtype=x.dtype, device=x.device)
    total = torch.empty([m], dtype=torch.float32, device=x.device)
    squares = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n], block_size=[None, n]):
        row = x[tile_m, tile_n]
        cols = tile_n.index[None, :].to(torch.int64).expand_as(row)
        least[tile_m], at[tile_m] = hl.reduce(first_least, (row, cols), dim=1)
        peak[tile_m] = hl.reduce(largest_magnitude, row, dim=1)
        wide = row.to(torch.float32)
        total[tile_m], squares[tile_m] = hl.reduce(sum_and_squares, (wide, wide * wide), dim=1)
    return least, at, peak, total, squares


def row_reduces_eager(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    least = x.min(dim=1)
    wide = x.float()
    return least.values, least.indices, x.abs().amax(1), wide.sum(1), (wide * wide).sum(1)


@helion.kernel(static_shapes=True)
def column_first_least(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same argmin down each column: along a dim that is not the last."""
    m, n = x.size()
    least = torch.empty([n], dtype=x.dtype, device=x.device)
    at = torch.empty([n], dtype=torch.int64, device=x.device)
    for tile_m, tile_n in hl.tile([m, n], block_size=[m, None]):
        col = x[tile_m, tile_n]
        rows = tile_m.index[:, None].to(torch.int64).expand_as(col)
        least[tile_n], at[tile_n] = hl.reduce(first_least, (col, rows), dim=0)
    return least, at


def _ties(m: int, n: int, dtype: torch.dtype) -> torch.Tensor:
    """Small integers (many ties in every row, exact in every dtype), with rows whose least
    value sits in the last partial chunk only, or in every lane."""
    torch.manual_seed(0)
    x = torch.randint(-3, 4, (m, n)).to(dtype)
    x[0, -1] = -9
    x[1] = 2
    x[2, n - 5 :] = -7
    return x


@pytest.mark.parametrize("n", [40, 100, 1000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_custom_row_reduces_as_eager(n: int, dtype: torch.dtype) -> None:
    """Rows of 2 chunks and a half, of 6 and a quarter, of 62 and a half; configs of one row
    (every access checked) and of 8 rows per program."""
    x = _ties(23, n, dtype)
    bound = row_reduces.bind((x,))
    expected = row_reduces_eager(x)
    for rows in (1, 8):
        got = compile_kernel(
            bound, config=helion.Config(block_sizes=[rows]), bounds_checks=rows == 1
        )(x)
        for out, want in zip(got, expected, strict=True):
            torch.testing.assert_close(out, want)


def test_custom_column_reduce_as_eager() -> None:
    x = _ties(100, 37, torch.float32).T.contiguous()
    for config in (helion.Config(block_sizes=[1]), helion.Config(block_sizes=[16])):
        got = compile_kernel(column_first_least.bind((x,)), config=config)(x)
        expected = x.min(dim=0)
        torch.testing.assert_close(got[0], expected.values)
        torch.testing.assert_close(got[1], expected.indices)
