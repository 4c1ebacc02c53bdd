"""Divisions by a broadcast divisor become reciprocal multiplies (`reciprocal_divisions`)
whose every lane is the IEEE quotient: bit for bit the quotient PyTorch computes, on values
of every magnitude, the special ones (zeros of both signs, infinities, NaN, subnormals)
among them, in blocks that do not divide the shape."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, lower_to_llvm


@helion.kernel(static_shapes=True)
def divide_rows(x: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] / d[tile_m, None]
    return out


@helion.kernel(static_shapes=True)
def divide_lanes(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] / y[tile_m, tile_n]
    return out


@helion.kernel(static_shapes=True)
def divide_by_constant(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile(x.size()):
        out[tile_m, tile_n] = x[tile_m, tile_n] / 3.7
    return out


@helion.kernel(static_shapes=True)
def normalize_rows(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile_m in hl.tile(x.size(0)):
        row = x[tile_m, :]
        out[tile_m, :] = row / torch.sum(torch.abs(row), dim=-1, keepdim=True)
    return out


SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-40, -3e-45, 3e38, 1e-30]


def _wide_range(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Values of random sign and magnitude 2^-150 .. 2^128, special values sprinkled in."""
    generator = torch.Generator().manual_seed(seed)
    exponents = torch.randint(-150, 128, shape, generator=generator).float()
    signs = torch.where(torch.rand(shape, generator=generator) < 0.5, -1.0, 1.0)
    values = signs * torch.rand(shape, generator=generator).add(1.0) * torch.exp2(exponents)
    flat = values.view(-1)
    picks = torch.randint(0, flat.numel(), (len(SPECIALS) * 8,), generator=generator)
    flat[picks] = torch.tensor(SPECIALS * 8)
    return values


def _assert_same_bits(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Equal values, NaN where NaN, and the same sign on zeros."""
    torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)
    numbers = ~torch.isnan(expected)
    assert torch.equal(torch.signbit(actual[numbers]), torch.signbit(expected[numbers]))


def _rows_and_divisors(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of moderate values over ordinary divisors (the fast path), over divisors of
    every magnitude, and rows of the wide range."""
    generator = torch.Generator().manual_seed(seed)
    scales = torch.exp2(torch.randint(-60, 60, (45, 1), generator=generator).float())
    x = torch.cat(
        [
            torch.randn(45, 200, generator=generator) * scales,
            torch.randn(40, 200, generator=generator),
            _wide_range((37, 200), seed),
        ]
    )
    d = torch.cat(
        [
            torch.randn(45, generator=generator),
            _wide_range((40,), seed + 1),
            torch.randn(37, generator=generator),
        ]
    )
    return x, d


@pytest.mark.parametrize("block", [[8, 64], [1, 128], [16, 32]])
def test_divisions_by_a_row_value_are_the_ieee_quotients(block: list[int]) -> None:
    x, d = _rows_and_divisors(block[0])
    compiled = compile_kernel(divide_rows.bind((x, d)), config=helion.Config(block_sizes=block))
    _assert_same_bits(compiled(x, d), x / d[:, None])


@pytest.mark.parametrize("block", [[4, 64], [32, 16]])
def test_divisions_by_a_constant_are_the_ieee_quotients(block: list[int]) -> None:
    x = torch.cat([_wide_range((50, 130), 7), torch.randn(50, 130)])
    compiled = compile_kernel(
        divide_by_constant.bind((x,)), config=helion.Config(block_sizes=block)
    )
    _assert_same_bits(compiled(x), x / 3.7)


@pytest.mark.parametrize("block", [[1], [4]])
def test_a_row_divided_by_its_own_norm_matches_eager(block: list[int]) -> None:
    x = torch.randn(61, 1000)
    x[3] = 0.0  # 0 / 0: NaN, as eager
    compiled = compile_kernel(normalize_rows.bind((x,)), config=helion.Config(block_sizes=block))
    torch.testing.assert_close(compiled(x), x / x.abs().sum(-1, keepdim=True), equal_nan=True)


def test_only_broadcast_divisors_take_the_reciprocal() -> None:
    """A divisor that varies lane by lane keeps its division: no corrected product."""
    x, d = torch.randn(16, 64), torch.randn(16)
    config = helion.Config(block_sizes=[8, 64])
    by_row = lower_to_llvm(generate_mlir(divide_rows.bind((x, d)), config=config))
    by_lane = lower_to_llvm(generate_mlir(divide_lanes.bind((x, x)), config=config))
    assert "llvm.intr.fma" in by_row and "llvm.intr.fma" not in by_lane
