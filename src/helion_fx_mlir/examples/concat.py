"""Concatenation: torch.cat of loaded tiles along a full (non-tiled) dim and along a
size-2 dim, and writing two inputs into one output (host views of one buffer, or one
loop over the output with masked loads of each input).

Inductor lowers `aten.cat` on a CPU device to a `ConcatKernel`, which Helion 1.5.1 cannot
trace (`InductorLoweringError: ... expected ComputedBuffer`); GPUs take the pointwise
path. Importing this module forces the pointwise lowering (`force_pointwise_cat`), which
is what a CUDA device gets, so the kernels bind on this CPU-only setup."""

from __future__ import annotations

import helion
import helion.language as hl
import torch
import torch._inductor.config as inductor_config

from .registry import FLOATS, Example, randn, tensors

inductor_config.force_pointwise_cat = True


@helion.kernel(static_shapes=True)
def cat_columns(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """out = cat([x, y], dim=1) with both rows loaded whole ([tile_m, :]) and concatenated."""
    m, n1 = x.size()
    n2 = y.size(1)
    out = torch.empty([m, n1 + n2], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        out[tile_m, :] = torch.cat([x[tile_m, :], y[tile_m, :]], dim=1)
    return out


@helion.kernel(static_shapes=True)
def cat_interleave_pairs(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """out[:, 2j] = x[:, j], out[:, 2j+1] = y[:, j]: cat of two [tile_m, 1, tile_n] tiles
    along the size-2 dim of a [m, n, 2] view."""
    m, n = x.size()
    out = torch.empty([m, 2 * n], dtype=x.dtype, device=x.device)
    out_pairs = out.view(m, n, 2)
    for tile_m, tile_n in hl.tile([m, n]):
        a = x[tile_m, tile_n][:, :, None]
        b = y[tile_m, tile_n][:, :, None]
        out_pairs[tile_m, tile_n, :] = torch.cat([a, b], dim=2)
    return out


@helion.kernel(static_shapes=True)
def cat_scaled_features(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    """cat([x * scale, silu(y)], dim=-1) in f32, cast to the input dtype."""
    m, n1 = x.size()
    n2 = y.size(1)
    out = torch.empty([m, n1 + n2], dtype=x.dtype, device=x.device)
    for tile_m in hl.tile(m):
        left = x[tile_m, :].to(torch.float32) * scale
        right = torch.nn.functional.silu(y[tile_m, :].to(torch.float32))
        out[tile_m, :] = torch.cat([left, right], dim=-1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def cat_rows_views(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """cat([x, y], dim=0) by writing each input into a host view of the output."""
    m1, n = x.size()
    m2 = y.size(0)
    out = torch.empty([m1 + m2, n], dtype=x.dtype, device=x.device)
    top = out[:m1]
    bottom = out[m1:]
    for tile_m, tile_n in hl.tile([m1, n]):
        top[tile_m, tile_n] = x[tile_m, tile_n]
    for tile_m, tile_n in hl.tile([m2, n]):
        bottom[tile_m, tile_n] = y[tile_m, tile_n]
    return out


@helion.kernel(static_shapes=True)
def cat_columns_masked(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """cat([x, y], dim=1) in one loop over the output: each input loaded with a mask
    saying which columns it owns (y at tile_n.index - n1), merged with torch.where."""
    m, n1 = x.size()
    n2 = y.size(1)
    out = torch.empty([m, n1 + n2], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([m, n1 + n2]):
        from_x = (tile_n.index < n1)[None, :]
        a = hl.load(x, [tile_m, tile_n], extra_mask=from_x)
        b = hl.load(y, [tile_m, tile_n.index - n1], extra_mask=~from_x)
        out[tile_m, tile_n] = torch.where(from_x, a, b)
    return out


EXAMPLES = [
    Example("cat_columns", cat_columns, tensors(randn(37, 50), randn(37, 30)), lambda x, y: torch.cat([x, y], 1),
            FLOATS, (helion.Config(block_sizes=[4]),)),
    Example("cat_interleave_pairs", cat_interleave_pairs, tensors(randn(37, 45), randn(37, 45)),
            lambda x, y: torch.stack([x, y], 2).flatten(1), FLOATS, (helion.Config(block_sizes=[8, 64]),)),
    Example("cat_scaled_features", cat_scaled_features, tensors(randn(45, 70), randn(45, 33), 0.5),
            lambda x, y, s: torch.cat([x.float() * s, torch.nn.functional.silu(y.float())], 1).to(x.dtype),
            FLOATS, (helion.Config(block_sizes=[16]),)),
    Example("cat_rows_views", cat_rows_views, tensors(randn(37, 70), randn(19, 70)), lambda x, y: torch.cat([x, y], 0),
            FLOATS, (helion.Config(block_sizes=[8, 16, 64, 8]),)),
    Example("cat_columns_masked", cat_columns_masked, tensors(randn(37, 50), randn(37, 29)),
            lambda x, y: torch.cat([x, y], 1), FLOATS, (helion.Config(block_sizes=[16, 8]),)),
]
