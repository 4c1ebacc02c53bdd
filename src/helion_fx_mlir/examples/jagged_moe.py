"""Jagged and MoE sample kernels: offsets tensors, data-dependent loop bounds, gathers
through masked flat indices, grouped GEMMs over variable-size groups."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example

LENGTHS = (5, 0, 19, 1, 33, 12, 7)  # rows per segment; one empty segment


def _offsets(lengths=LENGTHS) -> torch.Tensor:
    return torch.cumsum(torch.tensor((0, *lengths)), 0)


@helion.kernel(static_shapes=True)
def jagged_sum(x_data: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """out[b, :] = x_data[offsets[b]:offsets[b + 1], :].sum(0)."""
    m = x_data.size(1)
    num_rows = offsets.size(0) - 1
    out = torch.empty([num_rows, m], dtype=x_data.dtype, device=x_data.device)
    x_flat = x_data.view(-1)
    for tile_b in hl.tile(num_rows):
        starts = offsets[tile_b]
        lengths = offsets[tile_b.index + 1] - starts
        max_len = lengths.amax()
        for tile_m in hl.tile(m):
            acc = hl.zeros([tile_b, tile_m], dtype=torch.float32)
            for tile_k in hl.tile(0, max_len):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = tile_k.index[None, :] < lengths[:, None]
                flat = rows[:, :, None] * m + tile_m.index[None, None, :]
                vals = hl.load(x_flat, [flat], extra_mask=valid[:, :, None])
                acc = acc + vals.to(torch.float32).sum(1)
            out[tile_b, tile_m] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def jagged_softmax(x_data: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Softmax over the rows of each segment, per feature column (online max/sum, then a write pass)."""
    m = x_data.size(1)
    num_rows = offsets.size(0) - 1
    out = torch.zeros_like(x_data)
    x_flat = x_data.view(-1)
    out_flat = out.view(-1)
    for tile_b in hl.tile(num_rows):
        starts = offsets[tile_b]
        lengths = offsets[tile_b.index + 1] - starts
        max_len = lengths.amax()
        for tile_m in hl.tile(m):
            run_max = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
            run_sum = hl.zeros([tile_b, tile_m], dtype=torch.float32)
            for tile_k in hl.tile(0, max_len):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = (tile_k.index[None, :] < lengths[:, None])[:, :, None]
                flat = rows[:, :, None] * m + tile_m.index[None, None, :]
                vals = hl.load(x_flat, [flat], extra_mask=valid).to(torch.float32)
                vals = torch.where(valid, vals, float("-inf"))
                new_max = torch.maximum(run_max, torch.amax(vals, dim=1))
                safe_max = torch.where(new_max == float("-inf"), 0.0, new_max)
                chunk_sum = torch.sum(torch.exp(vals - safe_max[:, None, :]), dim=1)
                run_sum = run_sum * torch.exp(run_max - safe_max) + chunk_sum
                run_max = new_max
            for tile_k in hl.tile(0, max_len):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = (tile_k.index[None, :] < lengths[:, None])[:, :, None]
                flat = rows[:, :, None] * m + tile_m.index[None, None, :]
                vals = hl.load(x_flat, [flat], extra_mask=valid).to(torch.float32)
                probs = torch.exp(vals - run_max[:, None, :]) / run_sum[:, None, :]
                hl.store(out_flat, [flat], probs.to(out.dtype), extra_mask=valid)
    return out


@helion.kernel(static_shapes=True)
def jagged_layer_norm(x_data: torch.Tensor, offsets: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Normalize each segment over all of its [rows, m] elements (no affine)."""
    m = x_data.size(1)
    num_rows = offsets.size(0) - 1
    out = torch.zeros_like(x_data)
    x_flat = x_data.view(-1)
    out_flat = out.view(-1)
    for tile_b in hl.tile(num_rows):
        starts = offsets[tile_b]
        lengths = offsets[tile_b.index + 1] - starts
        max_len = lengths.amax()
        count = (lengths * m).to(torch.float32)
        total = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.tile(0, max_len):
            for tile_m in hl.tile(m):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = (tile_k.index[None, :] < lengths[:, None])[:, :, None]
                vals = hl.load(x_flat, [rows[:, :, None] * m + tile_m.index[None, None, :]], extra_mask=valid)
                total = total + vals.to(torch.float32).sum(2).sum(1)
        mean = total / torch.clamp_min(count, 1.0)
        sq = hl.zeros([tile_b], dtype=torch.float32)
        for tile_k in hl.tile(0, max_len):
            for tile_m in hl.tile(m):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = (tile_k.index[None, :] < lengths[:, None])[:, :, None]
                vals = hl.load(x_flat, [rows[:, :, None] * m + tile_m.index[None, None, :]], extra_mask=valid)
                centered = torch.where(valid, vals.to(torch.float32) - mean[:, None, None], 0.0)
                sq = sq + (centered * centered).sum(2).sum(1)
        rstd = torch.rsqrt(sq / torch.clamp_min(count, 1.0) + eps)
        for tile_k in hl.tile(0, max_len):
            for tile_m in hl.tile(m):
                rows = starts[:, None] + tile_k.index[None, :]
                valid = (tile_k.index[None, :] < lengths[:, None])[:, :, None]
                flat = rows[:, :, None] * m + tile_m.index[None, None, :]
                vals = hl.load(x_flat, [flat], extra_mask=valid).to(torch.float32)
                normed = (vals - mean[:, None, None]) * rstd[:, None, None]
                hl.store(out_flat, [flat], normed.to(out.dtype), extra_mask=valid)
    return out


@helion.kernel(static_shapes=True)
def jagged_dense_add(x_data: torch.Tensor, offsets: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """out rows of segment b = x rows + y[b]: hl.grid over segments, row loop bounds loaded from offsets."""
    m = x_data.size(1)
    num_rows = offsets.size(0) - 1
    out = torch.zeros_like(x_data)
    for b in hl.grid(num_rows):
        start = offsets[b]
        end = offsets[b + 1]
        for tile_k in hl.tile(start, end):
            for tile_m in hl.tile(m):
                out[tile_k, tile_m] = x_data[tile_k, tile_m] + y[b, tile_m][None, :]
    return out


@helion.kernel(static_shapes=True)
def grouped_gemm(a_packed: torch.Tensor, b: torch.Tensor, group_offsets: torch.Tensor) -> torch.Tensor:
    """Rows group_offsets[g]:group_offsets[g+1] of a_packed times a shared b."""
    total_m, k = a_packed.size()
    n = b.size(1)
    out = torch.empty([total_m, n], dtype=a_packed.dtype, device=a_packed.device)
    groups = group_offsets.size(0) - 1
    for g in hl.grid(groups):
        start = group_offsets[g]
        end = group_offsets[g + 1]
        for tile_m in hl.tile(start, end):
            for tile_n in hl.tile(n):
                acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
                for tile_k in hl.tile(k):
                    acc = torch.addmm(acc, a_packed[tile_m, tile_k], b[tile_k, tile_n])
                out[tile_m, tile_n] = acc.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def moe_matmul(tokens: torch.Tensor, weights: torch.Tensor, expert_offsets: torch.Tensor) -> torch.Tensor:
    """Tokens sorted by expert: rows of expert e are multiplied by weights[e] ([E, K, N])."""
    total_m, k = tokens.size()
    n = weights.size(2)
    out = torch.empty([total_m, n], dtype=tokens.dtype, device=tokens.device)
    experts = expert_offsets.size(0) - 1
    for e in hl.grid(experts):
        start = expert_offsets[e]
        end = expert_offsets[e + 1]
        if end > start:
            for tile_m, tile_n in hl.tile([start, 0], [end, n]):
                acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
                for tile_k in hl.tile(k):
                    acc = torch.addmm(acc, tokens[tile_m, tile_k], weights[e, tile_k, tile_n])
                out[tile_m, tile_n] = acc.to(out.dtype)
    return out


def _segments(x: torch.Tensor, offsets: torch.Tensor) -> list[torch.Tensor]:
    return [x[int(s):int(e)] for s, e in zip(offsets[:-1], offsets[1:])]


def _jagged_args(dtype: torch.dtype):
    offsets = _offsets()
    return torch.randn(int(offsets[-1]), 37, dtype=dtype), offsets


def _jagged_sum_ref(x, offsets):
    return torch.stack([seg.float().sum(0) for seg in _segments(x, offsets)]).to(x.dtype)


def _jagged_softmax_ref(x, offsets):
    return torch.cat([torch.softmax(seg.float(), 0) for seg in _segments(x, offsets)]).to(x.dtype)


def _jagged_layer_norm_ref(x, offsets, eps=1e-6):
    parts = []
    for seg in _segments(x, offsets):
        s = seg.float()
        parts.append((s - s.mean()) * torch.rsqrt(s.var(unbiased=False) + eps) if s.numel() else s)
    return torch.cat(parts).to(x.dtype)


def _jagged_dense_add_args(dtype: torch.dtype):
    x, offsets = _jagged_args(dtype)
    return x, offsets, torch.randn(len(LENGTHS), 37, dtype=dtype)


def _jagged_dense_add_ref(x, offsets, y):
    lengths = offsets[1:] - offsets[:-1]
    return x + torch.repeat_interleave(y, lengths, dim=0)


def _grouped_gemm_args(dtype: torch.dtype):
    offsets = _offsets()
    return torch.randn(int(offsets[-1]), 70, dtype=dtype), torch.randn(70, 50, dtype=dtype), offsets


def _grouped_gemm_ref(a, b, offsets):
    return (a.float() @ b.float()).to(a.dtype)


def _moe_args(dtype: torch.dtype):
    offsets = _offsets()
    return (torch.randn(int(offsets[-1]), 70, dtype=dtype), torch.randn(len(LENGTHS), 70, 50, dtype=dtype), offsets)


def _moe_ref(tokens, weights, offsets):
    parts = [seg.float() @ w.float() for seg, w in zip(_segments(tokens, offsets), weights)]
    return torch.cat(parts).to(tokens.dtype)


EXAMPLES = [
    Example("jagged_sum", jagged_sum, _jagged_args, _jagged_sum_ref, FLOATS,
            (helion.Config(block_sizes=[2, 16, 8]),)),
    Example("jagged_softmax", jagged_softmax, _jagged_args, _jagged_softmax_ref, FLOATS),
    Example("jagged_layer_norm", jagged_layer_norm, _jagged_args, _jagged_layer_norm_ref,
            (torch.float32, torch.bfloat16)),
    Example("jagged_dense_add", jagged_dense_add, _jagged_dense_add_args, _jagged_dense_add_ref, FLOATS),
    Example("grouped_gemm", grouped_gemm, _grouped_gemm_args, _grouped_gemm_ref, FLOATS,
            (helion.Config(block_sizes=[8, 16, 32]),)),
    Example("moe_matmul", moe_matmul, _moe_args, _moe_ref, FLOATS),
]
