"""Python scalars in device code: `int` kernel parameters used both as tile extents and
in arithmetic (`hl.tile([batches, heads, max_seq_len], block_size=[1, 1, None])`,
`scale = 1.0 / max_seq_len`), `torch.div(..., 3, rounding_mode='floor')` on index and
integer tensors, and 0-d int tensors widened to index tensors."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example, randn, tensors


@helion.kernel(static_shapes=True)
def position_ramp(x: torch.Tensor, batches: int, heads: int, max_seq_len: int) -> torch.Tensor:
    """x: packed [batches * heads * max_seq_len, d]; row (b, h, s) is scaled by (s + 1) / max_seq_len.
    The row index is computed on the device from the int parameters."""
    d = x.size(1)
    out = torch.empty_like(x)
    for tile_b, tile_h, tile_s in hl.tile([batches, heads, max_seq_len], block_size=[1, 1, None]):
        scale = 1.0 / max_seq_len
        rows = (tile_b.begin * heads + tile_h.begin) * max_seq_len + tile_s.index
        ramp = (tile_s.index + 1).to(torch.float32) * scale
        vals = x[rows, :].to(torch.float32)
        out[rows, :] = (vals * ramp[:, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def seq_prefix_mean(x: torch.Tensor, max_seq_len: int) -> torch.Tensor:
    """Mean over the first max_seq_len positions of x: [B, H, S, D] (an int argument, not
    x's size, bounds the tiles); partial sums times 1/max_seq_len added atomically."""
    batches, heads, _, d = x.size()
    out = torch.zeros([batches, heads, d], dtype=torch.float32, device=x.device)
    for tile_b, tile_h, tile_s, tile_d in hl.tile([batches, heads, max_seq_len, d], block_size=[1, 1, None, None]):
        scale = 1.0 / max_seq_len
        part = torch.sum(x[tile_b, tile_h, tile_s, tile_d].to(torch.float32), dim=2) * scale
        hl.atomic_add(out, [tile_b, tile_h, tile_d], part)
    return out


@helion.kernel(static_shapes=True)
def floor_div_upsample(x: torch.Tensor, out_rows: int) -> torch.Tensor:
    """Nearest-neighbour row upsampling by 3: out[i, :] = x[i // 3, :]."""
    _, n = x.size()
    out = torch.empty([out_rows, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([out_rows, n]):
        src = torch.div(tile_m.index, 3, rounding_mode="floor")
        out[tile_m, tile_n] = x[src, tile_n]
    return out


@helion.kernel(static_shapes=True)
def floor_div_group_sum(x: torch.Tensor) -> torch.Tensor:
    """Sums of column groups of 3: out[:, j // 3] += x[:, j] (scatter with a floor-div index)."""
    m, n = x.size()
    out = torch.zeros([m, (n + 2) // 3], dtype=torch.float32, device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        group = torch.div(tile_n.index, 3, rounding_mode="floor")
        hl.atomic_add(out, [tile_m, group], x[tile_m, tile_n].to(torch.float32))
    return out


@helion.kernel(static_shapes=True)
def floor_div_int(values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Floor quotient and remainder by 3 of signed integers (floor, not truncation)."""
    (n,) = values.size()
    quot = torch.empty_like(values)
    rem = torch.empty_like(values)
    for tile in hl.tile(n):
        v = values[tile]
        q = torch.div(v, 3, rounding_mode="floor")
        quot[tile] = q
        rem[tile] = v - q * 3
    return quot, rem


@helion.kernel(static_shapes=True)
def roll_rows_0d(x: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """out[i] = x[(i + shift) % m] with shift a 0-d int64 tensor broadcast into the index."""
    m, n = x.size()
    out = torch.empty_like(x)
    for tile_m, tile_n in hl.tile([m, n]):
        src = torch.remainder(tile_m.index + shift[()], m)
        out[tile_m, tile_n] = x[src, tile_n]
    return out


@helion.kernel(static_shapes=True)
def window_0d(x: torch.Tensor, start: torch.Tensor, length: int) -> torch.Tensor:
    """out = x[start : start + length] * 2 with start a 0-d int tensor (loaded on device)."""
    n = x.size(1)
    out = torch.empty([length, n], dtype=x.dtype, device=x.device)
    for tile_m, tile_n in hl.tile([length, n]):
        rows = start[()] + tile_m.index
        out[tile_m, tile_n] = x[rows, tile_n] * 2
    return out


# ------------------------------------------------------------------ inputs and references


def _ramp_args(dtype: torch.dtype):
    return torch.randn(2 * 3 * 37, 24, dtype=dtype), 2, 3, 37


def _ramp_ref(x, batches, heads, max_seq_len):
    ramp = (torch.arange(max_seq_len) + 1).float() / max_seq_len
    return (x.float().view(batches, heads, max_seq_len, -1) * ramp[:, None]).view_as(x).to(x.dtype)


def _prefix_args(dtype: torch.dtype):
    return torch.randn(2, 3, 50, 24, dtype=dtype), 37


def _prefix_ref(x, max_seq_len):
    return x[:, :, :max_seq_len].float().mean(2)


def _ints(dtype: torch.dtype):
    return (torch.arange(-50, 51).to(dtype)[torch.randperm(101)],)


def _floor_int_ref(v):
    q = torch.div(v, 3, rounding_mode="floor")
    return q, v - q * 3


EXAMPLES = [
    Example("position_ramp", position_ramp, _ramp_args, _ramp_ref, FLOATS, (helion.Config(block_sizes=[8]),)),
    Example("seq_prefix_mean", seq_prefix_mean, _prefix_args, _prefix_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[8, 16]),)),
    Example("floor_div_upsample", floor_div_upsample, tensors(randn(34, 45), 100), lambda x, r: x.repeat_interleave(3, 0)[:r],
            FLOATS, (helion.Config(block_sizes=[8, 64]),)),
    Example("floor_div_group_sum", floor_div_group_sum, tensors(randn(37, 50)),
            lambda x: torch.nn.functional.pad(x.float(), (0, 1)).view(37, 17, 3).sum(2), (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[8, 4]),)),
    Example("floor_div_int", floor_div_int, _ints, _floor_int_ref, (torch.int32, torch.int64),
            (helion.Config(block_sizes=[64]),)),
    Example("roll_rows_0d", roll_rows_0d, lambda dtype: (torch.randn(37, 45, dtype=dtype), torch.tensor(11)),
            lambda x, s: torch.roll(x, -int(s), 0), FLOATS, (helion.Config(block_sizes=[4, 64]),)),
    Example("window_0d", window_0d, lambda dtype: (torch.randn(70, 45, dtype=dtype), torch.tensor(13, dtype=torch.int32), 37),
            lambda x, s, n: x[int(s):int(s) + n] * 2, FLOATS, (helion.Config(block_sizes=[16, 8]),)),
]
