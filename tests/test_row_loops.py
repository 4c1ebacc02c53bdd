"""Hand-written `[tile_m, block_n]` accumulators over a loop of row chunks: the chunk loop
and the loop over the accumulator's rows are interchanged (helion-interchange-row-loops),
each row then streamed into a register accumulator. Proven on shapes no block divides,
under several configs, with every access checked once."""

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
def weighted_row_stats(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row: sum of x * w (w shared by every row) and the largest |x| (the chunk's lanes
    past n masked by the column index), each from an accumulator of its own."""
    m, n = x.size()
    dot = torch.empty([m], dtype=torch.float32, device=x.device)
    peak = torch.empty([m], dtype=torch.float32, device=x.device)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        total = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            total += x[tile_m, tile_n].float() * w[tile_n].float()[None, :]
        dot[tile_m] = total.sum(-1)
        largest = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            inside = tile_n.index[None, :] < n
            largest = torch.maximum(
                largest, torch.where(inside, x[tile_m, tile_n].float().abs(), 0.0)
            )
        peak[tile_m] = largest.amax(-1)
    return dot, peak


def weighted_row_stats_eager(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (x.float() * w.float()).sum(-1), x.float().abs().amax(-1)


CONFIGS = [
    helion.Config(block_sizes=[32, 32]),
    helion.Config(block_sizes=[8, 64]),
    helion.Config(block_sizes=[1, 16]),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_row_accumulators_match_eager(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    x, w = torch.randn(77, 1001).to(dtype), torch.randn(1001).to(dtype)
    bound = weighted_row_stats.bind((x, w))
    expected = weighted_row_stats_eager(x, w)
    for i, config in enumerate(CONFIGS):
        got = compile_kernel(bound, config=config, bounds_checks=i == 0)(x, w)
        for out, want in zip(got, expected, strict=True):
            torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-3)


def test_whole_row_tiles_stream_their_rows() -> None:
    """With 64 rows (two whole tiles of 32) the programs' chunk loops run inside a loop
    over the rows, each carrying one row of the accumulator as a vector."""
    x, w = torch.randn(64, 1001), torch.randn(1001)
    text = generate_mlir(weighted_row_stats.bind((x, w)), config=CONFIGS[0])
    module = apply(parse_module(text), LLVM[: LLVM.index("helion-interchange-row-loops") + 1])
    with mlir_context():
        carried = [
            loop
            for loop in ops_named(module, "scf.for")
            if "vector<1x32xf32>" in str(loop).split("{")[0]
        ]
    assert len(carried) == 2, [str(loop).split("{")[0] for loop in carried]
