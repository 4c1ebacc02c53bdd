"""A kernel's inputs are the user's: no generated code writes into them. One-shot
bufferization takes every function argument as writable, and a one-program grid whose
result was folded into an input's value wrote that result into the input
(`passes/buffers.py`: `record_outputs`, `read_only_inputs`)."""

from __future__ import annotations

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply


@helion.kernel(static_shapes=True)
def column_totals_plus_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    n = x.size(1)
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    for tile_n in hl.tile(n):
        out[tile_n] = x[:, tile_n].sum(0) + bias[tile_n]
    return out


@helion.kernel(static_shapes=True)
def shift_in_place(x: torch.Tensor, shift: torch.Tensor) -> None:
    for tile in hl.tile(x.size(0)):
        x[tile] = x[tile] + shift[tile]


@pytest.mark.parametrize(("n", "block"), [(23, 32), (64, 64), (23, 8)])
def test_a_one_program_sum_plus_bias_leaves_the_bias_alone(n: int, block: int) -> None:
    """With one program (23 columns in a block of 32, 64 in 64) the sum was written into
    `bias`: the right result, and the user's bias overwritten with it."""
    x, bias = torch.randn(37, n), torch.randn(n)
    before = bias.clone()
    bound = column_totals_plus_bias.bind((x, bias))
    out = compile_kernel(bound, config=helion.Config(block_sizes=[block]))(x, bias)
    torch.testing.assert_close(bias, before, rtol=0, atol=0)
    torch.testing.assert_close(out, x.sum(0) + before)


def test_inputs_are_read_only_and_a_kernel_still_writes_the_input_it_stores_to() -> None:
    """`x` is stored to (an output, written in place), `shift` only read."""
    x, shift = torch.randn(45), torch.randn(45)
    bound = shift_in_place.bind((x, shift))
    stages = LLVM[: LLVM.index("helion-read-only-inputs") + 1]
    with mlir_context():
        text = str(apply(parse_module(generate_mlir(bound)), stages))
    (signature,) = [line for line in text.splitlines() if "func.func @shift_in_place" in line]
    assert "%arg0: tensor<45xf32>, " in signature
    assert "%arg1: tensor<45xf32> {bufferization.writable = false}" in signature
    want = x + shift
    compile_kernel(bound)(x, shift)
    torch.testing.assert_close(x, want)
