"""Loops over chunks whose block does not divide the extent (`helion-peel-partial-chunks`):
rolled row reductions and device loops over row tiles (a column sum's, a matmul's K). The
whole chunks run as a loop of their own, static and unpadded, and the last chunk apart.
Results match eager on 1 and 2 threads, with Helion's default roll (past 4096 lanes) and
with explicit `reduction_loops`, and every access stays in bounds (`bounds_checks=True`)."""

from __future__ import annotations

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply

# None: the default config, which rolls these rows in chunks of 4096.
CASES = [
    ("sum_rows", (5, 5000), None),
    ("sum_rows", (9, 3000), helion.Config(block_sizes=[4], reduction_loops=[1024])),
    ("softmax", (6, 9000), None),
    ("softmax", (7, 2100), helion.Config(block_sizes=[2], reduction_loops=[512])),
    ("layer_norm", (5, 5000), None),
    ("layer_norm", (3, 1500), helion.Config(block_sizes=[1], reduction_loops=[256])),
    ("rms_norm", (4, 9000), None),
    ("col_sum", (1000, 300), None),
    ("col_sum", (77, 130), helion.Config(block_sizes=[64, 16])),
    ("matmul", (100, 130), helion.Config(block_sizes=[32, 32, 64])),
]


def _args(name: str, shape: tuple[int, int]) -> tuple[torch.Tensor, ...]:
    x = torch.randn(*shape)
    if name == "matmul":
        return x, torch.randn(shape[1], 70)
    if name == "layer_norm":
        return x, torch.randn(shape[1]), torch.randn(shape[1])
    return (x, torch.randn(shape[1])) if name == "rms_norm" else (x,)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("name", "shape", "config"), CASES, ids=str)
def test_rolled_rows_match_eager_in_bounds(
    name: str, shape: tuple[int, int], config: helion.Config | None, threads: int
) -> None:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    example = EXAMPLES[name]
    args = _args(name, shape)
    compiled = compile_kernel(example.kernel.bind(args), config=config, bounds_checks=threads == 1)
    torch.testing.assert_close(compiled(*args), example.reference(*args), atol=1e-4, rtol=1e-4)


def test_whole_chunks_need_no_pad() -> None:
    """sum_rows over 9000 lanes in chunks of 4096: before the pass one loop pads every
    chunk; after it and the trim, no chunk is padded and the last is 808 lanes."""
    bound = EXAMPLES["sum_rows"].kernel.bind(_args("sum_rows", (5, 9000)))
    text = generate_mlir(bound, config=helion.Config(block_sizes=[1], reduction_loops=[4096]))
    peel, trim = LLVM.index("helion-peel-partial-chunks"), LLVM.index("helion-trim-padded-tiles")
    before = str(apply(parse_module(text), LLVM[:peel]))
    after = str(apply(parse_module(text), LLVM[: trim + 1]))
    assert "tensor.pad" in before and "affine.min" in before
    assert "tensor.pad" not in after and "affine.min" not in after
    assert "tensor<808xf32>" in after
