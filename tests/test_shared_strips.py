"""Attention programs that copy the same K blocks run in groups that copy the whole strip
once (`share_packed_strips`); each program's running max, sum and accumulator stay its own,
so the kernel still matches eager, on one thread and on several, whatever the group. The
same for bf16 matmuls, whose programs have an f32 accumulator besides the copy."""

from __future__ import annotations

import re

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.mlir.parse import parse_module
from helion_fx_mlir.passes.pipelines import LLVM, apply


def _grid_after(bound: object, config: helion.Config | None, last_pass: str) -> str:
    module = apply(
        parse_module(generate_mlir(bound, config=config)), LLVM[: LLVM.index(last_pass) + 1]
    )
    return re.search(r"scf\.forall \([%\w, ]+\) in \(([\d, ]+)\)", str(module)).group(1)


CASES = [
    # 16 row blocks of 2 heads, K in 12 blocks of 16: groups of 4 programs (8 groups left).
    ((1, 2, 256, 32), (1, 2, 192, 32), None, "2, 4"),
    # Two batches, 32-row blocks: 4 programs per head in groups of 2.
    ((2, 2, 128, 32), (2, 2, 192, 32), helion.Config(block_sizes=[1, 32, 32]), "4, 2"),
    # 23 row blocks, a prime: groups of 6, 6, 6 and 5.
    ((1, 2, 368, 32), (1, 2, 192, 32), None, "2, 4"),
    # A key length the block does not divide: the last K block is masked, nothing shared.
    ((1, 2, 256, 32), (1, 2, 200, 32), None, "2, 16"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    ("q_shape", "kv_shape", "config", "grid"),
    CASES,
    ids=["default", "32-rows", "23-row-blocks", "masked-k"],
)
def test_attention_groups_share_the_k_strip(
    q_shape: tuple[int, ...],
    kv_shape: tuple[int, ...],
    config: helion.Config | None,
    grid: str,
    threads: int,
) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES["attention"]
    args = (torch.randn(*q_shape), torch.randn(*kv_shape), torch.randn(*kv_shape))
    bound = example.kernel.bind(args)
    assert _grid_after(bound, config, "helion-share-packed-strips") == grid
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), example.reference(*args)
    )


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("block_sizes", [[16, 16, 16], [16, 32, 32]])
def test_bf16_matmul_groups_share_the_b_strip(block_sizes: list[int], threads: int) -> None:
    """A bf16 matmul's programs have an f32 accumulator of their own besides the copy of B
    (one `memref.copy` per row): they run in turn, sharing the copy."""
    torch.set_num_threads(threads)
    example = EXAMPLES["matmul"]
    args = (
        torch.randn(128, 96, dtype=torch.bfloat16),
        torch.randn(96, 256, dtype=torch.bfloat16),
    )
    bound = example.kernel.bind(args)
    config = helion.Config(block_sizes=block_sizes)
    before = _grid_after(bound, config, "helion-group-grid-programs")
    after = _grid_after(bound, config, "helion-share-packed-strips")
    assert before != after
    torch.testing.assert_close(
        compile_kernel(bound, config=config)(*args), example.reference(*args)
    )


@pytest.mark.parametrize(("keys", "grid"), [(1024, "8"), (4096, "16")])
def test_a_strip_past_its_limit_is_not_copied(keys: int, grid: str) -> None:
    """1024 keys of 64 f32 are a 256 KB strip, shared by pairs of programs; 4096 keys a
    1 MB one, which L2 would not keep."""
    example = EXAMPLES["attention"]
    q, k = torch.randn(1, 1, 256, 64), torch.randn(1, 1, keys, 64)
    bound = example.kernel.bind((q, k, k))
    assert _grid_after(bound, None, "helion-share-packed-strips") == grid
