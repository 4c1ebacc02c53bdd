"""Rotary position embeddings (RoPE): rotate-half over a host view that splits the head
dim in two, the interleaved form with `hl.split`/`hl.join`, q/k in a transposed
[B, H, S, D] layout with [1, S, 1, D] cos/sin tables (size-1 dims), and cos/sin rows
gathered by position ids."""

from __future__ import annotations

import helion
import helion.language as hl
import torch

from .registry import FLOATS, Example


@helion.kernel(static_shapes=True)
def rope_rotate_half(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: [B, S, H, D]; cos/sin: [S, D/2]. The head dim is viewed as [2, D/2]."""
    b, s, h, d = x.size()
    half = d // 2
    x_pairs = x.view(b, s, h, 2, half)
    out = torch.empty_like(x)
    out_pairs = out.view(b, s, h, 2, half)
    for tile_b, tile_s, tile_h in hl.tile([b, s, h], block_size=[1, None, None]):
        c = cos[tile_s, :].to(torch.float32)[None, :, None, :]
        sn = sin[tile_s, :].to(torch.float32)[None, :, None, :]
        x1 = x_pairs[tile_b, tile_s, tile_h, 0, :].to(torch.float32)
        x2 = x_pairs[tile_b, tile_s, tile_h, 1, :].to(torch.float32)
        out_pairs[tile_b, tile_s, tile_h, 0, :] = (x1 * c - x2 * sn).to(out.dtype)
        out_pairs[tile_b, tile_s, tile_h, 1, :] = (x2 * c + x1 * sn).to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def rope_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """GPT-J style: pairs (x[2i], x[2i+1]) rotated; x: [T, H, D], cos/sin: [T, D/2]."""
    t, h, d = x.size()
    x_pairs = x.view(t, h, d // 2, 2)
    out = torch.empty_like(x)
    out_pairs = out.view(t, h, d // 2, 2)
    for tile_t, tile_h in hl.tile([t, h]):
        even, odd = hl.split(x_pairs[tile_t, tile_h, :, :].to(torch.float32))
        c = cos[tile_t, :].to(torch.float32)[:, None, :]
        sn = sin[tile_t, :].to(torch.float32)[:, None, :]
        rotated = hl.join(even * c - odd * sn, odd * c + even * sn)
        out_pairs[tile_t, tile_h, :, :] = rotated.to(out.dtype)
    return out


@helion.kernel(static_shapes=True)
def rope_qk_transposed(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """q, k: [B, S, H, D] read through [B, H, S, 2, D/2] views of their transposes;
    cos/sin: [1, S, 1, D] (the HF layout: size-1 dims, full-width tables). Outputs are
    [B, H, S, D], written through [B, H, S, 2, D/2] views."""
    b, s, h, d = q.size()
    half = d // 2
    q_halves = q.transpose(1, 2).view(b, h, s, 2, half)
    k_halves = k.transpose(1, 2).view(b, h, s, 2, half)
    cos_halves = cos.view(1, s, 1, 2, half)
    sin_halves = sin.view(1, s, 1, 2, half)
    q_out = torch.empty([b, h, s, d], dtype=q.dtype, device=q.device)
    k_out = torch.empty([b, h, s, d], dtype=k.dtype, device=k.device)
    q_out_halves = q_out.view(b, h, s, 2, half)
    k_out_halves = k_out.view(b, h, s, 2, half)
    for tile_b, tile_h, tile_s in hl.tile([b, h, s], block_size=[1, 1, None]):
        c1 = cos_halves[0, tile_s, 0, 0, :].to(torch.float32)
        c2 = cos_halves[0, tile_s, 0, 1, :].to(torch.float32)
        s1 = sin_halves[0, tile_s, 0, 0, :].to(torch.float32)
        s2 = sin_halves[0, tile_s, 0, 1, :].to(torch.float32)
        q1 = q_halves[tile_b.begin, tile_h.begin, tile_s, 0, :].to(torch.float32)
        q2 = q_halves[tile_b.begin, tile_h.begin, tile_s, 1, :].to(torch.float32)
        k1 = k_halves[tile_b.begin, tile_h.begin, tile_s, 0, :].to(torch.float32)
        k2 = k_halves[tile_b.begin, tile_h.begin, tile_s, 1, :].to(torch.float32)
        q_out_halves[tile_b.begin, tile_h.begin, tile_s, 0, :] = (q1 * c1 - q2 * s1).to(q_out.dtype)
        q_out_halves[tile_b.begin, tile_h.begin, tile_s, 1, :] = (q2 * c2 + q1 * s2).to(q_out.dtype)
        k_out_halves[tile_b.begin, tile_h.begin, tile_s, 0, :] = (k1 * c1 - k2 * s1).to(k_out.dtype)
        k_out_halves[tile_b.begin, tile_h.begin, tile_s, 1, :] = (k2 * c2 + k1 * s2).to(k_out.dtype)
    return q_out, k_out


@helion.kernel(static_shapes=True)
def rope_position_ids(
    x: torch.Tensor, positions: torch.Tensor, cos_cache: torch.Tensor, sin_cache: torch.Tensor
) -> torch.Tensor:
    """x: [T, H, D]; cos/sin rows gathered from [max_pos, D/2] caches by positions[t]."""
    t, h, d = x.size()
    half = d // 2
    x_halves = x.view(t, h, 2, half)
    out = torch.empty_like(x)
    out_halves = out.view(t, h, 2, half)
    for tile_t in hl.tile(t):
        pos = positions[tile_t]
        c = cos_cache[pos, :].to(torch.float32)[:, None, :]
        sn = sin_cache[pos, :].to(torch.float32)[:, None, :]
        for tile_h in hl.tile(h):
            x1 = x_halves[tile_t, tile_h, 0, :].to(torch.float32)
            x2 = x_halves[tile_t, tile_h, 1, :].to(torch.float32)
            out_halves[tile_t, tile_h, 0, :] = (x1 * c - x2 * sn).to(out.dtype)
            out_halves[tile_t, tile_h, 1, :] = (x2 * c + x1 * sn).to(out.dtype)
    return out


# ------------------------------------------------------------------ inputs and references


def _tables(positions: int, half: int) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    angles = torch.arange(positions, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return torch.cos(angles), torch.sin(angles)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def _rotate_half_args(dtype: torch.dtype):
    cos, sin = _tables(37, 20)
    return torch.randn(2, 37, 3, 40, dtype=dtype), cos.to(dtype), sin.to(dtype)


def _rotate_half_ref(x, cos, sin):
    c = torch.cat([cos, cos], -1).float()[None, :, None, :]
    s = torch.cat([sin, sin], -1).float()[None, :, None, :]
    xf = x.float()
    return (xf * c + _rotate_half(xf) * s).to(x.dtype)


def _interleaved_args(dtype: torch.dtype):
    cos, sin = _tables(45, 12)
    return torch.randn(45, 5, 24, dtype=dtype), cos.to(dtype), sin.to(dtype)


def _interleaved_ref(x, cos, sin):
    xf = x.float().unflatten(-1, (-1, 2))
    even, odd = xf[..., 0], xf[..., 1]
    c, s = cos.float()[:, None, :], sin.float()[:, None, :]
    return torch.stack([even * c - odd * s, odd * c + even * s], -1).flatten(-2).to(x.dtype)


def _qk_args(dtype: torch.dtype):
    cos, sin = _tables(37, 16)
    full_cos = torch.cat([cos, cos], -1)[None, :, None, :]
    full_sin = torch.cat([sin, sin], -1)[None, :, None, :]
    return (torch.randn(2, 37, 3, 32, dtype=dtype), torch.randn(2, 37, 3, 32, dtype=dtype),
            full_cos.to(dtype), full_sin.to(dtype))


def _qk_ref(q, k, cos, sin):
    c = cos.float().transpose(1, 2)
    s = sin.float().transpose(1, 2)
    qf, kf = q.float().transpose(1, 2), k.float().transpose(1, 2)
    return (qf * c + _rotate_half(qf) * s).to(q.dtype), (kf * c + _rotate_half(kf) * s).to(k.dtype)


def _positions_args(dtype: torch.dtype):
    cos, sin = _tables(100, 20)
    positions = torch.randint(0, 100, (29,))
    return torch.randn(29, 3, 40, dtype=dtype), positions, cos.to(dtype), sin.to(dtype)


def _positions_ref(x, positions, cos_cache, sin_cache):
    c = cos_cache[positions].float()
    s = sin_cache[positions].float()
    return _rotate_half_ref(x[None], c, s)[0]


EXAMPLES = [
    Example("rope_rotate_half", rope_rotate_half, _rotate_half_args, _rotate_half_ref, FLOATS,
            (helion.Config(block_sizes=[8, 2]),)),
    Example("rope_interleaved", rope_interleaved, _interleaved_args, _interleaved_ref, FLOATS,
            (helion.Config(block_sizes=[16, 4]),)),
    Example("rope_qk_transposed", rope_qk_transposed, _qk_args, _qk_ref, FLOATS,
            (helion.Config(block_sizes=[8]),)),
    Example("rope_position_ids", rope_position_ids, _positions_args, _positions_ref, (torch.float32, torch.bfloat16),
            (helion.Config(block_sizes=[4, 2]),)),
]
