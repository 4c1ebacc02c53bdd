"""A kernel whose constants MLIR cannot spell the Python way: inf, -inf, nan, -0.0, 1e-05, True."""

from __future__ import annotations

import helion
import helion.language as hl
import torch


@helion.kernel(static_shapes=True)
def special_values(x: torch.Tensor) -> torch.Tensor:
    """Tile-wide fills of inf, -inf, -0.0 and True, a tiny scale, a nan from torch.where."""
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        keep = hl.full([tile], True, dtype=torch.bool)
        floor = hl.full([tile], float("-inf"), dtype=x.dtype)
        ceiling = hl.full([tile], float("inf"), dtype=x.dtype)
        negative_zero = hl.full([tile], -0.0, dtype=x.dtype)
        clamped = torch.minimum(torch.maximum(x[tile] * 1e-05, floor), ceiling) + negative_zero
        out[tile] = torch.where(keep & (x[tile] > 0), clamped, float("nan"))
    return out


def special_values_reference(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x * 1e-05, float("nan"))
