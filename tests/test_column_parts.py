"""Matmuls whose columns no wide power of two divides (an edge program's 40 of 64, 9 of
a 64-column block, a 28-column one) are split into column parts before vectorizing
(`column_parts.py`): wide register tiles for most columns, narrow ones for the
rest. Every kernel with a dot product still matches eager at such shapes, with an
accumulator that starts as zeros and one that starts as a bias, under several configs."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.grid_groups import target_threads
from helion_fx_mlir.passes.pipelines import LLVM, apply

# (M, K, N): N's last block 40, 9 and 28 columns wide in 64-column blocks, after three
# whole ones (the edge a grid of its own, `grid_edges.py`).
SHAPES = [(130, 100, 232), (70, 37, 201), (33, 65, 220)]
CONFIGS = [[64, 64, 64], [32, 64, 32]]
KERNELS = {
    "matmul": lambda m, k, n: (torch.randn(m, k), torch.randn(k, n)),
    "matmul_bias_relu": lambda m, k, n: (torch.randn(m, k), torch.randn(k, n), torch.randn(n)),
    "bmm": lambda m, k, n: (torch.randn(2, m, k), torch.randn(2, k, n)),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("block_sizes", CONFIGS, ids=["64", "32x64x32"])
@pytest.mark.parametrize("shape", SHAPES, ids=["40", "9", "28"])
@pytest.mark.parametrize("name", KERNELS)
def test_split_columns_match_eager(
    name: str, shape: tuple[int, int, int], block_sizes: list[int], dtype: torch.dtype
) -> None:
    torch.manual_seed(0)
    args = tuple(t.to(dtype) for t in KERNELS[name](*shape))
    example = EXAMPLES[name]
    config = helion.Config(block_sizes=[1, *block_sizes] if name == "bmm" else block_sizes)
    result = compile_kernel(example.kernel.bind(args), config=config)(*args)
    tolerance = {"rtol": 2e-2, "atol": 5e-2} if dtype == torch.bfloat16 else {}
    torch.testing.assert_close(result.float(), example.reference(*args).float(), **tolerance)


def test_an_edge_of_40_columns_takes_32_wide_tiles() -> None:
    """The right edge's programs (40 columns) multiply in 8x32 and 8x8 register tiles."""
    args = (torch.randn(130, 100), torch.randn(100, 232))
    bound = EXAMPLES["matmul"].kernel.bind(args)
    module = parse_module(generate_mlir(bound, config=helion.Config(block_sizes=[64, 64, 64])))
    target_threads(module, 2)
    vectorized = str(apply(module, LLVM[: LLVM.index("helion-vectorize-tile-bodies") + 1]))
    assert "vector<1x32xf32> into vector<8x32xf32>" in vectorized
    assert "vector<1x8xf32> into vector<8x8xf32>" in vectorized
