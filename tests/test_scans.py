"""Scans (`hl.associative_scan`, `hl.cumsum`, `hl.cumprod`) along a tile's last dim run
one row at a time, and update their tile in place (`rules/compute.py`): forward and
reverse, one input and a tuple of two, 2-D and 3-D tiles, along the last dim and along
the first. Against Helion's reference mode at shapes the blocks do not divide, under two
configs, and bounds-checked."""

from __future__ import annotations

from typing import Any

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel
from helion_fx_mlir.tools.eager_reference import eager_reference


def running_max(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.maximum(a, b)


def best_so_far(
    value_a: torch.Tensor, index_a: torch.Tensor, value_b: torch.Tensor, index_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    keep = value_a >= value_b
    return torch.where(keep, value_a, value_b), torch.where(keep, index_a, index_b)


@helion.kernel(static_shapes=True)
def row_scans(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    sums, tails, peaks = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        row = x[tile_m, :].to(torch.float32)
        sums[tile_m, :] = hl.cumsum(row, dim=1).to(x.dtype)
        tails[tile_m, :] = hl.cumsum(row, dim=1, reverse=True).to(x.dtype)
        peaks[tile_m, :] = hl.associative_scan(running_max, row, dim=1).to(x.dtype)
    return sums, tails, peaks


@helion.kernel(static_shapes=True)
def best_positions(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    values, positions = torch.empty_like(x), torch.empty(x.size(), dtype=torch.int32)
    for tile_m in hl.tile(x.size(0)):
        row = x[tile_m, :]
        index = hl.arange(x.size(1)).to(torch.int32)[None, :].expand(row.size())
        best, at = hl.associative_scan(best_so_far, (row, index), dim=1)
        values[tile_m, :] = best
        positions[tile_m, :] = at
    return values, positions


@helion.kernel(static_shapes=True)
def batched_products(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_b, tile_m in hl.tile([x.size(0), x.size(1)]):
        block = x[tile_b, tile_m, :]
        out[tile_b, tile_m, :] = hl.cumprod(torch.sigmoid(block) + 0.5, dim=2)
    return out


@helion.kernel(static_shapes=True)
def column_sums(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_n in hl.tile(x.size(1)):
        out[:, tile_n] = hl.cumsum(x[:, tile_n], dim=0)
    return out


def _case(kernel: Any, shape: tuple[int, ...], blocks: list[int], dtype: torch.dtype) -> Any:
    name = f"{kernel.fn.__name__}-{'x'.join(map(str, shape))}-{blocks}-{str(dtype)[6:]}"
    return pytest.param(kernel, shape, helion.Config(block_sizes=blocks), dtype, id=name)


CASES = [
    *(_case(row_scans, (37, 300), blocks, torch.float32) for blocks in ([8], [16])),
    _case(row_scans, (21, 130), [4], torch.bfloat16),
    *(_case(best_positions, (19, 70), blocks, torch.float32) for blocks in ([4], [32])),
    *(_case(batched_products, (3, 13, 40), blocks, torch.float32) for blocks in ([2, 8], [1, 16])),
    *(_case(column_sums, (50, 37), blocks, torch.float32) for blocks in ([8], [16])),
]


@pytest.mark.parametrize("bounds_checks", [False, True])
@pytest.mark.parametrize(("kernel", "shape", "config", "dtype"), CASES)
def test_matches_reference_mode(
    kernel: Any,
    shape: tuple[int, ...],
    config: helion.Config,
    dtype: torch.dtype,
    bounds_checks: bool,
) -> None:
    torch.manual_seed(0)
    x = torch.randn(*shape).to(dtype)
    compiled = compile_kernel(kernel.bind((x,)), config=config, bounds_checks=bounds_checks)
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(compiled(x), eager_reference(kernel)(x), **tolerance)
