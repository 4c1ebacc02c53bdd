"""Rows the block does not divide (1000 in a block of 1024): the ops on the padded tile
compute only the valid lanes (`helion-trim-padded-tiles`) and the lane loops peel their
partial last tile. Results match eager on 1 and 2 threads, several configs, and every
access stays in bounds (`bounds_checks=True`)."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply

CASES = [
    ("layer_norm", (67, 1000), helion.Config(block_sizes=[1])),
    ("layer_norm", (67, 1000), helion.Config(block_sizes=[4])),
    ("layer_norm", (33, 768), helion.Config(block_sizes=[2])),
    ("rms_norm", (45, 300), helion.Config(block_sizes=[1])),
    ("softmax", (67, 1000), helion.Config(block_sizes=[1])),
    ("softmax", (30, 129), helion.Config(block_sizes=[8])),
    ("sum_rows", (50, 1000), helion.Config(block_sizes=[16])),
    ("sum_rows", (37, 3000), helion.Config(block_sizes=[1])),
    ("sum_rows", (37, 3000), helion.Config(block_sizes=[4])),
]


def _args(name: str, shape: tuple[int, int]) -> tuple[torch.Tensor, ...]:
    x = torch.randn(*shape)
    if name in ("layer_norm", "rms_norm"):
        weights = (torch.randn(shape[1]), torch.randn(shape[1]))
        return (x, *weights) if name == "layer_norm" else (x, weights[0])
    return (x,)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("name", "shape", "config"), CASES, ids=str)
def test_partial_rows_match_eager_in_bounds(
    name: str, shape: tuple[int, int], config: helion.Config, threads: int
) -> None:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    example = EXAMPLES[name]
    args = _args(name, shape)
    bound = example.kernel.bind(args)
    compiled = compile_kernel(bound, config=config, bounds_checks=threads == 1)
    torch.testing.assert_close(compiled(*args), example.reference(*args), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("name", ["layer_norm", "sum_rows"])
def test_the_pads_of_whole_rows_go(name: str) -> None:
    """On 1000-wide rows no tensor.pad is left after the pass: layer_norm's sums are masked
    to zero, sum_rows sums the pad of zeros itself (a copy of each row into a padded buffer,
    2x slower than eager on 2000x3000, where it is level now)."""
    bound = EXAMPLES[name].kernel.bind(_args(name, (8, 1000)))
    text = generate_mlir(bound, config=helion.Config(block_sizes=[1]))
    upto = LLVM.index("helion-trim-padded-tiles")
    before = str(apply(parse_module(text), LLVM[:upto]))
    after = str(apply(parse_module(text), LLVM[: upto + 1]))
    assert "tensor.pad" in before
    assert "tensor.pad" not in after
