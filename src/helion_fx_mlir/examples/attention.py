"""Attention sample kernels: flash attention (online softmax), causal, with bias,
dynamic shapes, and the backward pass (three top-level loops)."""

from __future__ import annotations

import math

import helion
import helion.language as hl
import torch
import torch.nn.functional as F

from .registry import FLOATS, Example, in_f32


@helion.kernel(static_shapes=True)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    m, d = q.size(-2), q.size(-1)
    n = k.size(-2)
    q_view = q.reshape([-1, m, d])
    k_view = k.reshape([-1, n, d]).transpose(1, 2)
    v_view = v.reshape([-1, n, d])
    out = torch.empty_like(q_view)
    sm_scale = 1.0 / math.sqrt(d)
    for tile_b, tile_m in hl.tile([q_view.size(0), m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        q_tile = q_view[tile_b, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(n):
            scores = torch.bmm(q_tile, k_view[tile_b, :, tile_n].to(torch.float32)) * sm_scale
            m_new = torch.maximum(m_i, torch.amax(scores, -1))
            p = torch.exp(scores - m_new[:, :, None])
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p, v_view[tile_b, tile_n, :].to(torch.float32))
            m_i = m_new
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out.view(q.size())


@helion.kernel(static_shapes=True)
def attention_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    m, d = q.size(-2), q.size(-1)
    q_view = q.reshape([-1, m, d])
    k_view = k.reshape([-1, m, d]).transpose(1, 2)
    v_view = v.reshape([-1, m, d])
    out = torch.empty_like(q_view)
    sm_scale = 1.0 / math.sqrt(d)
    for tile_b, tile_m in hl.tile([q_view.size(0), m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        q_tile = q_view[tile_b, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(0, tile_m.end):
            scores = torch.bmm(q_tile, k_view[tile_b, :, tile_n].to(torch.float32)) * sm_scale
            causal = tile_m.index[:, None] >= tile_n.index[None, :]
            scores = torch.where(causal[None, :, :], scores, float("-inf"))
            m_new = torch.maximum(m_i, torch.amax(scores, -1))
            p = torch.exp(scores - m_new[:, :, None])
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p, v_view[tile_b, tile_n, :].to(torch.float32))
            m_i = m_new
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out.view(q.size())


@helion.kernel(static_shapes=True)
def attention_bias(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Attention with an additive [m, n] score bias shared by every batch and head."""
    m, d = q.size(-2), q.size(-1)
    n = k.size(-2)
    q_view = q.reshape([-1, m, d])
    k_view = k.reshape([-1, n, d]).transpose(1, 2)
    v_view = v.reshape([-1, n, d])
    out = torch.empty_like(q_view)
    sm_scale = 1.0 / math.sqrt(d)
    for tile_b, tile_m in hl.tile([q_view.size(0), m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        q_tile = q_view[tile_b, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(n):
            scores = torch.bmm(q_tile, k_view[tile_b, :, tile_n].to(torch.float32)) * sm_scale
            scores = scores + bias[tile_m, tile_n].to(torch.float32)[None, :, :]
            m_new = torch.maximum(m_i, torch.amax(scores, -1))
            p = torch.exp(scores - m_new[:, :, None])
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p, v_view[tile_b, tile_n, :].to(torch.float32))
            m_i = m_new
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out.view(q.size())


@helion.kernel(static_shapes=False)
def attention_dynamic(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """`attention` with symbolic sizes: extents are s* symbols, not ints."""
    m, d = q.size(-2), q.size(-1)
    n = k.size(-2)
    q_view = q.reshape([-1, m, d])
    k_view = k.reshape([-1, n, d]).transpose(1, 2)
    v_view = v.reshape([-1, n, d])
    out = torch.empty_like(q_view)
    for tile_b, tile_m in hl.tile([q_view.size(0), m]):
        m_i = hl.full([tile_b, tile_m], float("-inf"), dtype=torch.float32)
        l_i = hl.zeros([tile_b, tile_m], dtype=torch.float32)
        acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        q_tile = q_view[tile_b, tile_m, :].to(torch.float32)
        for tile_n in hl.tile(n):
            scores = torch.bmm(q_tile, k_view[tile_b, :, tile_n].to(torch.float32)) * 0.125
            m_new = torch.maximum(m_i, torch.amax(scores, -1))
            p = torch.exp(scores - m_new[:, :, None])
            alpha = torch.exp(m_i - m_new)
            l_i = l_i * alpha + torch.sum(p, -1)
            acc = torch.baddbmm(acc * alpha[:, :, None], p, v_view[tile_b, tile_n, :].to(torch.float32))
            m_i = m_new
        out[tile_b, tile_m, :] = (acc / l_i[:, :, None]).to(out.dtype)
    return out.view(q.size())


@helion.kernel(static_shapes=True)
def attention_bwd(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, do: torch.Tensor, lse: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of softmax(q k^T * scale) v for [BH, S, D] inputs, given the forward
    output o and its row log-sum-exp. Three top-level loops (delta, then dk/dv, then dq);
    the barrier orders the delta writes before the loops that read it."""
    bh, m, d = q.size()
    n = k.size(1)
    scale = 1.0 / math.sqrt(d)
    delta = torch.empty([bh, m], dtype=torch.float32, device=q.device)
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    for tile_b, tile_m in hl.tile([bh, m]):
        delta[tile_b, tile_m] = torch.sum(o[tile_b, tile_m, :] * do[tile_b, tile_m, :], dim=-1)
    hl.barrier()
    for tile_b, tile_n in hl.tile([bh, n]):
        k_tile = k[tile_b, tile_n, :]
        v_tile = v[tile_b, tile_n, :]
        dk_acc = hl.zeros([tile_b, tile_n, d], dtype=torch.float32)
        dv_acc = hl.zeros([tile_b, tile_n, d], dtype=torch.float32)
        for tile_r in hl.tile(m):
            q_tile = q[tile_b, tile_r, :]
            do_tile = do[tile_b, tile_r, :]
            scores = torch.bmm(q_tile, k_tile.transpose(1, 2)) * scale
            p = torch.exp(scores - lse[tile_b, tile_r][:, :, None])
            dv_acc = torch.baddbmm(dv_acc, p.transpose(1, 2), do_tile)
            dp = torch.bmm(do_tile, v_tile.transpose(1, 2))
            ds = p * (dp - delta[tile_b, tile_r][:, :, None])
            dk_acc = torch.baddbmm(dk_acc, ds.transpose(1, 2), q_tile)
        dk[tile_b, tile_n, :] = dk_acc * scale
        dv[tile_b, tile_n, :] = dv_acc
    for tile_b, tile_m in hl.tile([bh, m]):
        q_tile = q[tile_b, tile_m, :]
        do_tile = do[tile_b, tile_m, :]
        dq_acc = hl.zeros([tile_b, tile_m, d], dtype=torch.float32)
        for tile_c in hl.tile(n):
            k_tile = k[tile_b, tile_c, :]
            scores = torch.bmm(q_tile, k_tile.transpose(1, 2)) * scale
            p = torch.exp(scores - lse[tile_b, tile_m][:, :, None])
            dp = torch.bmm(do_tile, v[tile_b, tile_c, :].transpose(1, 2))
            ds = p * (dp - delta[tile_b, tile_m][:, :, None])
            dq_acc = torch.baddbmm(dq_acc, ds, k_tile)
        dq[tile_b, tile_m, :] = dq_acc * scale
    return dq, dk, dv


def _qkv(b: int, h: int, m: int, n: int, d: int):
    def make(dtype: torch.dtype):
        return (torch.randn(b, h, m, d, dtype=dtype), torch.randn(b, h, n, d, dtype=dtype),
                torch.randn(b, h, n, d, dtype=dtype))

    return make


def _qkv_bias(dtype: torch.dtype):
    return (*_qkv(2, 3, 37, 45, 24)(dtype), torch.randn(37, 45, dtype=dtype))


def _bwd_args(dtype: torch.dtype):
    bh, m, n, d = 6, 37, 45, 24
    q, k, v = (torch.randn(bh, s, d, dtype=dtype) for s in (m, n, n))
    scores = q @ k.transpose(1, 2) / math.sqrt(d)
    lse = torch.logsumexp(scores, -1)
    o = torch.softmax(scores, -1) @ v
    do = torch.randn(bh, m, d, dtype=dtype)
    return q, k, v, o, do, lse


def _bwd_ref(q, k, v, o, do, lse):
    q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    F.scaled_dot_product_attention(q, k, v).backward(do)
    return q.grad, k.grad, v.grad


EXAMPLES = [
    Example("attention", attention, _qkv(2, 3, 37, 45, 24), in_f32(F.scaled_dot_product_attention), FLOATS,
            (helion.Config(block_sizes=[2, 16, 8]),)),
    Example("attention_causal", attention_causal, _qkv(2, 3, 37, 37, 24),
            in_f32(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)), FLOATS,
            (helion.Config(block_sizes=[1, 8, 16]),)),
    Example("attention_bias", attention_bias, _qkv_bias,
            in_f32(lambda q, k, v, bias: F.scaled_dot_product_attention(q, k, v, attn_mask=bias)), FLOATS),
    Example("attention_dynamic", attention_dynamic, _qkv(2, 3, 37, 45, 64),
            in_f32(F.scaled_dot_product_attention), FLOATS),
    Example("attention_bwd", attention_bwd, _bwd_args, _bwd_ref, (torch.float32,),
            (helion.Config(block_sizes=[4, 8, 2, 32, 8, 2, 8, 32]),)),
]
