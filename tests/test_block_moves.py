"""Block moves after bufferization (`helion-vectorize-copies`): a padded load of a
128x128 block and the copy of a tile's valid lanes into the output run as loops over rows
of masked 64-lane chunks, not as one transfer of the whole block (which took LLVM seconds
to compile). Results match eager on shapes the blocks do not divide, in 2-D and 3-D."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply

CASES = [
    ("add", [(130, 130), (130, 130)], helion.Config(block_sizes=[128, 128])),
    ("add", [(47, 101), (47, 101)], helion.Config(block_sizes=[64, 128])),
    ("matmul", [(130, 70), (70, 129)], helion.Config(block_sizes=[128, 128, 64])),
    ("bmm", [(3, 37, 20), (3, 20, 45)], helion.Config(block_sizes=[2, 32, 64, 16])),
]


@pytest.mark.parametrize(("name", "shapes", "config"), CASES, ids=str)
def test_block_moves_match_eager(
    name: str, shapes: list[tuple[int, ...]], config: helion.Config
) -> None:
    torch.manual_seed(0)
    example = EXAMPLES[name]
    args = tuple(torch.randn(*shape) for shape in shapes)
    compiled = compile_kernel(example.kernel.bind(args), config=config)
    torch.testing.assert_close(compiled(*args), example.reference(*args), atol=1e-4, rtol=1e-4)


def test_no_transfer_moves_a_whole_block() -> None:
    """add on 130x130 in 128x128 blocks: before the pass, each input's padded load is one
    128x128 transfer; after it, every transfer is one row chunk of at most 64 lanes."""
    args = (torch.randn(130, 130), torch.randn(130, 130))
    text = generate_mlir(
        EXAMPLES["add"].kernel.bind(args), config=helion.Config(block_sizes=[128, 128])
    )
    upto = LLVM.index("helion-vectorize-copies")
    assert "vector<128x128xf32>" in str(apply(parse_module(text), LLVM[:upto]))
    after = str(apply(parse_module(text), LLVM[: upto + 1]))
    assert "vector<128x128xf32>" not in after
    assert "vector<64xf32>" in after
