"""A program's second pass over its row prefetches the next program's row
(`prefetch_next_program`): row kernels whose rows take several vector steps get the
prefetches and still match eager, on rows the vector steps do not divide, on one thread
and two; kernels that read their input once get none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import helion
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir, lower_to_llvm
from helion_fx_mlir.examples import EXAMPLES


def _prefetches(bound: Any, config: helion.Config) -> bool:
    return "prefetch" in lower_to_llvm(generate_mlir(bound, config=config))


def _rows(*shapes: tuple[int, ...]) -> Callable[[], tuple[torch.Tensor, ...]]:
    return lambda: tuple(torch.randn(*shape) for shape in shapes)


# One row per program (the default block), and 4 rows per program where the block divides
# the rows (the next program's rows are its index times 4 on: the index arithmetic is
# recomputed). A tile of several rows the block does not divide is copied once into a
# padded buffer and computed from there: no second pass over the argument to prefetch from.
ROW_KERNELS = [
    ("softmax", _rows((37, 1000)), [1]),
    ("softmax", _rows((2, 1000)), [1]),  # the last program prefetches its own row
    ("softmax", _rows((64, 1024)), [4]),
    ("layer_norm", _rows((37, 1000), (1000,), (1000,)), [1]),
    ("layer_norm", _rows((45, 768), (768,), (768,)), [1]),
    ("layer_norm", _rows((64, 1024), (1024,), (1024,)), [4]),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("name", "make", "block"), ROW_KERNELS)
def test_row_kernels_prefetch_the_next_rows_and_match_eager(
    name: str, make: Callable[[], tuple[torch.Tensor, ...]], block: list[int], threads: int
) -> None:
    torch.set_num_threads(threads)
    example = EXAMPLES[name]
    torch.manual_seed(0)
    args = make()
    bound = example.kernel.bind(args)
    config = helion.Config(block_sizes=block)
    assert _prefetches(bound, config)
    compiled = compile_kernel(bound, config=config)
    torch.testing.assert_close(compiled(*args), example.reference(*args))


@pytest.mark.parametrize(
    ("name", "make", "block"),
    [("add", _rows((64, 1000), (64, 1000)), [1, 64]), ("sum_rows", _rows((64, 1000)), [1])],
)
def test_kernels_reading_their_input_once_do_not_prefetch(
    name: str, make: Callable[[], tuple[torch.Tensor, ...]], block: list[int]
) -> None:
    bound = EXAMPLES[name].kernel.bind(make())
    assert not _prefetches(bound, helion.Config(block_sizes=block))
