"""Manual reduction loops with registered block sizes: `bs = hl.register_block_size(n)`,
a `[tile_m, bs]` accumulator that inner `hl.tile(n, block_size=bs)` chunks are added to,
reduced once at the end; long sums, two-pass softmax and normalization sharing one block
size between loops, index masks for max reductions."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example, in_f32, randn, tensors


@helion.kernel(static_shapes=True)
def manual_row_sum(x: torch.Tensor) -> torch.Tensor:
    """Long row sums: a [tile_m, block_n] accumulator, one sum over it at the end."""
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        acc = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            acc += x[tile_m, tile_n].to(torch.float32)
        out[tile_m] = acc.sum(-1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def manual_row_var(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and population variance per row from two chunk accumulators (sum, sum of squares)."""
    m, n = x.size()
    mean = torch.empty([m], dtype=torch.float32, device=x.device)
    var = torch.empty([m], dtype=torch.float32, device=x.device)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        s1 = hl.zeros([tile_m, block_n], dtype=torch.float32)
        s2 = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            vals = x[tile_m, tile_n].to(torch.float32)
            s1 = s1 + vals
            s2 = s2 + vals * vals
        mu = s1.sum(dim=1) / n
        mean[tile_m] = mu
        var[tile_m] = s2.sum(dim=1) / n - mu * mu
    return mean, var


@helion.kernel(static_shapes=True)
def manual_col_mean(x: torch.Tensor) -> torch.Tensor:
    """Column means: the registered block size tiles the reduced (row) axis."""
    m, n = x.size()
    out = torch.empty([n], dtype=x.dtype, device=x.device)
    block_m = hl.register_block_size(m)
    for tile_n in hl.tile(n):
        acc = hl.zeros([block_m, tile_n], dtype=torch.float32)
        for tile_m in hl.tile(m, block_size=block_m):
            acc = acc + x[tile_m, tile_n].to(torch.float32)
        out[tile_n] = (acc.sum(0) / m).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def manual_softmax_two_pass(x: torch.Tensor) -> torch.Tensor:
    """Online max/sum over chunks, then a second pass with the same block size writes."""
    m, n = x.size()
    out = torch.empty_like(x)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        row_max = hl.full([tile_m], float("-inf"), dtype=torch.float32)
        denom = hl.zeros([tile_m], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            vals = x[tile_m, tile_n].to(torch.float32)
            new_max = torch.maximum(row_max, torch.amax(vals, dim=1))
            denom = denom * torch.exp(row_max - new_max) + torch.exp(vals - new_max[:, None]).sum(dim=1)
            row_max = new_max
        for tile_n in hl.tile(n, block_size=block_n):
            vals = x[tile_m, tile_n].to(torch.float32)
            out[tile_m, tile_n] = (torch.exp(vals - row_max[:, None]) / denom[:, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def manual_row_dot(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Row-wise dot products of two long matrices, accumulated chunk by chunk."""
    m, n = x.size()
    out = torch.empty([m], dtype=torch.float32, device=x.device)
    block_n = hl.register_block_size(32, n)
    for tile_m in hl.tile(m):
        acc = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            acc = acc + x[tile_m, tile_n].to(torch.float32) * y[tile_m, tile_n].to(torch.float32)
        out[tile_m] = torch.sum(acc, dim=1)
    return out


@helion.kernel(static_shapes=True)
def manual_l2_normalize(x: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """x / max(||x||, eps) per row: a sum-of-squares pass, then a scaling pass."""
    m, n = x.size()
    out = torch.empty_like(x)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        sq = hl.zeros([tile_m, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            vals = x[tile_m, tile_n].to(torch.float32)
            sq = sq + vals * vals
        inv = 1.0 / torch.clamp_min(torch.sqrt(sq.sum(-1)), eps)
        for tile_n in hl.tile(n, block_size=block_n):
            out[tile_m, tile_n] = (x[tile_m, tile_n].to(torch.float32) * inv[:, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def manual_row_max(x: torch.Tensor) -> torch.Tensor:
    """Row max over a [tile_m, block_n] accumulator; lanes past n are masked with the tile index."""
    m, n = x.size()
    out = torch.empty([m], dtype=x.dtype, device=x.device)
    block_n = hl.register_block_size(n)
    for tile_m in hl.tile(m):
        acc = hl.full([tile_m, block_n], float("-inf"), dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            vals = x[tile_m, tile_n].to(torch.float32)
            vals = torch.where(tile_n.index[None, :] < n, vals, float("-inf"))
            acc = torch.maximum(acc, vals)
        out[tile_m] = torch.amax(acc, dim=1).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def manual_long_sum_1d(x: torch.Tensor) -> torch.Tensor:
    """Sum of a long vector per batch row with a 1-D accumulator over a fixed chunk."""
    b, n = x.size()
    out = torch.empty([b], dtype=torch.float32, device=x.device)
    block_n = hl.register_block_size(n)
    for tile_b in hl.tile(b, block_size=1):
        acc = hl.zeros([tile_b, block_n], dtype=torch.float32)
        for tile_n in hl.tile(n, block_size=block_n):
            acc = acc + x[tile_b, tile_n].to(torch.float32)
        out[tile_b] = acc.sum(1)
    return out


def _row_var_ref(x: torch.Tensor):
    xf = x.float()
    return xf.mean(1), xf.var(1, unbiased=False)


def _l2_ref(x: torch.Tensor, eps: float = 1e-12):
    return torch.nn.functional.normalize(x.float(), dim=1, eps=eps).to(x.dtype)


def _scaled(*shape: int, scale: float):
    """Normal values times `scale`: long f32 sums stay within assert_close's tolerance
    whatever order the chunks are added in."""
    return lambda dtype: (torch.randn(*shape) * scale).to(dtype)


def _negative(*shape: int):
    """All-negative values: a max that counted padded zero lanes would be wrong."""
    return lambda dtype: (-torch.rand(*shape) - 0.5).to(dtype)


EXAMPLES = [
    Example("manual_row_sum", manual_row_sum, tensors(_scaled(37, 1000, scale=0.125)), in_f32(lambda x: x.sum(-1)), FLOATS,
            (helion.Config(block_sizes=[128, 4]), helion.Config(block_sizes=[32, 1]))),
    Example("manual_row_var", manual_row_var, tensors(randn(45, 700)), _row_var_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[64, 8]),)),
    Example("manual_col_mean", manual_col_mean, tensors(randn(300, 45)), in_f32(lambda x: x.mean(0)), FLOATS,
            (helion.Config(block_sizes=[16, 32]),)),
    Example("manual_softmax_two_pass", manual_softmax_two_pass, tensors(randn(37, 1000)),
            in_f32(lambda x: torch.softmax(x, -1)), FLOATS, (helion.Config(block_sizes=[256, 2]),)),
    Example("manual_row_dot", manual_row_dot, tensors(_scaled(23, 2000, scale=0.125), _scaled(23, 2000, scale=0.125)),
            lambda x, y: (x.float() * y.float()).sum(-1), (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[64, 8]),)),
    Example("manual_l2_normalize", manual_l2_normalize, tensors(randn(29, 500)), _l2_ref, FLOATS,
            (helion.Config(block_sizes=[32, 4]),)),
    Example("manual_row_max", manual_row_max, tensors(_negative(37, 300)), lambda x: x.amax(-1), FLOATS,
            (helion.Config(block_sizes=[64, 8]),)),
    Example("manual_long_sum_1d", manual_long_sum_1d, tensors(_scaled(3, 10007, scale=1 / 32)), lambda x: x.float().sum(-1),
            (torch.float32, torch.float16), (helion.Config(block_sizes=[1024]),)),
]
