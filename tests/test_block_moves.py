"""Block moves after bufferization (`helion-vectorize-copies`): a padded load of a
128x128 block and the copy of a tile's valid lanes into the output run as loops over rows
of masked 64-lane chunks, not as one transfer of the whole block (which took LLVM seconds
to compile), and so does one padded row longer than a chunk (a 4100-wide row's last
4096-wide chunk: as one vector LLVM ran 2 ms a row). Results match eager on shapes the
blocks do not divide, in 1-D, 2-D and 3-D."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.mlir.walk import ops_named
from helion_fx_mlir.passes.pipelines import LLVM, apply

CASES = [
    ("add", [(130, 130), (130, 130)], helion.Config(block_sizes=[128, 128])),
    ("add", [(47, 101), (47, 101)], helion.Config(block_sizes=[64, 128])),
    ("matmul", [(130, 70), (70, 129)], helion.Config(block_sizes=[128, 128, 64])),
    ("bmm", [(3, 37, 20), (3, 20, 45)], helion.Config(block_sizes=[2, 32, 64, 16])),
    ("sum_rows", [(37, 4100)], helion.Config(block_sizes=[1])),
    ("sum_rows", [(9, 5000)], helion.Config(block_sizes=[2])),
    ("softmax", [(9, 4100)], helion.Config(block_sizes=[1])),
    ("softmax", [(9, 3000)], helion.Config(block_sizes=[1])),
    ("softmax_two_pass", [(37, 300)], helion.Config(block_sizes=[32, 32])),
    ("softmax_two_pass", [(70, 50)], helion.Config(block_sizes=[32, 16])),
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


@pytest.mark.parametrize(
    ("config", "row"),
    [(None, "vector<4096xf32>"), (helion.Config(block_sizes=[1]), "vector<8192xf32>")],
    ids=["default", "whole-row"],
)
def test_no_transfer_moves_a_whole_padded_row(config: helion.Config | None, row: str) -> None:
    """sum_rows on 4100-wide rows: the row padded to its 8192 block (Helion's default
    config reads it in 4096-wide chunks, the last with 4 lanes valid) is copied into its
    buffer in 64-lane chunks, not as one vector. The pipeline runs without the passes that
    drop sum_rows' pads (its pad of zeros is the sum's neutral value); a reduction whose
    padding is not neutral keeps its padded row as this one does without them."""
    args = (torch.randn(37, 4100),)
    text = generate_mlir(EXAMPLES["sum_rows"].kernel.bind(args), config=config)
    upto = LLVM.index("helion-vectorize-copies")
    untrimmed = [
        p
        for p in LLVM[: upto + 1]
        if p not in ("helion-peel-partial-chunks", "helion-trim-padded-tiles")
    ]
    assert row in str(apply(parse_module(text), untrimmed[:-1]))
    after = str(apply(parse_module(text), untrimmed))
    assert row not in after
    assert "vector<64xf32>" in after


def test_a_chunk_with_nothing_to_read_loads_nothing() -> None:
    """softmax_two_pass on 37 rows in 32-row blocks: its last program's padded load has 5
    valid rows of 32; every masked read sits in the branch taken where a chunk has lanes
    to read, the others are the padding value. Loads past the source, though masked off,
    cost microcode assists: 1000x3072 in 32x32 blocks 2.4 -> 1.3 ms on 2 threads."""
    args = (torch.randn(37, 300),)
    text = generate_mlir(
        EXAMPLES["softmax_two_pass"].kernel.bind(args), config=helion.Config(block_sizes=[32, 32])
    )
    upto = LLVM.index("helion-vectorize-copies")
    after = apply(parse_module(text), LLVM[: upto + 1])
    reads = [  # masked reads of the input's tiles (views of the argument)
        op
        for op in ops_named(after, "vector.transfer_read")
        if op.operands[-1].owner.name == "vector.create_mask"
        and op.operands[0].owner.name == "memref.subview"
    ]
    assert reads
    assert all(op.parent.name == "scf.if" for op in reads)
