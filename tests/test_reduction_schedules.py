"""Reductions read several rows a step (`vectorize.py`): a row reduction sums up to 8 rows
in 16-lane chunks at once; a reduction over outer dims sums up to 8 rows of a chunk in
registers before its accumulator, as lane-wise combines (`helion-combine-outer-reductions`).
Each runs the fast pipeline against eager on shapes the blocks do not divide, under several
configs, in f32 and bf16, for sums, maxima, a middle dim of a 3-D tensor and the mean of a
negated row (a sum whose body subtracts each element from the accumulator)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply


@helion.kernel(static_shapes=True)
def column_max(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([n], dtype=torch.float32, device=x.device)
    for tile_n in hl.tile(n):
        best = hl.full([tile_n], float("-inf"), dtype=torch.float32)
        for tile_m in hl.tile(m):
            best = torch.maximum(best, x[tile_m, tile_n].to(torch.float32).amax(0))
        out[tile_n] = best
    return out


@helion.kernel(static_shapes=True)
def middle_sum(x: torch.Tensor) -> torch.Tensor:
    b, m, n = x.size()
    out = torch.empty([b, n], dtype=x.dtype, device=x.device)
    for tile_b, tile_n in hl.tile([b, n]):
        acc = hl.zeros([tile_b, tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m):
            acc = acc + x[tile_b, tile_m, tile_n].to(torch.float32).sum(1)
        out[tile_b, tile_n] = acc.to(x.dtype)
    return out


@helion.kernel(static_shapes=True)
def row_sum_of_squares(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0)], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(x.size(0)):
        row = x[tile_m, :].to(torch.float32)
        out[tile_m] = (row * row).sum(-1)
    return out


@helion.kernel(static_shapes=True)
def negated_row_mean(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty([x.size(0)], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(x.size(0)):
        out[tile_m] = torch.mean(-x[tile_m, :].to(torch.float32), -1)
    return out


CASES = [
    (column_max, (77, 300), torch.float32, [64, 8], lambda x: x.amax(0)),
    (column_max, (77, 300), torch.bfloat16, [32, 4], lambda x: x.float().amax(0)),
    (column_max, (5, 33), torch.float32, [16, 2], lambda x: x.amax(0)),
    (middle_sum, (3, 45, 70), torch.float32, [1, 64, 8], lambda x: x.sum(1)),
    (middle_sum, (3, 45, 70), torch.float32, [2, 32, 16], lambda x: x.sum(1)),
    (middle_sum, (3, 45, 70), torch.bfloat16, [1, 16, 4], lambda x: x.float().sum(1).to(x.dtype)),
    (row_sum_of_squares, (45, 300), torch.float32, [8], lambda x: (x * x).sum(-1)),
    (row_sum_of_squares, (45, 300), torch.float32, [4], lambda x: (x * x).sum(-1)),
    (row_sum_of_squares, (45, 300), torch.bfloat16, [16], lambda x: (x.float() ** 2).sum(-1)),
    (row_sum_of_squares, (7, 20), torch.float32, [2], lambda x: (x * x).sum(-1)),
    (negated_row_mean, (45, 300), torch.float32, [1], lambda x: (-x).mean(-1)),
    (negated_row_mean, (45, 65), torch.float32, [4], lambda x: (-x).mean(-1)),
    (negated_row_mean, (7, 20), torch.bfloat16, [2], lambda x: (-x.float()).mean(-1)),
]


def _id(case: tuple[Any, ...]) -> str:
    kernel, shape, dtype, blocks, _ = case
    return f"{kernel.name}-{'x'.join(map(str, shape))}-{str(dtype).removeprefix('torch.')}-{blocks}"


@pytest.mark.parametrize(
    ("kernel", "shape", "dtype", "blocks", "eager"), CASES, ids=[_id(c) for c in CASES]
)
def test_reductions_match_eager(
    kernel: Any,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    blocks: list[int],
    eager: Callable[[torch.Tensor], torch.Tensor],
) -> None:
    torch.manual_seed(0)
    x = torch.randn(*shape).to(dtype)
    compiled = compile_kernel(kernel.bind((x,)), config=helion.Config(block_sizes=blocks))
    torch.testing.assert_close(compiled(x), eager(x), atol=1e-2, rtol=1e-2)


def _vectorized(kernel: Any, x: torch.Tensor, blocks: list[int]) -> str:
    text = generate_mlir(kernel.bind((x,)), config=helion.Config(block_sizes=blocks))
    return str(apply(parse_module(text), LLVM[: LLVM.index("helion-combine-outer-reductions") + 1]))


def test_a_column_step_adds_its_rows_lane_by_lane() -> None:
    """64 columns by 8 rows: one read of 8 rows, combined row by row, no multi-reduction
    left for MLIR's lowering to transpose."""
    text = _vectorized(column_max, torch.randn(77, 300), [64, 8])
    assert "vector<8x64xf32>" in text
    assert "vector.multi_reduction" not in text


def test_a_row_step_reads_eight_rows() -> None:
    text = _vectorized(row_sum_of_squares, torch.randn(45, 300), [8])
    assert "vector<8x16xf32>" in text
