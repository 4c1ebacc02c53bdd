"""A kernel whose host buffer has fewer rows than the device has tiles (test_bounds_checks)."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(config=helion.Config(block_sizes=[8]), static_shapes=True)
def tile_sums(x: torch.Tensor, rows: int) -> torch.Tensor:
    """Row i of the result is the sum of tile i; tiles past `rows` have no row to write."""
    m, n = x.size()
    out = torch.zeros([rows, n], dtype=x.dtype, device=x.device)
    for tile in hl.tile(m):
        out[tile.id, :] = torch.sum(x[tile, :], dim=0)
    return out
