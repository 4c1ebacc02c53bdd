"""A contraction's register tiles start from their accumulator's constant (`hl.zeros`,
`hl.full`) instead of reading it back from the tile the fill wrote (`filled_tiles.py`),
and the fill goes; kernels whose tiles do not cover the accumulator keep it. Each runs
against eager, on shapes the blocks divide and shapes they do not."""

from __future__ import annotations

import re

import helion
import helion.language as hl
import pytest
import torch
from helion.runtime.kernel import Kernel

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.grid_groups import target_threads
from helion_fx_mlir.passes.pipelines import LINALG, VECTORIZE, apply

THROUGH_FILLS = VECTORIZE[: VECTORIZE.index("helion-start-tiles-from-fills") + 1]
CONFIGS = [helion.Config(block_sizes=[64, 64, 64]), helion.Config(block_sizes=[32, 64, 16])]
# The register tiles of a 64-wide block on AVX-512: rows of 6, the block's last rows peeled.
TILES = {64: ["6x64", "4x64"], 32: ["6x64", "2x64"]}
SHAPES = [(128, 96, 192), (200, 72, 300)]  # (M, K, N): blocks divide, blocks do not


@helion.kernel(static_shapes=True)
def offset_matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """x @ w + 0.5, the 0.5 the accumulator's start, in x's dtype."""
    m, k = x.size()
    n = w.size(1)
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.full([tile_m, tile_n], 0.5, dtype=x.dtype)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], w[tile_k, tile_n])
        out[tile_m, tile_n] = acc
    return out


def _args(m: int, k: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(m, k), torch.randn(k, n)


def _vectorized(kernel: Kernel, args: tuple[torch.Tensor, ...], config: helion.Config) -> str:
    """Through the pass, the grid shared by 2 threads (so the edges' grids split off, and
    its whole tiles' register tiles cover their accumulators)."""
    module = apply(parse_module(generate_mlir(kernel.bind(args), config=config)), LINALG)
    target_threads(module, 2)
    return str(apply(module, THROUGH_FILLS))


@pytest.mark.parametrize("shape", SHAPES, ids=["divides", "edges"])
@pytest.mark.parametrize("config", CONFIGS, ids=["64", "32x64x16"])
def test_tiles_start_from_the_constant_and_match_eager(
    shape: tuple[int, int, int], config: helion.Config
) -> None:
    """The fill's row writes are gone from every grid: the whole tiles' and the edges'
    (whose accumulators are the valid corners of their tiles); the rows of 6 and the
    block's peeled last rows both start from the constant."""
    args = _args(*shape)
    text = _vectorized(offset_matmul, args, config)
    for tile in TILES[config.block_sizes[0]]:
        assert f"arith.constant dense<5.000000e-01> : vector<{tile}xf32>" in text
    assert not re.search(r"vector<1x\d+xf32>, tensor<\d+x\d+xf32>", text)
    got = compile_kernel(offset_matmul.bind(args), config=config)(*args)
    torch.testing.assert_close(got, args[0] @ args[1] + 0.5, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", SHAPES, ids=["divides", "edges"])
def test_zero_started_matmul_runs_right_with_and_without_bounds_checks(
    shape: tuple[int, int, int],
) -> None:
    example = EXAMPLES["matmul"]
    args = _args(*shape)
    text = _vectorized(example.kernel, args, CONFIGS[0])
    for tile in TILES[64]:
        assert f"arith.constant dense<0.000000e+00> : vector<{tile}xf32>" in text
    for bounds_checks in (False, True):
        bound = example.kernel.bind(args)
        kernel = compile_kernel(bound, config=CONFIGS[0], bounds_checks=bounds_checks)
        torch.testing.assert_close(kernel(*args), example.reference(*args))


@pytest.mark.parametrize("shape", SHAPES, ids=["divides", "edges"])
def test_f64_tiles_are_half_as_wide_and_run_right(shape: tuple[int, int, int]) -> None:
    """f64 lanes are twice as wide: 6x32 tiles (24 registers, as 6x64 of f32), the block's
    last 4 rows peeled, both started from the constant; with and without bounds checks."""
    args = tuple(a.double() for a in _args(*shape))
    text = _vectorized(offset_matmul, args, CONFIGS[0])
    for tile in ("6x32", "4x32"):
        assert f"arith.constant dense<5.000000e-01> : vector<{tile}xf64>" in text
    for bounds_checks in (False, True):
        bound = offset_matmul.bind(args)
        kernel = compile_kernel(bound, config=CONFIGS[0], bounds_checks=bounds_checks)
        torch.testing.assert_close(kernel(*args), args[0] @ args[1] + 0.5)


@pytest.mark.parametrize(
    "config",
    [helion.Config(block_sizes=[1, 64, 64, 64]), helion.Config(block_sizes=[1, 16, 16, 16])],
    ids=["64", "16"],
)
def test_bmm_tiles_span_the_unit_batch_and_match_eager(config: helion.Config) -> None:
    """A batch block of 1 (the tile's unit dim, at index 0) and, in 16-wide blocks, a
    register tile as wide as the accumulator: the tiles still start from zeros."""
    example = EXAMPLES["bmm"]
    torch.manual_seed(0)
    args = (torch.randn(3, 200, 128), torch.randn(3, 128, 300))
    tiles = ["1x6x64", "1x4x64"] if config.block_sizes[1] == 64 else ["1x8x16"]
    whole_tiles = _vectorized(example.kernel, args, config).split("scf.forall")[1]
    for tile in tiles:
        assert f"arith.constant dense<0.000000e+00> : vector<{tile}xf32>" in whole_tiles
    got = compile_kernel(example.kernel.bind(args), config=config)(*args)
    torch.testing.assert_close(got, example.reference(*args))
