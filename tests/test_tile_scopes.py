"""A tile used inside a loop over its own block size (`tile_scopes`): Device IR cannot tell
it from the inner loop's tile, and Helion's compiled code and its reference mode read
different data, so the kernel is refused at the use; the same kernel with its own inner
block size lowers and matches eager (the nesting without that use:
tests/test_independent_programs.py)."""

from __future__ import annotations

import inspect

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel, generate_mlir
from helion_fx_mlir.errors import LoweringError


@helion.kernel(static_shapes=True)
def block_column_sums(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.zeros([n], dtype=x.dtype, device=x.device)
    block = hl.register_block_size(m)
    for tm in hl.tile(m, block_size=block):
        for tk in hl.tile(n, block_size=block):
            out[tk] = out[tk] + x[tm, tk].sum(0)
    return out


@helion.kernel(static_shapes=True)
def own_inner_block(x: torch.Tensor) -> torch.Tensor:
    m, n = x.size()
    out = torch.zeros([m], dtype=x.dtype, device=x.device)
    rows = hl.register_block_size(m)
    cols = hl.register_block_size(n)
    for tm in hl.tile(m, block_size=rows):
        acc = hl.zeros([tm], dtype=torch.float32)
        for tk in hl.tile(n, block_size=cols):
            acc = acc + x[tm, tk].sum(1)
        out[tm] = acc
    return out


def test_outer_tile_inside_a_loop_over_its_block_is_refused_at_the_use() -> None:
    bound = block_column_sums.bind((torch.randn(70, 90),))
    line = inspect.getsourcelines(block_column_sums.fn)[1] + 7  # the decorator's line + 7
    with pytest.raises(LoweringError) as caught:
        generate_mlir(bound, config=helion.Config(block_sizes=[16]))
    assert caught.value.target == "helion.language.memory_ops.load"
    assert caught.value.source.endswith(f"test_tile_scopes.py:{line}")
    assert "tile 'tm' is used inside a loop that tiles its block size" in str(caught.value)
    assert "hl.register_block_size" in caught.value.reason


@pytest.mark.parametrize("block_sizes", [[16, 32], [8, 64]])
def test_an_inner_loop_with_its_own_block_size_matches_eager(block_sizes: list[int]) -> None:
    x = torch.randn(70, 90)
    bound = own_inner_block.bind((x,))
    result = compile_kernel(bound, config=helion.Config(block_sizes=block_sizes))(x)
    torch.testing.assert_close(result, x.sum(1), rtol=1e-5, atol=1e-4)
