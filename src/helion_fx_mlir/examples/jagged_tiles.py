"""Jagged kernels: `hl.jagged_tile(lengths)` loops (implicitly masked per parent lane)
over padded and packed (offsets) data, and the manual-mask style, `hl.tile(max_len)` with
`tile_k.index[None, :] < lengths[:, None]` passed to `hl.load(..., extra_mask=mask)`."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example

ROW_LENGTHS = (5, 0, 57, 1, 33, 12, 7, 40, 19, 2, 56, 23, 9)  # 13 rows, max 57; one empty row


def _lengths() -> torch.Tensor:
    return torch.tensor(ROW_LENGTHS, dtype=torch.int64)


def _offsets() -> torch.Tensor:
    return torch.cumsum(torch.tensor((0, *ROW_LENGTHS)), 0)


def _padded(dtype: torch.dtype, *feature: int) -> torch.Tensor:
    """[rows, max_len, *feature] with garbage (large values) past each row's length."""
    lengths = _lengths()
    x = torch.randn(len(ROW_LENGTHS), max(ROW_LENGTHS), *feature)
    past = torch.arange(max(ROW_LENGTHS))[None, :] >= lengths[:, None]
    x[past] = 1e4
    return x.to(dtype)


# ------------------------------------------------------------------ hl.jagged_tile


@helion.kernel(static_shapes=True)
def jagged_tile_row_sum(x: torch.Tensor, row_lengths: torch.Tensor) -> torch.Tensor:
    """Sum of the first row_lengths[b] entries of each padded row."""
    b = row_lengths.size(0)
    out = torch.zeros([b], dtype=x.dtype, device=x.device)
    for tile_b in hl.tile(b):
        lengths = row_lengths[tile_b]
        acc = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.jagged_tile(lengths):
            acc = acc + x[tile_b, tile_k].to(torch.float32).sum(dim=1)
        out[tile_b] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def jagged_tile_mean_3d(x: torch.Tensor, row_lengths: torch.Tensor) -> torch.Tensor:
    """Mean over the valid prefix of each [max_len, d] slab; empty rows give 0."""
    b, _, d = x.size()
    out = torch.empty([b, d], dtype=x.dtype, device=x.device)
    for tile_b, tile_d in hl.tile([b, d]):
        lengths = row_lengths[tile_b]
        acc = hl.zeros([tile_b, tile_d], dtype=torch.float32)
        for tile_k in hl.jagged_tile(lengths):
            acc = acc + x[tile_b, tile_k, tile_d].to(torch.float32).sum(dim=1)
        count = torch.clamp_min(lengths.to(torch.float32), 1.0)
        out[tile_b, tile_d] = (acc / count[:, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def jagged_tile_packed_mean(values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Mean of each segment of a packed 1-D tensor (segment b: offsets[b]:offsets[b+1])."""
    b = offsets.size(0) - 1
    out = torch.zeros([b], dtype=torch.float32, device=values.device)
    for tile_b in hl.tile(b):
        starts = offsets[tile_b]
        ends = offsets[tile_b.index + 1]
        lengths = ends - starts
        acc = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.jagged_tile(lengths):
            idx = starts[:, None] + tile_k.index[None, :]
            acc = acc + values[idx].to(torch.float32).sum(dim=1)
        out[tile_b] = torch.where(lengths > 0, acc / lengths.to(torch.float32), 0.0)
    return out


@helion.kernel(static_shapes=True)
def jagged_tile_softmax(x: torch.Tensor, row_lengths: torch.Tensor) -> torch.Tensor:
    """Softmax over the valid prefix of each padded row; the padding is written as 0."""
    b, max_len = x.size()
    out = torch.zeros_like(x)
    for tile_b in hl.tile(b):
        lengths = row_lengths[tile_b]
        row_max = hl.full([tile_b], float("-inf"), dtype=torch.float32)
        denom = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.jagged_tile(lengths):
            valid = tile_k.index[None, :] < lengths[:, None]
            vals = torch.where(valid, x[tile_b, tile_k].to(torch.float32), float("-inf"))
            new_max = torch.maximum(row_max, torch.amax(vals, dim=1))
            safe = torch.where(new_max == float("-inf"), 0.0, new_max)
            denom = denom * torch.exp(row_max - safe) + torch.exp(vals - safe[:, None]).sum(dim=1)
            row_max = new_max
        for tile_k in hl.jagged_tile(lengths):
            vals = x[tile_b, tile_k].to(torch.float32)
            out[tile_b, tile_k] = (torch.exp(vals - row_max[:, None]) / denom[:, None]).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def jagged_tile_packed_scale(values: torch.Tensor, offsets: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Packed [total, d] rows of segment b multiplied by scale[b] and divided by the segment length."""
    total, d = values.size()
    b = offsets.size(0) - 1
    out = torch.zeros_like(values)
    for tile_b in hl.tile(b):
        starts = offsets[tile_b]
        lengths = offsets[tile_b.index + 1] - starts
        factor = scale[tile_b].to(torch.float32) / torch.clamp_min(lengths.to(torch.float32), 1.0)
        for tile_k in hl.jagged_tile(lengths):
            rows = starts[:, None] + tile_k.index[None, :]
            for tile_d in hl.tile(d):
                vals = values[rows, tile_d].to(torch.float32)
                out[rows, tile_d] = (vals * factor[:, None, None]).to(out.dtype)
    return out


# ------------------------------------------------------------------ manual masks


@helion.kernel(static_shapes=True)
def masked_row_mean(x: torch.Tensor, row_lengths: torch.Tensor) -> torch.Tensor:
    """Mean of each row's valid prefix: dense loop to max_len, mask on hl.load."""
    b = row_lengths.size(0)
    out = torch.zeros([b], dtype=torch.float32, device=x.device)
    for tile_b in hl.tile(b):
        lengths = row_lengths[tile_b]
        max_len = lengths.amax()
        acc = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.tile(max_len):
            mask = tile_k.index[None, :] < lengths[:, None]
            vals = hl.load(x, [tile_b, tile_k], extra_mask=mask)
            acc = acc + vals.to(torch.float32).sum(dim=1)
        out[tile_b] = acc / torch.clamp_min(lengths, 1).to(torch.float32)
    return out


@helion.kernel(static_shapes=True)
def masked_row_max(x: torch.Tensor, row_lengths: torch.Tensor) -> torch.Tensor:
    """Max of each row's valid prefix (masked lanes set to -inf); empty rows give 0."""
    b = row_lengths.size(0)
    out = torch.empty([b], dtype=x.dtype, device=x.device)
    for tile_b in hl.tile(b):
        lengths = row_lengths[tile_b]
        max_len = lengths.amax()
        best = hl.full([tile_b], float("-inf"), dtype=torch.float32)
        for tile_k in hl.tile(0, max_len):
            mask = tile_k.index[None, :] < lengths[:, None]
            vals = hl.load(x, [tile_b, tile_k], extra_mask=mask).to(torch.float32)
            vals = torch.where(mask, vals, float("-inf"))
            best = torch.maximum(best, torch.amax(vals, dim=1))
        out[tile_b] = torch.where(lengths > 0, best, 0.0).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def masked_packed_weighted_sum(
    values: torch.Tensor, weights: torch.Tensor, offsets: torch.Tensor
) -> torch.Tensor:
    """out[b, :] = sum over segment b of weights[row] * values[row, :], flat gather with a mask."""
    total, d = values.size()
    b = offsets.size(0) - 1
    out = torch.empty([b, d], dtype=torch.float32, device=values.device)
    values_flat = values.view(-1)
    for tile_b, tile_d in hl.tile([b, d]):
        starts = offsets[tile_b]
        lengths = offsets[tile_b.index + 1] - starts
        max_len = lengths.amax()
        acc = hl.zeros([tile_b, tile_d], dtype=torch.float32)
        for tile_k in hl.tile(max_len):
            mask = tile_k.index[None, :] < lengths[:, None]
            rows = starts[:, None] + tile_k.index[None, :]
            w = hl.load(weights, [rows], extra_mask=mask).to(torch.float32)
            flat = rows[:, :, None] * d + tile_d.index[None, None, :]
            vals = hl.load(values_flat, [flat], extra_mask=mask[:, :, None]).to(torch.float32)
            acc = acc + torch.sum(vals * w[:, :, None], dim=1)
        out[tile_b, tile_d] = acc
    return out


# ------------------------------------------------------------------ inputs and references


def _padded_args(*feature: int):
    return lambda dtype: (_padded(dtype, *feature), _lengths())


def _row_sum_ref(x, lengths):
    valid = torch.arange(x.size(1))[None, :] < lengths[:, None]
    return torch.where(valid, x.float(), 0.0).sum(1).to(x.dtype)


def _mean_3d_ref(x, lengths):
    valid = (torch.arange(x.size(1))[None, :] < lengths[:, None])[:, :, None]
    total = torch.where(valid, x.float(), 0.0).sum(1)
    return (total / lengths.clamp_min(1).float()[:, None]).to(x.dtype)


def _packed_args(dtype: torch.dtype):
    offsets = _offsets()
    return torch.randn(int(offsets[-1]), dtype=dtype), offsets


def _packed_mean_ref(values, offsets):
    segs = [values[int(s):int(e)].float() for s, e in zip(offsets[:-1], offsets[1:])]
    return torch.stack([s.mean() if s.numel() else torch.zeros(()) for s in segs])


def _softmax_ref(x, lengths):
    out = torch.zeros_like(x)
    for i, n in enumerate(lengths.tolist()):
        if n:
            out[i, :n] = torch.softmax(x[i, :n].float(), 0).to(x.dtype)
    return out


def _packed_scale_args(dtype: torch.dtype):
    offsets = _offsets()
    return torch.randn(int(offsets[-1]), 45, dtype=dtype), offsets, torch.randn(len(ROW_LENGTHS), dtype=dtype)


def _packed_scale_ref(values, offsets, scale):
    lengths = (offsets[1:] - offsets[:-1]).clamp_min(1).float()
    factor = torch.repeat_interleave(scale.float() / lengths, offsets[1:] - offsets[:-1])
    return (values.float() * factor[:, None]).to(values.dtype)


def _masked_mean_ref(x, lengths):
    return _row_sum_ref(x.float(), lengths) / lengths.clamp_min(1).float()


def _masked_max_ref(x, lengths):
    valid = torch.arange(x.size(1))[None, :] < lengths[:, None]
    best = torch.where(valid, x.float(), float("-inf")).amax(1)
    return torch.where(lengths > 0, best, 0.0).to(x.dtype)


def _weighted_args(dtype: torch.dtype):
    offsets = _offsets()
    total = int(offsets[-1])
    return torch.randn(total, 45, dtype=dtype), torch.rand(total, dtype=dtype), offsets


def _weighted_ref(values, weights, offsets):
    prod = values.float() * weights.float()[:, None]
    return torch.stack([prod[int(s):int(e)].sum(0) for s, e in zip(offsets[:-1], offsets[1:])])


EXAMPLES = [
    Example("jagged_tile_row_sum", jagged_tile_row_sum, _padded_args(), _row_sum_ref, FLOATS,
            (helion.Config(block_sizes=[4, 16]),)),
    Example("jagged_tile_mean_3d", jagged_tile_mean_3d, _padded_args(45), _mean_3d_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[2, 16, 8]),)),
    Example("jagged_tile_packed_mean", jagged_tile_packed_mean, _packed_args, _packed_mean_ref, FLOATS,
            (helion.Config(block_sizes=[8, 8]),)),
    Example("jagged_tile_softmax", jagged_tile_softmax, _padded_args(), _softmax_ref, FLOATS,
            (helion.Config(block_sizes=[2, 16, 64]),)),
    Example("jagged_tile_packed_scale", jagged_tile_packed_scale, _packed_scale_args, _packed_scale_ref,
            (torch.float32, torch.float16), (helion.Config(block_sizes=[4, 8, 16]),)),
    Example("masked_row_mean", masked_row_mean, _padded_args(), _masked_mean_ref, FLOATS,
            (helion.Config(block_sizes=[4, 64]),)),
    Example("masked_row_max", masked_row_max, _padded_args(), _masked_max_ref, FLOATS,
            (helion.Config(block_sizes=[1, 8]),)),
    Example("masked_packed_weighted_sum", masked_packed_weighted_sum, _weighted_args, _weighted_ref,
            (torch.float32, torch.bfloat16), (helion.Config(block_sizes=[2, 16, 8]),)),
]
